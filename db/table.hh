// table: one table on one shard: writes go into the active memtable, full memtables are flushed to new sstables
// in the background, reads merge memtables and sstables with no window that misses data; compactions (background
// and major) through the shard's compaction manager, which sees the table as a compaction::table_state.
#pragma once

#include "commitlog/commitlog.hh"
#include "compaction/compaction_manager.hh"
#include "compaction/table_state.hh"
#include "db/dirty_memory_manager.hh"
#include "db/memtable.hh"
#include "db/row_cache.hh"
#include "db/sstable_bounds_index.hh"
#include "reader/combined_reader.hh"
#include "reader/mutation_reader.hh"
#include "reader/read_options.hh"
#include "runtime/condition_variable.hh"
#include "runtime/future.hh"
#include "runtime/gate.hh"
#include "runtime/semaphore.hh"
#include "sstables/partition_batch.hh"
#include "sstables/sstable.hh"
#include "sstables/writer.hh"
#include "utils/small_vector.hh"

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace reef {

struct table_config {
    // The table's data directory: its sstables are `<directory>/me-<generation>-big-<Component>`, generations
    // decimal. The shards of a database share the directory: this table instance owns the sstables whose
    // generation % shard_count == shard (db/README.md, "Sharing a table directory"), loads only those, and
    // numbers each new sstable the next such generation above the greatest it has seen (loaded or written).
    std::string directory;
    // The same table's directory in each further data directory (data_file_directories past the first, as in
    // ScyllaDB: each holds the <ks>/<table>-<id>/ layout): start() loads the sstables of every directory, the
    // generations are one space across them, and new sstables go to the directories in turn (by generation).
    std::vector<std::string> more_directories;
    unsigned shard = 0;
    unsigned shard_count = 1;
    // A memtable whose occupancy() reaches this many bytes is sealed and flushed in the background. The
    // database's tables have none (SIZE_MAX): their shard's dirty memory manager decides their flushes.
    size_t memtable_flush_threshold = 64 << 20;
    // The shard's dirty memory manager (null: none): the memtables' occupancy is accounted to it, and from
    // start() to stop() it may flush the table to free memory (dirty_memory_manager.hh).
    dirty_memory_manager* dirty_memory = nullptr;
    // Reads of the sstables go through a row cache (db/row_cache.hh), as in ScyllaDB; tests of the sstable read
    // path turn it off.
    bool enable_cache = true;
    // The cache tracker the row cache charges its partitions to: the shard's (shard_cache_tracker()) by default.
    cache::cache_tracker* cache_tracker = nullptr;
    // Writes an sstable (the default: sstables::write_sstable). Tests inject failures here.
    std::function<future<sstables::written_sstable>(mutation_reader&, schema_ptr, sstables::descriptor,
                                                     sstables::writer_options)>
        write_sstable;
    // The shard's commitlog (null: none): after a flush, discard_completed_segments(table, the memtable's greatest
    // position).
    commitlog::commitlog* commitlog = nullptr;
    // The node's host id (unknown while the system tables start): its flushes name it as Statistics.db's
    // originating host id, and the flushed position ignores the intervals of sstables another host wrote
    // (Cassandra's rule: their commitlog positions are that host's).
    std::optional<std::array<uint8_t, 16>> host_id;
    // The table's truncation position on this shard (system.local.truncated_at): start() deletes the sstables this
    // host flushed at or below it (a crash between the truncation record and their deletion leaves them), and the
    // flushed position starts there, so that replay skips the truncated entries.
    std::optional<commitlog::replay_position> truncated_at;
    // Tests: called after each step of a compaction's swap (sstables/swap_log.hh); throwing
    // sstables::injected_crash leaves the files as a crash there would.
    std::function<void(const std::string& step)> swap_hook;
    // The shard's compaction manager (null: no background compaction; compact_all then runs the major compaction
    // itself): start() adds the table to it, each flush submits it, stop() removes it (stopping its compactions).
    compaction::compaction_manager* compaction_manager = nullptr;
};

class table : public dirty_memory_flushable, public compaction::table_state {
public:
    table(schema_ptr s, table_config cfg);
    table(const table&) = delete;
    ~table() override;

    // Loads the directory's sstables (created if missing; the swaps a crash interrupted completed or rolled back, then
    // partial writes removed: db/README.md, "Crash-safe swaps"). Call once, before use.
    // Then the dirty memory manager, if any, may flush the table.
    future<> start();
    // Waits for background flushes and compaction; memtables not yet flushed are dropped (flush() first to keep
    // them), and their dirty memory released.
    future<> stop();

    // dirty_memory_flushable: the memtables' accounted bytes; flush_for_memory is flush() (nothing once stopping).
    size_t active_dirty_bytes() const noexcept override { return _active->occupancy(); }
    size_t sealed_dirty_bytes() const noexcept override;
    future<> flush_for_memory() override;

    const schema_ptr& schema() const noexcept override { return _schema; }

    // compaction::table_state (compaction/table_state.hh).
    const std::vector<sstables::shared_sstable>& sstable_set() const noexcept override { return _sstables; }
    write_time::timestamp_type min_memtable_timestamp() const noexcept override { return min_unflushed_timestamp(); }
    // The max-purgeable rule for k: the least min_timestamp of what lies outside `compacting` and may hold k now
    // (the memtables, active and sealed, holding k; the sstables whose bloom filter admits k, flushed since the
    // compaction started too); with a commitlog, also no more than min_unflushed_timestamp() (the purge guard),
    // whatever the key. Asked when each partition starts: writes applied to k after that are not taken into account
    // (as in Cassandra: they are assumed not to be older than gc_grace).
    write_time::timestamp_type max_purgeable(const dht::decorated_key& k,
                                             const std::vector<sstables::shared_sstable>& compacting) const override;
    sstables::descriptor new_sstable_descriptor() override { return next_descriptor(); }
    future<sstables::written_sstable> write_sstable(mutation_reader& r, sstables::descriptor d,
                                                    sstables::writer_options o) override;
    future<sstables::sstable_swap> begin_swap(const std::vector<sstables::shared_sstable>& inputs,
                                              const std::vector<sstables::descriptor>& outputs) override;
    // The swap point of every compaction: `outputs` (what compaction wrote from `inputs`) replace `inputs` in the
    // set, in one step with no suspension; readers open on `inputs` keep reading them (each holds its sstable and
    // its gate), and they are closed after those readers. The row cache stays as it is (the data did not change),
    // unless `may_have_purged` (the compaction may have dropped tombstones or expired cells, which the cache may
    // still hold): then it is cleared.
    future<> replace_sstables(std::vector<sstables::shared_sstable> inputs,
                              std::vector<sstables::shared_sstable> outputs, bool may_have_purged) override;

    // Into the active memtable; seals it and starts a background flush when it reaches the threshold.
    void apply(const mutation& m);

    // Writes through the commitlog (db/README.md, "Durability"). A write registers once the commitlog gives it its
    // position (commitlog::add's on_position), in the table's current write phase, which this returns; then it
    // applies with that position and phase: into the memtable that took that phase's writes, so that a memtable
    // holds exactly the entries positioned while it was active, and its flush waits for those still in flight.
    // abandon_write: the add failed after the position was given.
    uint64_t register_write();
    void apply(const mutation& m, commitlog::replay_position rp, uint64_t phase);
    void abandon_write(uint64_t phase);
    // A commitlog entry replayed at start (rp: its position in a segment of the last run) into the active memtable.
    void apply_replayed(const mutation& m, commitlog::replay_position rp);
    // The greatest commitlog position its sstables hold (their Statistics.db commitlog intervals, loaded at
    // start() and advanced by each flush): replay skips entries at or below it. None: no sstable has one.
    const std::optional<commitlog::replay_position>& flushed_position() const noexcept { return _flushed_position; }
    // The least write timestamp of the data its commitlog segments not yet discarded may hold (the memtables'
    // least, kept until the flush that discards them): a tombstone at or above it is not purged (purge guard).
    write_time::timestamp_type min_unflushed_timestamp() const noexcept;

    // Everything in opts.range: the active memtable, the sealed ones not yet flushed, and the sstables, merged (see
    // make_combined_reader; every source with its max_timestamp; a single source is read directly, and empty
    // memtables are left out). The sources are the ones present now: a flush
    // that ends during the read leaves the memtable alive until the read is closed, a compaction keeps the old
    // sstables' files until their readers are closed. opts.slice in the read's order (reverse_ranges).
    // opts.stats, if given, counts the combined reader's skips and must outlive the reader. opts.bypass: the
    // sstables' index pages go through private caches, leaving the shard's caches as they were (CQL's BYPASS CACHE).
    // Through the row cache, unless the table has none or opts.bypass: then the sstables are read directly and the
    // row cache is neither read nor filled.
    // `permit`: the read's admission, deadline and memory account (obtain it from the shard's
    // reader_concurrency_semaphore before calling; reader_permit() has no limits); every sstable reader of the read
    // checks its deadline before each I/O and charges its buffers to it.
    mutation_reader make_reader(reader_permit permit, read_options opts);

    // A batch of single-partition reads (RocksDB's MultiGet): for each of `keys` (in ring order, distinct:
    // std::invalid_argument otherwise) what make_reader's stream of its singular range with `slice` (in `order`'s
    // order, as read_options::slice) and `order` builds into a mutation (mutation_partition_builder), or nothing
    // when no source holds the partition; reconciled by mutation::apply, so the row cache's dropped shadowed data
    // may differ as between two make_reader reads. The sources are the ones present when it starts. Keys the row
    // cache holds (the slice, or known absent) never reach the sstables; each memtable is looked at once per key;
    // the rest are read from the sstables together, sstable by sstable (sstables::locate_partitions: the bloom filter
    // probes first, one index page lookup per summary page, the small partitions' Data.db bytes read in file order,
    // nearby ones merged, before any is parsed), always forward (`order` only decides how `slice` is read), then
    // populate the cache as misses of make_reader do. `permit` covers the whole batch (its deadline, its memory).
    // `stats`, if given, counts the sstable batches' work. `bypass`: the row cache neither looked into nor filled.
    future<std::vector<std::optional<mutation>>> multi_get(reader_permit permit, std::vector<dht::decorated_key> keys,
                                                           clustering_ranges slice, read_order order = read_order::forward,
                                                           sstables::partition_batch_stats* stats = nullptr,
                                                           bypass_cache bypass = bypass_cache::no);
    // The same batch without batching (RocksDB's unbatched MultiGet): each key in turn read by a single-partition
    // read of its own into a mutation (its filter probes, index lookup and Data.db read), seeing the sources
    // present at its turn. Only the call's setup is shared: with no row cache in the read and empty memtables, a key
    // whose one source is an sstable already read in the call is read by forwarding that sstable's reader (as
    // RocksDB's Gets share their files' table readers) rather than by a new one. The reference the batched reads
    // are tested and measured against.
    future<std::vector<std::optional<mutation>>> multi_get_unbatched(reader_permit permit,
                                                                     std::vector<dht::decorated_key> keys,
                                                                     clustering_ranges slice,
                                                                     read_order order = read_order::forward,
                                                                     bypass_cache bypass = bypass_cache::no);

    // Seals the active memtable (if not empty) and flushes every sealed memtable, oldest first. A failed write
    // leaves the memtable sealed and readable (the next flush retries it) and throws.
    future<> flush();

    // Major compaction: every sstable of the set when it starts becomes one (none when nothing is left), purged by
    // the max-purgeable rule with gc_before = now - gc_grace_seconds (compaction::compact_sstables). With a
    // compaction manager it runs there (the table's running compactions are stopped first); without one, here.
    future<> compact_all(deletion_time_type now);

    // Refresh (database::load_new_sstables): each of `sources` (sstables of this table's keys, possibly of another
    // version of its columns, another host's or Cassandra's) read whole and rewritten into new sstables of this
    // table's generations holding only the partitions `owned` accepts. They are staged: not read until
    // commit_staged() adds them all to the set at once (the row cache starts over); abort_staged() deletes them.
    future<> stage_import(std::vector<sstables::descriptor> sources,
                          std::function<bool(const dht::decorated_key&)> owned);
    // The number of sstables added.
    size_t commit_staged();
    future<> abort_staged();
    // Observers (tests, metrics).
    size_t sealed_memtable_count() const noexcept { return _sealed.size(); }
    size_t sstable_count() const noexcept { return _sstables.size(); }
    std::vector<sstables::descriptor> sstable_descriptors() const;
    const std::vector<sstables::shared_sstable>& sstables() const noexcept { return _sstables; }
    const memtable& active_memtable() const noexcept { return *_active; }
    uint64_t flushes() const noexcept { return _flushes; }
    uint64_t failed_flushes() const noexcept { return _failed_flushes; }
    // The row cache (null when disabled).
    row_cache* cache() noexcept { return _cache.get(); }

private:
    void seal_active();
    std::shared_ptr<memtable> new_memtable();
    void maybe_seal_and_flush();
    void note_flushed(const sstables::shared_sstable& sst);
    // The greatest commitlog position an sstable of this host holds (none for another host's or without intervals).
    std::optional<commitlog::replay_position> own_upper_bound(const sstables::shared_sstable& sst) const;
    // Whether this host flushed sst with nothing above truncated_at.
    bool truncated_by(const sstables::shared_sstable& sst, commitlog::replay_position truncated_at) const;
    future<> flush_sealed();
    sstables::descriptor next_descriptor();
    // directory, then more_directories.
    std::vector<std::string> directories() const;
    future<std::vector<sstables::descriptor>> load_directory(std::string dir);
    // Whether this shard owns a generation (or a swap log named by one).
    bool owns_generation(const std::string& generation) const;
    // What the row cache reads: the sstable set as it is when called, merged, forward, without forwarding.
    mutation_reader make_sstables_reader(const dht::partition_range& range, const clustering_ranges& slice,
                                         reader_permit permit);
    // The sstables a read of `range` needs: for a single key, those whose bloom filter admits it; else all.
    // Inline for a key's few sstables: a single-partition read allocates no list.
    using sstable_refs = utils::small_vector<sstables::shared_sstable, 4>;
    sstable_refs sstables_for(const dht::partition_range& range) const;
    // Whether a read with `bypass` goes through the row cache (then it reads no sstable itself).
    bool reads_cache(bypass_cache bypass) const noexcept {
        return _cache && bypass == bypass_cache::no && !_sstables.empty();
    }
    // make_reader, given what sstables_for(opts.range) gave (unused when the read goes through the row cache).
    mutation_reader make_reader(reader_permit permit, read_options opts, sstable_refs ssts);
    // Rebuilds _bounds_index after _sstables changed (in the same step, before any read can use the index).
    void index_sstables();
    // _bounds_index, for a read to select sstables through: a std::logic_error naming the table if it does not
    // cover _sstables (a change to the set that skipped index_sstables()), rather than miss an sstable.
    const sstable_bounds_index& bounds_index() const;
    // multi_get of two keys or more, or with stats: the slice is forward_slice, in forward order.
    future<std::vector<std::optional<mutation>>> multi_get_batch(reader_permit permit,
                                                                 std::vector<dht::decorated_key> keys,
                                                                 clustering_ranges forward_slice,
                                                                 sstables::partition_batch_stats* stats,
                                                                 bypass_cache bypass);
    // multi_get's sstable part: what each sstable holds of keys[i] for the keys it admits, applied to out[i].
    future<> read_sstables_batch(const std::vector<sstables::shared_sstable>& ssts,
                                 const std::vector<dht::decorated_key>& keys, const clustering_ranges& forward_slice, reader_permit permit,
                                 std::vector<std::optional<mutation>>& out, sstables::partition_batch_stats* stats);

    schema_ptr _schema;
    table_config _cfg;
    std::shared_ptr<memtable> _active;
    std::deque<std::shared_ptr<memtable>> _sealed;  // oldest first
    std::vector<sstables::shared_sstable> _sstables;
    // _sstables by key bounds: rebuilt by index_sstables() in the step that changes them.
    sstable_bounds_index _bounds_index;
    std::unique_ptr<row_cache> _cache;
    uint64_t _last_generation = 0;
    std::vector<sstables::shared_sstable> _staged;
    semaphore _flush_sem{1};
    semaphore _compaction_sem{1};
    gate _background;
    // The write phase of the active memtable; writes registered and not applied yet, by phase.
    uint64_t _write_phase = 0;
    std::map<uint64_t, size_t> _writes_in_flight;
    condition_variable _writes_done;
    std::optional<commitlog::replay_position> _flushed_position;
    uint64_t _flushes = 0;
    uint64_t _failed_flushes = 0;
    bool _registered = false;
};

} // namespace reef
