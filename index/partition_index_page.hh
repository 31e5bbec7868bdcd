// partition_index_page: the parsed Index.db entries of one summary page (key with token, Data.db position, the
// promoted index's bytes as stored), sorted as the file is; what partition_index_cache holds per summary index.
#pragma once

#include "mutation/token.hh"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace reef::index {

struct partition_index_page_entry {
    dht::decorated_key key;
    uint64_t data_position = 0;
    // The entry's bytes after the key and the Data.db position (the promoted index's length and body) as stored:
    // decoded only by a read that skips inside the partition.
    std::string promoted_index;
    // Where those bytes are in Index.db (for errors).
    uint64_t promoted_index_position = 0;
};

struct partition_index_page {
    std::vector<partition_index_page_entry> entries;

    // What the page costs in memory (charged to the cache's budget).
    size_t memory_usage() const noexcept {
        size_t n = sizeof(*this) + entries.capacity() * sizeof(partition_index_page_entry);
        for (auto& e : entries) {
            n += e.key.key().size() + e.promoted_index.size();
        }
        return n;
    }
};

} // namespace reef::index
