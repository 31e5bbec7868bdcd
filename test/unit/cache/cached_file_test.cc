// Tests of cached_file: random reads and sources over random files against the file's bytes
// with tiny budgets, I/O counters, single-flight loads, pinning, errors, invalidation.
#include "cache/cached_file.hh"
#include "runtime/file.hh"
#include "runtime/reactor.hh"
#include "runtime/smp.hh"
#include "runtime/when_all.hh"
#include "test/lib/reef_test.hh"
#include "test/lib/tmpdir.hh"

#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <system_error>
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

std::string random_bytes(size_t n, std::mt19937_64& rng) {
    std::string s(n, '\0');
    for (auto& c : s) {
        c = char(rng());
    }
    return s;
}

future<file> write_file(std::string path, const std::string& data) {
    auto f = co_await open_file_dma(path, open_flags::rw | open_flags::create | open_flags::truncate);
    uint64_t a = f.disk_write_dma_alignment();
    size_t padded = (data.size() + a - 1) / a * a;
    if (padded) {
        auto buf = f.allocate_aligned_buffer(padded);
        std::memset(buf.get_write(), 0, padded);
        std::memcpy(buf.get_write(), data.data(), data.size());
        co_await f.dma_write(0, buf.get(), padded);
    }
    co_await f.truncate(data.size());
    co_await f.flush();
    co_return f;
}

std::string_view expected(const std::string& data, uint64_t pos, uint64_t len) {
    if (pos >= data.size()) {
        return {};
    }
    return std::string_view(data).substr(pos, len);
}

using held_buffers = std::vector<std::pair<temporary_buffer, std::string_view>>;

// Reads what a source over [off, off + len) gives, skipping at random and
// sometimes stopping early; keeps some buffers (with their bytes) in held.
future<> read_source(cached_file& cf, uint64_t off, uint64_t len, const std::string& data, std::mt19937_64& rng,
                     held_buffers& held) {
    auto ds = cf.make_data_source(off, len, {unsigned(rng() % 5)});
    uint64_t pos = std::min<uint64_t>(off, data.size());
    uint64_t end = std::min<uint64_t>(data.size(), off + len);
    while (true) {
        temporary_buffer b;
        if (rng() % 5 == 0) {
            uint64_t n = rng() % (3 * ps);
            b = co_await ds.skip(n);
            pos = std::min(end, pos + n);
        } else {
            b = co_await ds.get();
        }
        if (b.empty()) {
            BOOST_REQUIRE_EQUAL(pos, end);
            break;
        }
        BOOST_REQUIRE(b.view() == expected(data, pos, b.size()));
        BOOST_REQUIRE_LE(b.size(), ps);
        size_t n = b.size();
        if (rng() % 8 == 0) {
            held.emplace_back(std::move(b), expected(data, pos, n));
        }
        pos += n;
        if (rng() % 16 == 0) {
            break;  // a reader that stops early
        }
    }
    co_await ds.close();
}

// Lets reads that closed sources left behind finish.
future<> settle(cached_file& cf) {
    while (cf.reads_in_flight()) {
        co_await sleep(std::chrono::microseconds(50));
    }
}

struct read_result {
    temporary_buffer buf;
    std::exception_ptr error;
};

future<read_result> try_read(cached_file& cf, uint64_t pos, size_t len) {
    read_result r;
    try {
        r.buf = co_await cf.read(pos, len);
    } catch (...) {
        r.error = std::current_exception();
    }
    co_return r;
}

} // namespace

REEF_TEST_CASE(test_random_reads_match_the_file) {
    uint64_t seed = seed_for_test();
    BOOST_TEST_MESSAGE("seed " << seed << " (set REEF_SEED to repeat)");
    std::mt19937_64 rng(seed);
    testing::tmpdir dir;
    for (int round = 0; round < 120; ++round) {
        BOOST_TEST_CONTEXT("seed " << seed << " round " << round) {
            size_t sizes[] = {0, 1, ps - 1, ps, ps + 1, 5 * ps, size_t(rng() % (40 * ps))};
            auto data = random_bytes(sizes[rng() % std::size(sizes)], rng);
            auto f = co_await write_file(dir.path() + "/f", data);
            size_t file_pages = (data.size() + ps - 1) / ps;
            size_t budget_pages[] = {0, 1, 2, 3, 7, 1000};
            size_t budget = budget_pages[rng() % std::size(budget_pages)] * cached_file::page_charge();
            cache_tracker tracker(budget);
            held_buffers held;
            {
                cached_file cf(f, data.size(), tracker);
                auto check_held = [&] {
                    for (auto& [b, want] : held) {
                        BOOST_REQUIRE(b.view() == want);
                    }
                };
                for (int op = 0; op < 200; ++op) {
                    auto random_pos = [&]() -> uint64_t { return rng() % (data.size() + 2 * ps); };
                    auto random_len = [&]() -> size_t {
                        switch (rng() % 4) {
                        case 0: return rng() % 16;
                        case 1: return rng() % ps;
                        case 2: return rng() % (4 * ps);
                        default: return rng() % (data.size() + 1);
                        }
                    };
                    switch (rng() % 6) {
                    case 0:
                    case 1: {
                        uint64_t pos = random_pos();
                        size_t len = random_len();
                        auto b = co_await cf.read(pos, len);
                        BOOST_REQUIRE(b.view() == expected(data, pos, len));
                        if (rng() % 4 == 0) {
                            auto v = expected(data, pos, len);
                            held.emplace_back(std::move(b), v);
                        }
                        break;
                    }
                    case 2: {  // concurrent reads, often of the same pages
                        std::vector<std::pair<uint64_t, size_t>> ranges;
                        uint64_t base = random_pos();
                        for (int i = 0, n = 1 + rng() % 6; i < n; ++i) {
                            ranges.emplace_back(rng() % 2 ? base : random_pos(), random_len());
                        }
                        std::vector<future<temporary_buffer>> fs;
                        for (auto [pos, len] : ranges) {
                            fs.push_back(cf.read(pos, len));
                        }
                        auto bufs = co_await when_all(std::move(fs));
                        for (size_t i = 0; i < bufs.size(); ++i) {
                            BOOST_REQUIRE(bufs[i].view() == expected(data, ranges[i].first, ranges[i].second));
                        }
                        break;
                    }
                    case 3: {
                        uint64_t off = random_pos();
                        co_await read_source(cf, off, random_len(), data, rng, held);
                        break;
                    }
                    case 4:
                        if (!held.empty()) {
                            held.erase(held.begin() + rng() % held.size());
                        }
                        break;
                    case 5:
                        switch (rng() % 4) {
                        case 0: tracker.drop_caches(); break;
                        case 1: cf.invalidate(); break;
                        default: held.clear(); break;
                        }
                        break;
                    }
                    check_held();
                    co_await settle(cf);
                    if (held.empty()) {
                        // Nothing pinned: the budget holds.
                        BOOST_REQUIRE_LE(tracker.lru().memory_used(), budget);
                    }
                    BOOST_REQUIRE_LE(cf.cached_pages(), file_pages);
                }
                BOOST_REQUIRE_EQUAL(cf.stats().page_misses, cf.stats().page_populations);
                if (budget >= file_pages * cached_file::page_charge()) {
                    // Warm the whole file; then nothing reads the disk.
                    held.clear();
                    (void)co_await cf.read(0, data.size());
                    auto before = engine().io();
                    auto misses = cf.stats().page_misses;
                    for (int i = 0; i < 50; ++i) {
                        uint64_t pos = rng() % (data.size() + 1);
                        size_t len = rng() % (3 * ps);
                        auto b = co_await cf.read(pos, len);
                        BOOST_REQUIRE(b.view() == expected(data, pos, len));
                        held_buffers kept;
                        co_await read_source(cf, pos, len, data, rng, kept);
                    }
                    BOOST_REQUIRE_EQUAL(engine().io().reads, before.reads);
                    BOOST_REQUIRE_EQUAL(engine().io().bytes_read, before.bytes_read);
                    BOOST_REQUIRE_EQUAL(cf.stats().page_misses, misses);
                }
                co_await cf.close();
            }
            // Buffers outlive the cached_file (ASan checks the memory).
            for (auto& [b, want] : held) {
                BOOST_REQUIRE(b.view() == want);
            }
            held.clear();
            BOOST_REQUIRE_EQUAL(tracker.lru().memory_used(), 0u);
            co_await f.close();
        }
    }
}

REEF_TEST_CASE(test_concurrent_misses_read_once) {
    std::mt19937_64 rng(1);
    testing::tmpdir dir;
    auto data = random_bytes(10 * ps, rng);
    auto f = co_await write_file(dir.path() + "/f", data);
    cache_tracker tracker(1 << 20);
    cached_file cf(f, data.size(), tracker);
    auto before = engine().io();
    std::vector<future<temporary_buffer>> fs;
    for (int i = 0; i < 8; ++i) {
        fs.push_back(cf.read(3 * ps + i * 100, 50));
    }
    auto bufs = co_await when_all(std::move(fs));
    for (int i = 0; i < 8; ++i) {
        BOOST_REQUIRE(bufs[i].view() == expected(data, 3 * ps + i * 100, 50));
    }
    BOOST_CHECK_EQUAL(engine().io().reads - before.reads, 1u);
    BOOST_CHECK_EQUAL(engine().io().bytes_read - before.bytes_read, ps);
    BOOST_CHECK_EQUAL(cf.stats().page_misses, 1u);
    BOOST_CHECK_EQUAL(cf.stats().page_blocks, 7u);
    BOOST_CHECK_EQUAL(cf.stats().page_hits, 0u);
    BOOST_CHECK_EQUAL(cf.stats().page_populations, 1u);
    // The tracker sums what its files count.
    BOOST_CHECK_EQUAL(tracker.file_stats().page_blocks, 7u);
    (void)co_await cf.read(3 * ps, 1);
    BOOST_CHECK_EQUAL(cf.stats().page_hits, 1u);
    BOOST_CHECK_EQUAL(engine().io().reads - before.reads, 1u);
    co_await cf.close();
    co_await f.close();
}

REEF_TEST_CASE(test_pinned_pages_survive_eviction) {
    std::mt19937_64 rng(2);
    testing::tmpdir dir;
    auto data = random_bytes(20 * ps, rng);
    auto f = co_await write_file(dir.path() + "/f", data);
    // Room for two pages.
    cache_tracker tracker(2 * cached_file::page_charge());
    cached_file cf(f, data.size(), tracker);
    auto pinned = co_await cf.read(5 * ps + 10, 100);
    auto ds = cf.make_data_source(0, data.size(), {2});
    while (true) {
        auto b = co_await ds.get();
        if (b.empty()) {
            break;
        }
    }
    co_await ds.close();
    BOOST_CHECK_GT(cf.stats().page_evictions, 10u);
    // Page 5 was pinned throughout: still there, still right, no I/O to read it.
    auto before = engine().io();
    auto again = co_await cf.read(5 * ps, ps);
    BOOST_CHECK(again.view() == expected(data, 5 * ps, ps));
    BOOST_CHECK(pinned.view() == expected(data, 5 * ps + 10, 100));
    BOOST_CHECK_EQUAL(engine().io().reads, before.reads);
    BOOST_CHECK_LE(tracker.lru().memory_used(), 2 * cached_file::page_charge());
    // Unpinned, the page is evictable like any other.
    pinned = {};
    again = {};
    for (int i = 10; i < 15; ++i) {
        (void)co_await cf.read(i * ps, 1);
    }
    BOOST_CHECK_LE(cf.cached_pages(), 2u);
    before = engine().io();
    (void)co_await cf.read(5 * ps, 1);
    BOOST_CHECK_EQUAL(engine().io().reads - before.reads, 1u);
    co_await cf.close();
    co_await f.close();
}

REEF_TEST_CASE(test_buffers_outlive_the_cache) {
    std::mt19937_64 rng(3);
    testing::tmpdir dir;
    auto data = random_bytes(3 * ps + 7, rng);
    auto f = co_await write_file(dir.path() + "/f", data);
    temporary_buffer a, b, c;
    {
        cache_tracker tracker(1 << 20);
        {
            cached_file cf(f, data.size(), tracker);
            a = co_await cf.read(ps, 20);
            b = a.share(5, 10);
            auto ds = cf.make_data_source(2 * ps, ps + 7, {});
            c = co_await ds.get();
            co_await ds.close();
        }
        BOOST_CHECK_EQUAL(tracker.lru().memory_used(), 0u);
    }
    BOOST_CHECK(a.view() == expected(data, ps, 20));
    BOOST_CHECK(b.view() == expected(data, ps + 5, 10));
    BOOST_CHECK(c.view() == expected(data, 2 * ps, ps));
    co_await f.close();
}

REEF_TEST_CASE(test_read_errors_reach_every_waiter) {
    std::mt19937_64 rng(4);
    testing::tmpdir dir;
    auto data = random_bytes(2 * ps + 100, rng);
    auto f = co_await write_file(dir.path() + "/f", data);
    cache_tracker tracker(1 << 20);
    // Declared longer than it is: the last page's read comes up short.
    cached_file cf(f, 4 * ps, tracker);
    for (int attempt = 0; attempt < 2; ++attempt) {
        std::vector<future<read_result>> fs;
        for (int i = 0; i < 5; ++i) {
            fs.push_back(try_read(cf, 2 * ps + i, 10));
        }
        auto results = co_await when_all(std::move(fs));
        for (auto& r : results) {
            BOOST_REQUIRE(r.error);
            try {
                std::rethrow_exception(r.error);
            } catch (const std::system_error& e) {
                BOOST_CHECK_NE(std::string(e.what()).find(dir.path() + "/f"), std::string::npos);
            }
        }
        // Not cached: the next attempt reads again.
        BOOST_CHECK_EQUAL(cf.cached_pages(), 0u);
        BOOST_CHECK_EQUAL(cf.stats().page_misses, attempt + 1u);
        BOOST_CHECK_EQUAL(cf.stats().page_populations, 0u);
    }
    // The good pages are fine, and a source fails at the bad one.
    auto good = co_await cf.read(ps, ps);
    BOOST_CHECK(good.view() == expected(data, ps, ps));
    auto ds = cf.make_data_source(0, 4 * ps, {1});
    auto first = co_await ds.get();
    BOOST_CHECK(first.view() == expected(data, 0, ps));
    auto second = co_await ds.get();
    BOOST_CHECK(second.view() == expected(data, ps, ps));
    bool failed = false;
    try {
        (void)co_await ds.get();
    } catch (const std::system_error&) {
        failed = true;
    }
    BOOST_CHECK(failed);
    co_await ds.close();
    co_await cf.close();
    // A closed file fails every read with the file's own error.
    co_await f.close();
    cached_file cf2(f, data.size(), tracker);
    auto r = co_await try_read(cf2, 0, 1);
    BOOST_CHECK(r.error);
    BOOST_CHECK_EQUAL(cf2.cached_pages(), 0u);
}

REEF_TEST_CASE(test_drop_caches_and_invalidate) {
    std::mt19937_64 rng(5);
    testing::tmpdir dir;
    auto data = random_bytes(4 * ps, rng);
    auto f = co_await write_file(dir.path() + "/f", data);
    auto& shard = shard_cache_tracker();
    cached_file cf(f, data.size());
    auto used_before = shard.lru().memory_used();
    (void)co_await cf.read(0, data.size());
    BOOST_CHECK_EQUAL(cf.cached_pages(), 4u);
    BOOST_CHECK_EQUAL(shard.lru().memory_used() - used_before, 4 * cached_file::page_charge());
    auto held = co_await cf.read(ps, 10);
    drop_caches();
    // What is in use stays.
    BOOST_CHECK_EQUAL(cf.cached_pages(), 1u);
    auto before = engine().io();
    (void)co_await cf.read(ps, ps);
    BOOST_CHECK_EQUAL(engine().io().reads, before.reads);
    (void)co_await cf.read(0, 1);
    BOOST_CHECK_EQUAL(engine().io().reads - before.reads, 1u);
    cf.invalidate();
    BOOST_CHECK_EQUAL(cf.cached_pages(), 0u);
    BOOST_CHECK_EQUAL(shard.lru().memory_used(), used_before);
    BOOST_CHECK(held.view() == expected(data, ps, 10));
    before = engine().io();
    (void)co_await cf.read(ps, 1);
    BOOST_CHECK_EQUAL(engine().io().reads - before.reads, 1u);
    co_await cf.close();
    bool threw = false;
    try {
        (void)co_await cf.read(0, 1);
    } catch (const std::logic_error&) {
        threw = true;
    }
    BOOST_CHECK(threw);
    co_await f.close();
}

// The index parser reads through an input_stream over a cached_file source:
// values straddle pages, and skips jump over pages without reading them.
REEF_TEST_CASE(test_input_stream_over_pages) {
    uint64_t seed = seed_for_test();
    BOOST_TEST_MESSAGE("seed " << seed << " (set REEF_SEED to repeat)");
    std::mt19937_64 rng(seed);
    testing::tmpdir dir;
    auto data = random_bytes(25 * ps + 999, rng);
    auto f = co_await write_file(dir.path() + "/f", data);
    for (int round = 0; round < 50; ++round) {
        BOOST_TEST_CONTEXT("seed " << seed << " round " << round) {
            cache_tracker tracker((rng() % 4) * cached_file::page_charge());
            cached_file cf(f, data.size(), tracker);
            uint64_t off = rng() % data.size();
            uint64_t len = rng() % (data.size() - off + 100);
            uint64_t end = std::min<uint64_t>(data.size(), off + len);
            auto in = cf.make_input_stream(off, len, {unsigned(rng() % 4)});
            uint64_t pos = off;
            while (pos < end) {
                if (rng() % 4 == 0) {
                    // A skip, often over whole pages.
                    uint64_t n = rng() % (6 * ps);
                    co_await in.skip(n);
                    pos = std::min(end, pos + n);
                    continue;
                }
                size_t n = rng() % (ps + ps / 2);
                auto b = co_await in.read_exactly(n);
                BOOST_REQUIRE(b.view() == expected(data, pos, std::min<uint64_t>(n, end - pos)));
                pos += b.size();
            }
            auto rest = co_await in.read();
            BOOST_REQUIRE(rest.empty());
            BOOST_REQUIRE(in.eof());
            co_await in.close();
            // Pages read: never more than the range's pages (read-ahead stays inside it).
            uint64_t range_pages = end > off ? (end - 1) / ps - off / ps + 1 : 0;
            BOOST_REQUIRE_LE(cf.stats().page_misses, range_pages);
            co_await cf.close();
        }
    }
    co_await f.close();
}

REEF_TEST_CASE(test_tracker_metrics) {
    std::mt19937_64 rng(6);
    testing::tmpdir dir;
    auto data = random_bytes(3 * ps, rng);
    auto f = co_await write_file(dir.path() + "/f", data);
    cache_tracker tracker(1 << 20);
    auto registration = tracker.register_metrics();
    cached_file cf(f, data.size(), tracker);
    (void)co_await cf.read(0, 2 * ps);
    (void)co_await cf.read(10, 1);
    auto value_of = [](const std::string& group, const std::string& name) -> int64_t {
        for (auto& s : metrics::collect()) {
            if (s.group == group && s.name == name) {
                if (auto* c = std::get_if<uint64_t>(&s.value)) {
                    return int64_t(*c);
                }
                return std::get<int64_t>(s.value);
            }
        }
        return -1;
    };
    // ScyllaDB's names: scylla_sstables_index_page_cache_*, scylla_cache_bytes_*.
    BOOST_CHECK_EQUAL(value_of("sstables", "index_page_cache_misses"), 2);
    BOOST_CHECK_EQUAL(value_of("sstables", "index_page_cache_hits"), 1);
    BOOST_CHECK_EQUAL(value_of("cache", "bytes_used"), int64_t(2 * cached_file::page_charge()));
    BOOST_CHECK_EQUAL(value_of("cache", "bytes_total"), 1 << 20);
    co_await cf.close();
    co_await f.close();
}

REEF_TEST_CASE(test_drop_caches_on_all_shards) {
    testing::tmpdir dir;
    std::mt19937_64 rng(7);
    auto data = random_bytes(2 * ps, rng);
    auto path = dir.path() + "/f";
    {
        auto f = co_await write_file(path, data);
        co_await f.close();
    }
    // Each shard caches the file on its own tracker.
    auto fill_and_count = [&path, &data](bool fill) -> future<size_t> {
        thread_local std::unique_ptr<cached_file> cf;
        thread_local file f;
        if (fill) {
            f = co_await open_file_dma(path, open_flags::ro);
            cf = std::make_unique<cached_file>(f, data.size());
            (void)co_await cf->read(0, data.size());
        }
        size_t pages = cf->cached_pages();
        if (!fill) {
            cf.reset();
            co_await f.close();
        }
        co_return pages;
    };
    for (shard_id s = 0; s < smp::count(); ++s) {
        size_t pages = co_await smp::submit_to(s, [&] { return fill_and_count(true); });
        BOOST_CHECK_EQUAL(pages, 2u);
    }
    co_await drop_caches_on_all_shards();
    for (shard_id s = 0; s < smp::count(); ++s) {
        size_t pages = co_await smp::submit_to(s, [&] { return fill_and_count(false); });
        BOOST_CHECK_EQUAL(pages, 0u);
    }
}
