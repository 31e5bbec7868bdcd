// rate_meter against a model that ticks every 5 s one tick at a time, as Dropwizard's Meter does (marks and reads at
// random times, long idle gaps included); the mean rate and the sum of figures.
#include "utils/rate_meter.hh"

#include <boost/test/unit_test.hpp>

#include <cmath>
#include <random>

using namespace reef::utils;
using namespace std::chrono_literals;

namespace {

// Dropwizard's EWMA and Meter.tickIfNecessary, written out tick by tick.
struct model {
    rate_meter::clock::time_point last_tick;
    uint64_t uncounted = 0;
    uint64_t count = 0;
    double rates[3] = {0, 0, 0};
    bool initialized = false;

    void tick() {
        static const double minutes[3] = {1, 5, 15};
        double instant = double(uncounted) / 5.0;
        uncounted = 0;
        for (int i = 0; i < 3; ++i) {
            double alpha = 1 - std::exp(-5.0 / 60.0 / minutes[i]);
            rates[i] = initialized ? rates[i] + alpha * (instant - rates[i]) : instant;
        }
        initialized = true;
    }
    void tick_if_necessary(rate_meter::clock::time_point now) {
        while (now - last_tick >= 5s) {
            last_tick += 5s;
            tick();
        }
    }
};

} // namespace

BOOST_AUTO_TEST_CASE(rates_match_a_tick_by_tick_model) {
    std::mt19937_64 rng(42);
    for (int round = 0; round < 50; ++round) {
        auto start = rate_meter::clock::time_point(std::chrono::seconds(1000));
        rate_meter m(start);
        model md{start};
        auto now = start;
        for (int step = 0; step < 300; ++step) {
            // Mostly short gaps, sometimes minutes, now and then an hour.
            int kind = int(rng() % 20);
            auto gap = kind == 0 ? std::chrono::milliseconds(rng() % 3'600'000)
                       : kind < 4 ? std::chrono::milliseconds(rng() % 120'000)
                                  : std::chrono::milliseconds(rng() % 3'000);
            now += gap;
            if (rng() % 3) {
                uint64_t n = rng() % 50;
                m.mark(n, now);
                md.tick_if_necessary(now);
                md.count += n;
                md.uncounted += n;
            } else {
                auto f = m.read(now);
                md.tick_if_necessary(now);
                BOOST_REQUIRE_EQUAL(f.count, md.count);
                for (int i = 0; i < 3; ++i) {
                    BOOST_REQUIRE_SMALL(f.rates[i] - md.rates[i], 1e-9 + 1e-9 * md.rates[i]);
                }
                double seconds = std::chrono::duration<double>(now - start).count();
                BOOST_REQUIRE_CLOSE(f.mean_rate, seconds > 0 ? double(md.count) / seconds : 0.0, 1e-9);
            }
        }
    }
}

BOOST_AUTO_TEST_CASE(a_steady_rate_converges_and_figures_add_up) {
    auto start = rate_meter::clock::time_point(std::chrono::seconds(1));
    rate_meter m(start);
    auto now = start;
    // 10 events a second for an hour: every rate near 10.
    for (int s = 0; s < 3600; ++s) {
        now += 1s;
        m.mark(10, now);
    }
    auto f = m.read(now);
    for (double r : f.rates) {
        BOOST_CHECK_CLOSE(r, 10.0, 1.0);
    }
    BOOST_CHECK_EQUAL(f.count, 36000u);
    auto sum = rate_meter::add(f, f);
    BOOST_CHECK_EQUAL(sum.count, 72000u);
    BOOST_CHECK_CLOSE(sum.rates[2], 2 * f.rates[2], 1e-9);
    // Idle: the one-minute rate decays first.
    auto idle = m.read(now + 10min);
    BOOST_CHECK_LT(idle.rates[0], 0.01);
    BOOST_CHECK_GT(idle.rates[2], 5.0);
}
