// The row cache, through the table that owns it: random writes, flushes, compactions and reads (ranges, slices,
// forward and reversed, forwarding windows, next_partition, bypass) against the model, with cache budgets from
// nothing to plenty and reads kept open across flushes and compactions; hits that are hits: a repeated read does no
// I/O, and flushes and compactions keep the cache; row eviction mid-partition; one huge partition; reads open across
// a flush and a compaction's swap.
#include "cache/tracker.hh"
#include "db/table.hh"
#include "mutation/mutation.hh"
#include "runtime/promise.hh"
#include "runtime/reactor.hh"
#include "test/lib/combined_model.hh"
#include "test/lib/mutation_model.hh"
#include "test/lib/random_mutation.hh"
#include "test/lib/reef_test.hh"
#include "test/lib/simple_keys.hh"
#include "test/lib/table_read_check.hh"
#include "test/lib/tmpdir.hh"
#include "test/lib/writable_mutation.hh"

#include <boost/test/unit_test.hpp>

using namespace reef;
using namespace reef::testing;

namespace {

// A table of schema s in a directory of its own, its caches on `tracker` (not started).
struct test_table {
    test_table(schema_ptr s, cache::cache_tracker& tracker, size_t flush_threshold = 0)
        : t(std::move(s), config(tracker, flush_threshold)) {}
    table_config config(cache::cache_tracker& tracker, size_t flush_threshold) const {
        table_config cfg;
        cfg.directory = dir.path() + "/ks/t";
        cfg.cache_tracker = &tracker;
        if (flush_threshold) {
            cfg.memtable_flush_threshold = flush_threshold;
        }
        return cfg;
    }
    tmpdir dir;  // made before t
    table t;
};

// The partitions read, shadowed data dropped, without the ones that hold nothing (a compaction may drop a
// partition whose data its own tombstones delete, a read gives it as an empty partition).
std::vector<mutation> visible_partitions(const read_result& r) {
    std::vector<mutation> out;
    for (auto& m : r.mutations) {
        auto v = visible(m);
        if (!is_empty(v)) {
            out.push_back(std::move(v));
        }
    }
    return out;
}

// A read as a plan: one range, or (sometimes) a few increasing ones walked by fast_forward_to; a random slice,
// direction and (sometimes) forwarding windows; some partitions left by next_partition.
struct read_case {
    read_plan plan;
    clustering_ranges slice;  // in the read's order
    bool reversed = false;
    bypass_cache bypass = bypass_cache::no;
};

read_case random_read(mutation_generator& g, const mutation_model& model) {
    read_case c;
    auto keys = keys_of(model);
    // A few keys never written, so that reads of absent keys happen.
    for (int i = 0; i < 3; ++i) {
        keys.push_back(pkey(g.rnd(31, 40)));
    }
    std::sort(keys.begin(), keys.end());
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
    switch (g.rnd(0, 3)) {
    case 0: c.plan.ranges.push_back(dht::partition_range::full()); break;
    case 1: c.plan.ranges.push_back(dht::partition_range::singular(keys[size_t(g.rnd(0, int(keys.size()) - 1))])); break;
    case 2: c.plan.ranges.push_back(random_partition_range(g, keys)); break;
    case 3: {
        // Increasing singular or closed ranges over sorted picks of the keys.
        std::vector<size_t> picks;
        for (int i = g.rnd(2, 6); i > 0; --i) {
            picks.push_back(size_t(g.rnd(0, int(keys.size()) - 1)));
        }
        std::sort(picks.begin(), picks.end());
        picks.erase(std::unique(picks.begin(), picks.end()), picks.end());
        for (size_t i = 0; i + 1 < picks.size(); i += 2) {
            c.plan.ranges.push_back(dht::partition_range({{dht::ring_position::for_key(keys[picks[i]]), true}},
                                                         {{dht::ring_position::for_key(keys[picks[i + 1]]), g.rnd(0, 1) == 0}}));
        }
        if (c.plan.ranges.empty()) {
            c.plan.ranges.push_back(dht::partition_range::singular(keys[picks.front()]));
        }
        break;
    }
    }
    for (auto& k : keys) {
        if (g.rnd(0, 7) == 0) {
            c.plan.skipped.insert(k);
        }
    }
    c.reversed = g.rnd(0, 1);
    auto forward = g.rnd(0, 2) == 0 ? clustering_ranges{position_range::full()} : g.make_ranges();
    c.slice = c.reversed ? reverse_ranges(forward) : forward;
    if (g.rnd(0, 3) == 0) {
        auto w = g.make_ranges();
        c.plan.windows = c.reversed ? reverse_ranges(w) : w;
    }
    c.bypass = g.rnd(0, 4) == 0 ? bypass_cache::yes : bypass_cache::no;
    return c;
}

future<read_result> read_model(const schema_ptr& s, const mutation_model& model, const read_case& c) {
    std::vector<mutation_fragment> fs;
    for (auto& [k, m] : model) {
        for (auto& f : to_fragments(m, c.reversed)) {
            fs.push_back(std::move(f));
        }
    }
    auto fwd = c.plan.windows ? streamed_forwarding::yes : streamed_forwarding::no;
    auto r = make_fragment_vector_reader(s, std::move(fs), c.plan.ranges.front(), fwd, c.reversed, c.slice);
    auto out = co_await read_by_plan(r, s, c.plan, c.reversed);
    co_await r.close();
    co_return out;
}

// A read of the table by the case's plan, open until finish() (so flushes, compactions, evictions and other reads
// can happen in the middle of it), checked against the model as it was when the read started.
class open_read {
public:
    open_read(table& t, const mutation_model& model, read_case c)
        : _s(t.schema()), _model(model), _c(std::move(c)),
          _reader(t.make_reader(reader_permit(),
                                {.range = _c.plan.ranges.front(),
                                 .slice = _c.slice,
                                 .order = read_order_for(_c.reversed),
                                 .forwarding = _c.plan.windows ? streamed_forwarding::yes : streamed_forwarding::no,
                                 .bypass = _c.bypass})) {}

    // Reads the first fragments (the reader starts, and holds what it read).
    future<> start() { co_await _reader.fill_buffer(); }

    future<> finish(const std::string& when) {
        read_result got;
        std::exception_ptr err;
        try {
            got = co_await read_by_plan(_reader, _s, _c.plan, _c.reversed);
        } catch (...) {
            err = std::current_exception();
        }
        co_await _reader.close();
        if (err) {
            std::rethrow_exception(err);
        }
        auto want = co_await read_model(_s, _model, _c);
        auto a = visible_partitions(got);
        auto b = visible_partitions(want);
        BOOST_REQUIRE_MESSAGE(a == b, when << " (reversed " << _c.reversed << ", windows " << bool(_c.plan.windows)
                                           << ", ranges " << _c.plan.ranges.size() << ", bypass "
                                           << bool(_c.bypass == bypass_cache::yes) << "):\n"
                                           << describe(a) << "!=\n" << describe(b));
    }

private:
    schema_ptr _s;
    mutation_model _model;
    read_case _c;
    mutation_reader _reader;
};

// Starts f now (a future is lazy: it runs when awaited) and gives a future of its end.
future<> in_background(future<> f) {
    auto p = std::make_shared<promise<>>();
    auto done = p->get_future();
    spawn([p, f = std::move(f)]() mutable -> future<> {
        std::exception_ptr err;
        try {
            co_await std::move(f);
        } catch (...) {
            err = std::current_exception();
        }
        if (err) {
            p->set_exception(err);
        } else {
            p->set_value();
        }
    });
    return done;
}

// Braced lists cannot be built inside coroutines (ARCHITECTURE.md, coroutine rule 7).
clustering_ranges full_slice() {
    return {position_range::full()};
}

constexpr size_t budgets[] = {0, 3000, 12000, 30000, size_t(64) << 20};

#ifdef REEF_DEBUG
constexpr int cases = 3;
constexpr int steps = 100;
#else
constexpr int cases = 5;
constexpr int steps = 150;
#endif

} // namespace

// Random writes (a tiny flush threshold: background flushes), flushes, compactions and reads, some of them kept
// open across flushes, compactions, drop_caches and other reads, with a cache budget from nothing (every entry
// evicted as soon as it is made, while reads use it) to plenty; every read equals the model's.
REEF_TEST_CASE(test_row_cache_reads_equal_the_model) {
    uint64_t seed = pick_seed();
    BOOST_TEST_MESSAGE("seed " << seed << " (set REEF_SEED to repeat)");
    uint64_t hits = 0, misses = 0, evictions = 0, chunk_evictions = 0, merges = 0, reads = 0, open_reads = 0;
    for (auto s : random_test_schemas()) {
        mutation_generator g(s, seed);
        for (int i = 0; i < cases; ++i) {
            BOOST_TEST_CONTEXT("seed " << seed << " table " << s->table() << " case " << i) {
                // The first case has plenty of room, so that every run has hits and flushes merged into the cache to check
                // (seed 3002746466 drew small budgets only, and no hit); the others draw theirs.
                auto budget = budgets[g.rnd(0, 4)];
                cache::cache_tracker tracker(i == 0 ? budgets[4] : budget);
                test_table tt(s, tracker, size_t(g.rnd(2000, 40000)));
                auto& t = tt.t;
                mutation_model model;
                co_await t.start();
                std::vector<std::unique_ptr<open_read>> held;
                std::optional<future<>> compaction;
                for (int step = 0; step < steps; ++step) {
                    switch (g.rnd(0, 9)) {
                    case 0: case 1: case 2:
                        if (held.empty()) {
                            for (int w = g.rnd(1, 4); w > 0; --w) {
                                auto m = with_typed_values(s, g.make(pkey(g.rnd(0, 30)), 6));
                                t.apply(m);
                                apply_to_model(model, m);
                            }
                        }
                        break;
                    case 3:
                        co_await t.flush();
                        break;
                    case 4:
                        if (g.rnd(0, 3) == 0 && !compaction) {
                            // It waits for the held reads of the sstables it replaces before deleting them: it
                            // finishes once they are closed.
                            compaction.emplace(in_background(t.compact_all(-1)));
                        } else {
                            cache::drop_caches();
                            tracker.drop_caches();
                        }
                        break;
                    case 5: {
                        ++open_reads;
                        held.push_back(std::make_unique<open_read>(t, model, random_read(g, model)));
                        co_await held.back()->start();
                        break;
                    }
                    case 6:
                        if (!held.empty()) {
                            auto r = std::move(held.back());
                            held.pop_back();
                            co_await r->finish("open across step " + std::to_string(step));
                        }
                        if (held.empty() && compaction) {
                            co_await std::move(*compaction);
                            compaction.reset();
                        }
                        break;
                    default: {
                        ++reads;
                        open_read r(t, model, random_read(g, model));
                        co_await r.finish("at step " + std::to_string(step));
                        break;
                    }
                    }
                }
                while (!held.empty()) {
                    auto r = std::move(held.back());
                    held.pop_back();
                    co_await r->finish("open until the end");
                }
                if (compaction) {
                    co_await std::move(*compaction);
                }
                auto& st = t.cache()->stats();
                hits += st.hits;
                misses += st.misses;
                evictions += st.evictions;
                // Every eviction step of the LRU that did not take an entry whole took a chunk of its rows.
                chunk_evictions += tracker.lru().stats().evictions - st.evictions;
                merges += st.merges;
                co_await t.stop();
            }
        }
    }
    BOOST_TEST_MESSAGE(reads << " reads, " << open_reads << " held open; cache: " << hits << " hits, " << misses
                             << " misses, " << evictions << " evictions, " << chunk_evictions << " row chunks evicted, " << merges
                             << " partitions flushed into it");
    // The workload exercises what it should.
    BOOST_CHECK_GT(hits, 0u);
    BOOST_CHECK_GT(misses, 0u);
    BOOST_CHECK_GT(evictions, 0u);
    BOOST_CHECK_GT(merges, 0u);
    BOOST_CHECK_GT(chunk_evictions, 0u);
}

namespace {

uint64_t disk_reads() {
    return engine().io().reads;
}

future<std::vector<mutation_fragment>> read(table& t, const dht::partition_range& pr, const clustering_ranges& slice,
                                            bool reversed = false, bypass_cache bypass = bypass_cache::no) {
    auto r = t.make_reader(reader_permit(),
                           {.range = pr, .slice = slice, .order = read_order_for(reversed), .bypass = bypass});
    auto fs = co_await read_validated(r, reversed);
    co_await r.close();
    co_return fs;
}

void require_equal_stats(const cache::row_cache_stats& a, const cache::row_cache_stats& b) {
    BOOST_REQUIRE_EQUAL(a.hits, b.hits);
    BOOST_REQUIRE_EQUAL(a.misses, b.misses);
    BOOST_REQUIRE_EQUAL(a.populations, b.populations);
    BOOST_REQUIRE_EQUAL(a.evictions, b.evictions);
    BOOST_REQUIRE_EQUAL(a.invalidations, b.invalidations);
    BOOST_REQUIRE_EQUAL(a.merges, b.merges);
    BOOST_REQUIRE_EQUAL(a.partitions, b.partitions);
}

} // namespace

// A read the cache took from the sstables, repeated, does no disk I/O and counts hits (single partitions, with
// slices, forward and reversed, an absent key, the full range); a bypass read changes no statistic and no entry;
// a flush makes the cache give the new data; drop_caches empties it; a small budget keeps it small.
REEF_TEST_CASE(test_row_cache_hits_do_no_io) {
    uint64_t seed = pick_seed();
    BOOST_TEST_MESSAGE("seed " << seed << " (set REEF_SEED to repeat)");
    auto s = random_test_schema();
    mutation_generator g(s, seed);
    cache::cache_tracker tracker(size_t(64) << 20);
    test_table tt(s, tracker);
    auto& t = tt.t;
    co_await t.start();
    mutation_model model;
    for (int round = 0; round < 3; ++round) {
        for (int i = 0; i < 40; ++i) {
            auto m = with_typed_values(s, g.make(pkey(g.rnd(0, 20)), 10));
            t.apply(m);
            apply_to_model(model, m);
        }
        co_await t.flush();
    }
    auto keys = keys_of(model);
    auto& st = t.cache()->stats();
    auto check = [&](const dht::partition_range& pr, const clustering_ranges& slice, bool reversed,
                     const std::string& what) -> future<> {
        auto misses = st.misses;
        auto first = co_await read(t, pr, slice, reversed);
        BOOST_REQUIRE_MESSAGE(st.misses > misses, what << ": the first read is a miss");
        auto hits = st.hits;
        misses = st.misses;
        auto io = disk_reads();
        auto second = co_await read(t, pr, slice, reversed);
        BOOST_REQUIRE_MESSAGE(disk_reads() == io, what << ": the second read did " << disk_reads() - io << " reads");
        BOOST_REQUIRE_MESSAGE(st.hits > hits, what << ": the second read is a hit");
        BOOST_REQUIRE_EQUAL(st.misses, misses);
        // Without empty partitions: a generated mutation may be empty, and the flush writes no partition for it
        // (seed 2368978710).
        auto want = canonical_nonempty(s, expected_read(model, pr, slice, reversed), reversed);
        BOOST_REQUIRE_MESSAGE(canonical_nonempty(s, first, reversed) == want, what << ": first read");
        BOOST_REQUIRE_MESSAGE(canonical_nonempty(s, second, reversed) == want, what << ": second read");
    };
    auto forward = g.make_ranges();
    co_await check(dht::partition_range::singular(keys[0]), forward, false, "one partition, a slice");
    co_await check(dht::partition_range::singular(keys[1]), reverse_ranges(full_slice()), true,
                   "one partition, reversed");
    co_await check(dht::partition_range::singular(pkey(1000)), full_slice(), false, "an absent key");
    co_await check(dht::partition_range::full(), full_slice(), false, "everything");
    // After the full scan every partition and the ring between them are cached: any read is a hit.
    {
        auto io = disk_reads();
        auto hits = st.hits;
        auto misses = st.misses;
        for (auto& k : keys) {
            co_await read(t, dht::partition_range::singular(k), g.make_ranges(), false);
        }
        co_await read(t, dht::partition_range::singular(pkey(1001)), full_slice(), false);
        co_await read(t, random_partition_range(g, keys), reverse_ranges(g.make_ranges()), true);
        BOOST_REQUIRE_EQUAL(disk_reads(), io);
        BOOST_REQUIRE_EQUAL(st.misses, misses);
        BOOST_REQUIRE_GE(st.hits, hits + keys.size());
    }
    // Bypass: the same answer, no statistic or entry changed (the row cache's nor the tracker's).
    {
        auto before = st;
        auto tracker_before = tracker.row_stats();
        auto used = tracker.lru().memory_used();
        auto fs = co_await read(t, dht::partition_range::full(), full_slice(), false, bypass_cache::yes);
        BOOST_REQUIRE(canonical_nonempty(s, fs, false) ==
                      canonical_nonempty(s, expected_read(model, dht::partition_range::full(), full_slice(), false), false));
        require_equal_stats(st, before);
        require_equal_stats(tracker.row_stats(), tracker_before);
        BOOST_REQUIRE_EQUAL(tracker.lru().memory_used(), used);
    }
    // A flush moves what it wrote into the cache: a cached key, a new key inside the cached ring; the next read
    // gives the new data and is still a hit, without I/O. A major compaction keeps the cache as it is.
    for (int pass = 0; pass < 2; ++pass) {
        auto merges = st.merges;
        auto m = with_typed_values(s, g.make(keys[0], 10));
        t.apply(m);
        apply_to_model(model, m);
        auto fresh = with_typed_values(s, g.make(pkey(2000 + pass), 10));
        t.apply(fresh);
        apply_to_model(model, fresh);
        if (pass == 0) {
            co_await t.flush();
            BOOST_REQUIRE_EQUAL(st.merges, merges + 2);
        } else {
            co_await t.flush();
            co_await t.compact_all(-1);
            BOOST_REQUIRE_EQUAL(t.sstable_count(), 1u);
        }
        auto io = disk_reads();
        auto hits = st.hits;
        auto misses = st.misses;
        auto fs = co_await read(t, dht::partition_range::full(), full_slice(), false);
        BOOST_REQUIRE(canonical_nonempty(s, fs, false) ==
                      canonical_nonempty(s, expected_read(model, dht::partition_range::full(), full_slice(), false), false));
        BOOST_REQUIRE_EQUAL(disk_reads(), io);
        BOOST_REQUIRE_EQUAL(st.misses, misses);
        BOOST_REQUIRE_GT(st.hits, hits);
    }
    // drop_caches empties the row cache too.
    BOOST_REQUIRE_GT(t.cache()->partition_count(), 0u);
    auto full = tracker.lru().memory_used();
    tracker.drop_caches();
    BOOST_REQUIRE_EQUAL(t.cache()->partition_count(), 0u);
    BOOST_REQUIRE_EQUAL(tracker.lru().memory_used(), 0u);
    BOOST_REQUIRE_EQUAL(st.rows, 0u);
    // Half the room it took: the cache stays under it, evicting.
    tracker.lru().set_budget(full / 2);
    auto row_evictions = st.row_evictions;
    co_await read(t, dht::partition_range::full(), full_slice(), false);
    BOOST_REQUIRE_LE(tracker.lru().memory_used(), full / 2);
    BOOST_REQUIRE_GT(st.row_evictions, row_evictions);
    co_await t.stop();
}

namespace {

// Rows ck 0..rows-1 of pkey(1) written at timestamp 1, then (when `deleted`) the range [from, to) deleted at
// timestamp 2, flushed, and the partition read through the cache: the rows read and the cache's memory.
struct cached_partition {
    size_t rows_read = 0;
    size_t memory = 0;
};
future<cached_partition> cache_one_partition(int rows, std::optional<std::pair<int, int>> deleted, bool only_live) {
    auto s = int_table_schema();
    cache::cache_tracker tracker(size_t(64) << 20);
    test_table tt(s, tracker);
    auto& t = tt.t;
    co_await t.start();
    mutation m(s, pkey(1));
    for (int c = 0; c < rows; ++c) {
        if (only_live && deleted && c >= deleted->first && c < deleted->second) {
            continue;
        }
        deletable_row r;
        r.marker = row_marker{1};
        auto v = int_value(c);
        r.cells.apply(0, atomic_cell::make_live(1, std::string(v.begin(), v.end())));
        m.partition().apply_row(*s, ck(c), r);
    }
    if (deleted) {
        m.partition().apply_range_tombstone(position_in_partition::before_key(ck(deleted->first)),
                                            position_in_partition::before_key(ck(deleted->second)), tombstone{2, 1000});
    }
    t.apply(m);
    co_await t.flush();
    cached_partition out;
    for (int pass = 0; pass < 2; ++pass) {  // a miss that populates, then a hit
        auto fs = co_await read(t, dht::partition_range::singular(pkey(1)), full_slice());
        out.rows_read = std::count_if(fs.begin(), fs.end(), [](auto& f) { return std::holds_alternative<clustering_row>(f); });
    }
    out.memory = tracker.lru().memory_used();
    co_await t.stop();
    co_return out;
}

} // namespace

// The cache keeps a partition with what its tombstones delete dropped: rows under a range deletion are neither
// held nor walked by later reads (delete-range.md's wide deletions), and reads give the same rows.
REEF_TEST_CASE(test_row_cache_keeps_no_rows_a_range_deletion_covers) {
    auto covered = co_await cache_one_partition(1000, std::pair{100, 900}, false);
    auto live_only = co_await cache_one_partition(1000, std::pair{100, 900}, true);
    auto undeleted = co_await cache_one_partition(1000, std::nullopt, false);
    BOOST_TEST_MESSAGE("cache memory: covered " << covered.memory << ", live rows only " << live_only.memory
                                                << ", nothing deleted " << undeleted.memory);
    BOOST_REQUIRE_EQUAL(covered.rows_read, 200u);
    BOOST_REQUIRE_EQUAL(live_only.rows_read, 200u);
    BOOST_REQUIRE_EQUAL(undeleted.rows_read, 1000u);
    BOOST_REQUIRE_EQUAL(covered.memory, live_only.memory);
    BOOST_REQUIRE_LT(covered.memory, undeleted.memory / 2);
}

namespace {

// Rows ck 0..rows-1 of key k, one int cell each, written at timestamp ts.
mutation int_partition(const schema_ptr& s, const dht::decorated_key& k, int rows, write_time::timestamp_type ts = 1) {
    mutation m(s, k);
    for (int c = 0; c < rows; ++c) {
        deletable_row r;
        r.marker = row_marker{ts};
        auto v = int_value(c + int(ts));
        r.cells.apply(0, atomic_cell::make_live(ts, std::string(v.begin(), v.end())));
        m.partition().apply_row(*s, ck(c), r);
    }
    return m;
}

clustering_ranges first_rows(int n) {
    return {position_range(position_in_partition::before_all_clustered_rows(), position_in_partition::before_key(ck(n)))};
}

// Reads pr through the table and requires the model's answer; returns the disk reads it did.
future<uint64_t> read_checked(table& t, const mutation_model& model, const dht::partition_range& pr,
                              const clustering_ranges& slice, const std::string& what) {
    auto io = disk_reads();
    auto fs = co_await read(t, pr, slice);
    auto did = disk_reads() - io;
    auto s = t.schema();
    BOOST_REQUIRE_MESSAGE(canonical_mutations(s, fs, false) ==
                              canonical_mutations(s, expected_read(model, pr, slice, false), false),
                          what);
    co_return did;
}

} // namespace

// Under a budget the coldest partition gives back rows, a chunk at a time from its end, and stays cached: its
// first rows are still a hit without I/O, the rest is read again correctly, and no other partition is evicted.
REEF_TEST_CASE(test_row_cache_evicts_rows_of_a_partition) {
    auto s = int_table_schema();
    cache::cache_tracker tracker(size_t(64) << 20);
    test_table tt(s, tracker);
    auto& t = tt.t;
    co_await t.start();
    mutation_model model;
    auto wide = int_partition(s, pkey(0), 400);
    t.apply(wide);
    apply_to_model(model, wide);
    for (int k = 1; k <= 30; ++k) {
        auto m = int_partition(s, pkey(k), 10);
        t.apply(m);
        apply_to_model(model, m);
    }
    co_await t.flush();
    auto& st = t.cache()->stats();
    co_await read_checked(t, model, dht::partition_range::singular(pkey(0)), full_slice(), "the wide partition");
    auto wide_memory = tracker.lru().memory_used();
    for (int k = 1; k <= 30; ++k) {
        co_await read_checked(t, model, dht::partition_range::singular(pkey(k)), full_slice(), "a small partition");
    }
    BOOST_REQUIRE_EQUAL(t.cache()->partition_count(), 31u);
    BOOST_REQUIRE_EQUAL(st.rows, 700u);
    // Half the wide partition must go: it is the coldest.
    tracker.lru().set_budget(tracker.lru().memory_used() - wide_memory / 2);
    BOOST_TEST_MESSAGE("rows evicted " << st.row_evictions << ", rows left " << st.rows);
    BOOST_REQUIRE_EQUAL(st.evictions, 0u);
    BOOST_REQUIRE_EQUAL(t.cache()->partition_count(), 31u);
    BOOST_REQUIRE_GT(st.row_evictions, 0u);
    BOOST_REQUIRE_LT(st.row_evictions, 400u);
    BOOST_REQUIRE_EQUAL(st.rows, 700u - st.row_evictions);
    BOOST_REQUIRE_LE(tracker.lru().memory_used(), tracker.lru().budget());
    // The head of the wide partition and every small one: hits.
    auto misses = st.misses;
    BOOST_REQUIRE_EQUAL(co_await read_checked(t, model, dht::partition_range::singular(pkey(0)), first_rows(50),
                                              "the head of the wide partition"), 0u);
    for (int k = 1; k <= 30; ++k) {
        BOOST_REQUIRE_EQUAL(co_await read_checked(t, model, dht::partition_range::singular(pkey(k)), full_slice(),
                                                  "a small partition"), 0u);
    }
    BOOST_REQUIRE_EQUAL(st.misses, misses);
    // The tail was evicted, and with it its continuity: read from the sstables, and right.
    co_await read_checked(t, model, dht::partition_range::singular(pkey(0)), full_slice(), "the whole wide partition");
    BOOST_REQUIRE_GT(st.misses, misses);
    co_await read_checked(t, model, dht::partition_range::full(), full_slice(), "everything");
    co_await t.stop();
}

// One partition bigger than the cache, read whole (twice), leaves the partitions cached before it in the cache;
// without the per-partition share it would have evicted every one of them.
REEF_TEST_CASE(test_row_cache_one_huge_partition_does_not_empty_it) {
    auto s = int_table_schema();
    cache::cache_tracker tracker(size_t(64) << 20);
    test_table tt(s, tracker);
    auto& t = tt.t;
    co_await t.start();
    mutation_model model;
    for (int k = 1; k <= 20; ++k) {
        auto m = int_partition(s, pkey(k), 10);
        t.apply(m);
        apply_to_model(model, m);
    }
    auto huge = int_partition(s, pkey(0), 5000);
    t.apply(huge);
    apply_to_model(model, huge);
    co_await t.flush();
    for (int k = 1; k <= 20; ++k) {
        co_await read_checked(t, model, dht::partition_range::singular(pkey(k)), full_slice(), "a small partition");
    }
    // Room for the small ones three times over: the huge one is far bigger.
    tracker.lru().set_budget(3 * tracker.lru().memory_used());
    for (int pass = 0; pass < 2; ++pass) {
        co_await read_checked(t, model, dht::partition_range::singular(pkey(0)), full_slice(), "the huge partition");
    }
    auto& st = t.cache()->stats();
    BOOST_REQUIRE_EQUAL(st.evictions, 0u);
    for (int k = 1; k <= 20; ++k) {
        BOOST_REQUIRE_EQUAL(co_await read_checked(t, model, dht::partition_range::singular(pkey(k)), full_slice(),
                                                  "a small partition after the huge one"), 0u);
    }
    // Its first rows still get cached, within the partition's share.
    co_await read_checked(t, model, dht::partition_range::singular(pkey(0)), first_rows(20), "the huge one's head");
    BOOST_REQUIRE_EQUAL(co_await read_checked(t, model, dht::partition_range::singular(pkey(0)), first_rows(20),
                                              "the huge one's head again"), 0u);
    BOOST_REQUIRE_LE(tracker.lru().memory_used(), tracker.lru().budget());
    co_await t.stop();
}

namespace {

// Every row of every partition read equals that row in `before` or in `after`, and the read holds every
// partition and row of `after` (whose rows are `before`'s, rewritten).
void require_rows_before_or_after(const std::vector<mutation>& got, const mutation_model& before,
                                  const mutation_model& after, const std::string& what) {
    BOOST_REQUIRE_MESSAGE(got.size() == after.size(), what << ": " << got.size() << " partitions");
    for (auto& m : got) {
        auto b = visible(before.at(m.decorated_key()));
        auto a = visible(after.at(m.decorated_key()));
        auto v = visible(m);
        BOOST_REQUIRE_MESSAGE(v.partition().rows().size() == a.partition().rows().size(), what << ": rows lost");
        for (auto& [key, row] : v.partition().rows()) {
            BOOST_REQUIRE_MESSAGE(row == b.partition().rows().at(key) || row == a.partition().rows().at(key),
                                  what << ": a row that was never written");
        }
    }
}

} // namespace

// A read through the cache open across a flush that merges into the entries it is reading, then across a
// compaction's swap, loses nothing: each row as before the flush or after it. A read open on the sstables
// (bypassing the cache) reads them after they left the set, as they were. Afterwards the cache, kept through the
// compaction, serves everything without I/O.
REEF_TEST_CASE(test_row_cache_reads_open_across_flush_and_compaction) {
    auto s = int_table_schema();
    cache::cache_tracker tracker(size_t(64) << 20);
    test_table tt(s, tracker);
    auto& t = tt.t;
    co_await t.start();
    mutation_model before;
    for (int k = 0; k < 20; ++k) {
        auto m = int_partition(s, pkey(k), 10, 1);
        t.apply(m);
        apply_to_model(before, m);
    }
    co_await t.flush();
    co_await read_checked(t, before, dht::partition_range::full(), full_slice(), "the first scan");
    auto cached = t.make_reader(reader_permit(), read_options{});
    auto direct = t.make_reader(reader_permit(), read_options{.bypass = bypass_cache::yes});
    co_await cached.fill_buffer();
    co_await direct.fill_buffer();
    auto after = before;
    for (int k = 0; k < 20; ++k) {
        auto m = int_partition(s, pkey(k), 10, 2);
        t.apply(m);
        apply_to_model(after, m);
    }
    co_await t.flush();
    BOOST_REQUIRE_EQUAL(t.sstable_count(), 2u);
    // It waits for the open sstable read before deleting its inputs.
    auto compaction = in_background(t.compact_all(-1));
    for (int i = 0; i < 10000 && t.sstable_count() != 1; ++i) {
        co_await sleep(std::chrono::milliseconds(1));
    }
    BOOST_REQUIRE_EQUAL(t.sstable_count(), 1u);
    auto got_cached = co_await read_validated(cached, false);
    co_await cached.close();
    auto got_direct = co_await read_validated(direct, false);
    co_await direct.close();
    co_await std::move(compaction);
    require_rows_before_or_after(canonical_mutations(s, got_cached, false), before, after, "the cached read");
    BOOST_REQUIRE_MESSAGE(canonical_mutations(s, got_direct, false) ==
                              canonical_mutations(s, expected_read(before, dht::partition_range::full(), full_slice(), false), false),
                          "the read of the replaced sstables");
    auto misses = t.cache()->stats().misses;
    BOOST_REQUIRE_EQUAL(co_await read_checked(t, after, dht::partition_range::full(), full_slice(), "after"), 0u);
    BOOST_REQUIRE_EQUAL(t.cache()->stats().misses, misses);
    co_await t.stop();
}

// A read-heavy workload through flushes and compactions: 200 partitions read at random, 50 of them rewritten and
// flushed every round, a major compaction every fourth round. Once the first round has read everything, the
// cache answers every read: flushes and compactions keep it (the hit rate is printed, the figure of the commit).
REEF_TEST_CASE(test_row_cache_hit_rate_through_flushes) {
    auto s = int_table_schema();
    cache::cache_tracker tracker(size_t(64) << 20);
    test_table tt(s, tracker);
    auto& t = tt.t;
    co_await t.start();
    mutation_generator g(s, pick_seed());
    constexpr int keys = 200;
    for (int k = 0; k < keys; ++k) {
        t.apply(int_partition(s, pkey(k), 20, 1));
    }
    co_await t.flush();
    auto& st = t.cache()->stats();
    uint64_t hits = 0, misses = 0, first_round_misses = 0;
    for (int round = 0; round < 12; ++round) {
        auto h = st.hits, m = st.misses;
        for (int i = 0; i < 400; ++i) {
            co_await read(t, dht::partition_range::singular(pkey(g.rnd(0, keys - 1))), full_slice());
            co_await yield();  // hits may never suspend (coroutine rule 5)
        }
        if (round == 0) {
            // Cold: every partition read once whole.
            co_await read(t, dht::partition_range::full(), full_slice());
            first_round_misses = st.misses - m;
        } else {
            hits += st.hits - h;
            misses += st.misses - m;
        }
        for (int i = 0; i < 50; ++i) {
            t.apply(int_partition(s, pkey(g.rnd(0, keys - 1)), 20, round + 2));
        }
        co_await t.flush();
        if (round % 4 == 3) {
            co_await t.compact_all(-1);
        }
    }
    BOOST_TEST_MESSAGE("after the first round (" << first_round_misses << " misses): " << hits << " hits, " << misses
                                                 << " misses, hit rate " << double(hits) / double(hits + misses));
    BOOST_REQUIRE_GT(first_round_misses, 0u);
    BOOST_REQUIRE_EQUAL(misses, 0u);
    co_await t.stop();
}
