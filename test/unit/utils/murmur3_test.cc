// Tests of Cassandra's MurmurHash3 variant and Murmur3Partitioner tokens
// against values Cassandra returns for SELECT token(k).
#include "utils/murmur3.hh"

#include <boost/test/unit_test.hpp>

#include <array>
#include <cstdint>
#include <limits>
#include <string>

using namespace reef::utils;

namespace {

std::array<char, 4> int_key(int32_t v) {
    auto u = static_cast<uint32_t>(v);
    return {char(u >> 24), char(u >> 16), char(u >> 8), char(u)};
}

int64_t token_of_int(int32_t v) {
    auto k = int_key(v);
    return murmur3_token_value(std::span<const char>(k));
}

uint64_t rotr64(uint64_t v, int n) {
    return (v >> n) | (v << (64 - n));
}

// The multiplicative inverse of an odd x modulo 2^64 (Newton's iteration;
// each step doubles the correct low bits, x * x == 1 mod 8 to start).
uint64_t inverse(uint64_t x) {
    uint64_t inv = x;
    for (int i = 0; i < 5; ++i) {
        inv *= 2 - x * inv;
    }
    return inv;
}

// A shift by 33 >= 32 bits makes x ^= x >> 33 its own inverse.
uint64_t unfmix(uint64_t k) {
    k ^= k >> 33;
    k *= inverse(0xc4ceb9fe1a85ec53ULL);
    k ^= k >> 33;
    k *= inverse(0xff51afd7ed558ccdULL);
    k ^= k >> 33;
    return k;
}

// A 16-byte key whose seed-0 hash is {h1, h2}: the hash of one block run
// backwards, as Cassandra's keyForToken does, to reach hashes no test
// vector gives (such as h1 == INT64_MIN).
std::array<char, 16> key_for_hash(uint64_t h1, uint64_t h2) {
    const uint64_t c1 = 0x87c37b91114253d5ULL;
    const uint64_t c2 = 0x4cf5ad432745937fULL;
    h2 -= h1;
    h1 -= h2;
    h1 = unfmix(h1);
    h2 = unfmix(h2);
    h2 -= h1;
    h1 -= h2;
    h1 ^= 16;
    h2 ^= 16;
    uint64_t k2 = rotr64((h2 - 0x38495ab5) * inverse(5) - h1, 31);
    uint64_t k1 = rotr64((h1 - 0x52dce729) * inverse(5), 27);
    k1 = rotr64(k1 * inverse(c2), 31) * inverse(c1);
    k2 = rotr64(k2 * inverse(c1), 33) * inverse(c2);
    std::array<char, 16> key;
    for (int i = 0; i < 8; ++i) {
        key[i] = static_cast<char>(k1 >> (8 * i));
        key[8 + i] = static_cast<char>(k2 >> (8 * i));
    }
    return key;
}

} // namespace

BOOST_AUTO_TEST_CASE(murmur3_tokens_of_int_keys) {
    BOOST_TEST(token_of_int(1) == -4069959284402364209LL);
    BOOST_TEST(token_of_int(2) == -3248873570005575792LL);
    BOOST_TEST(token_of_int(3) == 9010454139840013625LL);
    BOOST_TEST(token_of_int(4) == -2729420104000364805LL);
    BOOST_TEST(token_of_int(5) == -7509452495886106294LL);
}

BOOST_AUTO_TEST_CASE(murmur3_int_keys_sort_as_cassandra) {
    // The order of the peer corpus's int-keyed partitions: 5, 1, 2, 4, 3.
    BOOST_TEST(token_of_int(5) < token_of_int(1));
    BOOST_TEST(token_of_int(1) < token_of_int(2));
    BOOST_TEST(token_of_int(2) < token_of_int(4));
    BOOST_TEST(token_of_int(4) < token_of_int(3));
}

BOOST_AUTO_TEST_CASE(murmur3_empty_key_is_minimum_token) {
    BOOST_TEST(murmur3_token_value(std::span<const char>()) == std::numeric_limits<int64_t>::min());
    auto h = cassandra_murmur3_x64_128(std::span<const char>(), 0);
    BOOST_TEST(h[0] == 0);
    BOOST_TEST(h[1] == 0);
}

BOOST_AUTO_TEST_CASE(murmur3_matches_reference_for_ascii) {
    // Without bytes >= 0x80 Cassandra's variant is the reference MurmurHash3_x64_128.
    std::string_view s("hello");
    auto h = cassandra_murmur3_x64_128(std::span<const char>(s), 0);
    BOOST_TEST(static_cast<uint64_t>(h[0]) == 0xcbd8a7b341bd9b02ULL);
    BOOST_TEST(static_cast<uint64_t>(h[1]) == 0x5b1e906a48ae1d19ULL);
}

BOOST_AUTO_TEST_CASE(murmur3_every_tail_length_is_stable_and_distinct) {
    // Lengths 0..33 cover every tail length with zero, one and two blocks;
    // a byte >= 0x80 in the tail exercises the sign extension.
    std::string key;
    std::vector<int64_t> seen;
    for (int len = 0; len <= 33; ++len) {
        auto h = cassandra_murmur3_x64_128(std::span<const char>(key), 0);
        auto again = cassandra_murmur3_x64_128(std::span<const char>(key), 0);
        BOOST_TEST(h[0] == again[0]);
        BOOST_TEST(h[1] == again[1]);
        for (auto x : seen) {
            BOOST_TEST(x != h[0]);
        }
        seen.push_back(h[0]);
        key.push_back(static_cast<char>(0x80 + len));
    }
}

BOOST_AUTO_TEST_CASE(murmur3_seed_changes_hash) {
    std::string_view s("reef");
    auto a = cassandra_murmur3_x64_128(std::span<const char>(s), 0);
    auto b = cassandra_murmur3_x64_128(std::span<const char>(s), 1);
    BOOST_TEST(a[0] != b[0]);
}

BOOST_AUTO_TEST_CASE(murmur3_token_never_is_the_minimum) {
    // Sanity of the inversion on an ordinary value first.
    auto k42 = key_for_hash(42, 7);
    auto h42 = cassandra_murmur3_x64_128(std::span<const char>(k42), 0);
    BOOST_TEST(h42[0] == 42);
    BOOST_TEST(h42[1] == 7);
    BOOST_TEST(murmur3_token_value(std::span<const char>(k42)) == 42);
    // The key whose hash is INT64_MIN gets INT64_MAX, the minimum being reserved.
    auto kmin = key_for_hash(uint64_t(1) << 63, 0);
    BOOST_TEST(cassandra_murmur3_x64_128(std::span<const char>(kmin), 0)[0] == std::numeric_limits<int64_t>::min());
    BOOST_TEST(murmur3_token_value(std::span<const char>(kmin)) == std::numeric_limits<int64_t>::max());
}
