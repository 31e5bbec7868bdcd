// partition_index_page: one summary page of Index.db as partition_index_cache holds it: the page's bytes as stored
// and, per entry, its token, Data.db position and where its key and promoted index lie in those bytes.
#pragma once

#include "mutation/token.hh"

#include <compare>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace reef::index {

// An entry as the page keeps it: no allocation of its own (a page of 128 entries is two allocations, not 130, and
// about half the memory of decorated keys), the key compared in place.
struct partition_index_page_entry {
    dht::token token;
    uint64_t data_position = 0;
    uint32_t key_offset = 0;  // in the page's bytes
    uint32_t key_size = 0;
    // The entry's bytes after the key and the Data.db position (the promoted index's length and body) as stored:
    // decoded only by a read that skips inside the partition.
    uint32_t promoted_offset = 0;
    uint32_t promoted_size = 0;
};

struct partition_index_page {
    std::string bytes;         // the page's Index.db bytes
    uint64_t base_offset = 0;  // where they start in Index.db
    std::vector<partition_index_page_entry> entries;

    std::string_view key_bytes(size_t i) const noexcept {
        return std::string_view(bytes).substr(entries[i].key_offset, entries[i].key_size);
    }
    // Entry i's key against k, in ring order (token, then the key's bytes unsigned, shorter first).
    std::strong_ordering compare(size_t i, const dht::decorated_key& k) const noexcept {
        if (auto c = entries[i].token <=> k.get_token(); c != 0) {
            return c;
        }
        auto a = key_bytes(i);
        auto b = k.key().view();
        size_t n = std::min(a.size(), b.size());
        int c = n ? std::memcmp(a.data(), b.data(), n) : 0;
        if (c != 0) {
            return c < 0 ? std::strong_ordering::less : std::strong_ordering::greater;
        }
        return a.size() <=> b.size();
    }
    // Entry i's key, decorated (a copy).
    dht::decorated_key key(size_t i) const {
        return dht::decorated_key(entries[i].token, partition_key(std::string(key_bytes(i))));
    }
    std::string_view promoted_index(size_t i) const noexcept {
        return std::string_view(bytes).substr(entries[i].promoted_offset, entries[i].promoted_size);
    }
    // Where entry i's promoted index bytes are in Index.db (for errors).
    uint64_t promoted_index_position(size_t i) const noexcept { return base_offset + entries[i].promoted_offset; }

    // What the page costs in memory (charged to the cache's budget).
    size_t memory_usage() const noexcept {
        return sizeof(*this) + bytes.capacity() + entries.capacity() * sizeof(partition_index_page_entry);
    }
};

// The first entry of page for which skip(its decorated key) is false; skip must be true on a prefix of the entries.
// Each key it asks about is decorated (a copy): for predicates the page cannot compare in place.
template <typename Skip>
size_t entry_partition_point(const partition_index_page& page, Skip&& skip) {
    size_t lo = 0, hi = page.entries.size();
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (skip(page.key(mid))) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

// The first entry of page not before k (page.entries.size() when none is), compared in place.
inline size_t entry_lower_bound(const partition_index_page& page, const dht::decorated_key& k) noexcept {
    size_t lo = 0, hi = page.entries.size();
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (page.compare(mid, k) < 0) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

} // namespace reef::index
