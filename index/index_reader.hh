// index_reader: where a partition range starts and ends in Data.db, found from the summary (in memory) and only the
// Index.db pages it points at, read through cached_file and kept parsed in partition_index_cache.
#pragma once

#include "cache/read_caches.hh"
#include "index/partition_index_page.hh"
#include "mutation/partition_range.hh"
#include "runtime/future.hh"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace reef::index {

// One summary entry: the first key of an index page and where that page starts in Index.db.
struct summary_point {
    dht::decorated_key key;
    uint64_t index_position = 0;
};

// The summary of one sstable as the index reader needs it: points in file order, the lengths that end the last
// page (Index.db's size) and the last partition (the uncompressed Data.db length).
struct index_summary {
    std::vector<summary_point> points;
    uint64_t index_file_size = 0;
    uint64_t data_length = 0;
};

// Parses the bytes of one page (whole entries, starting at Index.db offset base_offset). The sstables room gives
// it (the entry format is theirs); it throws on malformed bytes, naming the file and offset.
using page_parser = std::function<partition_index_page(std::string_view bytes, uint64_t base_offset)>;

using index_page_cache = cache::partition_index_cache<partition_index_page>;

// [start, end) of Data.db holding a partition range's partitions (start == end when it holds none).
struct data_range {
    uint64_t start = 0;
    uint64_t end = 0;
    bool operator==(const data_range&) const = default;
};

// A lookup reads only the Index.db bytes of the summary pages it needs (never past the next summary entry), once
// per page while the page stays in the cache. The summary, the caches and the parser must outlive the reader.
class index_reader {
public:
    index_reader(const index_summary& summary, cache::read_caches<partition_index_page>& caches, page_parser parse)
        : _summary(summary), _caches(caches), _parse(std::move(parse)) {}

    // The Data.db position of the first partition at or after p (data_length when none is).
    future<uint64_t> lower_bound(const dht::ring_position& p);
    // Where the partitions of pr lie in Data.db.
    future<data_range> range(const dht::partition_range& pr);
    // Summary page i, parsed (through the caches).
    future<index_page_cache::entry_ptr> page(size_t i);
    size_t page_count() const noexcept { return _summary.points.size(); }

private:
    // The Data.db position of the first partition k for which skip(k) is false; skip must be true on a prefix of
    // the partitions (before a range's start, or not after its end).
    future<uint64_t> first_not(std::function<bool(const dht::decorated_key&)> skip);

    const index_summary& _summary;
    cache::read_caches<partition_index_page>& _caches;
    page_parser _parse;
};

} // namespace reef::index
