// The database's durability through the commitlog: random writes from every shard (with flushes under a small dirty
// memory limit), then a clean stop (drain: no segment left) or a crash (commitlog closed as it is, memtables dropped
// unflushed), a restart, and every table read against a model; a counter table proves that entries already in
// sstables are skipped (replayed twice they would add up twice); a schema change survives a crash; the flush's
// sstable carries its memtable's commitlog interval; the purge guard keeps a tombstone while the commitlog holds
// older data; a TRUNCATE's record keeps truncated data from coming back after a crash; two data directories share
// every table's sstables across restarts, snapshots and truncates.
#include "db/database.hh"
#include "mutation/counter.hh"
#include "runtime/app.hh"
#include "runtime/smp.hh"
#include "sstables/sstable.hh"
#include "sstables/writer.hh"
#include "test/lib/database_test_support.hh"
#include "test/lib/mutation_model.hh"
#include "test/lib/random_mutation.hh"
#include "test/lib/reef_test.hh"
#include "test/lib/simple_keys.hh"
#include "test/lib/tmpdir.hh"
#include "test/lib/writable_mutation.hh"

#include <boost/test/unit_test.hpp>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <random>
#include <system_error>

using namespace reef;
using namespace reef::testing;

namespace {

keyspace_definition simple_keyspace(std::string name) {
    return keyspace_definition{std::move(name), {{"class", "SimpleStrategy"}, {"replication_factor", "1"}}, true};
}

// dirty_limit: each shard's dirty memory hard limit (flushes start at 60% of it).
database_config config_in(const tmpdir& dir, size_t dirty_limit, commitlog::sync_mode mode) {
    database_config cfg;
    cfg.data_directory = dir.path() + "/data";
    cfg.dirty_memory_hard_limit = dirty_limit;
    cfg.commitlog.commitlog_directory = dir.path() + "/commitlog";
    cfg.commitlog.commitlog_sync = mode;
    cfg.commitlog.commitlog_sync_period_in_ms = 5;
    cfg.commitlog.segment_size_in_bytes = 128 * 1024;  // many segments, switched and discarded
    // Raw reads (tombstones included) are compared with the model: background compactions purge nothing.
    cfg.compaction_clock = [] { return deletion_time_type(-1); };
    return cfg;
}

// Not inside a co_await expression (coroutine rule 7).
clustering_ranges full_slice() { return clustering_ranges{position_range::full()}; }

enum class ending { drain, stop, crash };

// Runs body(db) on a database started on cfg's directories, then ends it as asked (a crash: every shard's
// commitlog closed as it is and the memtables dropped unflushed).
template <typename Body>
future<> with_database(database_config cfg, ending how, Body body) {
    sharded<database> db;
    co_await db.start(&db, cfg);
    std::exception_ptr err;
    try {
        co_await db.local().start();
        co_await body(db);
        if (how == ending::drain) {
            co_await db.local().drain();
        } else if (how == ending::crash) {
            auto crash = [](database& d) { return d.crash_for_tests(); };
            co_await db.invoke_on_all(crash);
        }
    } catch (...) {
        err = std::current_exception();
    }
    co_await db.stop();
    if (err) {
        std::rethrow_exception(err);
    }
}

future<> check_tables(database& db, const std::map<std::string, mutation_model>& models, const std::string& when) {
    auto full = dht::partition_range::full();
    for (auto& [name, model] : models) {
        auto s = db.find_schema("ks", name);
        BOOST_REQUIRE_MESSAGE(s, when << ": no table ks." << name);
        auto slice = full_slice();
        auto got = query_result_canonical(co_await db.query(s, full, slice));
        auto expected = canonical_mutations(s, expected_read(model, full, slice, false), false);
        std::erase_if(expected, is_empty);
        BOOST_REQUIRE_MESSAGE(got == expected, when << ": ks." << name << ":\n" << describe(got) << "!=\n"
                                                    << describe(expected));
    }
}

// Random writes to every random test schema's table from random shards, some explicit flushes.
future<> write_randomly(sharded<database>& db, uint64_t seed, int writes, std::map<std::string, mutation_model>& models) {
    for (auto& base : random_test_schemas()) {
        auto s = db.local().find_schema("ks", base->table());
        if (!s) {
            // Only explicit flushes and compactions change the sstables the tests count.
            schema_builder b(*base);
            b.options().other["compaction"] = "{'class': 'SizeTieredCompactionStrategy', 'enabled': 'false'}";
            auto fixed = b.build();
            s = co_await db.local().create_table(fixed);
        }
        mutation_generator g(s, seed + models.size());
        auto& model = models[s->table()];
        for (int i = 0; i < writes; ++i) {
            auto m = with_typed_values(s, g.make(pkey(g.rnd(0, 40)), 5));
            apply_to_model(model, m);
            co_await apply_from(db, shard_id(g.rnd(0, int(smp::count()) - 1)), std::move(m));
            if (g.rnd(0, 60) == 0) {
                co_await db.local().flush("ks", s->table());
            }
        }
    }
}

// Before a crash: the tables flushed, then one more write per table on every shard. A random run's last flush may
// have taken every write it made; these no flush has taken, so the restart must replay them.
future<> write_unflushed_tail(sharded<database>& db, uint64_t seed, std::map<std::string, mutation_model>& models) {
    for (auto& [table, model] : models) {
        co_await db.local().flush("ks", table);
        auto s = db.local().find_schema("ks", table);
        mutation_generator g(s, seed);
        for (unsigned shard = 0; shard < smp::count(); ++shard) {
            auto m = with_typed_values(s, g.make(pkey(g.rnd(0, 40)), 1));
            apply_to_model(model, m);
            co_await apply_from(db, shard_id(shard), std::move(m));
        }
    }
}

future<> random_writes_then(ending how, commitlog::sync_mode mode) {
        uint64_t seed = pick_seed();
        BOOST_TEST_MESSAGE("seed " << seed << " (set REEF_SEED to repeat), shards " << smp::count());
        tmpdir dir;
        auto cfg = config_in(dir, 30000, mode);
        std::map<std::string, mutation_model> models;
        for (int round = 0; round < 3; ++round) {
            auto body = [&](sharded<database>& db) -> future<> {
                if (round == 0) {
                    co_await db.local().create_keyspace(simple_keyspace("ks"));
                } else {
                    // What the last run acknowledged is all there, from sstables and replayed entries.
                    co_await check_tables(db.local(), models, "after restart " + std::to_string(round));
                    auto& r = db.local().last_replay();
                    BOOST_TEST_MESSAGE("replayed " << r.replayed << ", skipped " << r.skipped << ", corrupt " << r.corrupt);
                    BOOST_REQUIRE_EQUAL(r.corrupt, 0u);
                    if (how == ending::crash) {
                        BOOST_REQUIRE_GT(r.replayed, 0u);
                    } else {
                        BOOST_REQUIRE_EQUAL(r.replayed, 0u);
                    }
                }
                co_await write_randomly(db, seed + 100 * round, 120, models);
                if (how == ending::crash) {
                    co_await write_unflushed_tail(db, seed + 100 * round + 50, models);
                }
                co_await check_tables(db.local(), models, "before stop " + std::to_string(round));
            };
            co_await with_database(cfg, how, body);
            if (how == ending::drain) {
                BOOST_REQUIRE_EQUAL(regular_files_in(cfg.commitlog.commitlog_directory), 0u);
            }
        }
        auto last = [&](sharded<database>& db) -> future<> {
            co_await check_tables(db.local(), models, "at the end");
            BOOST_REQUIRE_EQUAL(db.local().last_replay().segments > 0, how != ending::drain);
        };
        co_await with_database(cfg, ending::drain, last);
        // Replayed segments are deleted once their data is flushed.
        BOOST_REQUIRE_EQUAL(regular_files_in(cfg.commitlog.commitlog_directory), 0u);
}

schema_ptr counter_schema() {
    return schema_builder("ks", "counts")
        .with_column("pk", int32_type(), column_kind::partition_key)
        .with_column("ck", int32_type(), column_kind::clustering_key)
        .with_column("n", counter_type(), column_kind::regular_column)
        .build();
}

// An increment as a local shard (a delta: two of them add up, as pre-2.1 Cassandra's local shards).
mutation increment(const schema_ptr& s, int key, int64_t by, int64_t ts) {
    mutation m(s, pkey(key));
    deletable_row r;
    counter_id id{};
    id[0] = 7;
    auto ctx = counter_context_builder().add_local(id, 1, by).serialize();
    apply_cell(r.cells, 0, atomic_cell::make_live(ts, ctx), s->regular_columns());
    m.partition().apply_row(*s, ck(0), r);
    return m;
}

future<int64_t> counter_value(database& db, const schema_ptr& s, int key) {
    auto k = pkey(key);
    auto pr = dht::partition_range::singular(k);
    auto slice = full_slice();
    auto got = co_await db.query(s, pr, slice);
    if (got.empty() || got[0].partition().rows().empty()) {
        co_return 0;
    }
    auto* c = got[0].partition().rows().begin()->second.cells.find(0);
    BOOST_REQUIRE(c);
    co_return counter_total(std::get<atomic_cell>(*c).value());
}

std::vector<column_definition> added_column() { return {{"w", int32_type(), column_kind::regular_column}}; }

// ks.t altered (w added), ks.counts dropped, as the crashed run left them.
void check_schema_after_crash(database& db, const table_id& id) {
    BOOST_REQUIRE(db.find_keyspace("ks"));
    auto s = db.find_schema("ks", "t");
    BOOST_REQUIRE(s);
    BOOST_REQUIRE(s->id() == id);
    BOOST_REQUIRE(s->find_column("w"));
    BOOST_REQUIRE(!db.find_schema("ks", "counts"));
    BOOST_REQUIRE_GT(db.last_replay().schema_batches, 0u);
}


schema_ptr other_schema() {
    return schema_builder("ks", "other")
        .with_column("pk", int32_type(), column_kind::partition_key)
        .with_column("ck", int32_type(), column_kind::clustering_key)
        .with_column("v", int32_type(), column_kind::regular_column)
        .build();
}

int64_t wall_millis() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

mutation row_at(const schema_ptr& s, int key, int c, int64_t ts) {
    mutation m(s, pkey(key));
    m.partition().clustered_row(ck(c)).marker.timestamp = ts;
    return m;
}

// ks.t written from every shard (a flush half way), ks.other written alongside and never flushed (its entries keep
// every segment alive), ks.t truncated, then rows written to ks.t after it; the run crashes. After the restart
// ks.t holds only the later rows: replay skips its entries at or below each shard's truncation position.
// `restore_sstables` links the truncated sstables back from their snapshot before the restart, as a crash after
// the truncation record and before their deletion would leave them.
future<> truncate_then_crash(bool auto_snapshot, bool restore_sstables) {
    uint64_t seed = pick_seed();
    BOOST_TEST_MESSAGE("seed " << seed << ", shards " << smp::count() << ", auto_snapshot " << auto_snapshot);
    std::mt19937_64 rng(seed);
    tmpdir dir;
    auto cfg = config_in(dir, 64 << 20, commitlog::sync_mode::periodic);
    cfg.auto_snapshot = auto_snapshot;
    std::map<std::string, mutation_model> models;
    int64_t ts = 1;
    std::string table_dir;
    auto body = [&](sharded<database>& db) -> future<> {
        co_await db.local().create_keyspace(simple_keyspace("ks"));
        auto t = co_await db.local().create_table(int_table_schema());
        auto o = co_await db.local().create_table(other_schema());
        table_dir = db.local().table_directory(*t);
        models["t"];
        for (int i = 0; i < 200; ++i) {
            int k = int(rng() % 50);
            co_await apply_from(db, shard_id(rng() % smp::count()), row_at(t, k, int(rng() % 3), ts++));
            auto m = row_at(o, k, int(rng() % 3), ts++);
            apply_to_model(models["other"], m);
            co_await apply_from(db, shard_id(rng() % smp::count()), std::move(m));
            if (i == 100) {
                co_await db.local().flush("ks", "t");
            }
        }
        co_await db.local().truncate("ks", "t");
        co_await check_tables(db.local(), models, "after the truncate");
        for (int i = 0; i < 20; ++i) {
            auto m = row_at(t, int(rng() % 50), 7, ts++);
            apply_to_model(models["t"], m);
            co_await apply_from(db, shard_id(rng() % smp::count()), std::move(m));
        }
    };
    co_await with_database(cfg, ending::crash, body);
    if (restore_sstables) {
        size_t linked = 0;
        for (auto& snap : std::filesystem::directory_iterator(table_dir + "/snapshots")) {
            for (auto& f : std::filesystem::directory_iterator(snap.path())) {
                auto name = f.path().filename().string();
                if (name != "manifest.json" && name != "schema.cql") {
                    std::filesystem::create_hard_link(f.path(), table_dir + "/" + name);
                    ++linked;
                }
            }
        }
        BOOST_REQUIRE_GT(linked, 0u);
    }
    auto after = [&](sharded<database>& db) -> future<> {
        co_await check_tables(db.local(), models, "after the crash");
        BOOST_REQUIRE_GT(db.local().last_replay().replayed, 0u);
    };
    co_await with_database(cfg, ending::drain, after);
    auto again = [&](sharded<database>& db) -> future<> {
        co_await check_tables(db.local(), models, "after a clean restart");
        co_return;
    };
    co_await with_database(cfg, ending::drain, again);
}
} // namespace

REEF_TEST_CASE(random_writes_clean_stop_and_restart_leave_no_segment) {
    co_await random_writes_then(ending::drain, commitlog::sync_mode::batch);
}

REEF_TEST_CASE(random_writes_stop_without_drain_and_restart) {
    co_await random_writes_then(ending::stop, commitlog::sync_mode::periodic);
}

REEF_TEST_CASE(random_writes_crash_and_restart_batch) {
    co_await random_writes_then(ending::crash, commitlog::sync_mode::batch);
}

REEF_TEST_CASE(random_writes_crash_and_restart_periodic) {
    co_await random_writes_then(ending::crash, commitlog::sync_mode::periodic);
}

REEF_TEST_CASE(flushed_entries_are_not_replayed_twice) {
    // Increments, a flush half way, more increments, a crash: replay must skip the flushed half (applied twice
    // the counters would count it twice) and apply the rest.
    tmpdir dir;
    auto cfg = config_in(dir, 64 << 20, commitlog::sync_mode::batch);
    std::map<int, int64_t> expected;
    const int keys = 16, increments = 400;
    auto body = [&](sharded<database>& db) -> future<> {
        co_await db.local().create_keyspace(simple_keyspace("ks"));
        auto s = co_await db.local().create_table(counter_schema());
        for (int i = 0; i < increments; ++i) {
            int key = i % keys;
            expected[key] += i % 7 + 1;
            co_await apply_from(db, shard_id(i % smp::count()), increment(s, key, i % 7 + 1, i));
            if (i == increments / 2) {
                co_await db.local().flush("ks", "counts");
            }
        }
        for (auto& [k, v] : expected) {
            BOOST_REQUIRE_EQUAL(co_await counter_value(db.local(), s, k), v);
        }
    };
    co_await with_database(cfg, ending::crash, body);
    auto after = [&](sharded<database>& db) -> future<> {
        auto s = db.local().find_schema("ks", "counts");
        BOOST_REQUIRE(s);
        for (auto& [k, v] : expected) {
            BOOST_REQUIRE_EQUAL(co_await counter_value(db.local(), s, k), v);
        }
        auto& r = db.local().last_replay();
        // Every increment is one entry, in a flushed sstable or replayed, never both.
        BOOST_REQUIRE_EQUAL(r.replayed, uint64_t(increments - increments / 2 - 1));
        BOOST_REQUIRE_EQUAL(r.skipped, uint64_t(increments / 2 + 1));
    };
    co_await with_database(cfg, ending::drain, after);
    // The same again after the clean stop: nothing to replay.
    auto again = [&](sharded<database>& db) -> future<> {
        auto s = db.local().find_schema("ks", "counts");
        for (auto& [k, v] : expected) {
            BOOST_REQUIRE_EQUAL(co_await counter_value(db.local(), s, k), v);
        }
        BOOST_REQUIRE_EQUAL(db.local().last_replay().segments, 0u);
    };
    co_await with_database(cfg, ending::drain, again);
}

REEF_TEST_CASE(schema_changes_survive_a_crash) {
    tmpdir dir;
    auto cfg = config_in(dir, 64 << 20, commitlog::sync_mode::batch);
    table_id id{};
    auto body = [&](sharded<database>& db) -> future<> {
        co_await db.local().create_keyspace(simple_keyspace("ks"));
        auto s = co_await db.local().create_table(int_table_schema());
        id = s->id();
        co_await db.local().create_table(counter_schema());
        co_await db.local().drop_table("ks", "counts");
        auto add = added_column();
        std::vector<std::string> drop;
        co_await db.local().alter_table("ks", "t", add, drop);
    };
    co_await with_database(cfg, ending::crash, body);
    auto after = [&](sharded<database>& db) -> future<> {
        check_schema_after_crash(db.local(), id);
        co_return;
    };
    co_await with_database(cfg, ending::drain, after);
}

REEF_TEST_CASE(a_flush_writes_its_memtables_commitlog_interval) {
    tmpdir dir;
    auto cfg = config_in(dir, 64 << 20, commitlog::sync_mode::batch);
    auto body = [&](sharded<database>& db) -> future<> {
        co_await db.local().create_keyspace(simple_keyspace("ks"));
        auto s = co_await db.local().create_table(int_table_schema());
        for (int k = 0; k < 50; ++k) {
            mutation m(s, pkey(k));
            m.partition().clustered_row(ck(1)).marker.timestamp = 1;
            co_await apply_from(db, 0, std::move(m));
        }
        co_await db.local().flush("ks", "t");
        auto check = [id = s->id()](database& d) -> future<> {
            auto* t = d.find_table(id);
            for (auto& desc : t->sstable_descriptors()) {
                // Statistics.db: one interval, [least, greatest] position of the memtable's entries, and the
                // bounds Cassandra's replayer reads.
                auto st = co_await sstables::load_statistics(desc);
                BOOST_REQUIRE(st.stats);
                auto& sm = *st.stats;
                BOOST_REQUIRE_EQUAL(sm.commitlog_intervals.size(), 1u);
                auto [lo, up] = sm.commitlog_intervals[0];
                BOOST_REQUIRE(lo == sm.commitlog_lower_bound);
                BOOST_REQUIRE(up == sm.commitlog_upper_bound);
                BOOST_REQUIRE(std::pair(lo.segment_id, lo.position) <= std::pair(up.segment_id, up.position));
                BOOST_REQUIRE(t->flushed_position());
                BOOST_REQUIRE_EQUAL(uint64_t(up.segment_id), t->flushed_position()->segment_id);
                BOOST_REQUIRE_EQUAL(uint32_t(up.position), t->flushed_position()->offset);
                // Named as the host whose commitlog the positions are.
                BOOST_REQUIRE(sm.originating_host_id == d.host_id());
            }
            // Nothing of the table pins a segment any more.
            for (auto& tables : d.get_commitlog()->dirty_tables()) {
                BOOST_REQUIRE(std::find(tables.begin(), tables.end(), id) == tables.end());
            }
        };
        co_await db.invoke_on_all(check);
    };
    co_await with_database(cfg, ending::drain, body);
}

REEF_TEST_CASE(no_purge_of_tombstones_newer_than_unflushed_commitlog_data) {
    // Key a: a partition tombstone at 5, flushed. Key b: a row at 1, in the memtable (its commitlog entry not
    // discarded). A major compaction long after gc_grace must keep a's tombstone: the guard (ScyllaDB issue
    // 14870) holds back tombstones not older than the least timestamp of unflushed commitlog data, b's or not.
    // Once b is flushed (and its segment discarded) the tombstone goes.
    tmpdir dir;
    auto cfg = config_in(dir, 64 << 20, commitlog::sync_mode::batch);
    auto body = [&](sharded<database>& db) -> future<> {
        co_await db.local().create_keyspace(simple_keyspace("ks"));
        auto s = co_await db.local().create_table(int_table_schema());
        // Two keys owned by shard 0.
        std::vector<int> keys;
        for (int k = 0; keys.size() < 2; ++k) {
            if (dht::shard_of(pkey(k).get_token(), smp::count()) == 0) {
                keys.push_back(k);
            }
        }
        mutation dead(s, pkey(keys[0]));
        dead.partition().apply(tombstone{5, 1000});
        co_await db.local().apply(dead);
        co_await db.local().flush("ks", "t");
        mutation old_row(s, pkey(keys[1]));
        old_row.partition().clustered_row(ck(1)).marker.timestamp = 1;
        co_await db.local().apply(old_row);
        auto* t = db.local().find_table(s->id());
        BOOST_REQUIRE_EQUAL(t->min_unflushed_timestamp(), 1);
        deletion_time_type now = 1000 + 10 * s->options().gc_grace_seconds;
        co_await t->compact_all(now);
        auto pr = dht::partition_range::singular(pkey(keys[0]));
        auto slice = full_slice();
        auto got = co_await db.local().query(s, pr, slice);
        BOOST_REQUIRE_EQUAL(got.size(), 1u);
        BOOST_REQUIRE(got[0].partition().partition_tombstone() == (tombstone{5, 1000}));
        co_await db.local().flush("ks", "t");
        co_await t->compact_all(now);
        got = co_await db.local().query(s, pr, slice);
        BOOST_REQUIRE(got.empty());
    };
    co_await with_database(cfg, ending::drain, body);
}

REEF_TEST_CASE(truncated_data_does_not_come_back_after_a_crash) {
    co_await truncate_then_crash(true, false);
    co_await truncate_then_crash(false, false);
}

REEF_TEST_CASE(sstables_left_by_a_crash_during_truncate_are_not_read) {
    co_await truncate_then_crash(true, true);
}

REEF_TEST_CASE(truncate_writes_its_record_in_system_local) {
    // system.local.truncated_at[table id]: one position per shard, each at or past the entries of the table on that
    // shard, and the time; Cassandra's 20 bytes for shard 0, 12 more per shard.
    tmpdir dir;
    auto cfg = config_in(dir, 64 << 20, commitlog::sync_mode::batch);
    auto body = [&](sharded<database>& db) -> future<> {
        co_await db.local().create_keyspace(simple_keyspace("ks"));
        auto s = co_await db.local().create_table(int_table_schema());
        for (int k = 0; k < 20; ++k) {
            co_await apply_from(db, shard_id(k % smp::count()), row_at(s, k, 1, k + 1));
        }
        std::vector<commitlog::replay_position> before;
        for (unsigned shard = 0; shard < smp::count(); ++shard) {
            auto last = [](database& d) { return d.get_commitlog()->last_position(); };
            before.push_back(co_await db.invoke_on(shard, last));
        }
        auto from = wall_millis();
        co_await db.local().truncate("ks", "t");
        // System tables are refused (system.local would hold its own record).
        bool refused = false;
        try {
            co_await db.local().truncate("system", "local");
        } catch (const schema_change_error&) {
            refused = true;
        }
        BOOST_REQUIRE(refused);
        auto full = dht::partition_range::full();
        auto slice = full_slice();
        auto local = co_await db.local().query(schema_tables::local(), full, slice);
        auto records = schema_tables::read_truncation_records(local);
        BOOST_REQUIRE_EQUAL(records.size(), 1u);
        auto& r = records.at(s->id());
        BOOST_REQUIRE_EQUAL(r.positions.size(), smp::count());
        for (unsigned shard = 0; shard < smp::count(); ++shard) {
            BOOST_REQUIRE(r.positions[shard] >= before[shard]);
        }
        BOOST_REQUIRE_GE(r.truncated_at_millis, from);
        auto blob = schema_tables::encode_truncation_record(r);
        BOOST_REQUIRE_EQUAL(blob.size(), 20 + 12 * (smp::count() - 1));
        auto back = schema_tables::decode_truncation_record(s->id(), blob);
        BOOST_REQUIRE(back.positions == r.positions);
        BOOST_REQUIRE_EQUAL(back.truncated_at_millis, r.truncated_at_millis);
        blob.pop_back();
        BOOST_REQUIRE_EXCEPTION(schema_tables::decode_truncation_record(s->id(), blob), std::runtime_error,
                                [](const std::runtime_error& e) {
                                    return std::string(e.what()).find("truncated_at[") != std::string::npos;
                                });
    };
    co_await with_database(cfg, ending::drain, body);
}

namespace {

// The sstables (TOC files) under a data directory, snapshots left out, by table directory name.
std::map<std::string, size_t> sstables_under(const std::string& data_dir) {
    std::map<std::string, size_t> out;
    for (auto& e : std::filesystem::recursive_directory_iterator(data_dir)) {
        auto p = e.path().string();
        if (p.find("/snapshots/") == std::string::npos && p.ends_with("-TOC.txt") && p.find("/ks/") != std::string::npos) {
            ++out[e.path().parent_path().filename().string()];
        }
    }
    return out;
}

size_t total(const std::map<std::string, size_t>& m) {
    size_t n = 0;
    for (auto& [k, v] : m) {
        n += v;
    }
    return n;
}

} // namespace

REEF_TEST_CASE(two_data_directories_share_every_table) {
    // data_file_directories with two entries: flushes spread each table's sstables over both, a restart loads both,
    // a snapshot links within each, a TRUNCATE empties both; reads equal the model throughout.
    uint64_t seed = pick_seed();
    BOOST_TEST_MESSAGE("seed " << seed << " (set REEF_SEED to repeat), shards " << smp::count());
    tmpdir dir;
    auto cfg = config_in(dir, 30000, commitlog::sync_mode::periodic);
    auto second = dir.path() + "/data2";
    cfg.more_data_directories.push_back(second);
    std::map<std::string, mutation_model> models;
    auto write = [&](sharded<database>& db) -> future<> {
        co_await db.local().create_keyspace(simple_keyspace("ks"));
        co_await write_randomly(db, seed, 150, models);
        co_await check_tables(db.local(), models, "after the writes");
    };
    co_await with_database(cfg, ending::drain, write);
    auto first_tables = sstables_under(cfg.data_directory), second_tables = sstables_under(second);
    BOOST_TEST_MESSAGE("sstables: " << total(first_tables) << " in the first directory, " << total(second_tables)
                                    << " in the second");
    BOOST_REQUIRE_GT(total(first_tables), 0u);
    BOOST_REQUIRE_GT(total(second_tables), 0u);
    // In turn: each table's sstables are split evenly between the two (per shard, one apart at most).
    for (auto& [table, n] : first_tables) {
        auto m = second_tables.contains(table) ? second_tables.at(table) : 0;
        BOOST_REQUIRE_LE(std::max(n, m) - std::min(n, m), size_t(smp::count()));
    }
    std::string truncated;
    auto restart = [&](sharded<database>& db) -> future<> {
        co_await check_tables(db.local(), models, "after the restart");
        co_await db.local().snapshot("both");
        truncated = models.begin()->first;
        co_await db.local().truncate("ks", truncated);
        models[truncated].clear();
        co_await check_tables(db.local(), models, "after the truncate");
        // More writes after it, flushed to both directories again.
        co_await write_randomly(db, seed + 1, 40, models);
        co_await check_tables(db.local(), models, "after more writes");
    };
    co_await with_database(cfg, ending::crash, restart);
    // The snapshot holds, within each directory, the sstables that were there.
    for (auto* data : {&cfg.data_directory, &second}) {
        size_t snapshotted = 0;
        for (auto& e : std::filesystem::recursive_directory_iterator(*data)) {
            auto p = e.path().string();
            if (p.find("/snapshots/both/") != std::string::npos && p.ends_with("-TOC.txt")) {
                ++snapshotted;
            }
        }
        auto& before = data == &cfg.data_directory ? first_tables : second_tables;
        BOOST_REQUIRE_EQUAL(snapshotted, total(before));
    }
    auto after = [&](sharded<database>& db) -> future<> {
        co_await check_tables(db.local(), models, "after the crash");
        co_return;
    };
    co_await with_database(cfg, ending::drain, after);
}

REEF_TEST_CASE(a_truncate_failing_before_its_record_keeps_the_table) {
    // The snapshot's flush of ks.t fails (no space): TRUNCATE throws, no record is written, every shard resumes
    // the old version with its data, and writes go on; a later TRUNCATE works.
    tmpdir dir;
    auto cfg = config_in(dir, 64 << 20, commitlog::sync_mode::batch);
    bool fail = false;
    cfg.write_sstable = [&fail](mutation_reader& r, schema_ptr s, sstables::descriptor d,
                                sstables::writer_options o) -> future<sstables::written_sstable> {
        if (fail && d.directory.find("/ks/t-") != std::string::npos) {
            throw std::system_error(ENOSPC, std::generic_category(), "injected: no space left in " + d.directory);
        }
        co_return co_await sstables::write_sstable(r, std::move(s), std::move(d), std::move(o));
    };
    std::map<std::string, mutation_model> models;
    auto body = [&](sharded<database>& db) -> future<> {
        co_await db.local().create_keyspace(simple_keyspace("ks"));
        auto t = co_await db.local().create_table(int_table_schema());
        for (int k = 0; k < 20; ++k) {
            auto m = row_at(t, k, 1, k + 1);
            apply_to_model(models["t"], m);
            co_await apply_from(db, shard_id(k % smp::count()), std::move(m));
        }
        fail = true;
        bool threw = false;
        try {
            co_await db.local().truncate("ks", "t");
        } catch (const std::system_error& e) {
            threw = e.code().value() == ENOSPC;
        }
        BOOST_REQUIRE(threw);
        fail = false;
        co_await check_tables(db.local(), models, "after the failed truncate");
        auto full = dht::partition_range::full();
        auto slice = full_slice();
        auto local = co_await db.local().query(schema_tables::local(), full, slice);
        BOOST_REQUIRE(schema_tables::read_truncation_records(local).empty());
        auto m = row_at(t, 100, 1, 100);
        apply_to_model(models["t"], m);
        co_await db.local().apply(std::move(m));
        co_await check_tables(db.local(), models, "after a write");
        co_await db.local().truncate("ks", "t");
        models["t"].clear();
        co_await check_tables(db.local(), models, "after the truncate");
    };
    co_await with_database(cfg, ending::drain, body);
}
