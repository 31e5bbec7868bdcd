// cache_tracker: one shard's cache memory (the LRU and its budget) and the statistics of the caches on it.
// shard_cache_tracker() is the calling shard's, shared by every cache; a bypass read makes a private one.
#pragma once

#include "cache/lru.hh"
#include "runtime/future.hh"
#include "runtime/metrics.hh"

#include <cstddef>
#include <cstdint>

namespace reef::cache {

// Index.db pages cached by cached_file.
struct cached_file_stats {
    uint64_t page_hits = 0;         // asked for a page that was ready in memory
    uint64_t page_misses = 0;       // asked for a page that was absent: it was read
    uint64_t page_blocks = 0;       // asked for a page another read was still loading, and waited
    uint64_t page_populations = 0;  // pages read into the cache
    uint64_t page_evictions = 0;    // pages given back (budget, drop_caches, invalidation)
};

// Parsed index pages cached by partition_index_cache (perf_fast_forward's
// "idx hit", "idx miss" and "idx blk").
struct index_cache_stats {
    uint64_t hits = 0;
    uint64_t misses = 0;
    uint64_t blocks = 0;       // waited for a load another lookup started
    uint64_t evictions = 0;
    uint64_t populations = 0;
};

// The row cache (db/row_cache.hh): partitions read, by where they came from, and its entries' and rows' lives.
struct row_cache_stats {
    uint64_t hits = 0;           // partitions (or known absences) a read took from the cache alone
    uint64_t misses = 0;         // partitions or partition ranges a read had to ask the sstables for
    uint64_t populations = 0;    // partitions (or absences) the sstables' answer was put into the cache for
    uint64_t evictions = 0;      // entries given back whole (budget, drop_caches)
    uint64_t invalidations = 0;  // entries dropped by clear()
    uint64_t merges = 0;         // flushed partitions merged into the cache (ScyllaDB's partition_merges)
    uint64_t partition_insertions = 0;  // entries made (population, flush)
    uint64_t row_insertions = 0;        // rows added (population, flush)
    uint64_t row_evictions = 0;         // rows given back (a chunk of a partition, or with its entry)
    uint64_t row_removals = 0;          // rows dropped by clear()
    uint64_t partitions = 0;     // entries held now
    uint64_t rows = 0;           // rows held now
};

// The default budget of a shard's caches until configuration sets one.
inline constexpr size_t default_shard_cache_budget = size_t(64) << 20;

class cache_tracker {
public:
    explicit cache_tracker(size_t budget = default_shard_cache_budget) noexcept : _lru(budget) {}
    cache_tracker(const cache_tracker&) = delete;

    class lru& lru() noexcept { return _lru; }
    const class lru& lru() const noexcept { return _lru; }
    // Totals over every cache on this tracker.
    cached_file_stats& file_stats() noexcept { return _file_stats; }
    const cached_file_stats& file_stats() const noexcept { return _file_stats; }
    index_cache_stats& index_stats() noexcept { return _index_stats; }
    const index_cache_stats& index_stats() const noexcept { return _index_stats; }
    row_cache_stats& row_stats() noexcept { return _row_stats; }
    const row_cache_stats& row_stats() const noexcept { return _row_stats; }

    // Evicts everything that is not in use.
    void drop_caches() noexcept { _lru.evict_all(); }

    // Registers this tracker's figures on the calling shard ("cache" group:
    // memory, budget, page and index page counters); the node keeps the
    // result for as long as the shard runs.
    metrics::metric_groups register_metrics();

private:
    class lru _lru;
    cached_file_stats _file_stats;
    index_cache_stats _index_stats;
    row_cache_stats _row_stats;
};

// The calling shard's tracker (created on first use, destroyed with the
// shard's thread).
cache_tracker& shard_cache_tracker() noexcept;

// Empties the calling shard's caches (what is in use stays until released).
inline void drop_caches() noexcept { shard_cache_tracker().drop_caches(); }
// Empties every shard's caches (the REST API's drop_sstable_caches, cold-cache benchmarks).
future<> drop_caches_on_all_shards();

} // namespace reef::cache
