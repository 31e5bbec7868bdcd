// The shard's dirty memory budget through the database: a burst of concurrent writes far larger than a small hard
// limit, on three shards, never holds more than the limit plus one write's bound, flushes as it goes, and reads
// back equal to a model; writes that wait at the hard limit (their flushes held back) resume once a flush ends.
#include "db/database.hh"
#include "runtime/reactor.hh"
#include "runtime/smp.hh"
#include "runtime/when_all.hh"
#include "test/lib/database_test_support.hh"
#include "test/lib/mutation_model.hh"
#include "test/lib/random_mutation.hh"
#include "test/lib/reef_test.hh"
#include "test/lib/simple_keys.hh"
#include "test/lib/tmpdir.hh"
#include "test/lib/writable_mutation.hh"

#include <boost/test/unit_test.hpp>

#include <atomic>
#include <map>

using namespace reef;
using namespace reef::testing;

namespace {

keyspace_definition simple_keyspace(std::string name) {
    return keyspace_definition{std::move(name), {{"class", "SimpleStrategy"}, {"replication_factor", "1"}}, true};
}

clustering_ranges full_slice() { return clustering_ranges{position_range::full()}; }

// What one shard's user-table manager shows, and what its tables hold (to check the account).
struct shard_figures {
    size_t dirty = 0, peak = 0, hard = 0, held = 0;
    uint64_t flushes = 0, blocked = 0, blocked_now = 0;
};

shard_figures figures_of(database& d) {
    auto& dm = d.dirty_memory();
    shard_figures f{dm.dirty(), dm.stats().peak_dirty, dm.hard_limit(), 0, dm.stats().flushes, dm.stats().blocked_writes,
                    dm.blocked_writes_now()};
    for (auto& ks : d.keyspace_names()) {
        if (ks != "ks") {
            continue;
        }
        for (auto& s : d.tables_of(ks)) {
            if (auto* t = d.find_table(s->id())) {
                f.held += t->active_dirty_bytes() + t->sealed_dirty_bytes();
            }
        }
    }
    return f;
}

future<std::vector<shard_figures>> all_figures(sharded<database>& db) {
    std::vector<shard_figures> out;
    for (shard_id sh = 0; sh < smp::count(); ++sh) {
        out.push_back(co_await db.invoke_on(sh, [](database& d) { return figures_of(d); }));
    }
    co_return out;
}

// Each table's contents, read from every shard through the database, against the model.
future<> check_tables(sharded<database>& db, std::map<std::string, mutation_model>& models) {
    for (auto& [name, model] : models) {
        auto s = db.local().find_schema("ks", name);
        BOOST_REQUIRE(s);
        auto full = dht::partition_range::full();
        auto slice = full_slice();
        auto got = query_result_canonical(co_await db.local().query(s, full, slice));
        auto expected = canonical_mutations(s, expected_read(model, full, slice, false), false);
        std::erase_if(expected, is_empty);
        BOOST_REQUIRE_MESSAGE(got == expected, name << ":\n" << describe(got) << "!=\n" << describe(expected));
    }
}

// The writes of the tests: random partitions of both random schemas, with the most any of them may add to a
// memtable (memtable::apply_bound).
struct burst {
    std::vector<mutation> writes;
    size_t max_bound = 0;
    size_t total_bound = 0;
};

future<burst> make_burst(sharded<database>& db, uint64_t seed, int per_table, std::map<std::string, mutation_model>& models) {
    burst b;
    co_await db.local().create_keyspace(simple_keyspace("ks"));
    for (auto& base : random_test_schemas()) {
        auto s = co_await db.local().create_table(base);
        mutation_generator g(s, seed + models.size());
        auto& model = models[s->table()];
        for (int i = 0; i < per_table; ++i) {
            auto m = with_typed_values(s, g.make(pkey(g.rnd(0, 60)), 6));
            apply_to_model(model, m);
            auto bound = memtable::apply_bound(*s, m);
            b.max_bound = std::max(b.max_bound, bound);
            b.total_bound += bound;
            b.writes.push_back(std::move(m));
        }
    }
    // Interleaved tables, in a random order (the model does not depend on the order).
    std::shuffle(b.writes.begin(), b.writes.end(), std::mt19937_64(seed));
    co_return b;
}

future<> burst_body() {
    uint64_t seed = pick_seed();
    BOOST_TEST_MESSAGE("seed " << seed << " (set REEF_SEED to repeat), shards " << smp::count());
    tmpdir dir;
    std::mt19937_64 rng(seed);
    database_config cfg;
    cfg.data_directory = dir.path() + "/data";
    cfg.compaction_clock = [] { return deletion_time_type(-1); };  // raw reads against the model: no purge
    cfg.dirty_memory_hard_limit = size_t(std::uniform_int_distribution<int>(16 << 10, 48 << 10)(rng));
    cfg.dirty_memory_soft_limit_fraction = std::uniform_real_distribution<double>(0.3, 0.9)(rng);
    std::map<std::string, mutation_model> models;
    auto body = [&](sharded<database>& db) -> future<> {
        auto b = co_await make_burst(db, seed, 700, models);
        BOOST_TEST_MESSAGE("hard limit " << cfg.dirty_memory_hard_limit << ", soft fraction "
                                         << cfg.dirty_memory_soft_limit_fraction << ", " << b.writes.size()
                                         << " writes bounded by " << b.total_bound << " bytes, at most " << b.max_bound);
        // Far more than every shard's budget together.
        BOOST_REQUIRE_GT(b.total_bound, 10 * smp::count() * cfg.dirty_memory_hard_limit);
        // Eight writers at a time from every shard, each sending its writes one after the other.
        auto writer = [&db](std::vector<mutation> ms, shard_id from) -> future<> {
            for (auto& m : ms) {
                co_await apply_from(db, from, std::move(m));
            }
        };
        size_t writers = 8 * smp::count();
        std::vector<std::vector<mutation>> parts(writers);
        for (size_t i = 0; i < b.writes.size(); ++i) {
            parts[i % writers].push_back(std::move(b.writes[i]));
        }
        std::vector<future<>> running;
        for (size_t w = 0; w < writers; ++w) {
            running.push_back(writer(std::move(parts[w]), shard_id(w % smp::count())));
        }
        co_await when_all(std::move(running));
        auto figs = co_await all_figures(db);
        for (shard_id sh = 0; sh < smp::count(); ++sh) {
            auto& f = figs[sh];
            BOOST_TEST_MESSAGE("shard " << sh << ": peak " << f.peak << ", now " << f.dirty << ", flushes " << f.flushes
                                        << ", writes that waited " << f.blocked);
            // The account is the memtables' occupancy, no more and no less.
            BOOST_REQUIRE_EQUAL(f.dirty, f.held);
            BOOST_REQUIRE_LE(f.peak, f.hard + b.max_bound);
            BOOST_REQUIRE_GT(f.flushes, 0u);
            BOOST_REQUIRE_EQUAL(f.blocked_now, 0u);
        }
        co_await check_tables(db, models);
        co_await db.local().flush_all();
        for (auto& f : co_await all_figures(db)) {
            BOOST_REQUIRE_EQUAL(f.dirty, 0u);
        }
        co_await check_tables(db, models);
    };
    co_await with_database(cfg, body);
    // And after a restart (the commitlog's replay takes the same path).
    auto check = [&](sharded<database>& db) -> future<> { co_await check_tables(db, models); };
    co_await with_database(cfg, check);
}

// Flushes end only once this is set (every shard reads it).
std::atomic<bool> flushes_may_end{false};

future<sstables::written_sstable> held_back_write(mutation_reader& r, schema_ptr s, sstables::descriptor d,
                                                  sstables::writer_options o) {
    while (!flushes_may_end.load()) {
        co_await sleep(std::chrono::milliseconds(1));
    }
    co_return co_await sstables::write_sstable(r, std::move(s), std::move(d), std::move(o));
}

} // namespace

// On three shards (or REEF_TEST_SMP if more).
BOOST_AUTO_TEST_CASE(write_burst_stays_within_the_hard_limit) {
    auto cfg = test_runtime_config();
    cfg.smp = std::max(cfg.smp, 3u);
    run_in_runtime(cfg, burst_body);
}

REEF_TEST_CASE(writes_waiting_at_the_hard_limit_resume_after_a_flush) {
    uint64_t seed = pick_seed();
    BOOST_TEST_MESSAGE("seed " << seed << " (set REEF_SEED to repeat)");
    tmpdir dir;
    database_config cfg;
    cfg.data_directory = dir.path() + "/data";
    cfg.compaction_clock = [] { return deletion_time_type(-1); };  // raw reads against the model: no purge
    cfg.dirty_memory_hard_limit = 16 << 10;
    cfg.write_sstable = held_back_write;
    flushes_may_end = false;
    std::map<std::string, mutation_model> models;
    auto body = [&](sharded<database>& db) -> future<> {
        auto b = co_await make_burst(db, seed, 150, models);
        BOOST_REQUIRE_GT(b.total_bound, 4 * smp::count() * cfg.dirty_memory_hard_limit);
        gate writing;
        size_t done = 0;
        for (size_t i = 0; i < b.writes.size(); ++i) {
            writing.enter();
            spawn([&db, &writing, &done, i, m = std::move(b.writes[i])]() mutable -> future<> {
                co_await apply_from(db, shard_id(i % smp::count()), std::move(m));
                ++done;
                writing.leave();
            });
        }
        // The flushes cannot end: the writes fill every shard's budget and then wait, until every write not done
        // waits for memory (nothing else holds them: they wait before their commitlog entry).
        std::vector<shard_figures> figs;
        size_t waiting = 0;
        for (int tries = 0; tries < 500; ++tries) {
            co_await sleep(std::chrono::milliseconds(10));
            figs = co_await all_figures(db);
            waiting = 0;
            for (auto& f : figs) {
                waiting += f.blocked_now;
            }
            if (tries >= 20 && waiting == b.writes.size() - done) {
                break;
            }
        }
        for (auto& f : figs) {
            BOOST_TEST_MESSAGE("held back: dirty " << f.dirty << ", flushes started " << f.flushes << ", waiting "
                                                   << f.blocked_now);
            BOOST_REQUIRE_LE(f.dirty, f.hard + b.max_bound);
        }
        BOOST_TEST_MESSAGE(done << " of " << b.writes.size() << " writes done, " << waiting << " waiting");
        BOOST_REQUIRE_LT(done, b.writes.size());
        BOOST_REQUIRE_GT(waiting, 0u);
        BOOST_REQUIRE_EQUAL(waiting, b.writes.size() - done);
        flushes_may_end = true;
        co_await writing.close();
        BOOST_REQUIRE_EQUAL(done, b.writes.size());
        for (auto& f : co_await all_figures(db)) {
            BOOST_REQUIRE_EQUAL(f.blocked_now, 0u);
            BOOST_REQUIRE_GT(f.flushes, 0u);
            BOOST_REQUIRE_EQUAL(f.dirty, f.held);
        }
        co_await check_tables(db, models);
    };
    std::exception_ptr err;
    try {
        co_await with_database(cfg, body);
    } catch (...) {
        err = std::current_exception();
    }
    flushes_may_end = true;
    if (err) {
        std::rethrow_exception(err);
    }
}
