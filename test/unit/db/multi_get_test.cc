// Batched single-partition reads (table::multi_get, database::multi_get) against the model: random keys with
// duplicates and absent ones, data spread over memtables, several sstables and a row cache of random (often tiny)
// budget, forward and reversed slices, a flush racing the batch; the I/O a batch saves (one index page lookup for
// the keys of one summary page, one Data.db read for nearby partitions); the database's shard grouping and
// Cassandra's `IN` order.
#include "db/database.hh"
#include "db/table.hh"
#include "cache/tracker.hh"
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

#include <algorithm>
#include <set>

using namespace reef;
using namespace reef::testing;

namespace {

// The whole partition (a plain function: no braced list inside a coroutine, coroutine rule 7).
clustering_ranges full_slice() {
    return clustering_ranges{position_range::full()};
}

std::vector<dht::decorated_key> two_keys(const dht::decorated_key& a, const dht::decorated_key& b) {
    return {a, b};
}

// What a read of k with `slice` (in the read's order) gives, as the model has it, canonical (shadowed data
// dropped, an empty partition left out).
std::vector<mutation> expected_partition(const schema_ptr& s, const mutation_model& model, const dht::decorated_key& k,
                                         const clustering_ranges& slice, bool reversed) {
    auto ms = canonical_mutations(s, expected_read(model, dht::partition_range::singular(k), slice, reversed), reversed);
    std::erase_if(ms, is_empty);
    return ms;
}

std::vector<mutation> canonical_one(const std::optional<mutation>& m) {
    std::vector<mutation> ms;
    if (m) {
        ms.push_back(*m);
    }
    return query_result_canonical(std::move(ms));
}

// n random keys of [lo, hi] (duplicates likely), in ring order, distinct.
std::vector<dht::decorated_key> random_batch(mutation_generator& g, int n, int lo, int hi) {
    std::set<dht::decorated_key> ks;
    for (int i = 0; i < n; ++i) {
        ks.insert(pkey(g.rnd(lo, hi)));
    }
    return {ks.begin(), ks.end()};
}

// One batch through t.multi_get, each key checked against the model.
future<> check_batch(table& t, const mutation_model& model, mutation_generator& g, const std::string& when) {
    auto s = t.schema();
    // One batch in four has one key: multi_get reads it as a single-partition read.
    auto keys = random_batch(g, g.rnd(0, 3) == 0 ? 1 : g.rnd(1, 40), 0, 70);
    auto forward_slice = g.rnd(0, 2) ? g.make_ranges() : full_slice();
    bool reversed = g.rnd(0, 1);
    auto slice = reversed ? reverse_ranges(forward_slice) : forward_slice;
    // The batch, then the same keys without batching (multi_get_unbatched), both against the model.
    for (bool batched : {true, false}) {
        std::vector<std::optional<mutation>> got;
        if (batched) {
            got = co_await t.multi_get(reader_permit(), keys, slice, read_order_for(reversed));
        } else {
            got = co_await t.multi_get_unbatched(reader_permit(), keys, slice, read_order_for(reversed));
        }
        BOOST_REQUIRE_EQUAL(got.size(), keys.size());
        for (size_t i = 0; i < keys.size(); ++i) {
            if (got[i]) {
                BOOST_REQUIRE(got[i]->decorated_key() == keys[i]);
            }
            auto a = canonical_one(got[i]);
            auto b = expected_partition(s, model, keys[i], slice, reversed);
            BOOST_REQUIRE_MESSAGE(a == b, when << (batched ? "" : ", unbatched") << ", key " << i << " of "
                                               << keys.size() << " (reversed " << reversed << "):\n" << describe(a)
                                               << "!=\n" << describe(b));
        }
    }
}

#ifdef REEF_DEBUG
constexpr int cases = 2;
#else
constexpr int cases = 8;
#endif

} // namespace

// Random writes over keys 0..60 flushed into several sstables, some left in memtables; batches of keys 0..70
// (absent ones, duplicates collapsed) with random slices in both orders, through a row cache whose budget is tiny
// (everything evicted at once), small or ample, or no cache; batches repeat (cache hits), and one races a flush.
REEF_TEST_CASE(multi_get_matches_model) {
    uint64_t seed = pick_seed();
    BOOST_TEST_MESSAGE("seed " << seed << " (set REEF_SEED to repeat)");
    uint64_t hits = 0, misses = 0;
    for (auto s : random_test_schemas()) {
        mutation_generator g(s, seed);
        for (int c = 0; c < cases; ++c) {
            BOOST_TEST_CONTEXT("seed " << seed << " table " << s->table() << " case " << c) {
                tmpdir dir;
                const size_t budgets[] = {1, 4096, 64 << 10, 64 << 20};
                // The first case of each table has an ample cache and an sstable, so that some batch hits it
                // (debug runs only two cases).
                bool ample = c == 0;
                cache::cache_tracker tracker(budgets[ample ? 3 : g.rnd(0, 3)]);
                table_config cfg;
                cfg.directory = dir.path() + "/ks/t";
                cfg.memtable_flush_threshold = 64 << 20;
                cfg.enable_cache = ample || g.rnd(0, 4) != 0;
                cfg.cache_tracker = &tracker;
                table t(s, cfg);
                co_await t.start();
                mutation_model model;
                int sstables = g.rnd(ample ? 1 : 0, 4);
                for (int round = 0; round <= sstables; ++round) {
                    int writes = g.rnd(5, 40);
                    for (int w = 0; w < writes; ++w) {
                        auto m = with_typed_values(s, g.make(pkey(g.rnd(0, 60)), 6));
                        t.apply(m);
                        apply_to_model(model, m);
                    }
                    // The last round stays in the memtable.
                    if (round < sstables) {
                        co_await t.flush();
                    }
                    for (int b = 0; b < 3; ++b) {
                        co_await check_batch(t, model, g, "round " + std::to_string(round));
                    }
                }
                // A batch and a flush at once: the memtable's data moves to an sstable while the batch reads.
                auto keys = random_batch(g, 30, 0, 70);
                auto batch = t.multi_get(reader_permit(), keys, full_slice());
                std::vector<future<>> both;
                both.push_back(t.flush());
                auto got = co_await batch;
                co_await when_all(std::move(both));
                for (size_t i = 0; i < keys.size(); ++i) {
                    auto b = expected_partition(s, model, keys[i], full_slice(), false);
                    BOOST_REQUIRE_MESSAGE(canonical_one(got[i]) == b, "racing a flush, key " << i);
                }
                co_await check_batch(t, model, g, "after the last flush");
                if (t.cache()) {
                    hits += t.cache()->stats().hits;
                    misses += t.cache()->stats().misses;
                }
                co_await t.stop();
            }
        }
    }
    BOOST_TEST_MESSAGE(hits << " row cache hits, " << misses << " misses");
    BOOST_CHECK_GT(hits, 0u);
    BOOST_CHECK_GT(misses, 0u);
}

// Keys out of ring order, or repeated, are refused, batched or not.
REEF_TEST_CASE(multi_get_refuses_unsorted_keys) {
    tmpdir dir;
    table t(int_table_schema(), table_config{.directory = dir.path() + "/ks/t"});
    co_await t.start();
    auto a = pkey(1), b = pkey(2);
    if (b < a) {
        std::swap(a, b);
    }
    const std::vector<std::vector<dht::decorated_key>> refusable{two_keys(b, a), two_keys(a, a)};
    for (bool batched : {true, false}) {
        for (auto& keys : refusable) {
            bool refused = false;
            try {
                if (batched) {
                    co_await t.multi_get(reader_permit(), keys, full_slice());
                } else {
                    co_await t.multi_get_unbatched(reader_permit(), keys, full_slice());
                }
            } catch (const std::invalid_argument&) {
                refused = true;
            }
            BOOST_CHECK_MESSAGE(refused, (batched ? "multi_get" : "multi_get_unbatched"));
        }
    }
    co_await t.stop();
}

// No row cache and empty memtables: multi_get_unbatched reads a key whose one source is an sstable it already read
// in the batch by forwarding that sstable's reader. Keys in the first sstable only, in the second only, in both
// (read the ordinary way) and in neither, in one batch, against the model, in both orders, with random slices.
REEF_TEST_CASE(multi_get_unbatched_forwards_kept_readers) {
    uint64_t seed = pick_seed();
    BOOST_TEST_MESSAGE("seed " << seed << " (set REEF_SEED to repeat)");
    for (auto s : random_test_schemas()) {
        mutation_generator g(s, seed);
        tmpdir dir;
        table t(s, table_config{.directory = dir.path() + "/ks/t", .enable_cache = false});
        co_await t.start();
        mutation_model model;
        // Keys 0..29, flushed, then 20..49, flushed: 20..29 are in both sstables, 50..70 in none.
        for (int round = 0; round < 2; ++round) {
            for (int k = round * 20; k < round * 20 + 30; ++k) {
                auto m = with_typed_values(s, g.make(pkey(k), 6));
                t.apply(m);
                apply_to_model(model, m);
            }
            co_await t.flush();
        }
        BOOST_REQUIRE_EQUAL(t.sstable_count(), 2u);
        for (int b = 0; b < 20; ++b) {
            co_await check_batch(t, model, g, "two sstables, no cache");
        }
        co_await t.stop();
    }
}

namespace {

mutation int_row(const schema_ptr& s, int k, int v) {
    mutation m(s, pkey(k));
    deletable_row r;
    r.marker = row_marker{1};
    auto b = int_value(v);
    r.cells.apply(0, atomic_cell::make_live(1, std::string(b.begin(), b.end())));
    m.partition().apply_row(*s, ck(0), r);
    return m;
}

// Rows 0 to n - 1 of int_row (row k's value k * factor), flushed into one sstable.
future<> write_int_rows(table& t, int n, int factor) {
    for (int k = 0; k < n; ++k) {
        t.apply(int_row(t.schema(), k, k * factor));
    }
    co_await t.flush();
}

// Reads k alone, the ordinary way (make_reader of its singular range), into a mutation.
future<std::optional<mutation>> read_single(table& t, const dht::decorated_key& k) {
    auto r = t.make_reader(reader_permit(), {.range = dht::partition_range::singular(k)});
    auto fs = co_await read_validated(r, false);
    co_await r.close();
    auto ms = mutations_from_fragments(t.schema(), fs);
    if (ms.empty()) {
        co_return std::nullopt;
    }
    co_return std::move(ms.front());
}

} // namespace

// The keys of one summary page, every other one: the batch looks the page up once (one pin) and reads their
// Data.db bytes in one read; one at a time, each key looks the page up (twice: its start and its end; the page's
// first key also the page before) and reads Data.db on its own.
REEF_TEST_CASE(batch_shares_index_page_and_data_reads) {
    tmpdir dir;
    auto s = int_table_schema();
    table t(s, table_config{.directory = dir.path() + "/ks/t", .enable_cache = false});
    co_await t.start();
    co_await write_int_rows(t, 3000, 7);
    BOOST_REQUIRE_EQUAL(t.sstable_count(), 1u);
    auto sst = t.sstables().front();
    auto& pts = sst->summary().points;
    BOOST_REQUIRE_GE(pts.size(), 3u);
    std::vector<dht::decorated_key> page_keys;
    for (int k = 0; k < 3000; ++k) {
        auto dk = pkey(k);
        if (!(dk < pts[1].key) && dk < pts[2].key) {
            page_keys.push_back(dk);
        }
    }
    std::sort(page_keys.begin(), page_keys.end());
    BOOST_REQUIRE_GE(page_keys.size(), 40u);
    std::vector<dht::decorated_key> keys;
    // Not the page's last entry (its end is the next page's first position).
    for (size_t i = 0; i + 2 < page_keys.size() && keys.size() < 16; i += 2) {
        keys.push_back(page_keys[i]);
    }
    auto drop_caches = [&] {
        sst->index_cache().invalidate();
        sst->cached_index().invalidate();
    };
    auto lookups = [&] {
        auto& st = sst->index_cache().stats();
        return st.hits + st.misses + st.blocks;
    };

    drop_caches();
    auto data0 = sst->data_file().io_counters().reads, index0 = sst->index_file().io_counters().reads;
    auto lookups0 = lookups(), misses0 = sst->index_cache().stats().misses;
    std::vector<std::optional<mutation>> single;
    for (auto& k : keys) {
        single.push_back(co_await read_single(t, k));
    }
    auto single_data = sst->data_file().io_counters().reads - data0;
    auto single_index = sst->index_file().io_counters().reads - index0;
    auto single_lookups = lookups() - lookups0;

    drop_caches();
    data0 = sst->data_file().io_counters().reads;
    index0 = sst->index_file().io_counters().reads;
    lookups0 = lookups();
    misses0 = sst->index_cache().stats().misses;
    sstables::partition_batch_stats stats;
    auto batch = co_await t.multi_get(reader_permit(), keys, full_slice(), read_order::forward, &stats);
    auto batch_data = sst->data_file().io_counters().reads - data0;
    auto batch_index = sst->index_file().io_counters().reads - index0;
    auto batch_lookups = lookups() - lookups0;
    BOOST_TEST_MESSAGE("one at a time: " << single_lookups << " page lookups, " << single_index << " Index.db reads, "
                                         << single_data << " Data.db reads; batched: " << batch_lookups << ", "
                                         << batch_index << ", " << batch_data);
    BOOST_CHECK_EQUAL(batch_lookups, 1u);
    BOOST_CHECK_EQUAL(sst->index_cache().stats().misses - misses0, 1u);
    BOOST_CHECK_EQUAL(stats.page_lookups, 1u);
    BOOST_CHECK_LE(batch_index, single_index);
    BOOST_CHECK_GE(single_lookups, keys.size());
    BOOST_CHECK_EQUAL(batch_data, 1u);
    BOOST_CHECK_EQUAL(stats.data_reads, 1u);
    BOOST_CHECK_EQUAL(stats.prefetched, keys.size());
    BOOST_CHECK_GE(single_data, keys.size());
    BOOST_REQUIRE_EQUAL(batch.size(), keys.size());
    for (size_t i = 0; i < keys.size(); ++i) {
        BOOST_REQUIRE(batch[i] && single[i]);
        BOOST_CHECK(*batch[i] == *single[i]);
    }
    co_await t.stop();
}

namespace {

clustering_ranges rows_between(int a, int b) {
    return clustering_ranges{position_range(position_in_partition::before_key(ck(a)), position_in_partition::before_key(ck(b)))};
}

// make_reader of k's singular range with `slice` (in the read's order), into a mutation.
future<std::optional<mutation>> read_sliced(table& t, const dht::decorated_key& k, const clustering_ranges& slice,
                                            bool reversed) {
    auto r = t.make_reader(reader_permit(), {.range = dht::partition_range::singular(k), .slice = slice,
                                             .order = read_order_for(reversed)});
    auto fs = co_await read_validated(r, reversed);
    co_await r.close();
    auto ms = mutations_from_fragments(t.schema(), fs, reversed);
    if (ms.empty()) {
        co_return std::nullopt;
    }
    co_return std::move(ms.front());
}

} // namespace

// A partition too large to be read with the batch (about 200 KB: its promoted index's blocks are read as its slice
// needs them) beside small ones: the batch gives what make_reader gives, sliced, forward and reversed, no cache.
REEF_TEST_CASE(batch_with_a_large_partition) {
    tmpdir dir;
    auto s = int_table_schema();
    table t(s, table_config{.directory = dir.path() + "/ks/t", .enable_cache = false});
    co_await t.start();
    for (int c = 0; c < 20000; ++c) {
        mutation m(s, pkey(7));
        deletable_row r;
        r.marker = row_marker{1};
        auto b = int_value(c);
        r.cells.apply(0, atomic_cell::make_live(1, std::string(b.begin(), b.end())));
        m.partition().apply_row(*s, ck(c), r);
        t.apply(m);
    }
    for (int k = 0; k < 50; ++k) {
        if (k != 7) {
            t.apply(int_row(s, k, k));
        }
    }
    co_await t.flush();
    std::vector<dht::decorated_key> keys;
    for (int k = 0; k < 50; k += 3) {
        keys.push_back(pkey(k));
    }
    keys.push_back(pkey(7));
    std::sort(keys.begin(), keys.end());
    sstables::partition_batch_stats stats;
    // A hundred rows forward and reversed (the large partition left to its reader, which reads only the blocks
    // they are in), then the full slice (the small partitions parsed straight from their bytes, the large one read).
    for (int pass = 0; pass < 3; ++pass) {
        BOOST_TEST_CONTEXT("pass " << pass) {
            bool reversed = pass == 1;
            auto forward = pass < 2 ? rows_between(10000, 10100) : full_slice();
            auto slice = reversed ? reverse_ranges(forward) : forward;
            auto got = co_await t.multi_get(reader_permit(), keys, slice, read_order_for(reversed), &stats);
            for (size_t i = 0; i < keys.size(); ++i) {
                auto want = co_await read_sliced(t, keys[i], slice, reversed);
                BOOST_REQUIRE_EQUAL(bool(got[i]), bool(want));
                if (want) {
                    BOOST_CHECK(*got[i] == *want);
                }
            }
            auto seven = std::find(keys.begin(), keys.end(), pkey(7)) - keys.begin();
            BOOST_REQUIRE(got[seven]);
            BOOST_CHECK_EQUAL(got[seven]->partition().rows().size(), pass < 2 ? 100u : 20000u);
        }
    }
    // The large partition was never read with the batch.
    BOOST_CHECK_EQUAL(stats.prefetched, 3 * (keys.size() - 1));
    co_await t.stop();
}

// A batch whose deadline has passed ends in read_timeout_error, with the full slice (parsed from the bytes) and with
// a partial one (the readers), and leaves nothing held: the same keys read afterwards, and the table stops.
REEF_TEST_CASE(batch_past_its_deadline_times_out) {
    tmpdir dir;
    auto s = int_table_schema();
    table t(s, table_config{.directory = dir.path() + "/ks/t", .enable_cache = false});
    co_await t.start();
    co_await write_int_rows(t, 200, 1);
    std::vector<dht::decorated_key> keys;
    for (int k = 0; k < 200; k += 5) {
        keys.push_back(pkey(k));
    }
    std::sort(keys.begin(), keys.end());
    for (bool full : {true, false}) {
        BOOST_TEST_CONTEXT("full slice " << full) {
            reader_permit expired("batch test", read_clock::now());
            auto slice = full ? full_slice() : rows_between(0, 1);
            std::string error;
            try {
                co_await t.multi_get(expired, keys, slice);
            } catch (const read_timeout_error& e) {
                error = e.what();
            }
            BOOST_CHECK_MESSAGE(error.find("read timed out: batch test") != std::string::npos, error);
            auto got = co_await t.multi_get(reader_permit(), keys, slice);
            BOOST_CHECK_EQUAL(std::count_if(got.begin(), got.end(), [](auto& m) { return bool(m); }),
                              long(keys.size()));
        }
    }
    co_await t.stop();
}

namespace {

keyspace_definition simple_keyspace(std::string name) {
    return keyspace_definition{std::move(name), {{"class", "SimpleStrategy"}, {"replication_factor", "1"}}, true};
}

} // namespace

// database::multi_get: keys from every shard's range, negative and positive, repeated and absent, in any order;
// the result holds each present partition once, in int order (Cassandra's order for `pk IN`), each as the model
// reads it; from every shard (the hops are the database's).
REEF_TEST_CASE(database_multi_get_in_key_order) {
    uint64_t seed = pick_seed();
    BOOST_TEST_MESSAGE("seed " << seed << " (set REEF_SEED to repeat), shards " << smp::count());
    tmpdir dir;
    database_config cfg;
    cfg.data_directory = dir.path() + "/data";
    sharded<database> db;
    co_await db.start(&db, cfg);
    std::exception_ptr err;
    try {
        co_await db.local().start();
        co_await db.local().create_keyspace(simple_keyspace("ks"));
        auto s = co_await db.local().create_table(random_test_schema());
        mutation_generator g(s, seed);
        mutation_model model;
        for (int i = 0; i < 200; ++i) {
            auto m = with_typed_values(s, g.make(pkey(g.rnd(-40, 40)), 5));
            apply_to_model(model, m);
            co_await db.local().apply(m);
            if (i % 70 == 69) {
                co_await db.local().flush("ks", s->table());
            }
        }
        for (int b = 0; b < 60; ++b) {
            std::vector<int> ints;
            int n = g.rnd(1, 25);
            for (int i = 0; i < n; ++i) {
                ints.push_back(g.rnd(-50, 50));
            }
            std::vector<partition_key> keys;
            for (int v : ints) {
                auto bytes = int_value(v);
                keys.emplace_back(std::string(bytes.begin(), bytes.end()));
            }
            auto forward_slice = g.rnd(0, 1) ? g.make_ranges() : full_slice();
            bool reversed = g.rnd(0, 1);
            auto slice = reversed ? reverse_ranges(forward_slice) : forward_slice;
            auto read = [&](database& d) { return d.multi_get(s, keys, slice, reversed); };
            auto got = co_await db.invoke_on(shard_id(b % smp::count()), read);
            // Present partitions, each once, in int order.
            for (size_t i = 1; i < got.size(); ++i) {
                BOOST_REQUIRE_LT(int_of(to_bytes_view(got[i - 1].decorated_key().key().view())),
                                 int_of(to_bytes_view(got[i].decorated_key().key().view())));
            }
            std::sort(ints.begin(), ints.end());
            ints.erase(std::unique(ints.begin(), ints.end()), ints.end());
            std::vector<mutation> expected;
            for (int v : ints) {
                for (auto& m : expected_partition(s, model, pkey(v), slice, reversed)) {
                    expected.push_back(std::move(m));
                }
            }
            auto a = query_result_canonical(std::move(got));
            BOOST_REQUIRE_MESSAGE(a == expected, "batch " << b << " (reversed " << reversed << "):\n"
                                                          << describe(a) << "!=\n" << describe(expected));
        }
    } catch (...) {
        err = std::current_exception();
    }
    co_await db.stop();
    if (err) {
        std::rethrow_exception(err);
    }
}
