// database: one shard's part of the node's data (sharded<database>): keyspaces, user types and tables, every table
// on every shard, each partition on its owner shard (dht::shard_of); schema changes decided once on shard 0, stored
// as mutations of the system_schema tables and applied on every shard; reads, writes, flushes, snapshots.
#pragma once

#include "commitlog/commitlog.hh"
#include "commitlog/commitlog_config.hh"
#include "compaction/compaction_manager.hh"
#include "db/dirty_memory_manager.hh"
#include "db/schema_tables.hh"
#include "db/table.hh"
#include "mutation/mutation.hh"
#include "mutation/partition_range.hh"
#include "reader/position_range.hh"
#include "runtime/condition_variable.hh"
#include "runtime/future.hh"
#include "runtime/gate.hh"
#include "runtime/metrics.hh"
#include "runtime/semaphore.hh"
#include "runtime/sharded.hh"
#include "schema/keyspace.hh"
#include "schema/schema.hh"
#include "utils/uuid.hh"

#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace reef {

struct table_stats;

// The table id of a commitlog entry holding all the mutations of one schema change (db/README.md, "Durability"):
// no table has it (a time UUID's version nibble is 1, a name-based one's 3; this one's is f).
inline constexpr table_id schema_batch_table_id{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                                 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

// A schema batch entry's data: a 4-byte big-endian count, then per mutation a 4-byte big-endian length and its
// encode_mutation bytes; and back (throws mutation_codec_error naming the offset of bad bytes).
bytes encode_schema_batch(const std::vector<mutation>& ms);
std::vector<bytes_view> decode_schema_batch(bytes_view data);

// What a start's commitlog replay did (summed over the shards).
struct replay_summary {
    uint64_t segments = 0;
    uint64_t replayed = 0;        // entries applied
    uint64_t skipped = 0;         // entries at or below their table's flushed position
    uint64_t no_table = 0;        // entries of tables that no longer exist
    uint64_t corrupt = 0;         // corrupt entries (the segment's framing or the mutation's bytes)
    uint64_t schema_batches = 0;  // schema changes re-applied
    double millis = 0;            // the replay, flushes and deletions included
};

struct database_config {
    // Cassandra's layout: <data_directory>/<keyspace>/<table>-<id, 32 hex digits>/, shared by the shards
    // (db/README.md, "Sharing a table directory").
    std::string data_directory;
    // Further data directories (data_file_directories past the first): each holds the same layout and a share of
    // every table's sstables (new ones go to the directories in turn); snapshots link within each directory.
    // data_directory keeps reef-shard-count and locates the default commitlog directory.
    std::vector<std::string> more_data_directories;
    std::string cluster_name = "Test Cluster";
    // DROP TABLE, DROP KEYSPACE and TRUNCATE first hard-link the table's sstables into
    // snapshots/dropped-<millis>-<table> / truncated-<millis>-<table> (Cassandra's auto_snapshot).
    bool auto_snapshot = true;
    // The shard's dirty memory budget for the user tables' memtables (db/README.md, "Memory"): flushes start when
    // the memtables not being flushed hold more than soft_limit_fraction of it (largest first), writes wait while
    // all of them hold it. 0: half of the shard's share of the machine's memory (the node passes half of its
    // --memory share, as ScyllaDB does).
    size_t dirty_memory_hard_limit = 0;
    double dirty_memory_soft_limit_fraction = dirty_memory_manager::default_soft_limit_fraction;
    // The system tables' own budget, so that they never wait behind user writes (ScyllaDB's 10 MB).
    size_t system_dirty_memory_hard_limit = 10 << 20;
    // system.local.release_version: the Cassandra Reef answers like (../shared/cql-conformance was recorded from
    // 5.0.9). Apache cqlsh sends DESCRIBE to the server when it is 4 or more, which cql/describe_statement.cc
    // answers (below 4 it refuses to DESCRIBE at all; ../shared/notes/cql-clients.md, part E).
    std::string release_version = "5.0.9";
    // What system.local says of where the node listens (the node's listen_address, rpc_address and ports).
    std::string listen_address = "127.0.0.1";
    int32_t storage_port = 7000;
    std::string rpc_address = "127.0.0.1";
    int32_t native_transport_port = 9042;
    // Every shard's commitlog (commitlog_directory empty: <data_directory>/../commitlog). Its request_flush is
    // the database's own.
    commitlog::commitlog_config commitlog;
    // compaction_throughput_mb_per_sec: the node's, shared equally by the shards' compaction managers (0: none).
    uint64_t compaction_throughput_mb_per_sec = 0;
    // "Now" (seconds) for the background compactions' gc_grace and expiry; empty: the wall clock. Tests that
    // compare raw reads (tombstones included) with a model give -1: nothing is purged or expired.
    std::function<deletion_time_type()> compaction_clock;
    // Tests inject sstable write failures here (table_config::write_sstable).
    std::function<future<sstables::written_sstable>(mutation_reader&, schema_ptr, sstables::descriptor,
                                                     sstables::writer_options)>
        write_sstable;
};

// One table's snapshot on disk, its files' sizes summed over the data directories.
struct snapshot_details {
    std::string tag;
    std::string keyspace;
    std::string table;
    // Every file of the snapshot (manifest.json and schema.cql too).
    uint64_t total_bytes = 0;
    // The files that are not also one of the table's live sstable files: what clearing the snapshot frees.
    uint64_t live_bytes = 0;
};

// An sstable in upload/ that a refresh cannot load; what() names its file.
class refresh_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// A schema change refused: the keyspace, table or type exists already, or does not exist, or the change is invalid.
class schema_change_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};
// A write or read of a table this shard does not have (dropped, or never created).
class no_such_table : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

class database {
public:
    // `container`: the sharded<database> this instance belongs to (for the shard hops).
    database(sharded<database>* container, database_config cfg);
    database(const database&) = delete;
    ~database();

    // Call once, on any shard, after sharded::start: every shard opens the system tables (its sstables of them),
    // the schema is read from system_schema, every shard opens the user tables, system.local is written (host_id and
    // tokens kept from the last start). Refuses a data directory written with another shard count.
    future<> start();
    // Per shard (sharded::stop calls it): flushes every table (a clean shutdown loses nothing), stops them and
    // closes the commitlog (segments of the last schema change stay unless drain() ran: replayed, harmlessly).
    future<> stop();
    // From any shard, before sharded::stop: flush_all() then close_commitlog(), which leaves no segment to replay.
    future<> drain();
    // From any shard: releases the schema changes' entries (their mutations must be flushed: flush_all) and closes
    // every shard's commitlog; later writes fail.
    future<> close_commitlog();
    // Tests: a crash. Closes this shard's commitlog as it is (what was acknowledged stays on disk) and makes
    // stop() drop the memtables unflushed. Call on every shard (invoke_on_all).
    future<> crash_for_tests();
    // The last start's replay (on the shard start() was called on).
    const replay_summary& last_replay() const noexcept { return _replay; }
    // This shard's commitlog (null before start).
    commitlog::commitlog* get_commitlog() noexcept { return _commitlog.get(); }
    // This shard's dirty memory managers: the user tables' and the system tables'.
    const dirty_memory_manager& dirty_memory() const noexcept { return *_dirty_memory; }
    const dirty_memory_manager& system_dirty_memory() const noexcept { return *_system_dirty_memory; }

    // Schema changes, from any shard: decided on shard 0 (one at a time), written as one vector of mutations
    // through apply_schema_mutations, then applied on every shard. Refusals throw schema_change_error.
    future<> create_keyspace(keyspace_definition ks);
    // ALTER KEYSPACE: a new replication map and durable_writes for an existing keyspace.
    future<> alter_keyspace(keyspace_definition ks);
    // Drops its tables (auto_snapshot applies) and types too.
    future<> drop_keyspace(std::string name);
    // A user type (user_type(...), multi-cell) of an existing keyspace; `replace` allows ALTER TYPE's new version.
    future<> create_type(data_type type, bool replace = false);
    future<> drop_type(std::string keyspace, std::string name);
    // Creates `s` (its keyspace must exist) under a new time UUID; returns the schema as created (with that id).
    future<schema_ptr> create_table(schema_ptr s);
    // ALTER TABLE ADD / DROP: static and regular columns only (kind static_column or regular_column in `add`).
    // Returns the new schema (same id). Data of dropped columns stays in sstables, unread.
    future<schema_ptr> alter_table(std::string keyspace, std::string table, std::vector<column_definition> add,
                                   std::vector<std::string> drop);
    // ALTER TABLE's general form (ADD, DROP, RENAME of primary key columns, WITH): `altered` is a new version of
    // an existing table (same keyspace, name and id) whose primary key keeps its columns' kinds, types and order
    // (names may change); columns of the old version it lacks are dropped. Returns the schema as installed.
    future<schema_ptr> alter_table(schema_ptr altered);
    future<> drop_table(std::string keyspace, std::string table);
    // Empties the table on every shard (auto_snapshot applies).
    future<> truncate(std::string keyspace, std::string table);

    // THE seam of schema durability (on shard 0): writes the mutations of one schema change as one commitlog entry
    // of schema_batch_table_id, so that a crash leaves the old or the new schema, then applies each on its owner
    // shard.
    future<> apply_schema_mutations(std::vector<mutation> ms);

    // Writes m to its owner shard's table: appended to that shard's commitlog, then applied to the memtable; the
    // future resolves then (the acknowledgement). m's schema may be an older version of
    // the table's (its cells are moved to the current columns by name). Throws no_such_table.
    future<> apply(mutation m);
    // A single-partition operation sent from this shard to its owner shard (a write, a read, a CAS): counted as
    // ScyllaDB's scylla_storage_proxy_replica_cross_shard_ops counts them, the hops shard-aware drivers avoid.
    void note_cross_shard_op() noexcept { ++_cross_shard_ops; }
    uint64_t cross_shard_ops() const noexcept { return _cross_shard_ops; }
    // The partitions of `range` (a single partition goes to its owner shard only; a range reads every shard),
    // in ring order, raw (tombstones included, not compacted), each sliced by `slice` (in the read's order: see
    // reverse_ranges) and, when reversed, built from the reversed stream. The mutations carry the table's current
    // schema. Throws no_such_table.
    future<std::vector<mutation>> query(schema_ptr s, dht::partition_range range, clustering_ranges slice,
                                        bool reversed = false);
    // CQL's `pk IN (...)`: the partitions of `keys` (table s's partition keys, serialized; any order, duplicates
    // allowed), each read as query(singular(k), slice, reversed) reads it, in one result: a key whose partition
    // nothing holds is left out, a key given twice comes once, and the partitions come sorted by the partition key
    // type's comparison (s->partition_key_type(): `k IN (5, 1, 3)` gives 1, 3, 5, -6 before 1, text and blobs by
    // bytes), as Cassandra returns them. The keys are grouped by owner shard, one call per shard, each shard's keys
    // read as one batch (table::multi_get: shared index page lookups, Data.db reads merged) under one deadline
    // (`timeout`: read_timeout_error once it passes); `bypass` as read_options::bypass. Throws no_such_table.
    future<std::vector<mutation>> multi_get(schema_ptr s, std::vector<partition_key> keys, clustering_ranges slice,
                                            bool reversed = false, read_clock::time_point timeout = no_timeout,
                                            bypass_cache bypass = bypass_cache::no);
    // This shard's multi_get batches (one per shard a multi_get's keys fall on) and the keys they read
    // (scylla_database_multi_get_batches, _keys).
    uint64_t multi_get_batches() const noexcept { return _multi_get_batches; }
    uint64_t multi_get_keys() const noexcept { return _multi_get_keys; }
    // Rows this shard's parts of query_page read (what pages cost, beside what they return).
    void note_page_rows(uint64_t n) noexcept { _page_rows += n; }
    uint64_t page_rows() const noexcept { return _page_rows; }
    // Major compaction (the REST API's keyspace_compaction) of `tables` of the keyspace (all of its tables when
    // empty) on every shard, through each shard's compaction manager. Throws no_such_table for an unknown name.
    future<> compact(std::string keyspace, std::vector<std::string> tables = {});
    // This shard's compaction manager: its running compactions, pending tasks, statistics.
    compaction::compaction_manager& get_compaction_manager() noexcept { return *_compaction_manager; }
    // Every shard's compaction throughput (MB/s of the node, 0: unlimited), as compaction_throughput_mb_per_sec.
    future<> set_compaction_throughput(uint64_t mb_per_sec);
    uint64_t compaction_throughput_mb_per_sec() const noexcept { return _compaction_throughput; }
    // Writes the memtables of a table (of every table) to sstables on every shard.
    future<> flush(std::string keyspace, std::string table);
    future<> flush_all();
    // Hard-links the sstables of every table of `keyspaces` (all user keyspaces when empty; `tables`: only these
    // tables of the one keyspace given) into <table dir>/snapshots/<tag>/ on every shard, after a flush unless
    // skip_flush; writes manifest.json and schema.cql there as Cassandra 5.0 does. Throws std::invalid_argument for
    // a bad tag, an unknown keyspace or table, or a tag a table's snapshots already have.
    future<> snapshot(std::string tag, std::vector<std::string> keyspaces = {}, std::vector<std::string> tables = {},
                      bool skip_flush = false);
    // The snapshots on disk in every data directory (of dropped tables too), per tag and table, by tag, keyspace
    // and table name.
    future<std::vector<snapshot_details>> list_snapshots() const;
    // Removes the snapshots named `tag` (every snapshot when empty) of the tables of `keyspaces` (every keyspace
    // directory when empty; `table`: only that table's), in every data directory.
    future<> clear_snapshot(std::string tag, std::vector<std::string> keyspaces = {}, std::string table = {});
    // Refresh (nodetool refresh): loads the sstables a user placed in the table's upload/ directories (any version
    // Reef reads, another host's or Cassandra's). Each is validated first (opened, its keys and columns checked
    // against the table, read whole): a bad one throws refresh_error naming its file, and nothing changes. Then each
    // shard rewrites the partitions it owns into new sstables of its own generations, all shards' are added to the
    // sets together, and the uploaded files are removed. Returns the number of sstables loaded.
    future<size_t> load_new_sstables(std::string keyspace, std::string table);

    // This shard's view (the same on every shard once a change completed).
    const keyspace_definition* find_keyspace(std::string_view name) const;
    std::vector<std::string> keyspace_names() const;
    schema_ptr find_schema(std::string_view keyspace, std::string_view table) const;
    std::vector<schema_ptr> tables_of(std::string_view keyspace) const;
    data_type find_type(std::string_view keyspace, std::string_view name) const;
    // The user types of a keyspace, by name.
    std::vector<data_type> types_of(std::string_view keyspace) const;
    // This shard's instance of a table (null if none).
    table* find_table(const table_id& id);
    // The same, held: a read keeps this version alive while an ALTER or DROP replaces it (db/query_page.cc).
    std::shared_ptr<table> find_table_shared(const table_id& id);
    // This shard's reads and writes of a table (null if none), kept across ALTER and TRUNCATE (db/table_stats.hh).
    table_stats* find_table_stats(const table_id& id) noexcept;
    // From any shard: every shard's caches emptied: the row caches' partitions, the Index.db pages and the parsed
    // index pages (what a read holds stays until it is done). The REST API's drop_sstable_caches.
    future<> drop_caches();
    // The table's directory in data_directory; table_directories: in every data directory, that one first.
    std::string table_directory(const schema& s) const;
    std::vector<std::string> table_directories(const schema& s) const;
    // data_directory, then more_data_directories.
    std::vector<std::string> data_directories() const;
    const utils::uuid_bytes& host_id() const noexcept { return _host_id; }
    const database_config& config() const noexcept { return _cfg; }

private:
    struct table_entry;

    int64_t next_schema_timestamp();
    future<> notify_schema_changed();

    // This shard's part of the changes.
    future<> add_table_local(schema_ptr s);
    future<> remove_table_local(table_id id, std::string snapshot_tag);
    // ALTER: the table flushed, stopped and started again over the same directory under `s`.
    future<> replace_table_local(table_id id, schema_ptr s);
    // TRUNCATE's two steps on this shard around the truncation record: the table paused (its writes drained),
    // flushed and snapshotted when tagged; returns the commitlog position every entry of it so far is at or below.
    future<commitlog::replay_position> prepare_truncate_local(table_id id, std::string snapshot_tag);
    // Then, the record durable (or, on failure, `abort`: the old version resumes), the old version stopped, its
    // sstables deleted, its commitlog segments released up to `position`, and an empty version started.
    future<> finish_truncate_local(table_id id, commitlog::replay_position position, bool abort);
    future<> snapshot_table_local(table& t, const std::string& tag, std::vector<std::string>& linked);
    future<> write_snapshot_metadata(schema_ptr s, std::string tag, std::vector<std::string> files);
    future<> snapshot_tables(std::string tag, std::vector<table_id> ids, bool skip_flush);
    future<size_t> load_new_sstables_on_shard0(schema_ptr s);
    std::shared_ptr<table> make_table(schema_ptr s);
    future<> start_system_tables_local();

    future<> apply_local(mutation m);
    // Into the memtable only (schema batches, whose entry is shard 0's).
    future<> apply_unlogged_local(mutation m);
    future<> open_commitlog_local();
    // Replays this shard's segments listed at start: system_tables_pass takes the schema batches and the system
    // tables' entries, the other pass the user tables'.
    future<replay_summary> replay_local(bool system_tables_pass);
    future<> delete_replayed_local();
    future<> flush_requested(std::vector<table_id> tables);
    future<std::vector<mutation>> query_local(table_id id, dht::partition_range range, clustering_ranges slice,
                                              bool reversed);
    // keys: this shard's, in ring order, distinct. The partitions some source holds, in ring order.
    future<std::vector<mutation>> multi_get_local(table_id id, std::vector<dht::decorated_key> keys,
                                                  clustering_ranges slice, bool reversed,
                                                  read_clock::time_point timeout, bypass_cache bypass);
    table_entry& entry_for_write(const table_id& id);
    dirty_memory_manager& dirty_memory_for(const schema& s) noexcept;

    sharded<database>* _container;
    database_config _cfg;
    // Before the tables: they release their memory into these when they die.
    std::unique_ptr<dirty_memory_manager> _dirty_memory;
    std::unique_ptr<dirty_memory_manager> _system_dirty_memory;
    // Before the tables too: they leave it when they stop.
    std::unique_ptr<compaction::compaction_manager> _compaction_manager;
    uint64_t _compaction_throughput = 0;
    metrics::metric_groups _metrics;
    // The shard's cache tracker's metrics (scylla_cache_*, scylla_sstables_index_*), registered by the first
    // database of the shard.
    metrics::metric_groups _cache_metrics;
    // Writes apply_local finished (scylla_database_total_writes).
    uint64_t _total_writes = 0;
    // note_cross_shard_op (scylla_storage_proxy_replica_cross_shard_ops).
    uint64_t _cross_shard_ops = 0;
    uint64_t _multi_get_batches = 0;
    uint64_t _multi_get_keys = 0;
    uint64_t _page_rows = 0;
    std::map<std::string, keyspace_definition> _keyspaces;
    std::map<std::pair<std::string, std::string>, data_type> _types;
    std::map<table_id, std::unique_ptr<table_entry>> _tables;
    std::map<std::pair<std::string, std::string>, table_id> _by_name;
    semaphore _schema_sem{1};
    // One refresh at a time (shard 0).
    semaphore _refresh_sem{1};
    int64_t _last_schema_ts = 0;
    utils::uuid_bytes _host_id{};
    std::vector<std::string> _tokens;
    // Seconds since the epoch at construction: system.local.gossip_generation.
    int32_t _generation = 0;
    bool _started = false;
    std::unique_ptr<commitlog::commitlog> _commitlog;
    // The segments of the last run, found at start, replayed, and deleted once flushed.
    std::vector<std::string> _replay_segments;
    // Shard 0: the position of the last schema batch (released by drain()).
    std::optional<commitlog::replay_position> _last_schema_batch;
    // This shard's truncation positions (system.local.truncated_at), given to the tables it makes.
    std::map<table_id, commitlog::replay_position> _truncated_at;
    bool _crashed = false;
    gate _background;
    replay_summary _replay;
};

} // namespace reef
