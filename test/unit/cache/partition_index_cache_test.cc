// Tests of partition_index_cache (one load per key, errors to every waiter, statistics, eviction
// under tiny budgets, pages that pin file pages) and of bypass reads through read_caches.
#include "cache/cached_file.hh"
#include "cache/partition_index_cache.hh"
#include "cache/read_caches.hh"
#include "runtime/file.hh"
#include "runtime/reactor.hh"
#include "runtime/when_all.hh"
#include "test/lib/reef_test.hh"
#include "test/lib/tmpdir.hh"

#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

using namespace reef;
using namespace reef::cache;

namespace {

constexpr size_t ps = cached_file::page_size;

uint64_t seed_for_test() {
    if (const char* s = std::getenv("REEF_SEED")) {
        return std::stoull(s);
    }
    return std::random_device{}();
}

// A parsed page stand-in: its bytes are a function of the key.
struct test_page {
    uint64_t key;
    std::string body;
    size_t memory_usage() const noexcept { return sizeof(*this) + body.size(); }
};

std::string body_of(uint64_t key) {
    return std::string(50 + key * 37 % 900, char('a' + key % 26));
}

using test_cache = partition_index_cache<test_page>;

struct load_error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Loads pages, counting calls and checking that no key loads twice at once.
struct loader_model {
    std::mt19937_64& rng;
    std::map<uint64_t, int> in_flight;
    int calls = 0;
    int failures = 0;
    int successes = 0;
    bool overlapped = false;

    future<test_page> load(uint64_t key) {
        ++calls;
        if (in_flight[key]++) {
            overlapped = true;
        }
        int waits = rng() % 3;
        bool fail = rng() % 8 == 0;
        for (int i = 0; i < waits; ++i) {
            co_await sleep(std::chrono::microseconds(rng() % 200));
        }
        --in_flight[key];
        if (fail) {
            ++failures;
            throw load_error("load of " + std::to_string(key) + " failed");
        }
        ++successes;
        co_return test_page{key, body_of(key)};
    }
};

struct lookup_result {
    test_cache::entry_ptr e;
    bool failed = false;
};

future<lookup_result> lookup(test_cache& c, loader_model& m, uint64_t key) {
    lookup_result r;
    try {
        r.e = co_await c.get_or_load(key, [&m, key] { return m.load(key); });
    } catch (const load_error&) {
        r.failed = true;
    }
    co_return r;
}

bool loads_in_flight(const loader_model& m) {
    for (auto& [k, n] : m.in_flight) {
        if (n) {
            return true;
        }
    }
    return false;
}

future<file> write_file(std::string path, const std::string& data) {
    auto f = co_await open_file_dma(path, open_flags::rw | open_flags::create | open_flags::truncate);
    uint64_t a = f.disk_write_dma_alignment();
    size_t padded = (data.size() + a - 1) / a * a;
    auto buf = f.allocate_aligned_buffer(padded);
    std::memset(buf.get_write(), 0, padded);
    std::memcpy(buf.get_write(), data.data(), data.size());
    co_await f.dma_write(0, buf.get(), padded);
    co_await f.truncate(data.size());
    co_return f;
}

} // namespace

REEF_TEST_CASE(test_random_lookups_against_a_model) {
    uint64_t seed = seed_for_test();
    BOOST_TEST_MESSAGE("seed " << seed << " (set REEF_SEED to repeat)");
    std::mt19937_64 rng(seed);
    for (int round = 0; round < 60; ++round) {
        BOOST_TEST_CONTEXT("seed " << seed << " round " << round) {
            size_t budget = rng() % 2 ? rng() % 4000 : 1 << 20;
            cache_tracker tracker(budget);
            loader_model m{rng};
            uint64_t lookups = 0;
            std::vector<test_cache::entry_ptr> held;
            {
                test_cache c(tracker);
                uint64_t keys = 1 + rng() % 20;
                for (int op = 0; op < 100; ++op) {
                    switch (rng() % 5) {
                    case 0:
                    case 1:
                    case 2: {  // a batch of concurrent lookups
                        std::vector<uint64_t> ks;
                        for (int i = 0, n = 1 + rng() % 6; i < n; ++i) {
                            ks.push_back(rng() % keys);
                        }
                        std::vector<future<lookup_result>> fs;
                        for (auto k : ks) {
                            fs.push_back(lookup(c, m, k));
                        }
                        lookups += ks.size();
                        auto results = co_await when_all(std::move(fs));
                        for (size_t i = 0; i < ks.size(); ++i) {
                            if (results[i].failed) {
                                continue;
                            }
                            auto& e = results[i].e;
                            BOOST_REQUIRE(e);
                            BOOST_REQUIRE_EQUAL(e.key(), ks[i]);
                            BOOST_REQUIRE_EQUAL(e->key, ks[i]);
                            BOOST_REQUIRE(e->body == body_of(ks[i]));
                            if (rng() % 6 == 0) {
                                held.push_back(e);
                            }
                        }
                        break;
                    }
                    case 3:
                        if (!held.empty()) {
                            held.erase(held.begin() + rng() % held.size());
                        }
                        break;
                    case 4:
                        if (rng() % 4 == 0) {
                            tracker.drop_caches();
                        } else {
                            held.clear();
                        }
                        break;
                    }
                    BOOST_REQUIRE(!m.overlapped);
                    BOOST_REQUIRE(!loads_in_flight(m));
                    for (auto& e : held) {
                        BOOST_REQUIRE(e->body == body_of(e->key));
                    }
                    auto& s = c.stats();
                    BOOST_REQUIRE_EQUAL(s.hits + s.misses + s.blocks, lookups);
                    BOOST_REQUIRE_EQUAL(s.misses, uint64_t(m.calls));
                    BOOST_REQUIRE_EQUAL(s.populations, uint64_t(m.successes));
                    BOOST_REQUIRE_EQUAL(s.populations - s.evictions, c.entries());
                    if (held.empty()) {
                        BOOST_REQUIRE_LE(tracker.lru().memory_used(), budget);
                    }
                    BOOST_REQUIRE_EQUAL(tracker.index_stats().misses, s.misses);
                    BOOST_REQUIRE_EQUAL(tracker.index_stats().evictions, s.evictions);
                }
                if (budget == 1 << 20) {
                    // Big enough for every key: once warm, lookups are hits
                    // and nothing loads.
                    held.clear();
                    for (uint64_t k = 0; k < keys; ++k) {
                        while (true) {
                            auto r = co_await lookup(c, m, k);
                            if (!r.failed) {
                                break;
                            }
                        }
                    }
                    int calls = m.calls;
                    for (uint64_t k = 0; k < keys; ++k) {
                        auto r = co_await lookup(c, m, k);
                        BOOST_REQUIRE(!r.failed);
                    }
                    BOOST_REQUIRE_EQUAL(m.calls, calls);
                }
            }
            // Entries outlive their cache.
            for (auto& e : held) {
                BOOST_REQUIRE(e->body == body_of(e->key));
            }
            held.clear();
            BOOST_REQUIRE_EQUAL(tracker.lru().memory_used(), 0u);
        }
    }
}

REEF_TEST_CASE(test_one_load_for_concurrent_lookups) {
    cache_tracker tracker(1 << 20);
    test_cache c(tracker);
    int calls = 0;
    auto slow_load = [&calls](uint64_t key) -> future<test_page> {
        ++calls;
        co_await sleep(std::chrono::milliseconds(2));
        co_return test_page{key, body_of(key)};
    };
    std::vector<future<test_cache::entry_ptr>> fs;
    for (int i = 0; i < 5; ++i) {
        fs.push_back(c.get_or_load(7, [&] { return slow_load(7); }));
    }
    auto es = co_await when_all(std::move(fs));
    BOOST_CHECK_EQUAL(calls, 1);
    for (auto& e : es) {
        BOOST_CHECK(e->body == body_of(7));
        BOOST_CHECK_EQUAL(&*e, &*es[0]);
    }
    BOOST_CHECK_EQUAL(c.stats().misses, 1u);
    BOOST_CHECK_EQUAL(c.stats().blocks, 4u);
    BOOST_CHECK_EQUAL(c.stats().hits, 0u);
    BOOST_CHECK_EQUAL(c.stats().populations, 1u);
    auto again = co_await c.get_or_load(7, [&] { return slow_load(7); });
    BOOST_CHECK_EQUAL(calls, 1);
    BOOST_CHECK_EQUAL(c.stats().hits, 1u);
    // A loader may also return the page itself.
    auto plain = co_await c.get_or_load(8, [] { return test_page{8, body_of(8)}; });
    BOOST_CHECK(plain->body == body_of(8));
}

// Keys far apart and far from 0 (slots up to the largest), invalidated with one entry pinned and one loading:
// the pinned page stays valid, the load completes for its waiter only, and every key loads again afterwards.
REEF_TEST_CASE(test_invalidate_with_pinned_and_loading_entries) {
    cache_tracker tracker(1 << 20);
    test_cache c(tracker);
    const std::vector<uint64_t> keys = {5000, 3, 0, 977, 4999};
    for (auto k : keys) {
        (void)co_await c.get_or_load(k, [k] { return test_page{k, body_of(k)}; });
    }
    BOOST_CHECK_EQUAL(c.entries(), keys.size());
    for (auto k : keys) {
        BOOST_CHECK(c.contains(k));
    }
    BOOST_CHECK(!c.contains(1) && !c.contains(4998) && !c.contains(5001) && !c.contains(uint64_t(1) << 40));
    auto pinned = co_await c.get_or_load(977, [] { return test_page{977, body_of(977)}; });
    auto slow = [](uint64_t k) -> future<test_page> {
        co_await sleep(std::chrono::milliseconds(2));
        co_return test_page{k, body_of(k)};
    };
    auto loading = c.get_or_load(7000, [&] { return slow(7000); });
    c.invalidate();
    BOOST_CHECK_EQUAL(c.entries(), 0u);
    for (auto k : keys) {
        BOOST_CHECK(!c.contains(k));
    }
    BOOST_CHECK(!c.contains(7000));
    BOOST_CHECK(pinned->body == body_of(977));
    auto late = co_await std::move(loading);
    BOOST_CHECK(late->body == body_of(7000));
    BOOST_CHECK(!c.contains(7000));
    auto misses = c.stats().misses;
    for (auto k : keys) {
        auto e = co_await c.get_or_load(k, [k] { return test_page{k, body_of(k)}; });
        BOOST_CHECK(e->body == body_of(k));
    }
    BOOST_CHECK_EQUAL(c.stats().misses, misses + keys.size());
    BOOST_CHECK_EQUAL(c.entries(), keys.size());
    pinned = {};
    late = {};
    tracker.drop_caches();
    BOOST_CHECK_EQUAL(c.entries(), 0u);
    BOOST_CHECK_EQUAL(tracker.lru().memory_used(), 0u);
}

REEF_TEST_CASE(test_failed_load_reaches_every_waiter) {
    cache_tracker tracker(1 << 20);
    test_cache c(tracker);
    int calls = 0;
    auto failing = [&calls]() -> future<test_page> {
        ++calls;
        co_await sleep(std::chrono::milliseconds(1));
        throw load_error("bad page");
    };
    auto lookup_failing = [](test_cache& c, decltype(failing) loader) -> future<int> {
        try {
            (void)co_await c.get_or_load(3, loader);
        } catch (const load_error& e) {
            co_return std::string(e.what()) == "bad page";
        }
        co_return 0;
    };
    std::vector<future<int>> fs;
    for (int i = 0; i < 4; ++i) {
        fs.push_back(lookup_failing(c, failing));
    }
    auto failed = co_await when_all(std::move(fs));
    for (int f : failed) {
        BOOST_CHECK_EQUAL(f, 1);
    }
    BOOST_CHECK_EQUAL(calls, 1);
    BOOST_CHECK(!c.contains(3));
    BOOST_CHECK_EQUAL(c.stats().populations, 0u);
    BOOST_CHECK_EQUAL(tracker.lru().memory_used(), 0u);
    // The next lookup loads again.
    auto e = co_await c.get_or_load(3, [] { return test_page{3, body_of(3)}; });
    BOOST_CHECK(e->body == body_of(3));
    BOOST_CHECK_EQUAL(c.stats().misses, 2u);
}

// Parsed pages that keep buffers of a cached_file's pages (as a promoted
// index may): evicting one releases file pages in the middle of eviction.
REEF_TEST_CASE(test_pages_holding_file_pages_under_a_tiny_budget) {
    uint64_t seed = seed_for_test();
    BOOST_TEST_MESSAGE("seed " << seed << " (set REEF_SEED to repeat)");
    std::mt19937_64 rng(seed);
    testing::tmpdir dir;
    std::string data(30 * ps + 123, '\0');
    for (auto& ch : data) {
        ch = char(rng());
    }
    auto f = co_await write_file(dir.path() + "/Index.db", data);
    struct file_page {
        uint64_t pos;
        temporary_buffer bytes;
        size_t memory_usage() const noexcept { return sizeof(*this); }
    };
    for (int round = 0; round < 20; ++round) {
        BOOST_TEST_CONTEXT("seed " << seed << " round " << round) {
            size_t budget = (rng() % 6) * cached_file::page_charge();
            cache_tracker tracker(budget);
            cached_file cf(f, data.size(), tracker);
            partition_index_cache<file_page> c(tracker);
            std::vector<partition_index_cache<file_page>::entry_ptr> held;
            for (int op = 0; op < 200; ++op) {
                uint64_t key = rng() % 40;
                uint64_t pos = key * 997 % data.size();
                size_t len = 1 + rng() % (2 * ps);
                auto loader = [&cf, pos, len]() -> future<file_page> {
                    auto b = co_await cf.read(pos, len);
                    co_return file_page{pos, std::move(b)};
                };
                auto e = co_await c.get_or_load(key, loader);
                BOOST_REQUIRE(e->bytes.view() == std::string_view(data).substr(e->pos, e->bytes.size()));
                if (rng() % 5 == 0) {
                    held.push_back(e);
                }
                if (rng() % 7 == 0 && !held.empty()) {
                    held.erase(held.begin());
                }
                if (rng() % 50 == 0) {
                    tracker.drop_caches();
                }
                if (held.empty()) {
                    e = {};
                    co_await sleep(std::chrono::microseconds(1));
                    while (cf.reads_in_flight()) {
                        co_await sleep(std::chrono::microseconds(50));
                    }
                    BOOST_REQUIRE_LE(tracker.lru().memory_used(), budget);
                }
            }
            for (auto& e : held) {
                BOOST_REQUIRE(e->bytes.view() == std::string_view(data).substr(e->pos, e->bytes.size()));
            }
            held.clear();
            co_await cf.close();
        }
    }
    co_await f.close();
}

// A bypass read pages through the same file but leaves the shared caches'
// statistics, entries and memory exactly as they were.
REEF_TEST_CASE(test_bypass_leaves_the_shared_caches_unchanged) {
    std::mt19937_64 rng(9);
    testing::tmpdir dir;
    std::string data(12 * ps + 5, '\0');
    for (auto& ch : data) {
        ch = char(rng());
    }
    auto f = co_await write_file(dir.path() + "/Index.db", data);
    cache_tracker shared(1 << 20);
    cached_file shared_file(f, data.size(), shared);
    test_cache shared_index(shared);
    // Warm part of it.
    (void)co_await shared_file.read(0, 3 * ps);
    for (uint64_t k = 0; k < 4; ++k) {
        (void)co_await shared_index.get_or_load(k, [k] { return test_page{k, body_of(k)}; });
    }
    auto file_stats = shared.file_stats();
    auto index_stats = shared.index_stats();
    auto memory = shared.lru().memory_used();
    auto pages = shared_file.cached_pages();
    auto entries = shared_index.entries();

    auto reads_before = engine().io().reads;
    {
        read_caches<test_page> rc(shared_file, shared_index, bypass_cache::yes, 2 * cached_file::page_charge());
        BOOST_CHECK(rc.bypassing());
        BOOST_CHECK(&rc.file() != &shared_file);
        // Pages the shared cache holds are read again, privately.
        auto b = co_await rc.file().read(ps, 10);
        BOOST_CHECK(b.view() == std::string_view(data).substr(ps, 10));
        auto ds = rc.file().make_data_source(0, data.size());
        std::string all;
        while (true) {
            auto buf = co_await ds.get();
            if (buf.empty()) {
                break;
            }
            all += buf.view();
        }
        co_await ds.close();
        BOOST_CHECK(all == data);
        for (uint64_t k = 0; k < 8; ++k) {
            auto e = co_await rc.index().get_or_load(k, [k] { return test_page{k, body_of(k)}; });
            BOOST_CHECK(e->body == body_of(k));
        }
        BOOST_CHECK_EQUAL(rc.index().stats().misses, 8u);
        co_await rc.close();
    }
    BOOST_CHECK_GE(engine().io().reads - reads_before, 13u);
    auto& fs = shared.file_stats();
    BOOST_CHECK_EQUAL(fs.page_hits, file_stats.page_hits);
    BOOST_CHECK_EQUAL(fs.page_misses, file_stats.page_misses);
    BOOST_CHECK_EQUAL(fs.page_blocks, file_stats.page_blocks);
    BOOST_CHECK_EQUAL(fs.page_populations, file_stats.page_populations);
    BOOST_CHECK_EQUAL(fs.page_evictions, file_stats.page_evictions);
    auto& is = shared.index_stats();
    BOOST_CHECK_EQUAL(is.hits, index_stats.hits);
    BOOST_CHECK_EQUAL(is.misses, index_stats.misses);
    BOOST_CHECK_EQUAL(is.blocks, index_stats.blocks);
    BOOST_CHECK_EQUAL(is.populations, index_stats.populations);
    BOOST_CHECK_EQUAL(is.evictions, index_stats.evictions);
    BOOST_CHECK_EQUAL(shared.lru().memory_used(), memory);
    BOOST_CHECK_EQUAL(shared_file.cached_pages(), pages);
    BOOST_CHECK_EQUAL(shared_index.entries(), entries);
    for (uint64_t i = 0; i < 13; ++i) {
        BOOST_CHECK_EQUAL(shared_file.contains(i), i < 3);
    }
    for (uint64_t k = 0; k < 8; ++k) {
        BOOST_CHECK_EQUAL(shared_index.contains(k), k < 4);
    }

    // Without bypass the same read uses (and warms) the shared caches.
    {
        read_caches<test_page> rc(shared_file, shared_index, bypass_cache::no);
        BOOST_CHECK(!rc.bypassing());
        BOOST_CHECK(&rc.file() == &shared_file);
        reads_before = engine().io().reads;
        (void)co_await rc.file().read(ps, 10);
        BOOST_CHECK_EQUAL(engine().io().reads, reads_before);
        BOOST_CHECK_EQUAL(shared.file_stats().page_hits, file_stats.page_hits + 1);
        co_await rc.close();
    }
    co_await shared_file.close();
    co_await f.close();
}
