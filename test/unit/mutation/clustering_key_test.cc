// Tests of clustering_key_prefix's storage (values and offsets in one buffer, inline while small): random lists
// of values, built every way a key can be built, read back and compared as the list of values they came from.
#include "mutation/clustering_key.hh"

#include "test/lib/random_mutation.hh"

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <random>
#include <vector>

using namespace reef;

namespace {

std::vector<bytes> random_values(std::mt19937_64& rng) {
    std::vector<bytes> out(rng() % 7);
    for (auto& v : out) {
        // Empty values, a few bytes, and values long enough to spill the key to the heap.
        size_t len = rng() % 4 == 0 ? 0 : rng() % 5 == 0 ? 20 + rng() % 60 : rng() % 9;
        for (size_t i = 0; i < len; ++i) {
            v.push_back(uint8_t(rng() % 3));  // few distinct bytes: equal values are frequent
        }
    }
    return out;
}

void check_holds(const clustering_key_prefix& k, const std::vector<bytes>& values) {
    BOOST_REQUIRE_EQUAL(k.size(), values.size());
    BOOST_REQUIRE_EQUAL(k.empty(), values.empty());
    size_t i = 0;
    for (auto c : k.components()) {
        BOOST_REQUIRE(std::ranges::equal(c, values[i]));
        BOOST_REQUIRE(std::ranges::equal(k.component(i), values[i]));
        BOOST_REQUIRE(std::ranges::equal(k.components()[i], values[i]));
        ++i;
    }
    BOOST_REQUIRE_EQUAL(i, values.size());
    BOOST_REQUIRE(k.to_vector() == values);
    BOOST_REQUIRE_THROW(k.component(values.size()), std::out_of_range);
    size_t stored = 4 * values.size();
    for (auto& v : values) {
        stored += v.size();
    }
    // Keys whose values and offsets fit 40 bytes cost no allocation.
    if (stored <= 40) {
        BOOST_REQUIRE_EQUAL(k.external_memory_usage(), 0u);
    } else {
        BOOST_REQUIRE(k.external_memory_usage() >= stored);
    }
}

} // namespace

BOOST_AUTO_TEST_CASE(test_key_holds_its_values_however_built) {
    uint64_t seed = testing::pick_seed();
    BOOST_TEST_MESSAGE("seed " << seed << " (set REEF_SEED to repeat)");
    std::mt19937_64 rng(seed);
    for (int i = 0; i < 5000; ++i) {
        BOOST_TEST_CONTEXT("seed " << seed << " case " << i) {
            auto values = random_values(rng);
            clustering_key_prefix a(values);
            check_holds(a, values);

            std::vector<bytes_view> views(values.begin(), values.end());
            auto b = clustering_key_prefix::from_views(views);
            check_holds(b, values);
            BOOST_REQUIRE(a == b);

            clustering_key_prefix c;
            for (auto& v : values) {
                c.push_back(v);
            }
            check_holds(c, values);
            BOOST_REQUIRE(a == c);

            // Appending one of its own values (the buffer may move while it does).
            if (!values.empty()) {
                size_t from = rng() % values.size();
                c.push_back(c.component(from));
                auto longer = values;
                longer.push_back(values[from]);
                check_holds(c, longer);
                BOOST_REQUIRE(!(a == c));
            }

            // Copies and moves, from inline and spilled keys.
            clustering_key_prefix copy(a);
            check_holds(copy, values);
            clustering_key_prefix moved(std::move(copy));
            check_holds(moved, values);
            copy = moved;
            check_holds(copy, values);
            moved = clustering_key_prefix(random_values(rng));
            moved = std::move(copy);
            check_holds(moved, values);

            // Equality is the equality of the value lists.
            auto other = random_values(rng);
            BOOST_REQUIRE_EQUAL(clustering_key_prefix(other) == a, other == values);
            if (!values.empty()) {
                auto prefix = values;
                prefix.pop_back();
                BOOST_REQUIRE(!(clustering_key_prefix(prefix) == a));
            }
        }
    }
}
