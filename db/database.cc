// database: start and stop, commitlog replay, the schema seam, reads and writes; schema changes are in
// database_schema_changes.cc, snapshots in database_snapshots.cc, refresh in database_refresh.cc.
#include "db/database.hh"

#include "cache/tracker.hh"
#include "db/database_helpers.hh"

#include "commitlog/commitlog_replayer.hh"
#include "mutation/mutation_codec.hh"
#include "sstables/schema_upgrade.hh"
#include "runtime/blocking.hh"
#include "runtime/log.hh"
#include "runtime/smp.hh"
#include "runtime/with_closeable.hh"
#include "utils/json_writer.hh"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <unistd.h>

namespace reef {

using namespace db_detail;

namespace {

logger dblog("database");

clustering_ranges full_slice() { return clustering_ranges{position_range::full()}; }

keyspace_definition local_keyspace(std::string_view name) {
    return keyspace_definition{std::string(name), {{"class", "org.apache.cassandra.locator.LocalStrategy"}}, true};
}

} // namespace

namespace {

void put_u32(bytes& out, uint32_t v) {
    for (int shift = 24; shift >= 0; shift -= 8) {
        out.push_back(uint8_t(v >> shift));
    }
}

uint32_t get_u32(bytes_view in, size_t& pos, const char* what) {
    if (in.size() - pos < 4) {
        throw mutation_codec_error("schema batch: " + std::string(what) + " at offset " + std::to_string(pos) +
                                   " past the end (" + std::to_string(in.size()) + " bytes)");
    }
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) {
        v = (v << 8) | in[pos++];
    }
    return v;
}

} // namespace

bytes encode_schema_batch(const std::vector<mutation>& ms) {
    bytes out;
    put_u32(out, uint32_t(ms.size()));
    for (auto& m : ms) {
        auto one = encode_mutation(m);
        put_u32(out, uint32_t(one.size()));
        out.insert(out.end(), one.begin(), one.end());
    }
    return out;
}

std::vector<bytes_view> decode_schema_batch(bytes_view data) {
    size_t pos = 0;
    auto count = get_u32(data, pos, "the count");
    std::vector<bytes_view> out;
    for (uint32_t i = 0; i < count; ++i) {
        auto len = get_u32(data, pos, "a mutation's length");
        if (data.size() - pos < len) {
            throw mutation_codec_error("schema batch: mutation " + std::to_string(i) + " at offset " +
                                       std::to_string(pos) + " has " + std::to_string(len) + " bytes, " +
                                       std::to_string(data.size() - pos) + " left");
        }
        out.push_back(data.subspan(pos, len));
        pos += len;
    }
    if (pos != data.size()) {
        throw mutation_codec_error("schema batch: " + std::to_string(data.size() - pos) + " bytes after the last mutation");
    }
    return out;
}

namespace {

// Half of the shard's share of the machine's memory, the default budget without --memory.
size_t default_dirty_memory_limit() {
    long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
    size_t total = pages > 0 && page > 0 ? size_t(pages) * size_t(page) : size_t(1) << 30;
    return std::max<size_t>(total / smp::count() / 2, 1 << 20);
}

} // namespace

database::database(sharded<database>* container, database_config cfg)
    : _container(container), _cfg(std::move(cfg)), _generation(int32_t(db_detail::now_millis() / 1000)) {
    if (!_cfg.dirty_memory_hard_limit) {
        _cfg.dirty_memory_hard_limit = default_dirty_memory_limit();
    }
    _dirty_memory = std::make_unique<dirty_memory_manager>("regular", _cfg.dirty_memory_hard_limit,
                                                           _cfg.dirty_memory_soft_limit_fraction);
    _system_dirty_memory = std::make_unique<dirty_memory_manager>("system", _cfg.system_dirty_memory_hard_limit,
                                                                  _cfg.dirty_memory_soft_limit_fraction);
    _dirty_memory->start();
    _system_dirty_memory->start();
    _compaction_throughput = _cfg.compaction_throughput_mb_per_sec;
    compaction::compaction_manager_config ccfg;
    ccfg.throughput_bytes_per_second = (_compaction_throughput << 20) / smp::count();
    ccfg.clock = _cfg.compaction_clock;
    _compaction_manager = std::make_unique<compaction::compaction_manager>(std::move(ccfg));
    try {
        _compaction_manager->register_metrics();
    } catch (const std::invalid_argument& e) {
        dblog.debug("compaction manager metrics not registered: {}", e.what());
    }
    try {
        _metrics = register_dirty_memory_metrics(*_dirty_memory, *_system_dirty_memory);
        _metrics.add_group("database",
                           {metrics::make_counter("total_writes", _total_writes,
                                                  metrics::description("writes applied on this shard")),
                            metrics::make_counter("multi_get_batches", _multi_get_batches,
                                                  metrics::description("batched multi-partition reads on this shard")),
                            metrics::make_counter("multi_get_keys", _multi_get_keys,
                                                  metrics::description("partition keys read by them"))});
        _metrics.add_group("storage_proxy",
                           {metrics::make_counter("replica_cross_shard_ops", _cross_shard_ops,
                                                  metrics::description("number of operations that crossed a shard "
                                                                       "boundary"))});
        _cache_metrics = cache::shard_cache_tracker().register_metrics();
    } catch (const std::invalid_argument& e) {
        // Another database on this shard (tests) has them.
        dblog.debug("dirty memory metrics not registered: {}", e.what());
    }
}

database::~database() = default;

std::string database::table_directory(const schema& s) const {
    return _cfg.data_directory + "/" + s.keyspace() + "/" + s.table() + "-" + utils::to_string(s.id(), false);
}

std::vector<std::string> database::table_directories(const schema& s) const {
    std::vector<std::string> out{table_directory(s)};
    auto tail = "/" + s.keyspace() + "/" + s.table() + "-" + utils::to_string(s.id(), false);
    for (auto& d : _cfg.more_data_directories) {
        out.push_back(d + tail);
    }
    return out;
}

std::shared_ptr<table> database::make_table(schema_ptr s) {
    table_config cfg;
    auto dirs = table_directories(*s);
    cfg.directory = dirs.front();
    cfg.more_directories.assign(dirs.begin() + 1, dirs.end());
    cfg.shard = this_shard_id();
    cfg.shard_count = smp::count();
    cfg.memtable_flush_threshold = SIZE_MAX;  // the dirty memory manager flushes
    cfg.dirty_memory = &dirty_memory_for(*s);
    cfg.write_sstable = _cfg.write_sstable;
    cfg.commitlog = _commitlog.get();
    cfg.compaction_manager = _compaction_manager.get();
    if (_host_id != utils::uuid_bytes{}) {  // known once system.local is read (not for the system tables)
        cfg.host_id = _host_id;
    }
    if (auto it = _truncated_at.find(s->id()); it != _truncated_at.end()) {
        cfg.truncated_at = it->second;
    }
    return std::make_shared<table>(std::move(s), std::move(cfg));
}

dirty_memory_manager& database::dirty_memory_for(const schema& s) noexcept {
    return schema_tables::is_system_keyspace(s.keyspace()) ? *_system_dirty_memory : *_dirty_memory;
}

future<> database::add_table_local(schema_ptr s) {
    auto t = make_table(s);
    co_await t->start();
    auto e = std::make_unique<table_entry>();
    e->t = std::move(t);
    _by_name[{s->keyspace(), s->table()}] = s->id();
    _tables[s->id()] = std::move(e);
}

table* database::find_table(const table_id& id) {
    auto it = _tables.find(id);
    return it == _tables.end() ? nullptr : it->second->t.get();
}

const keyspace_definition* database::find_keyspace(std::string_view name) const {
    auto it = _keyspaces.find(std::string(name));
    return it == _keyspaces.end() ? nullptr : &it->second;
}

std::vector<std::string> database::keyspace_names() const {
    std::vector<std::string> out;
    for (auto& [name, ks] : _keyspaces) {
        out.push_back(name);
    }
    return out;
}

schema_ptr database::find_schema(std::string_view keyspace, std::string_view table) const {
    auto it = _by_name.find({std::string(keyspace), std::string(table)});
    if (it == _by_name.end()) {
        return nullptr;
    }
    return _tables.at(it->second)->t->schema();
}

std::vector<schema_ptr> database::tables_of(std::string_view keyspace) const {
    std::vector<schema_ptr> out;
    for (auto& [name, id] : _by_name) {
        if (name.first == keyspace) {
            out.push_back(_tables.at(id)->t->schema());
        }
    }
    return out;
}

data_type database::find_type(std::string_view keyspace, std::string_view name) const {
    auto it = _types.find({std::string(keyspace), std::string(name)});
    return it == _types.end() ? nullptr : it->second;
}

std::vector<data_type> database::types_of(std::string_view keyspace) const {
    std::vector<data_type> out;
    for (auto& [key, t] : _types) {
        if (key.first == keyspace) {
            out.push_back(t);
        }
    }
    return out;
}

// ---- start and stop ----

future<> database::start_system_tables_local() {
    _keyspaces[std::string(schema_tables::system_keyspace)] = local_keyspace(schema_tables::system_keyspace);
    _keyspaces[std::string(schema_tables::system_schema_keyspace)] = local_keyspace(schema_tables::system_schema_keyspace);
    _keyspaces[std::string(schema_tables::system_virtual_schema_keyspace)] =
        local_keyspace(schema_tables::system_virtual_schema_keyspace);
    for (auto& s : schema_tables::all_tables()) {
        co_await add_table_local(s);
    }
}

future<> database::start() {
    if (_started) {
        throw std::logic_error("database::start called twice");
    }
    // The generation space of each shard (db/README.md) holds only for the shard count that wrote it.
    auto dir = _cfg.data_directory;
    unsigned count = smp::count();
    co_await run_blocking([&dir, count] {
        std::filesystem::create_directories(dir);
        auto path = dir + "/reef-shard-count";
        if (std::filesystem::exists(path)) {
            std::ifstream in(path);
            unsigned written = 0;
            if (!(in >> written) || written == 0) {
                throw std::runtime_error(path + ": not a shard count");
            }
            if (written != count) {
                throw std::runtime_error(dir + " was written by " + std::to_string(written) + " shards, this node runs " +
                                         std::to_string(count) + " (resharding is not implemented)");
            }
        } else {
            std::ofstream out(path);
            out << count << "\n";
            if (!out.flush()) {
                throw std::runtime_error(path + ": cannot write the shard count");
            }
        }
    });
    auto open_log = [](database& db) { return db.open_commitlog_local(); };
    co_await _container->invoke_on_all(open_log);
    auto start_system = [](database& db) { return db.start_system_tables_local(); };
    co_await _container->invoke_on_all(start_system);
    // Replay, first the schema changes and the system tables' entries, so that the user tables open under the
    // schema the last run had (old or new for a change in progress, never a mix).
    auto replay_start = std::chrono::steady_clock::now();
    auto add_up = [](replay_summary a, replay_summary b) {
        a.segments += b.segments;
        a.replayed += b.replayed;
        a.skipped += b.skipped;
        a.no_table += b.no_table;
        a.corrupt += b.corrupt;
        a.schema_batches += b.schema_batches;
        return a;
    };
    auto system_pass = [](database& db) { return db.replay_local(true); };
    auto replayed = co_await _container->map_reduce0(system_pass, replay_summary{}, add_up);

    auto full = dht::partition_range::full();
    auto ks_ms = co_await query(schema_tables::keyspaces(), full, full_slice());
    auto table_ms = co_await query(schema_tables::tables(), full, full_slice());
    auto column_ms = co_await query(schema_tables::columns(), full, full_slice());
    auto type_ms = co_await query(schema_tables::types(), full, full_slice());
    auto local_ms = co_await query(schema_tables::local(), full, full_slice());
    auto cat = schema_tables::read_catalog(ks_ms, table_ms, column_ms, type_ms);
    auto identity = schema_tables::read_local_identity(local_ms);
    auto truncations = schema_tables::read_truncation_records(local_ms);
    if (!identity) {
        // A new node: a host id and one random token, kept across restarts in system.local.
        identity.emplace();
        identity->host_id = utils::make_random_uuid();
        std::mt19937_64 rng(std::random_device{}());
        identity->tokens.push_back(std::to_string(int64_t(rng())));
    }
    auto install = [cat, identity = *identity, truncations](database& db) -> future<> {
        for (auto& [id, r] : truncations) {
            if (this_shard_id() < r.positions.size()) {
                db._truncated_at[id] = r.positions[this_shard_id()];
            }
        }
        for (auto& [name, ks] : cat.keyspaces) {
            db._keyspaces[name] = ks;
        }
        db._types = cat.types;
        db._host_id = identity.host_id;
        db._tokens = identity.tokens;
        for (auto& s : cat.tables) {
            co_await db.add_table_local(s);
        }
        db._started = true;
    };
    co_await _container->invoke_on_all(install);
    auto user_pass = [](database& db) { return db.replay_local(false); };
    auto user = co_await _container->map_reduce0(user_pass, replay_summary{}, add_up);
    replayed = add_up(replayed, user);
    replayed.segments = user.segments;
    if (replayed.segments) {
        // What was replayed goes to sstables before the segments that held it go.
        co_await flush_all();
        auto remove = [](database& db) { return db.delete_replayed_local(); };
        co_await _container->invoke_on_all(remove);
    }
    replayed.millis = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - replay_start).count();
    _replay = replayed;
    dblog.info("commitlog replay: {} segments, {} entries replayed, {} skipped (flushed), {} of dropped tables, "
               "{} corrupt, {} schema changes, in {:.1f} ms",
               replayed.segments, replayed.replayed, replayed.skipped, replayed.no_table, replayed.corrupt,
               replayed.schema_batches, replayed.millis);
    dblog.info("started: {} keyspaces, {} tables, host id {}", cat.keyspaces.size(), cat.tables.size(),
               utils::to_string(_host_id));

    // The system keyspaces' own schema rows (rewritten at each start, as Cassandra's saveSystemKeyspacesSchema),
    // which drivers and cqlsh read, and system.local.
    auto system_rows = [](database& db) -> future<> {
        co_await db._schema_sem.wait();
        std::exception_ptr err;
        try {
            int64_t ts = db.next_schema_timestamp();
            // Several batches (the keyspaces' rows, then one per table): together they pass half of a small
            // commitlog segment, the most one entry may take. Rewritten whole at each start, they need no atomicity:
            // the timestamps order them.
            std::vector<std::vector<mutation>> batches(1);
            for (auto ks : {schema_tables::system_keyspace, schema_tables::system_schema_keyspace}) {
                for (auto& m : schema_tables::drop_keyspace_mutations(std::string(ks), ts)) {
                    batches[0].push_back(std::move(m));
                }
                for (auto& m : schema_tables::create_keyspace_mutations(local_keyspace(ks), ts + 1)) {
                    batches[0].push_back(std::move(m));
                }
            }
            for (auto& s : schema_tables::all_tables()) {
                if (s->keyspace() != schema_tables::system_virtual_schema_keyspace) {
                    batches.push_back(schema_tables::table_mutations(*s, ts + 1));
                }
            }
            batches.push_back(schema_tables::virtual_schema_mutations(ts + 1));
            db._last_schema_ts = ts + 1;
            for (auto& batch : batches) {
                co_await db.apply_schema_mutations(std::move(batch));
            }
            co_await db.notify_schema_changed();
        } catch (...) {
            err = std::current_exception();
        }
        db._schema_sem.signal();
        if (err) {
            std::rethrow_exception(err);
        }
    };
    co_await _container->invoke_on(0, system_rows);
}

future<> database::stop() {
    co_await _background.close();
    // No compaction runs or starts from here (the flushes below submit none).
    co_await _compaction_manager->drain();
    // A clean shutdown writes every memtable (each flush releases its commitlog segments); a crash does not.
    std::vector<std::shared_ptr<table>> tables;
    for (auto& [id, e] : _tables) {
        tables.push_back(e->t);
    }
    for (auto& t : tables) {
        if (!_crashed) {
            try {
                co_await t->flush();
            } catch (const std::exception& e) {
                dblog.error("{}: flush at stop failed: {}", qualified(t->schema()->keyspace(), t->schema()->table()),
                            e.what());
            }
        }
        co_await t->stop();
    }
    for (auto& [id, e] : _tables) {
        e->resumed.broken();
    }
    co_await _dirty_memory->stop();
    co_await _system_dirty_memory->stop();
    if (_commitlog) {
        co_await _commitlog->close();
    }
}

future<> database::drain() {
    // Compactions stop first (as ScyllaDB's drain): what they wrote so far is dropped, their inputs stay.
    auto stop_compactions = [](database& db) { return db._compaction_manager->drain(); };
    co_await _container->invoke_on_all(stop_compactions);
    co_await flush_all();
    co_await close_commitlog();
}

future<> database::close_commitlog() {
    auto release_schema = [](database& db) -> future<> {
        if (db._last_schema_batch) {
            co_await db._commitlog->discard_completed_segments(schema_batch_table_id, *db._last_schema_batch);
        }
    };
    co_await _container->invoke_on(0, release_schema);
    auto close = [](database& db) -> future<> { co_await db._commitlog->close(); };
    co_await _container->invoke_on_all(close);
}

future<> database::crash_for_tests() {
    _crashed = true;
    if (_commitlog) {
        co_await _commitlog->close();
    }
}

// ---- the commitlog: opening, replay, flush requests ----

future<> database::open_commitlog_local() {
    auto cfg = _cfg.commitlog;
    if (cfg.commitlog_directory.empty()) {
        auto data = std::filesystem::path(_cfg.data_directory).lexically_normal();
        if (data.filename().empty()) {
            data = data.parent_path();
        }
        cfg.commitlog_directory = (data.parent_path() / "commitlog").string();
    }
    auto& dir = cfg.commitlog_directory;
    co_await run_blocking([&dir] { std::filesystem::create_directories(dir); });
    // Listed before the log opens: its own segments get ids above these.
    _replay_segments = co_await commitlog::commitlog_replayer::list_segments(dir, this_shard_id());
    cfg.request_flush = [this](std::vector<table_id> tables, commitlog::replay_position) {
        if (!_background.try_enter()) {
            return;
        }
        spawn([this, tables = std::move(tables)]() -> future<> {
            try {
                co_await flush_requested(tables);
            } catch (const std::exception& e) {
                dblog.warn("flush asked by the commitlog failed: {}", e.what());
            }
            _background.leave();
        });
    };
    _commitlog = co_await commitlog::commitlog::create(std::move(cfg), this_shard_id());
}

future<> database::flush_requested(std::vector<table_id> tables) {
    for (auto& id : tables) {
        if (id == schema_batch_table_id) {
            // Shard 0's schema changes: their mutations are in the system_schema memtables of every shard.
            auto up_to = _last_schema_batch;
            auto flush_schema = [](database& db) -> future<> {
                for (auto& s : schema_tables::all_tables()) {
                    if (auto* t = db.find_table(s->id())) {
                        co_await t->flush();
                    }
                }
            };
            co_await _container->invoke_on_all(flush_schema);
            if (up_to) {
                co_await _commitlog->discard_completed_segments(schema_batch_table_id, *up_to);
            }
        } else if (auto it = _tables.find(id); it != _tables.end()) {
            auto t = it->second->t;
            co_await t->flush();
        }
    }
}

future<replay_summary> database::replay_local(bool system_tables_pass) {
    replay_summary sum;
    std::map<table_id, std::pair<uint64_t, uint64_t>> per_table;  // replayed, skipped
    commitlog::commitlog_replayer::callback cb = [this, system_tables_pass, &sum,
                                                  &per_table](const commitlog::replay_entry& e) -> future<bool> {
        if (e.table == schema_batch_table_id) {
            if (!system_tables_pass) {
                co_return false;
            }
            // Always re-applied (schema mutations are idempotent): each one to its owner shard's memtable.
            std::vector<mutation> ms;
            try {
                for (auto one : decode_schema_batch(e.data)) {
                    auto* t = find_table(encoded_mutation_table_id(one));
                    if (!t) {
                        throw mutation_codec_error("schema batch: a mutation of a table that is not a schema table");
                    }
                    ms.push_back(decode_mutation(t->schema(), one));
                }
            } catch (const mutation_codec_error& ex) {
                ++sum.corrupt;
                dblog.error("commitlog replay: schema change at {} not applied: {}", e.position.to_string(), ex.what());
                co_return false;
            }
            for (auto& m : ms) {
                auto shard = dht::shard_of(m.decorated_key().get_token(), smp::count());
                auto hop = [m = std::move(m)](database& db) mutable { return db.apply_unlogged_local(std::move(m)); };
                co_await _container->invoke_on(shard, std::move(hop));
            }
            ++sum.schema_batches;
            co_return true;
        }
        auto it = _tables.find(e.table);
        if (it == _tables.end()) {
            sum.no_table += system_tables_pass ? 0 : 1;
            co_return false;
        }
        auto t = it->second->t;
        if (schema_tables::is_system_keyspace(t->schema()->keyspace()) != system_tables_pass) {
            co_return false;
        }
        // Cassandra's rule: what the table's sstables hold (their greatest commitlog upper bound) is not applied
        // twice; nor what a TRUNCATE removed (the flushed position starts at the truncation position).
        if (t->flushed_position() && e.position <= *t->flushed_position()) {
            ++sum.skipped;
            ++per_table[e.table].second;
            co_return false;
        }
        std::optional<mutation> m;
        try {
            m.emplace(decode_mutation(t->schema(), e.data));
        } catch (const mutation_codec_error& ex) {
            ++sum.corrupt;
            dblog.error("commitlog replay: entry at {} of {} not applied: {}", e.position.to_string(),
                        qualified(t->schema()->keyspace(), t->schema()->table()), ex.what());
            co_return false;
        }
        auto shard = dht::shard_of(m->decorated_key().get_token(), smp::count());
        if (shard == this_shard_id()) {
            // Replay too waits for memory: the manager flushes what was replayed so far.
            auto reservation = co_await dirty_memory_for(*t->schema()).reserve(memtable::apply_bound(*t->schema(), *m));
            t->apply_replayed(*m, e.position);
        } else {
            // Written under the same shard count (start() checks), so this does not happen; kept correct anyway.
            auto hop = [m = std::move(*m)](database& db) mutable { return db.apply_unlogged_local(std::move(m)); };
            co_await _container->invoke_on(shard, std::move(hop));
        }
        ++sum.replayed;
        ++per_table[e.table].first;
        co_return true;
    };
    auto st = co_await commitlog::commitlog_replayer::replay_files(_replay_segments, cb);
    sum.segments = st.segments;
    if (system_tables_pass) {
        sum.corrupt += st.corrupt;  // the segments' own: counted once, in the first pass
    }
    for (auto& [id, counts] : per_table) {
        if (auto* t = find_table(id)) {
            dblog.info("commitlog replay on shard {}: {}: {} entries replayed, {} skipped", this_shard_id(),
                       qualified(t->schema()->keyspace(), t->schema()->table()), counts.first, counts.second);
        }
    }
    co_return sum;
}

future<> database::delete_replayed_local() {
    for (auto& path : _replay_segments) {
        co_await remove_file(path);
    }
    _replay_segments.clear();
}

// ---- the schema seam ----

int64_t database::next_schema_timestamp() {
    _last_schema_ts = std::max(now_micros(), _last_schema_ts + 1);
    return _last_schema_ts;
}

future<> database::apply_schema_mutations(std::vector<mutation> ms) {
    if (this_shard_id() != 0) {
        throw std::logic_error("apply_schema_mutations runs on shard 0");
    }
    // One entry for the whole change: replay applies all of it or (a torn tail) none.
    auto data = encode_schema_batch(ms);
    auto rp = co_await _commitlog->add(schema_batch_table_id, data);
    _last_schema_batch = rp;
    std::vector<future<>> writes;
    for (auto& m : ms) {
        auto shard = dht::shard_of(m.decorated_key().get_token(), smp::count());
        auto hop = [m = std::move(m)](database& db) mutable { return db.apply_unlogged_local(std::move(m)); };
        writes.push_back(_container->invoke_on(shard, std::move(hop)));
    }
    co_await when_all(std::move(writes));
}

future<> database::notify_schema_changed() {
    // system.local.schema_version: a new UUID per change (drivers compare it across nodes for agreement).
    schema_tables::local_info info{_cfg.cluster_name, _host_id, _tokens, utils::make_time_uuid(), _cfg.release_version};
    info.listen_address = _cfg.listen_address;
    info.listen_port = _cfg.storage_port;
    info.rpc_address = _cfg.rpc_address;
    info.rpc_port = _cfg.native_transport_port;
    info.gossip_generation = _generation;
    std::vector<mutation> ms;
    ms.push_back(schema_tables::local_mutation(info, next_schema_timestamp()));
    co_await apply_schema_mutations(std::move(ms));
}

// ---- reads, writes, flushes ----

database::table_entry& database::entry_for_write(const table_id& id) {
    auto it = _tables.find(id);
    if (it == _tables.end()) {
        throw no_such_table("no table " + utils::to_string(id) + " on shard " + std::to_string(this_shard_id()));
    }
    return *it->second;
}

future<> database::apply(mutation m) {
    auto shard = dht::shard_of(m.decorated_key().get_token(), smp::count());
    if (shard == this_shard_id()) {
        co_await apply_local(std::move(m));
        co_return;
    }
    note_cross_shard_op();
    auto hop = [m = std::move(m)](database& db) mutable { return db.apply_local(std::move(m)); };
    co_await _container->invoke_on(shard, std::move(hop));
}

future<> database::apply_local(mutation m) {
    auto id = m.schema()->id();
    auto started = utils::rate_meter::clock::now();
    // Memory first, before the write has a commitlog position: a flush waits for the writes of its memtable's
    // phase, so a write must never wait for memory once it belongs to one.
    auto& dirty = dirty_memory_for(*entry_for_write(id).t->schema());
    auto reservation = co_await dirty.reserve(memtable::apply_bound(*entry_for_write(id).t->schema(), m));
    while (entry_for_write(id).paused) {
        co_await entry_for_write(id).resumed.wait();
    }
    auto& e = entry_for_write(id);
    auto t = e.t;
    gate::holder writing(*e.writes);
    // First the commitlog (its position registers the write in the table's write phase), then the memtable.
    auto data = encode_mutation(m);
    uint64_t phase = 0;
    bool positioned = false;
    table* tp = t.get();
    std::function<void(commitlog::replay_position)> on_position = [tp, &phase, &positioned](commitlog::replay_position) {
        phase = tp->register_write();
        positioned = true;
    };
    commitlog::replay_position rp;
    try {
        rp = co_await _commitlog->add(id, data, on_position);
    } catch (...) {
        if (positioned) {
            t->abandon_write(phase);
        }
        throw;
    }
    if (m.schema() != t->schema()) {
        t->apply(upgrade_mutation(m, t->schema()), rp, phase);
    } else {
        t->apply(m, rp, phase);
    }
    ++_total_writes;
    if (auto* stats = find_table_stats(id)) {
        stats->writes.record(started, utils::rate_meter::clock::now());
    }
}

future<> database::apply_unlogged_local(mutation m) {
    auto id = m.schema()->id();
    while (entry_for_write(id).paused) {
        co_await entry_for_write(id).resumed.wait();
    }
    auto& t = *entry_for_write(id).t;
    if (m.schema() != t.schema()) {
        t.apply(upgrade_mutation(m, t.schema()));
    } else {
        t.apply(m);
    }
}

namespace {

// The one place the database makes a table reader: the whole read into mutations.
future<std::vector<mutation>> read_mutations(std::shared_ptr<table> t, const dht::partition_range& range,
                                             clustering_ranges slice, bool reversed) {
    auto r = t->make_reader(reader_permit(), {.range = range, .slice = std::move(slice), .order = read_order_for(reversed)});
    std::vector<mutation> out;
    mutation_partition_builder builder(t->schema(), reversed);
    co_await with_closeable(std::move(r), [&out, &builder](mutation_reader& r) -> future<> {
        while (!r.done()) {
            if (r.is_buffer_empty()) {
                co_await r.fill_buffer();
                continue;
            }
            while (!r.is_buffer_empty()) {
                if (auto m = builder.consume(r.pop_mutation_fragment())) {
                    out.push_back(std::move(*m));
                }
            }
        }
    });
    co_return out;
}

} // namespace

future<std::vector<mutation>> database::query_local(table_id id, dht::partition_range range, clustering_ranges slice,
                                                    bool reversed) {
    auto it = _tables.find(id);
    if (it == _tables.end()) {
        throw no_such_table("no table " + utils::to_string(id) + " on shard " + std::to_string(this_shard_id()));
    }
    // Held for the read: an ALTER or DROP replacing the table leaves this version alive until the read ends.
    auto t = it->second->t;
    auto started = utils::rate_meter::clock::now();
    auto out = co_await read_mutations(t, range, std::move(slice), reversed);
    if (auto* stats = find_table_stats(id)) {
        stats->reads.record(started, utils::rate_meter::clock::now());
    }
    co_return out;
}

table_stats* database::find_table_stats(const table_id& id) noexcept {
    auto it = _tables.find(id);
    return it == _tables.end() ? nullptr : &it->second->stats;
}

future<> database::drop_caches() {
    // The shard's tracker holds every cache of the database's tables (make_table leaves
    // table_config::cache_tracker null), the row caches' entries included.
    auto drop = [](database&) { cache::drop_caches(); };
    co_await _container->invoke_on_all(drop);
}

future<std::vector<mutation>> database::query(schema_ptr s, dht::partition_range range, clustering_ranges slice,
                                              bool reversed) {
    auto id = s->id();
    if (range.is_singular() && range.start()->position.key()) {
        auto shard = dht::shard_of(range.start()->position.get_token(), smp::count());
        if (shard != this_shard_id()) {
            note_cross_shard_op();
        }
        auto one = [id, range, slice, reversed](database& db) { return db.query_local(id, range, slice, reversed); };
        co_return co_await _container->invoke_on(shard, one);
    }
    // Every shard reads its partitions of the range; each result is in ring order and the shards' partitions are
    // disjoint, so a k-way merge by key gives the ring order.
    std::vector<future<std::vector<mutation>>> parts;
    for (shard_id sh = 0; sh < smp::count(); ++sh) {
        auto one = [id, range, slice, reversed](database& db) { return db.query_local(id, range, slice, reversed); };
        parts.push_back(_container->invoke_on(sh, one));
    }
    auto results = co_await when_all(std::move(parts));
    std::vector<mutation> out;
    for (auto& part : results) {
        std::vector<mutation> merged;
        merged.reserve(out.size() + part.size());
        std::merge(std::make_move_iterator(out.begin()), std::make_move_iterator(out.end()),
                   std::make_move_iterator(part.begin()), std::make_move_iterator(part.end()), std::back_inserter(merged),
                   [](const mutation& a, const mutation& b) { return a.decorated_key() < b.decorated_key(); });
        out = std::move(merged);
    }
    co_return out;
}

future<std::vector<mutation>> database::multi_get_local(table_id id, std::vector<dht::decorated_key> keys,
                                                        clustering_ranges slice, bool reversed,
                                                        read_clock::time_point timeout, bypass_cache bypass) {
    auto it = _tables.find(id);
    if (it == _tables.end()) {
        throw no_such_table("no table " + utils::to_string(id) + " on shard " + std::to_string(this_shard_id()));
    }
    auto t = it->second->t;  // held for the read, as query_local's
    auto started = utils::rate_meter::clock::now();
    ++_multi_get_batches;
    _multi_get_keys += keys.size();
    reader_permit permit("multi_get of " + t->schema()->keyspace() + "." + t->schema()->table(), timeout);
    auto found = co_await t->multi_get(std::move(permit), std::move(keys), std::move(slice), read_order_for(reversed),
                                       nullptr, bypass);
    if (auto* stats = find_table_stats(id)) {
        stats->reads.record(started, utils::rate_meter::clock::now());
    }
    std::vector<mutation> out;
    out.reserve(found.size());
    for (auto& m : found) {
        if (m) {
            out.push_back(std::move(*m));
        }
    }
    co_return out;
}

future<std::vector<mutation>> database::multi_get(schema_ptr s, std::vector<partition_key> keys, clustering_ranges slice,
                                                  bool reversed, read_clock::time_point timeout, bypass_cache bypass) {
    auto id = s->id();
    // Each shard's keys in ring order, duplicates dropped.
    std::vector<std::vector<dht::decorated_key>> by_shard(smp::count());
    for (auto& k : keys) {
        dht::decorated_key dk(std::move(k));
        by_shard[dht::shard_of(dk.get_token(), smp::count())].push_back(std::move(dk));
    }
    std::vector<future<std::vector<mutation>>> parts;
    for (shard_id sh = 0; sh < smp::count(); ++sh) {
        auto& ks = by_shard[sh];
        if (ks.empty()) {
            continue;
        }
        std::sort(ks.begin(), ks.end());
        ks.erase(std::unique(ks.begin(), ks.end()), ks.end());
        auto one = [id, ks = std::move(ks), slice, reversed, timeout, bypass](database& db) {
            return db.multi_get_local(id, ks, slice, reversed, timeout, bypass);
        };
        parts.push_back(_container->invoke_on(sh, std::move(one)));
    }
    auto results = co_await when_all(std::move(parts));
    std::vector<mutation> out;
    for (auto& part : results) {
        for (auto& m : part) {
            out.push_back(std::move(m));
        }
    }
    auto type = s->partition_key_type();
    std::stable_sort(out.begin(), out.end(), [&type](const mutation& a, const mutation& b) {
        return type->compare(to_bytes_view(a.decorated_key().key().view()), to_bytes_view(b.decorated_key().key().view())) < 0;
    });
    co_return out;
}

future<> database::compact(std::string keyspace, std::vector<std::string> tables) {
    if (!find_keyspace(keyspace)) {
        throw no_such_table("no keyspace " + keyspace);
    }
    std::vector<table_id> ids;
    if (tables.empty()) {
        for (auto& s : tables_of(keyspace)) {
            ids.push_back(s->id());
        }
    }
    for (auto& name : tables) {
        auto s = find_schema(keyspace, name);
        if (!s) {
            throw no_such_table("no table " + qualified(keyspace, name));
        }
        ids.push_back(s->id());
    }
    auto one = [ids](database& db) -> future<> {
        for (auto& id : ids) {
            // Held: a concurrent DROP stops the compaction (compaction_stopped), the table stays valid.
            if (auto t = db.find_table_shared(id)) {
                co_await t->compact_all(deletion_time_type(std::time(nullptr)));
            }
        }
    };
    co_await _container->invoke_on_all(one);
}

future<> database::set_compaction_throughput(uint64_t mb_per_sec) {
    auto one = [mb_per_sec](database& db) {
        db._compaction_throughput = mb_per_sec;
        db._compaction_manager->set_throughput_bytes_per_second((mb_per_sec << 20) / smp::count());
    };
    co_await _container->invoke_on_all(one);
}

future<> database::flush(std::string keyspace, std::string table) {
    auto s = find_schema(keyspace, table);
    if (!s) {
        throw no_such_table("no table " + qualified(keyspace, table));
    }
    auto id = s->id();
    auto one = [id](database& db) -> future<> {
        if (auto* t = db.find_table(id)) {
            co_await t->flush();
        }
    };
    co_await _container->invoke_on_all(one);
}

future<> database::flush_all() {
    auto all = [](database& db) -> future<> {
        std::vector<std::shared_ptr<table>> tables;
        for (auto& [id, e] : db._tables) {
            tables.push_back(e->t);
        }
        for (auto& t : tables) {
            co_await t->flush();
        }
    };
    co_await _container->invoke_on_all(all);
}

} // namespace reef
