// Tests of the compaction backlog and its controller: the size-tiered estimate against a model that merges equal
// sstables four at a time and counts the bytes it rewrites, its properties on random sets (scale, growth with a new
// sstable, drop by a compaction), TWCS windows, the normalized form, and the controller's curve: floor, cap,
// monotone, linear between its points, bad curves refused.
#include "compaction/backlog.hh"

#include <boost/test/unit_test.hpp>
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>

using namespace reef::compaction;

namespace {

// The model: k equal sstables merged four at a time, tier by tier, until one is left; the bytes written.
double rewritten_by_merging(uint64_t k, uint64_t size) {
    double written = 0;
    while (k > 1) {
        BOOST_REQUIRE(k % 4 == 0);
        k /= 4;
        size *= 4;
        written += double(k) * double(size);
    }
    return written;
}

std::vector<uint64_t> random_sizes(std::mt19937_64& rng, size_t max_count) {
    std::vector<uint64_t> v(1 + rng() % max_count);
    for (auto& s : v) {
        s = 1 + rng() % (uint64_t(1) << (10 + rng() % 20));
    }
    return v;
}

bool close(double a, double b) {
    return std::abs(a - b) <= 1e-9 * std::max({1.0, std::abs(a), std::abs(b)});
}

candidate sst(uint64_t size, int64_t max_ts) {
    candidate c;
    c.size = size;
    c.min_timestamp = max_ts;
    c.max_timestamp = max_ts;
    return c;
}

} // namespace

BOOST_AUTO_TEST_CASE(size_tiered_backlog_is_what_merging_by_four_rewrites) {
    BOOST_TEST(size_tiered_backlog({}) == 0.0);
    BOOST_TEST(size_tiered_backlog({12345}) == 0.0);
    for (uint64_t k : {4, 16, 64, 256}) {
        for (uint64_t size : {1, 1000, 3'400'000}) {
            std::vector<uint64_t> sizes(k, size);
            BOOST_TEST_INFO(k << " sstables of " << size);
            BOOST_TEST(close(size_tiered_backlog(sizes), rewritten_by_merging(k, size)));
        }
    }
}

BOOST_AUTO_TEST_CASE(size_tiered_backlog_on_random_sets) {
    std::mt19937_64 rng(16);
    for (int round = 0; round < 2000; ++round) {
        auto sizes = random_sizes(rng, 40);
        double b = size_tiered_backlog(sizes);
        BOOST_TEST_INFO("round " << round << ", " << sizes.size() << " sstables");
        BOOST_TEST(b >= 0.0);
        BOOST_TEST((b == 0.0) == (sizes.size() == 1));
        // Bytes: scaling every size scales it.
        auto scaled = sizes;
        for (auto& s : scaled) {
            s *= 3;
        }
        BOOST_TEST(close(size_tiered_backlog(scaled), 3 * b));
        // A new sstable (a flush) never lowers it.
        auto grown = sizes;
        grown.push_back(1 + rng() % (uint64_t(1) << 28));
        BOOST_TEST(size_tiered_backlog(grown) >= b);
        // A compaction of n sstables (replaced by one of their total) lowers it, by at most what it wrote times
        // log4(n) (the entropy bound: reached when they are equal), so by at most what it wrote when n <= 4.
        if (sizes.size() >= 2) {
            std::shuffle(sizes.begin(), sizes.end(), rng);
            size_t n = 2 + rng() % (sizes.size() - 1);
            uint64_t merged = std::accumulate(sizes.begin(), sizes.begin() + n, uint64_t(0));
            std::vector<uint64_t> after(sizes.begin() + n, sizes.end());
            after.push_back(merged);
            double a = size_tiered_backlog(after);
            BOOST_TEST(a < b);
            BOOST_TEST(b - a <= double(merged) * std::log2(double(n)) / 2 * (1 + 1e-9));
        }
    }
}

BOOST_AUTO_TEST_CASE(table_backlog_by_strategy) {
    compaction_options stcs;
    compaction_options twcs;
    twcs.type = strategy_type::time_window;
    twcs.compaction_window_unit = window_unit::hours;
    const int64_t hour = 3600'000'000;  // microseconds
    // Four equal sstables in one window, four more spread over four other windows.
    std::vector<candidate> c;
    for (int i = 0; i < 4; ++i) {
        c.push_back(sst(1000, 10 * hour + i));
    }
    for (int i = 0; i < 4; ++i) {
        c.push_back(sst(1000, i * hour));
    }
    std::vector<uint64_t> sizes(8, 1000);
    BOOST_TEST(close(table_backlog(stcs, c), size_tiered_backlog(sizes)));
    // Time-window: only the window with four counts (its sstables are never merged with other windows').
    BOOST_TEST(close(table_backlog(twcs, c), size_tiered_backlog({1000, 1000, 1000, 1000})));
    auto off = stcs;
    off.enabled = false;
    BOOST_TEST(table_backlog(off, c) == 0.0);
}

BOOST_AUTO_TEST_CASE(normalized_backlog_in_mean_sstables) {
    BOOST_TEST(normalized_backlog(0, {}) == 0.0);
    BOOST_TEST(normalized_backlog(-5, {10, 10}) == 0.0);
    for (uint64_t k = 1; k <= 64; ++k) {
        std::vector<uint64_t> sizes(k, 4096);
        // k equal sstables: k * log4(k), whatever their size.
        BOOST_TEST_INFO(k << " sstables");
        BOOST_TEST(close(normalized_backlog(size_tiered_backlog(sizes), sizes), double(k) * std::log2(double(k)) / 2));
    }
    std::mt19937_64 rng(17);
    for (int round = 0; round < 500; ++round) {
        auto sizes = random_sizes(rng, 40);
        auto scaled = sizes;
        for (auto& s : scaled) {
            s *= 7;
        }
        BOOST_TEST(close(normalized_backlog(size_tiered_backlog(sizes), sizes),
                         normalized_backlog(size_tiered_backlog(scaled), scaled)));
    }
}

BOOST_AUTO_TEST_CASE(controller_floor_cap_and_monotone) {
    backlog_controller c;
    auto points = backlog_controller::default_points();
    BOOST_TEST(c.shares(0) == c.floor());
    BOOST_TEST(c.shares(-1) == c.floor());
    BOOST_TEST(c.shares(std::nan("")) == c.floor());
    BOOST_TEST(c.floor() == points.front().shares);
    BOOST_TEST(c.cap() == points.back().shares);
    BOOST_TEST(c.floor() < c.cap());
    BOOST_TEST(c.shares(points.back().backlog) == c.cap());
    BOOST_TEST(c.shares(1e12) == c.cap());
    BOOST_TEST(c.shares(std::numeric_limits<double>::infinity()) == c.cap());
    // At each point its shares; halfway between two, halfway between their shares.
    for (size_t i = 0; i < points.size(); ++i) {
        BOOST_TEST(c.shares(points[i].backlog) == points[i].shares);
        if (i > 0) {
            double mid = (points[i - 1].backlog + points[i].backlog) / 2;
            BOOST_TEST(std::abs(double(c.shares(mid)) - (points[i - 1].shares + points[i].shares) / 2.0) <= 1.0);
        }
    }
    // Monotone, within [floor, cap], over a fine sweep; rising somewhere between each two points that rise.
    unsigned prev = 0;
    for (double b = 0; b < 2 * points.back().backlog; b += 0.01) {
        auto s = c.shares(b);
        BOOST_TEST_INFO("backlog " << b);
        BOOST_TEST(s >= prev);
        BOOST_TEST((s >= c.floor() && s <= c.cap()));
        prev = s;
    }
    BOOST_TEST(c.shares(4) > c.floor());
    BOOST_TEST(c.shares(20) > c.shares(4));
}

BOOST_AUTO_TEST_CASE(controller_curves_refused) {
    auto refusal = [](std::vector<backlog_controller::control_point> p) -> std::string {
        try {
            backlog_controller c(std::move(p));
        } catch (const std::invalid_argument& e) {
            return e.what();
        }
        return "";
    };
    BOOST_TEST(refusal({}) == "backlog controller: no control point");
    BOOST_TEST(refusal({{0, 10}, {0, 20}}).find("control point 1 (0, 20)") != std::string::npos);
    BOOST_TEST(refusal({{0, 10}, {5, 20}, {6, 15}}).find("control point 2 (6, 15)") != std::string::npos);
    BOOST_TEST(refusal({{0, 10}, {5, 10}, {6, 15}}) == "");
    backlog_controller flat({{1, 70}});
    BOOST_TEST(flat.shares(0) == 70u);
    BOOST_TEST(flat.shares(100) == 70u);
}
