// index_reader: where a partition range starts and ends in Data.db, found from the summary (in memory) and only the
// Index.db pages it points at, read from the file (past cached_file: a page keeps its bytes) and kept in
// partition_index_cache.
#pragma once

#include "cache/read_caches.hh"
#include "index/partition_index_page.hh"
#include "mutation/partition_range.hh"
#include "runtime/future.hh"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
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
    // The points' tokens, side by side: a search compares these and touches a key only on a token's tie.
    std::vector<dht::token> tokens;
    uint64_t index_file_size = 0;
    uint64_t data_length = 0;

    // How many points' keys are not after k: the page that would hold k is the one before.
    size_t points_not_after(const dht::decorated_key& k) const noexcept;
};

// Parses the bytes of one page (whole entries, starting at Index.db offset base_offset). The sstables room gives
// it (the entry format is theirs); it throws on malformed bytes, naming the file and offset. Shared: every read's
// handles and index_reader hold one, and copying the pointer allocates nothing (copying a std::function would).
using page_parse_function = std::function<partition_index_page(std::string_view bytes, uint64_t base_offset)>;
using page_parser = std::shared_ptr<const page_parse_function>;

using index_page_cache = cache::partition_index_cache<partition_index_page>;

// [start, end) of Data.db holding a partition range's partitions (start == end when it holds none).
struct data_range {
    uint64_t start = 0;
    uint64_t end = 0;
    bool operator==(const data_range&) const = default;
};

// One Index.db entry, with its page pinned (and so valid) while this lives.
struct entry_ref {
    index_page_cache::entry_ptr page;
    size_t index = 0;
    uint64_t data_position() const noexcept { return page->data_position(index); }
    // Its key, decorated (a copy).
    dht::decorated_key key() const { return page->key(index); }
    // Whether its key is k (compared in place).
    bool is(const dht::decorated_key& k) const { return page->compare(index, k) == 0; }
};

// One key's entry as find_all gives it: the entry (its page pinned) and its partition's bytes in Data.db.
struct located_entry {
    entry_ref ref;
    data_range range;
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
    // The entry of partition k (nothing when the index has none): what a read that skips inside the partition
    // needs (its promoted index).
    future<std::optional<entry_ref>> find(const dht::decorated_key& k);
    // The entry of pr's first partition, if the index has one not before pr (it may lie after pr's end: range()
    // says whether pr holds anything).
    future<std::optional<entry_ref>> first_entry(const dht::partition_range& pr);
    // Where the partition after e's starts in Data.db (data_length after the last one): where e's ends.
    future<uint64_t> next_position(const entry_ref& e);
    // The entries of keys (in ring order, distinct; nothing for a key the index does not list), for a batch of
    // single-partition reads: the keys whose entries fall in one summary page share one lookup of that page (one
    // pin) and one pass over it. A key whose entry ends its page also looks at the next page (where it ends).
    future<std::vector<std::optional<located_entry>>> find_all(std::span<const dht::decorated_key> keys);
    // Summary page i, parsed (through the caches).
    future<index_page_cache::entry_ptr> page(size_t i);
    size_t page_count() const noexcept { return _summary.points.size(); }

private:
    // The Data.db position of the first partition k for which skip(k) is false; skip must be true on a prefix of
    // the partitions (before a range's start, or not after its end).
    future<uint64_t> first_not(std::function<bool(const dht::decorated_key&)> skip);
    // The entry first_not's answer comes from (nothing when it is data_length).
    future<std::optional<entry_ref>> first_entry_not(std::function<bool(const dht::decorated_key&)> skip);
    // The first entry not before k, compared in place (no key decorated): first_entry_not(before k).
    future<std::optional<entry_ref>> first_entry_not_before(const dht::decorated_key& k);
    // range() of k's singular range, from summary page i on, that page coming from `first`.
    future<data_range> singular_range(const dht::decorated_key& k, size_t i, future<index_page_cache::entry_ptr> first);
    // range() of a range that is not one key.
    future<data_range> ranged(const dht::partition_range& pr);

    const index_summary& _summary;
    cache::read_caches<partition_index_page>& _caches;
    page_parser _parse;
};

} // namespace reef::index
