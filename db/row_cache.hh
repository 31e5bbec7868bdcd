// row_cache: one table's partitions as the sstables hold them (less what their own tombstones delete), kept in memory
// in front of the sstable set, with their continuity, so that a read inside it does no I/O. ScyllaDB's row cache.
#pragma once

#include "cache/lru.hh"
#include "cache/tracker.hh"
#include "db/memtable.hh"
#include "reader/mutation_reader.hh"
#include "reader/position_range.hh"
#include "reader/read_options.hh"
#include "reader/reader_permit.hh"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <vector>

namespace reef {

// Clustering continuity: the forward position ranges over which a cached partition holds everything the sstables
// hold, as sorted, disjoint, non-touching [start, end) ranges.
class clustering_continuity {
public:
    // Adds ranges (forward order; empty ones are ignored). `cmp`: the schema's forward order.
    void add(const position_in_partition_comparator& cmp, const clustering_ranges& ranges);
    // Whether every range of `ranges` (forward) lies inside one range of the set (empty ones always do).
    bool contains(const position_in_partition_comparator& cmp, const clustering_ranges& ranges) const;
    // Removes everything at or after `p` (rows from p on were evicted).
    void trim_from(const position_in_partition_comparator& cmp, const position_in_partition& p);
    const clustering_ranges& ranges() const noexcept { return _ranges; }

private:
    clustering_ranges _ranges;
};

// The sstables a cache is in front of: a reader of the set as it is now over `range`, sliced by `slice` (forward
// ranges), forward, without forwarding, charged to `permit`.
using row_cache_underlying =
    std::function<mutation_reader(const dht::partition_range& range, const clustering_ranges& slice, reader_permit permit)>;

class row_cache_reader;

// One table's cache on one shard. Entries are partitions by ring position, each a one-partition memtable (merged by
// apply, read by make_memtable_reader with slices, reversed and forwarding windows) with its clustering continuity,
// or an absence (the sstables hold nothing for the key). Partition continuity: each entry says whether every
// partition the sstables hold between the previous entry (or the ring's start) and it is in the cache, and one flag
// says it of the range after the last entry; so a scan of a continuous range and a read of a key known absent do
// no I/O.
//
// A read takes what it can from the cache and asks the underlying for the rest, then puts that in the cache
// ("populates") and serves it from there. A partition is populated with what its own tombstones delete dropped
// (mutation_partition::drop_shadowed): no read's result changes, and rows under a range deletion cost nothing. When a flush adds what a memtable held to the sstables, the
// owner calls update() in the same step, which merges it into the cache and starts a new population phase: a read
// whose underlying reader was made in an older phase still serves what it read (the table's memtables fill in the
// rest) but puts none of it into the cache. A compaction changes no data: the cache stays as it is (the owner clears it after one that may have purged
// tombstones or expired cells the cache may still hold).
//
// Entries are charged to the tracker's LRU (their memtable's occupancy), least recently used first. The coldest
// entry gives back its rows a chunk at a time, from the partition's end (that part of its clustering continuity
// goes with them), and goes back to the cold end, until it is down to one row: then it is evicted whole, which
// breaks partition continuity around it. Rows are only removed from a memtable no reader holds: a partition being
// read is evicted whole instead (the reader keeps its memtable). A population that would make one partition more
// than 1/max_partition_share of the budget is served but not cached, so that one huge partition cannot empty the
// cache. Readers must be closed before the cache is destroyed.
class row_cache {
public:
    // A partition may take at most budget / max_partition_share through a population.
    static constexpr size_t max_partition_share = 4;
    // The most rows one eviction step takes from a partition.
    static constexpr size_t max_eviction_chunk = 256;

    row_cache(schema_ptr s, row_cache_underlying underlying, cache::cache_tracker& tracker);
    row_cache(const row_cache&) = delete;
    ~row_cache();

    // The partitions of opts.range, sliced by opts.slice (in the read's order), in opts.order, with clustering
    // windows when opts.forwarding == yes: the stream make_memtable_reader gives of the same data. The underlying's
    // reads are charged to `permit`. opts.bypass and opts.stats are the caller's to act on (a bypass read does not
    // come here).
    mutation_reader make_reader(reader_permit permit, read_options opts);

    // One partition of a batch of single-partition reads (table::multi_get), as the reader would take it: a hit
    // when the cache holds `forward_slice` of k or knows k absent (`data` then null), else a miss; counted as the
    // reader counts them.
    struct lookup_result {
        bool hit = false;
        std::shared_ptr<memtable> data;
    };
    lookup_result lookup(const dht::decorated_key& k, const clustering_ranges& forward_slice);
    // What the batch read from the sstables for a missed key (`m`, sliced by forward_slice, shadowed data dropped;
    // null: nothing), its sstables read in population phase `phase`: populated as the reader populates a singular
    // miss while the phase is still `phase`, otherwise kept out of the cache. Returns the partition's memtable to
    // read it from (null: absent). May evict.
    std::shared_ptr<memtable> fill(const dht::decorated_key& k, const mutation* m, const clustering_ranges& forward_slice,
                                   uint64_t phase);

    // The sstables now also hold what `flushed` held (ScyllaDB's cache update): each of its partitions is merged
    // into the cache's entry for its key (an absence becomes the partition, wholly continuous), or, where the cache
    // knows the ring around the key (partition continuity), becomes an entry of its own, wholly continuous; keys
    // elsewhere stay out of the cache, as the continuity there already says nothing. Continuity stays true. One step,
    // no suspension; readers of an entry's memtable see the merge as they see writes to a memtable (at least what
    // was there when they started). Starts a new population phase: what a read took from the sstables before the
    // flush is not put into the cache. May evict.
    void update(const memtable& flushed);
    // Everything leaves the cache. Starts a new population phase.
    void clear();

    uint64_t phase() const noexcept { return _phase; }
    size_t partition_count() const noexcept { return _entries.size(); }
    // This cache's figures (the tracker sums those of every cache on it).
    const cache::row_cache_stats& stats() const noexcept { return _stats; }
    cache::cache_tracker& tracker() noexcept { return _tracker; }
    const schema_ptr& schema() const noexcept { return _schema; }

private:
    friend class row_cache_reader;

    struct entry final : cache::lru_item {
        entry(row_cache& c, dht::decorated_key k) : cache(c), key(std::move(k)) {}
        row_cache& cache;
        dht::decorated_key key;
        std::shared_ptr<memtable> data;  // null: the sstables hold nothing for the key
        clustering_continuity continuity;
        bool continuous_before = false;
        void on_evict() noexcept override;
    };
    using entries_type = std::map<dht::decorated_key, std::unique_ptr<entry>, partition_key_less>;

    // The first entry not before the range's start, and whether the ring between its predecessor (or the ring's
    // start) and it (or the ring's end) is continuous.
    entries_type::iterator lower_bound(const dht::partition_range& r) { return _entries.lower_bound(partition_range_start{&r}); }
    bool continuous_before(entries_type::iterator it) const noexcept {
        return it == _entries.end() ? _continuous_after_last : it->second->continuous_before;
    }
    // Breaks partition continuity between `it`'s predecessor and it.
    void break_continuity_before(entries_type::iterator it) noexcept;
    // Removes the entry, breaking continuity around it.
    void erase(entries_type::iterator it) noexcept;

    // Puts what the underlying gave for `key` (nullopt: nothing) into the cache, with `forward_slice` added to its
    // clustering continuity; `after`: the key of the entry the underlying's answer is known to follow directly
    // (nothing between them), or, with `from_ring_start`, the ring's start: partition continuity before the entry is
    // set when that is still its predecessor. Returns the partition's memtable (null for an absence). May evict.
    std::shared_ptr<memtable> populate(const dht::decorated_key& key, const mutation* m, const clustering_ranges& forward_slice,
                                       const std::optional<dht::decorated_key>& after, bool from_ring_start);
    // The underlying showed nothing between `after` (or, with from_ring_start, the ring's start) and `it` (end():
    // the ring's end): marks that range continuous if nothing but absences lies between them in the cache.
    void mark_continuous_before(entries_type::iterator it, const std::optional<dht::decorated_key>& after,
                                bool from_ring_start) noexcept;
    void recharge(entry& e) noexcept;
    // Rows held by the entry.
    static size_t rows_of(const entry& e) noexcept;
    // Counts `after - before` rows inserted (after >= before).
    void count_row_insertions(size_t before, size_t after) noexcept;
    // Whether adding m to key's partition keeps it within budget / max_partition_share. Measures m in a
    // memtable of its own (left in `alone`) only when the bound memtable::apply_bound gives does not fit.
    bool fits(const dht::decorated_key& key, const mutation& m, std::shared_ptr<memtable>& alone) const;
    // Gives back a chunk of e's rows (see the class comment); false when e must go whole.
    bool evict_rows(entry& e) noexcept;
    void touch(entry& e) noexcept { _tracker.lru().touch(e); }

    void count_hit() noexcept { ++_stats.hits; ++_tracker.row_stats().hits; }
    void count_miss() noexcept { ++_stats.misses; ++_tracker.row_stats().misses; }

    schema_ptr _schema;
    position_in_partition_comparator _cmp;  // forward, built once (it copies the clustering types)
    row_cache_underlying _underlying;
    cache::cache_tracker& _tracker;
    entries_type _entries;
    bool _continuous_after_last = false;
    uint64_t _phase = 0;
    cache::row_cache_stats _stats;
};

} // namespace reef
