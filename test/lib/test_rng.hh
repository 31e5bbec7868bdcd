// test_rng: one random engine per test binary for its randomized cases, seeded once per run.
// The seed is REEF_SEED when set (pick_seed), and is printed, so that a failing run can be repeated.
#pragma once

#include <boost/test/unit_test.hpp>
#include <cstdint>
#include <random>

namespace reef::testing {

// REEF_SEED when set, else a fresh random seed (test/lib/random_mutation.cc).
uint64_t pick_seed();

inline std::mt19937_64& test_rng() {
    static std::mt19937_64 r([] {
        auto seed = pick_seed();
        BOOST_TEST_MESSAGE("seed " << seed << " (set REEF_SEED to repeat)");
        return seed;
    }());
    return r;
}

} // namespace reef::testing
