// The table: random writes with tiny memtable thresholds (many background flushes), read back at random moments
// (while flushes are in flight too), after flush(), after compact_all() and after a restart, against the model;
// compaction's output against the model's purge; a failing sstable write keeps the memtable readable.
#include "db/table.hh"
#include "reader/reader_concurrency_semaphore.hh"
#include "runtime/when_all.hh"
#include "cache/tracker.hh"
#include "mutation/mutation.hh"
#include "runtime/reactor.hh"
#include "test/lib/mutation_model.hh"
#include "test/lib/random_mutation.hh"
#include "test/lib/reef_test.hh"
#include "test/lib/table_read_check.hh"
#include "test/lib/writable_mutation.hh"
#include "test/lib/simple_keys.hh"
#include "test/lib/tmpdir.hh"

#include <boost/test/unit_test.hpp>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <sys/mount.h>
#include <system_error>

using namespace reef;
using namespace reef::testing;

namespace {

table_config config_in(const tmpdir& dir, mutation_generator& g) {
    table_config cfg;
    cfg.directory = dir.path() + "/ks/t";
    cfg.memtable_flush_threshold = size_t(g.rnd(500, 20000));
    return cfg;
}

size_t files_in(const std::string& dir) {
    size_t n = 0;
    for (auto& e : std::filesystem::directory_iterator(dir)) {
        (void)e;
        ++n;
    }
    return n;
}

// Applies `count` random mutations to t and to the model, flushed in `sstables` equal batches.
future<> write_and_flush(table& t, mutation_model& model, mutation_generator& g, int count, int sstables) {
    auto s = t.schema();
    for (int round = 0; round < sstables; ++round) {
        for (int i = 0; i < count / sstables; ++i) {
            auto m = with_typed_values(s, g.make(pkey(g.rnd(0, 2000)), 20));
            t.apply(m);
            apply_to_model(model, m);
        }
        co_await t.flush();
    }
}

#ifdef REEF_DEBUG
constexpr int cases = 2;
#else
constexpr int cases = 6;
#endif

} // namespace

// Reef reads back everything it writes: random mutations into a table with a tiny flush threshold, reads at
// random moments (background flushes in flight or not), forced flushes and major compactions that purge nothing
// (now before every expiry and deletion time), then a restart from the directory.
REEF_TEST_CASE(test_table_reads_back_random_writes) {
    uint64_t seed = pick_seed();
    BOOST_TEST_MESSAGE("seed " << seed << " (set REEF_SEED to repeat)");
    size_t flushes = 0, compactions = 0, reads = 0;
    for (auto s : random_test_schemas()) {
        mutation_generator g(s, seed);
        for (int i = 0; i < cases; ++i) {
            BOOST_TEST_CONTEXT("seed " << seed << " table " << s->table() << " case " << i) {
                tmpdir dir;
                auto cfg = config_in(dir, g);
                mutation_model model;
                {
                    table t(s, cfg);
                    co_await t.start();
                    int writes = g.rnd(10, 80);
                    for (int w = 0; w < writes; ++w) {
                        auto m = with_typed_values(s, g.make(pkey(g.rnd(0, 30)), 6));
                        t.apply(m);
                        apply_to_model(model, m);
                        switch (g.rnd(0, 12)) {
                        case 0: case 1: case 2:
                            ++reads;
                            co_await check_table_read(t, model, g, "during writes");
                            break;
                        case 3:
                            co_await t.flush();
                            co_await check_table_read(t, model, g, "after flush");
                            break;
                        case 4:
                        {
                            auto flushes_before = t.flushes();
                            co_await t.compact_all(-1);
                            ++compactions;
                            // One sstable, and those that background flushes wrote meanwhile.
                            BOOST_REQUIRE_LE(t.sstable_count(), 1u + (t.flushes() - flushes_before));
                        }
                            co_await check_table_read(t, model, g, "after compaction");
                            break;
                        case 5:
                            co_await yield();
                            break;
                        }
                    }
                    co_await t.flush();
                    BOOST_REQUIRE_EQUAL(t.sealed_memtable_count(), 0u);
                    BOOST_REQUIRE(t.active_memtable().empty());
                    co_await check_table_read(t, model, g, "after the last flush");
                    flushes += t.flushes();
                    co_await t.stop();
                }
                table t2(s, cfg);
                co_await t2.start();
                co_await check_table_read(t2, model, g, "after restart");
                co_await t2.compact_all(-1);
                co_await check_table_read(t2, model, g, "after restart and compaction");
                co_await t2.stop();
            }
        }
    }
    BOOST_TEST_MESSAGE(flushes << " flushes, " << compactions << " compactions, " << reads << " reads during writes");
    BOOST_CHECK_GT(flushes, 0u);
}

// Major compaction's output is the model's purge: everything flushed, `now` both before and after
// gc_grace_seconds, so expired cells become tombstones and old tombstones go. Then with more writes left in
// the memtable (older timestamps included) a compaction must not purge a tombstone that deletes them: queries
// at `now` still give the model's answer.
REEF_TEST_CASE(test_table_compaction_is_the_models_purge) {
    uint64_t seed = pick_seed();
    BOOST_TEST_MESSAGE("seed " << seed << " (set REEF_SEED to repeat)");
    size_t purged_partitions = 0;
    for (auto s : random_test_schemas()) {
        mutation_generator g(s, seed);
        for (int i = 0; i < cases; ++i) {
            BOOST_TEST_CONTEXT("seed " << seed << " table " << s->table() << " case " << i) {
                tmpdir dir;
                auto cfg = config_in(dir, g);
                cfg.memtable_flush_threshold = g.rnd(0, 1) ? SIZE_MAX : cfg.memtable_flush_threshold * 4;
                table t(s, cfg);
                co_await t.start();
                mutation_model model;
                int writes = g.rnd(5, 40);
                for (int w = 0; w < writes; ++w) {
                    auto m = with_typed_values(s, g.make(pkey(g.rnd(0, 20)), 6));
                    t.apply(m);
                    apply_to_model(model, m);
                }
                co_await t.flush();
                deletion_time_type now = g.rnd(0, 12) + (g.rnd(0, 1) ? s->options().gc_grace_seconds : 0);
                deletion_time_type gc_before = now - s->options().gc_grace_seconds;
                co_await t.compact_all(now);
                BOOST_REQUIRE_LE(t.sstable_count(), 1u);
                mutation_model purged;
                for (auto& [k, m] : model) {
                    auto p = m;
                    p.partition().purge(now, gc_before);
                    if (!is_empty(p)) {
                        purged.emplace(k, std::move(p));
                    } else {
                        ++purged_partitions;
                    }
                }
                auto r = t.make_reader(reader_permit(), read_options{});
                auto got = co_await read_validated(r, false);
                co_await r.close();
                auto a = canonical_mutations(s, got, false);
                auto b = canonical_mutations(s, expected_read(purged, dht::partition_range::full(),
                                                              {position_range::full()}, false), false);
                BOOST_REQUIRE_MESSAGE(a == b, "now " << now << ":\n" << describe(a) << "!=\n" << describe(b));

                // What was purged is forgotten (a later write older than a purged tombstone lives: the
                // gc_grace_seconds contract). Now older data in memtables and in new sstables: a compaction must
                // not purge what would delete it, so queries at `now` still give the model's answer.
                model = std::move(purged);
                int more = g.rnd(1, 20);
                for (int w = 0; w < more; ++w) {
                    auto m = with_typed_values(s, g.make(pkey(g.rnd(0, 20)), 4));
                    t.apply(m);
                    apply_to_model(model, m);
                    if (g.rnd(0, 7) == 0) {
                        co_await t.flush();
                    }
                }
                co_await t.compact_all(now);
                auto r2 = t.make_reader(reader_permit(), read_options{});
                auto got2 = co_await read_validated(r2, false);
                co_await r2.close();
                std::vector<mutation> qa, qb;
                for (auto& m : mutations_from_fragments(s, got2)) {
                    if (auto q = model_query(m, now)) {
                        qa.push_back(std::move(*q));
                    }
                }
                for (auto& [k, m] : model) {
                    if (auto q = model_query(m, now)) {
                        qb.push_back(std::move(*q));
                    }
                }
                BOOST_REQUIRE_MESSAGE(qa == qb, "query at " << now << " after compaction with memtables:\n"
                                                           << describe(qa) << "!=\n" << describe(qb));
                co_await t.stop();
            }
        }
    }
    BOOST_TEST_MESSAGE(purged_partitions << " partitions purged away");
}

// A flush whose sstable write fails (an injected ENOSPC, as a full disk gives) throws, leaves no file behind,
// keeps the memtable sealed and readable and the table writable; the next flush writes it.
REEF_TEST_CASE(test_table_failed_flush_keeps_memtable) {
    auto s = random_test_schema();
    mutation_generator g(s, pick_seed());
    tmpdir dir;
    auto cfg = config_in(dir, g);
    cfg.memtable_flush_threshold = SIZE_MAX;
    bool fail = true;
    size_t attempts = 0;
    cfg.write_sstable = [&fail, &attempts](mutation_reader& r, schema_ptr s, sstables::descriptor d,
                                           sstables::writer_options o) -> future<sstables::written_sstable> {
        ++attempts;
        if (fail) {
            throw std::system_error(ENOSPC, std::generic_category(), "injected: no space left writing " +
                                                                           d.filename(sstables::component_type::data));
        }
        co_return co_await sstables::write_sstable(r, std::move(s), std::move(d), std::move(o));
    };
    table t(s, cfg);
    co_await t.start();
    mutation_model model;
    for (int w = 0; w < 30; ++w) {
        auto m = with_typed_values(s, g.make(pkey(g.rnd(0, 10)), 6));
        t.apply(m);
        apply_to_model(model, m);
    }
    bool threw = false;
    try {
        co_await t.flush();
    } catch (const std::system_error& e) {
        threw = e.code().value() == ENOSPC;
    }
    BOOST_CHECK(threw);
    BOOST_CHECK_EQUAL(attempts, 1u);
    BOOST_CHECK_EQUAL(t.failed_flushes(), 1u);
    BOOST_CHECK_EQUAL(t.sealed_memtable_count(), 1u);
    BOOST_CHECK_EQUAL(t.sstable_count(), 0u);
    BOOST_CHECK_EQUAL(files_in(cfg.directory), 0u);
    for (int i = 0; i < 5; ++i) {
        co_await check_table_read(t, model, g, "after the failed flush");
    }
    // Still writable; the next flush writes both memtables.
    for (int w = 0; w < 10; ++w) {
        auto m = with_typed_values(s, g.make(pkey(g.rnd(0, 10)), 6));
        t.apply(m);
        apply_to_model(model, m);
    }
    co_await check_table_read(t, model, g, "writes after the failed flush");
    fail = false;
    co_await t.flush();
    BOOST_CHECK_EQUAL(t.sealed_memtable_count(), 0u);
    BOOST_CHECK_EQUAL(t.sstable_count(), 2u);
    co_await check_table_read(t, model, g, "after the retried flush");
    co_await t.stop();
    table t2(s, cfg);
    co_await t2.start();
    BOOST_CHECK_EQUAL(t2.sstable_count(), 2u);
    co_await check_table_read(t2, model, g, "after restart");
    co_await t2.stop();
}

namespace {

// A tmpfs of `size` mounted on a fresh directory for as long as it lives (needs CAP_SYS_ADMIN).
class small_tmpfs {
public:
    explicit small_tmpfs(const std::string& path, const std::string& size) : _path(path) {
        std::filesystem::create_directories(path);
        _mounted = ::mount("tmpfs", path.c_str(), "tmpfs", 0, ("size=" + size).c_str()) == 0;
    }
    ~small_tmpfs() {
        if (_mounted) {
            ::umount(_path.c_str());
        }
    }
    bool mounted() const noexcept { return _mounted; }
    bool resize(const std::string& size) {
        return ::mount("tmpfs", _path.c_str(), "tmpfs", MS_REMOUNT, ("size=" + size).c_str()) == 0;
    }

private:
    std::string _path;
    bool _mounted = false;
};

} // namespace

// A real full disk: the table's directory on a 16 KiB tmpfs. The background flushes and flush() fail with
// ENOSPC, leave no file behind, keep every memtable readable and the table writable; once the disk grows, the
// next flush writes them all, and a restart reads everything back.
REEF_TEST_CASE(test_table_flush_to_full_disk) {
    tmpdir dir;
    small_tmpfs fs(dir.path() + "/mnt", "16k");
    if (!fs.mounted()) {
        BOOST_TEST_MESSAGE("cannot mount a tmpfs here (" << std::strerror(errno) << "): test skipped");
        co_return;
    }
    auto s = random_test_schema();
    mutation_generator g(s, pick_seed());
    table_config cfg;
    cfg.directory = dir.path() + "/mnt/ks/t";
    cfg.memtable_flush_threshold = 20000;
    table t(s, cfg);
    co_await t.start();
    mutation_model model;
    for (int w = 0; w < 300; ++w) {
        auto m = with_typed_values(s, g.make(pkey(g.rnd(0, 1000)), 8));
        t.apply(m);
        apply_to_model(model, m);
        if (w % 50 == 0) {
            co_await check_table_read(t, model, g, "while background flushes fail");
        }
    }
    bool threw = false;
    try {
        co_await t.flush();
    } catch (const std::system_error& e) {
        BOOST_TEST_MESSAGE("flush: " << e.what());
        threw = e.code().value() == ENOSPC;
    }
    BOOST_CHECK(threw);
    BOOST_CHECK_GE(t.failed_flushes(), 1u);
    BOOST_CHECK_GE(t.sealed_memtable_count(), 1u);
    BOOST_CHECK_EQUAL(t.sstable_count(), 0u);
    BOOST_CHECK_EQUAL(files_in(cfg.directory), 0u);
    for (int i = 0; i < 5; ++i) {
        co_await check_table_read(t, model, g, "after the failed flush");
    }
    BOOST_REQUIRE(fs.resize("64m"));
    co_await t.flush();
    BOOST_CHECK_EQUAL(t.sealed_memtable_count(), 0u);
    BOOST_CHECK_GE(t.sstable_count(), 1u);
    co_await check_table_read(t, model, g, "after the disk grew");
    co_await t.stop();
    table t2(s, cfg);
    co_await t2.start();
    co_await check_table_read(t2, model, g, "after restart");
    co_await t2.stop();
}

// A read opened before a major compaction keeps reading the compacted sstables: their files go only once it is
// closed (the compaction waits for it), and it returns everything it would have returned without the compaction.
REEF_TEST_CASE(test_table_read_across_compaction) {
    auto s = random_test_schema();
    mutation_generator g(s, pick_seed());
    tmpdir dir;
    auto cfg = config_in(dir, g);
    cfg.memtable_flush_threshold = SIZE_MAX;
    table t(s, cfg);
    co_await t.start();
    mutation_model model;
    for (int round = 0; round < 4; ++round) {
        for (int w = 0; w < 10; ++w) {
            auto m = with_typed_values(s, g.make(pkey(g.rnd(0, 30)), 6));
            t.apply(m);
            apply_to_model(model, m);
        }
        co_await t.flush();
    }
    auto old = t.sstable_descriptors();
    BOOST_REQUIRE_EQUAL(old.size(), 4u);
    auto r = t.make_reader(reader_permit(), read_options{});
    co_await r.fill_buffer();  // the read has started on the old sstables
    BOOST_REQUIRE(!r.is_buffer_empty());
    bool compacted = false;
    spawn([&]() -> future<> {
        co_await t.compact_all(-1);
        compacted = true;
    });
    while (t.sstable_count() != 1) {  // the output replaces the inputs in the set
        co_await yield();
    }
    for (int i = 0; i < 100; ++i) {
        co_await yield();
    }
    BOOST_CHECK(!compacted);  // it waits for the read
    for (auto& d : old) {
        BOOST_CHECK(std::filesystem::exists(d.filename(sstables::component_type::data)));
    }
    auto got = co_await read_validated(r, false);
    co_await r.close();
    while (!compacted) {
        co_await yield();
    }
    for (auto& d : old) {
        BOOST_CHECK(!std::filesystem::exists(d.filename(sstables::component_type::toc)));
        BOOST_CHECK(!std::filesystem::exists(d.filename(sstables::component_type::data)));
    }
    auto a = canonical_nonempty(s, got, false);
    auto b = canonical_nonempty(s, expected_read(model, dht::partition_range::full(), {position_range::full()}, false), false);
    BOOST_REQUIRE_MESSAGE(a == b, describe(a) << "!=\n" << describe(b));
    co_await check_table_read(t, model, g, "after the compaction");
    co_await t.stop();
}

// The table's sstable reads go through the shard's index caches (a repeated read reads no Index.db page again), or,
// with bypass_cache, through private ones that leave the shard's caches and statistics as they were; both read the
// model.
REEF_TEST_CASE(test_table_read_bypasses_caches) {
    uint64_t seed = pick_seed();
    BOOST_TEST_MESSAGE("seed " << seed << " (set REEF_SEED to repeat)");
    tmpdir dir;
    auto s = random_test_schema();
    mutation_generator g(s, seed);
    table_config cfg;
    cfg.directory = dir.path() + "/ks/t";
    // The index caches under the sstable readers are what is tested: the row cache would answer repeated reads.
    cfg.enable_cache = false;
    table t(s, cfg);
    co_await t.start();
    mutation_model model;
    co_await write_and_flush(t, model, g, 300, 1);
    BOOST_REQUIRE_EQUAL(t.sstable_count(), 1u);
    // Keys the sstable's filter admits, so that every read looks at the index: a generated mutation may be empty,
    // and the flush writes no partition for it (seed 793150150).
    auto keys = keys_of(model);
    std::erase_if(keys, [&](auto& k) { return !t.sstables().front()->may_contain(k); });
    BOOST_REQUIRE(!keys.empty());
    auto& tracker = cache::shard_cache_tracker();
    auto read = [&](const dht::partition_range& pr, bypass_cache bypass) -> future<> {
        auto slice = g.make_ranges();
        auto r = t.make_reader(reader_permit(), {.range = pr, .slice = slice, .bypass = bypass});
        auto got = co_await read_validated(r, false);
        co_await r.close();
        auto a = canonical_nonempty(s, got, false);
        auto b = canonical_nonempty(s, expected_read(model, pr, slice, false), false);
        BOOST_REQUIRE_MESSAGE(a == b, describe(a) << "!=\n" << describe(b));
    };
    for (int q = 0; q < 20; ++q) {
        auto pr = dht::partition_range::singular(keys[size_t(g.rnd(0, int(keys.size()) - 1))]);
        cache::drop_caches();
        auto files = tracker.file_stats();
        auto pages = tracker.index_stats();
        co_await read(pr, bypass_cache::yes);
        BOOST_CHECK_EQUAL(tracker.file_stats().page_misses, files.page_misses);
        BOOST_CHECK_EQUAL(tracker.file_stats().page_hits, files.page_hits);
        BOOST_CHECK_EQUAL(tracker.index_stats().misses, pages.misses);
        BOOST_CHECK_EQUAL(tracker.index_stats().hits, pages.hits);
        // Cold: the page is loaded, its bytes read from Index.db itself (the page keeps them: not through cached_file).
        auto index_reads = t.sstables().front()->index_file().io_counters().reads;
        co_await read(pr, bypass_cache::no);
        BOOST_CHECK_GT(tracker.index_stats().misses, pages.misses);
        BOOST_CHECK_GT(t.sstables().front()->index_file().io_counters().reads, index_reads);
        // Warm: the same partition again reads no Index.db page and finds the parsed page.
        auto warm_files = tracker.file_stats();
        auto warm_pages = tracker.index_stats();
        co_await read(pr, bypass_cache::no);
        BOOST_CHECK_EQUAL(tracker.file_stats().page_misses, warm_files.page_misses);
        BOOST_CHECK_GT(tracker.index_stats().hits, warm_pages.hits);
    }
    co_await t.stop();
}

// Reads through the table admitted by a reader_concurrency_semaphore: more concurrent reads than it admits queue
// and all finish with the right data; their buffers are charged to their permits while they run and everything
// is given back at the end; a read whose deadline has passed fails with the timeout error naming the sstable.
REEF_TEST_CASE(test_table_reads_under_reader_concurrency_semaphore) {
    uint64_t seed = pick_seed();
    BOOST_TEST_MESSAGE("seed " << seed << " (set REEF_SEED to repeat)");
    tmpdir dir;
    auto s = random_test_schema();
    mutation_generator g(s, seed);
    table_config cfg;
    cfg.directory = dir.path() + "/ks/t";
    // The sstable readers' use of the permit is what is tested: reads served by the row cache do no I/O.
    cfg.enable_cache = false;
    table t(s, cfg);
    co_await t.start();
    mutation_model model;
    co_await write_and_flush(t, model, g, 300, 2);
    BOOST_REQUIRE_EQUAL(t.sstable_count(), 2u);
    auto keys = keys_of(model);

    constexpr size_t max_reads = 2;
    reader_concurrency_semaphore sem(max_reads, 1 << 20, "table_test");
    size_t running = 0;
    size_t most_running = 0;
    size_t most_charged = 0;
    auto read = [&](int i) -> future<> {
        auto permit = co_await sem.obtain_permit("read " + std::to_string(i), 16 << 10);
        ++running;
        most_running = std::max(most_running, running);
        BOOST_REQUIRE_LE(sem.active_reads(), max_reads);
        auto pr = i % 3 == 0 ? dht::partition_range::full()
                             : dht::partition_range::singular(keys[size_t(g.rnd(0, int(keys.size()) - 1))]);
        bool reversed = i % 2 == 1;
        auto slice = reversed ? reverse_ranges(g.make_ranges()) : g.make_ranges();
        auto r = t.make_reader(permit, {.range = pr, .slice = slice, .order = read_order_for(reversed)});
        std::vector<mutation_fragment> got;
        while (auto f = co_await r()) {
            most_charged = std::max(most_charged, permit.consumed_memory());
            got.push_back(std::move(*f));
        }
        co_await r.close();
        --running;
        auto a = canonical_nonempty(s, got, reversed);
        auto b = canonical_nonempty(s, expected_read(model, pr, slice, reversed), reversed);
        BOOST_REQUIRE_MESSAGE(a == b, "read " << i << ": " << describe(a) << "!=\n" << describe(b));
    };
    std::vector<future<>> reads;
    for (int i = 0; i < 16; ++i) {
        reads.push_back(read(i));
    }
    co_await when_all(std::move(reads));
    BOOST_CHECK_LE(most_running, max_reads);
    BOOST_CHECK_EQUAL(sem.stats().admitted, 16u);
    // Beyond the admission's own 16 KiB, the readers' buffers were charged while they ran.
    BOOST_CHECK_GT(most_charged, size_t(16 << 10));
    BOOST_CHECK_EQUAL(sem.consumed_memory(), 0);
    BOOST_CHECK_EQUAL(sem.active_reads(), 0u);

    // An expired deadline: the read fails before its first sstable I/O, naming the read, and gives all back.
    {
        auto permit = co_await sem.obtain_permit("late read", 16 << 10);
        permit.set_timeout(read_clock::now() - std::chrono::seconds(1));
        auto r = t.make_reader(permit, {.slice = {}});
        std::string error;
        try {
            while (co_await r()) {
            }
        } catch (const read_timeout_error& e) {
            error = e.what();
        }
        co_await r.close();
        BOOST_CHECK_MESSAGE(error.find("read timed out: late read") != std::string::npos, error);
        BOOST_CHECK_MESSAGE(error.find("Data.db") != std::string::npos || error.find("Index.db") != std::string::npos,
                            error);
    }
    BOOST_CHECK_EQUAL(sem.consumed_memory(), 0);
    BOOST_CHECK_EQUAL(sem.active_reads(), 0u);
    co_await t.stop();
}
