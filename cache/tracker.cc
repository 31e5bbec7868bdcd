// The per-shard cache tracker. See tracker.hh.
#include "cache/tracker.hh"

#include "runtime/smp.hh"

namespace reef::cache {

cache_tracker& shard_cache_tracker() noexcept {
    // Shard threads end with the runtime; caches live inside it, so they
    // are gone before this is destroyed.
    thread_local cache_tracker tracker;
    return tracker;
}

future<> drop_caches_on_all_shards() {
    co_await smp::invoke_on_all([] { drop_caches(); });
}

metrics::metric_groups cache_tracker::register_metrics() {
    namespace m = metrics;
    m::metric_groups g;
    // ScyllaDB's names (scylla_cache_*) where the value means the same.
    g.add_group("cache", {
        m::make_gauge("bytes_used", [this] { return int64_t(_lru.memory_used()); },
                      m::description("memory held by the shard's caches, pinned or not")),
        m::make_gauge("bytes_total", [this] { return int64_t(_lru.budget()); },
                      m::description("the budget eviction keeps the caches under")),
        m::make_counter("evictions", [this] { return _lru.stats().evictions; },
                        m::description("cache items evicted (budget or drop_caches)")),
        // The row cache, by ScyllaDB's names (its row_hits/row_misses, rows read, are not counted yet).
        m::make_counter("partition_hits", [this] { return _row_stats.hits; },
                        m::description("partitions a read took from the row cache alone")),
        m::make_counter("partition_misses", [this] { return _row_stats.misses; },
                        m::description("partitions or ranges the row cache read from the sstables")),
        m::make_counter("partition_insertions", [this] { return _row_stats.partition_insertions; },
                        m::description("partitions put into the row cache")),
        m::make_counter("partition_evictions", [this] { return _row_stats.evictions; },
                        m::description("row cache partitions evicted")),
        m::make_counter("partition_removals", [this] { return _row_stats.invalidations; },
                        m::description("row cache partitions dropped by a flush or compaction")),
        m::make_counter("partition_merges", [this] { return _row_stats.merges; },
                        m::description("flushed partitions merged into the row cache")),
        m::make_counter("row_insertions", [this] { return _row_stats.row_insertions; },
                        m::description("rows put into the row cache")),
        m::make_counter("row_evictions", [this] { return _row_stats.row_evictions; },
                        m::description("row cache rows evicted")),
        m::make_counter("row_removals", [this] { return _row_stats.row_removals; },
                        m::description("row cache rows dropped by an invalidation")),
        m::make_gauge("partitions", [this] { return int64_t(_row_stats.partitions); },
                      m::description("partitions in the row cache")),
        m::make_gauge("rows", [this] { return int64_t(_row_stats.rows); },
                      m::description("rows in the row cache")),
    });
    // ScyllaDB counts its index caches under sstables_ (scylla_sstables_index_page_cache_*, _index_page_*).
    g.add_group("sstables", {
        m::make_counter("index_page_cache_hits", [this] { return _file_stats.page_hits; },
                        m::description("index file pages found in memory")),
        m::make_counter("index_page_cache_misses", [this] { return _file_stats.page_misses; },
                        m::description("index file pages read from disk")),
        m::make_counter("index_page_cache_blocks", [this] { return _file_stats.page_blocks; },
                        m::description("lookups that waited for a page another read was loading")),
        m::make_counter("index_page_cache_evictions", [this] { return _file_stats.page_evictions; },
                        m::description("index file pages evicted")),
        m::make_counter("index_page_hits", [this] { return _index_stats.hits; },
                        m::description("parsed index pages found in memory")),
        m::make_counter("index_page_misses", [this] { return _index_stats.misses; },
                        m::description("parsed index pages loaded")),
        m::make_counter("index_page_blocks", [this] { return _index_stats.blocks; },
                        m::description("lookups that waited for an index page another lookup was loading")),
        m::make_counter("index_page_evictions", [this] { return _index_stats.evictions; },
                        m::description("parsed index pages evicted")),
        m::make_counter("index_page_populations", [this] { return _index_stats.populations; },
                        m::description("parsed index pages added")),
    });
    return g;
}

} // namespace reef::cache
