// Read deadlines and permits on the sstable reader (forward and reversed, shared and bypassed caches): a read with
// an already expired deadline, or whose deadline passes half-way, ends with read_timeout_error naming the read and
// the sstable's file; closing it leaves no read in flight and no cache page or index page pinned, and once the
// permit is gone the semaphore has all its memory and reads back. A read with a permit returns what one without
// returns, and its buffers are charged to the semaphore while it runs.
#include "cache/tracker.hh"
#include "db/memtable.hh"
#include "db/memtable_reader.hh"
#include "reader/reader_concurrency_semaphore.hh"
#include "sstables/sstable.hh"
#include "sstables/sstable_reader.hh"
#include "sstables/writer.hh"
#include "test/lib/mutation_model.hh"
#include "test/lib/random_mutation.hh"
#include "test/lib/reef_test.hh"
#include "test/lib/simple_keys.hh"
#include "test/lib/tmpdir.hh"
#include "test/lib/writable_mutation.hh"

#include <boost/test/unit_test.hpp>

#include <chrono>

using namespace reef;
using namespace reef::sstables;
using namespace reef::testing;
using namespace std::chrono_literals;

namespace {

future<descriptor> write_random_sstable(const tmpdir& dir, schema_ptr s, uint64_t seed, int generation) {
    mutation_generator g(s, seed);
    auto mt = std::make_shared<memtable>(s);
#ifdef REEF_DEBUG
    constexpr int partitions = 100;
#else
    constexpr int partitions = 300;
#endif
    for (int p = 0; p < partitions; ++p) {
        mt->apply(with_typed_values(s, g.make(pkey(g.rnd(0, 100000)), 20)));
    }
    writer_options o;
    o.min_index_interval = 2;
    o.column_index_size = 256;
    o.chunk_length = 4096;
    descriptor d{dir.path(), sstable_version::me, std::to_string(generation), "big"};
    auto w = make_memtable_reader(mt, s, read_options{});
    co_await write_sstable(w, s, d, o);
    co_await w.close();
    co_return d;
}

struct outcome {
    std::vector<mutation_fragment> fragments;
    std::string error;  // read_timeout_error's message
    int64_t memory_while_reading = 0;
};

// Reads everything, setting the permit's deadline in the past after `expire_after` fragments (never if < 0).
future<outcome> read(mutation_reader r, reader_permit& permit, reader_concurrency_semaphore& sem, bool reversed,
                     int expire_after) {
    outcome out;
    std::exception_ptr other;
    try {
        while (true) {
            if (int(out.fragments.size()) == expire_after) {
                permit.set_timeout(read_clock::now() - 1ms);
            }
            auto f = co_await r();
            out.memory_while_reading = std::max(out.memory_while_reading, sem.consumed_memory());
            if (!f) {
                break;
            }
            out.fragments.push_back(std::move(*f));
            co_await yield();  // coroutine rule 5
        }
    } catch (const read_timeout_error& e) {
        out.error = e.what();
    } catch (...) {
        other = std::current_exception();
    }
    co_await r.close();
    if (other) {
        std::rethrow_exception(other);
    }
    if (out.error.empty()) {
        validate_stream(*r.schema(), out.fragments, reversed);
    }
    co_return out;
}

// Each fragment's kind and position: enough to tell that one stream is a prefix of another.
std::vector<std::string> shape(const std::vector<mutation_fragment>& fs) {
    std::vector<std::string> out;
    for (auto& f : fs) {
        std::string k = kind_name(f);
        if (auto* ps = std::get_if<partition_start>(&f)) {
            k += " " + ps->key.get_token().to_string();
        }
        out.push_back(k + " " + to_string(position_of(f)));
    }
    return out;
}

} // namespace

REEF_TEST_CASE(read_deadlines_end_reads_cleanly) {
    uint64_t seed = pick_seed();
    BOOST_TEST_MESSAGE("seed " << seed << " (set REEF_SEED to repeat)");
    tmpdir dir;
    auto s = random_test_wide_schema();
    auto d = co_await write_random_sstable(dir, s, seed, 1);
    cache::cache_tracker tracker(size_t(64) << 20);
    auto o = co_await sstables::open_sstable(d, tracker);
    reader_concurrency_semaphore sem(2, 1 << 20, "timeouts");
    std::mt19937_64 rng(seed);
    std::vector<std::string> files = {d.filename(component_type::data), d.filename(component_type::index)};
    size_t timed_out = 0, timed_out_midway = 0, completed = 0;
    for (int round = 0; round < 24; ++round) {
        bool reversed = round % 2;
        auto bypass = (round / 2) % 2 ? bypass_cache::yes : bypass_cache::no;
        // -1: no deadline; 0: expired before the first fill; else half-way.
        int expire_after = round < 4 ? -1 : round < 8 ? 0 : int(rng() % 2000);
        auto range = rng() % 3 ? dht::partition_range::full() : dht::partition_range::singular(pkey(int(rng() % 100000)));
        BOOST_TEST_CONTEXT("round " << round << " reversed " << reversed << " bypass " << bool(bypass)
                                    << " expire after " << expire_after) {
            auto expected_reader = make_sstable_reader(s, o->read_handles(), reader_permit(),
                                                       {.range = range, .order = read_order_for(reversed), .bypass = bypass});
            reader_permit unlimited;
            auto expected = co_await read(std::move(expected_reader), unlimited, sem, reversed, -1);
            BOOST_REQUIRE(expected.error.empty());
            {
                auto permit = co_await sem.obtain_permit("query " + std::to_string(round), 1000,
                                                         read_clock::now() + 1h);
                auto r = make_sstable_reader(s, o->read_handles(), permit,
                                             {.range = range, .order = read_order_for(reversed), .bypass = bypass});
                auto got = co_await read(std::move(r), permit, sem, reversed, expire_after);
                // A deadline passed before the first fill always ends the read. One that passes later may come
                // after the read's last fill (the rest of the stream already in the reader's buffer): then the
                // read finishes, since nothing is left to check it against, and gives the whole stream.
                bool must_time_out = expire_after == 0;
                bool may_time_out = expire_after >= 0 && size_t(expire_after) < expected.fragments.size();
                if (!must_time_out && (!may_time_out || got.error.empty())) {
                    BOOST_TEST(got.error.empty(), got.error);
                    BOOST_TEST((canonical_mutations(s, got.fragments, reversed) ==
                                canonical_mutations(s, expected.fragments, reversed)));
                    BOOST_TEST((shape(got.fragments) == shape(expected.fragments)));
                    if (!expected.fragments.empty() && !reversed && !range.is_singular()) {
                        // The permit's estimate and the Data.db buffer being parsed (the reversed reader's windows
                        // are read and let go inside one fill, and so is a small partition's single read).
                        BOOST_TEST(got.memory_while_reading > 1000);
                    }
                    ++completed;
                } else {
                    BOOST_TEST(got.error.find("read timed out: query " + std::to_string(round) + ", reading ") == 0,
                               got.error);
                    bool names_a_file = got.error.ends_with(files[0]) || got.error.ends_with(files[1]);
                    BOOST_TEST(names_a_file, got.error);
                    // What came before the timeout is what the read gives.
                    BOOST_TEST(got.fragments.size() <= expected.fragments.size());
                    auto a = shape(got.fragments), b = shape(expected.fragments);
                    BOOST_TEST(std::equal(a.begin(), a.end(), b.begin()));
                    ++timed_out;
                    timed_out_midway += expire_after > 0;
                }
                // Closed: nothing in flight, nothing charged but the admission's estimate.
                BOOST_TEST(o->cached_index().reads_in_flight() == 0u);
                BOOST_TEST(sem.consumed_memory() == 1000);
            }
            BOOST_TEST(sem.consumed_memory() == 0);
            BOOST_TEST(sem.active_reads() == 0u);
            // Nothing pinned: every cached page and index page can be dropped.
            tracker.drop_caches();
            BOOST_TEST(tracker.lru().charged_items() == 0u);
            BOOST_TEST(tracker.lru().memory_used() == 0u);
        }
    }
    BOOST_TEST(timed_out > 0u);
    BOOST_TEST(timed_out_midway > 0u);
    BOOST_TEST(completed > 0u);
    BOOST_TEST(sem.stats().read_timeouts >= timed_out);
    co_await o->close();
}
