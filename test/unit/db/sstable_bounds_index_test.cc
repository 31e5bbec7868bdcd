// The key-bounds index against the linear scan it replaces: random sets of bounds (runs of disjoint sstables,
// overlapping ones, nested ones, sstables without bounds, keys sharing a token) queried at random keys and at every
// bound, the answer equal to "first <= k <= last, or no bounds", in ascending position.
#include "db/sstable_bounds_index.hh"
#include "test/lib/random_mutation.hh"

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

using namespace reef;

namespace {

// Few tokens and short keys, so that equal tokens with different keys, and equal keys, are frequent.
dht::decorated_key random_key(std::mt19937_64& rng) {
    auto t = std::uniform_int_distribution<int64_t>(-20, 20)(rng);
    std::string k(1, char('a' + std::uniform_int_distribution<int>(0, 3)(rng)));
    return dht::decorated_key(dht::token(t), partition_key(k));
}

std::vector<uint32_t> linear(const std::vector<sstable_key_bounds>& set, const dht::decorated_key& k) {
    std::vector<uint32_t> out;
    for (uint32_t i = 0; i < set.size(); ++i) {
        if (!set[i] || (!(k < set[i]->first) && !(set[i]->second < k))) {
            out.push_back(i);
        }
    }
    return out;
}

std::vector<uint32_t> indexed(const sstable_bounds_index& idx, const dht::decorated_key& k) {
    auto p = idx.spanning(k);
    return {p.begin(), p.end()};
}

// Bounds of a random kind: a run of disjoint sstables, random overlapping ones, or a mix, some without bounds.
std::vector<sstable_key_bounds> random_set(std::mt19937_64& rng) {
    std::vector<sstable_key_bounds> set;
    auto n = std::uniform_int_distribution<int>(0, 12)(rng);
    bool run = rng() % 2;
    std::vector<dht::decorated_key> points;
    for (int i = 0; i < 2 * n; ++i) {
        points.push_back(random_key(rng));
    }
    std::sort(points.begin(), points.end());
    for (int i = 0; i < n; ++i) {
        if (rng() % 8 == 0) {
            set.emplace_back();
            continue;
        }
        auto a = run ? points[2 * i] : random_key(rng);
        auto b = run ? points[2 * i + 1] : random_key(rng);
        if (b < a) {
            std::swap(a, b);
        }
        set.emplace_back(std::in_place, a, b);
    }
    if (run) {
        std::shuffle(set.begin(), set.end(), rng);
    }
    return set;
}

} // namespace

BOOST_AUTO_TEST_CASE(bounds_index_matches_the_linear_scan) {
    auto seed = testing::pick_seed();
    BOOST_TEST_MESSAGE("seed " << seed);
    std::mt19937_64 rng(seed);
    for (int round = 0; round < 2000; ++round) {
        auto set = random_set(rng);
        std::vector<const sstable_key_bounds*> members;
        for (auto& b : set) {
            members.push_back(&b);
        }
        sstable_bounds_index idx(members);
        BOOST_REQUIRE_EQUAL(idx.size(), set.size());
        std::vector<dht::decorated_key> probes;
        for (int i = 0; i < 20; ++i) {
            probes.push_back(random_key(rng));
        }
        for (auto& b : set) {
            if (b) {
                probes.push_back(b->first);
                probes.push_back(b->second);
            }
        }
        for (auto& k : probes) {
            auto want = linear(set, k);
            auto got = indexed(idx, k);
            BOOST_REQUIRE_MESSAGE(got == want, "seed " << seed << " round " << round << ": key token "
                                                       << k.get_token().value() << " found " << got.size()
                                                       << " sstables, the scan " << want.size());
        }
    }
}

BOOST_AUTO_TEST_CASE(a_run_gives_the_one_sstable_holding_the_key) {
    std::vector<sstable_key_bounds> set;
    for (int i = 0; i < 5; ++i) {
        set.emplace_back(std::in_place, dht::decorated_key(dht::token(10 * i), partition_key("a")),
                         dht::decorated_key(dht::token(10 * i + 5), partition_key("a")));
    }
    std::reverse(set.begin(), set.end());  // positions need not follow key order
    std::vector<const sstable_key_bounds*> members;
    for (auto& b : set) {
        members.push_back(&b);
    }
    sstable_bounds_index idx(members);
    auto at = [&](int64_t t) { return indexed(idx, dht::decorated_key(dht::token(t), partition_key("a"))); };
    BOOST_CHECK((at(0) == std::vector<uint32_t>{4}));
    BOOST_CHECK((at(25) == std::vector<uint32_t>{2}));
    BOOST_CHECK((at(45) == std::vector<uint32_t>{0}));
    BOOST_CHECK(at(7).empty());   // between two sstables
    BOOST_CHECK(at(-1).empty());  // before the first
    BOOST_CHECK(at(46).empty());  // after the last
}
