// Tests of dht::shard_of, the biased-token-round-robin sharder: known vectors, a model without 128-bit
// arithmetic, and the layout properties shard-aware drivers rely on.
#include "mutation/token.hh"

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <random>
#include <vector>

using namespace reef::dht;

namespace {

// The same formula through 32-bit limbs (the high word of a 64 x 32 product), so that a mistake in the 128-bit
// multiply or the shift would not be repeated here.
unsigned model_shard_of(int64_t t, unsigned n, unsigned msb) {
    uint64_t u = uint64_t(t) ^ (uint64_t(1) << 63);  // + 2^63 mod 2^64 is flipping the sign bit
    for (unsigned i = 0; i < msb; ++i) {
        u = u * 2;
    }
    uint64_t lo = (u & 0xffffffffu) * n;
    uint64_t hi = (u >> 32) * n + (lo >> 32);
    return unsigned(hi >> 32);
}

} // namespace

// Computed once with Python's unbounded integers, the python-driver's shard_id_from_token:
//   ((((t + 2**63) << 12) % 2**64) * n) >> 64
// for n = 1, 2, 3, 7, 8, 64, 255. The tokens: the ring's ends, 0 and its neighbours, Cassandra's tokens of the int
// keys 1, 2, 3 (token_test.cc), and seven drawn by random.Random(15).randrange(-2**63, 2**63).
BOOST_AUTO_TEST_CASE(test_shard_of_known_vectors) {
    struct vector {
        int64_t token;
        std::array<unsigned, 7> shards;
    };
    const unsigned counts[] = {1, 2, 3, 7, 8, 64, 255};
    const vector vectors[] = {
        {-9223372036854775807LL - 1, {0, 0, 0, 0, 0, 0, 0}},
        {-9223372036854775807LL, {0, 0, 0, 0, 0, 0, 0}},
        {-1LL, {0, 1, 2, 6, 7, 63, 254}},
        {0LL, {0, 0, 0, 0, 0, 0, 0}},
        {1LL, {0, 0, 0, 0, 0, 0, 0}},
        {9223372036854775807LL, {0, 1, 2, 6, 7, 63, 254}},
        {-4069959284402364209LL, {0, 0, 0, 2, 2, 18, 73}},
        {-3248873570005575792LL, {0, 1, 1, 4, 4, 38, 154}},
        {9010454139840013625LL, {0, 1, 2, 5, 5, 46, 184}},
        {-5368365131923579908LL, {0, 1, 2, 6, 7, 62, 250}},
        {4353277032674952737LL, {0, 1, 1, 4, 4, 39, 158}},
        {-8911978815150107791LL, {0, 0, 0, 1, 1, 9, 36}},
        {-2448020660233702164LL, {0, 0, 1, 3, 3, 27, 109}},
        {-2986938140826257268LL, {0, 1, 2, 5, 6, 49, 195}},
        {-2661140056859985584LL, {0, 0, 0, 0, 0, 6, 27}},
        {-4366081245383479964LL, {0, 1, 1, 3, 4, 34, 136}},
    };
    for (auto& v : vectors) {
        for (size_t i = 0; i < std::size(counts); ++i) {
            BOOST_TEST_CONTEXT("token " << v.token << ", " << counts[i] << " shards") {
                BOOST_TEST(shard_of(token(v.token), counts[i]) == v.shards[i]);
            }
        }
    }
    // Without the dropped bits the ring is cut in n equal ranges: 0, 2^63 - 1 at the middle and the end of 3.
    BOOST_TEST(shard_of(token::minimum(), 3, 0) == 0u);
    BOOST_TEST(shard_of(token(0), 3, 0) == 1u);
    BOOST_TEST(shard_of(token::maximum(), 3, 0) == 2u);
    static_assert(shard_of(token(-1), 8) == 7);  // usable at compile time
}

BOOST_AUTO_TEST_CASE(test_shard_of_matches_model) {
    std::mt19937_64 rng(15);
    for (int i = 0; i < 200000; ++i) {
        auto t = int64_t(rng());
        unsigned n = 1 + unsigned(rng() % 1024);
        unsigned msb = i % 2 ? 12 : unsigned(rng() % 20);
        BOOST_TEST_CONTEXT("token " << t << ", " << n << " shards, ignore_msb " << msb) {
            BOOST_REQUIRE_EQUAL(shard_of(token(t), n, msb), model_shard_of(t, n, msb));
        }
    }
}

// Every shard owns tokens, in nearly equal shares; with ignore_msb = 12 the pattern repeats in each of the 4096
// spans of 2^52 tokens, and inside a span (as over the whole ring with ignore_msb = 0) shards own consecutive
// ranges in shard order.
BOOST_AUTO_TEST_CASE(test_shard_of_layout) {
    std::mt19937_64 rng(16);
    for (unsigned n : {1u, 2u, 3u, 5u, 8u, 13u, 64u}) {
        std::vector<unsigned> hits(n);
        const int draws = 20000;
        for (int i = 0; i < draws; ++i) {
            auto t = int64_t(rng());
            unsigned s = shard_of(token(t), n);
            BOOST_REQUIRE_LT(s, n);
            ++hits[s];
            // The same offset in another span: same shard.
            auto other = int64_t(uint64_t(t) + (uint64_t(rng() % 4096) << 52));
            BOOST_REQUIRE_EQUAL(shard_of(token(other), n), s);
        }
        for (unsigned s = 0; s < n; ++s) {
            BOOST_TEST_CONTEXT(n << " shards, shard " << s) {
                BOOST_TEST(hits[s] > draws / n / 2);
            }
        }
        for (unsigned msb : {0u, 12u}) {
            // Sorted tokens inside one span (the whole ring for msb 0) give non-decreasing shards, each shard once.
            uint64_t span = msb ? uint64_t(1) << (64 - msb) : 0;
            uint64_t base = msb ? (rng() % 4096) * span : 0;
            std::vector<uint64_t> offsets;
            for (int i = 0; i < 5000; ++i) {
                offsets.push_back(msb ? rng() % span : rng());
            }
            offsets.push_back(0);
            offsets.push_back(msb ? span - 1 : ~uint64_t(0));
            std::sort(offsets.begin(), offsets.end());
            unsigned prev = 0;
            for (uint64_t off : offsets) {
                auto t = int64_t((base + off) ^ (uint64_t(1) << 63));  // back from unbiased to a token
                unsigned s = shard_of(token(t), n, msb);
                BOOST_REQUIRE_GE(s, prev);
                prev = s;
            }
            BOOST_TEST(shard_of(token(int64_t(base ^ (uint64_t(1) << 63))), n, msb) == 0u);
            BOOST_TEST(prev == n - 1);
        }
    }
}
