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
