// Tests of dht::token and dht::decorated_key: Cassandra's tokens for int keys
// and the (token, key bytes) order of partitions.
#include "mutation/token.hh"

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <string>
#include <vector>

using namespace reef;
using namespace reef::dht;

namespace {

partition_key int_key(int32_t v) {
    auto u = static_cast<uint32_t>(v);
    return partition_key(std::string{char(u >> 24), char(u >> 16), char(u >> 8), char(u)});
}

} // namespace

BOOST_AUTO_TEST_CASE(token_of_int_keys_matches_cassandra) {
    BOOST_TEST(murmur3_token(int_key(1)).value() == -4069959284402364209LL);
    BOOST_TEST(murmur3_token(int_key(2)).value() == -3248873570005575792LL);
    BOOST_TEST(murmur3_token(int_key(3)).value() == 9010454139840013625LL);
    BOOST_TEST(murmur3_token(int_key(4)).value() == -2729420104000364805LL);
    BOOST_TEST(murmur3_token(int_key(5)).value() == -7509452495886106294LL);
    BOOST_TEST(murmur3_token(int_key(1)).to_string() == "-4069959284402364209");
}

BOOST_AUTO_TEST_CASE(token_ordering_and_bounds) {
    BOOST_TEST((token(-1) < token(0)));
    BOOST_TEST((token::minimum() < token(std::numeric_limits<int64_t>::min() + 1)));
    BOOST_TEST((token() == token::minimum()));
    BOOST_TEST((murmur3_token(std::string_view()) == token::minimum()));
    BOOST_TEST((murmur3_token(int_key(3)) < token::maximum()));
}

BOOST_AUTO_TEST_CASE(decorated_keys_sort_as_cassandra_partitions) {
    std::vector<decorated_key> keys;
    for (int i = 1; i <= 5; ++i) {
        keys.emplace_back(int_key(i));
    }
    std::sort(keys.begin(), keys.end());
    std::vector<std::string> order;
    for (auto& k : keys) {
        order.push_back(std::string(k.key().view()));
    }
    std::vector<std::string> expected;
    for (int i : {5, 1, 2, 4, 3}) {
        expected.push_back(std::string(int_key(i).view()));
    }
    BOOST_TEST(order == expected, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(decorated_keys_with_equal_tokens_order_by_unsigned_bytes) {
    // Equal tokens are rare in practice; the tie-break is the key bytes.
    decorated_key a(token(7), partition_key(std::string("\x01", 1)));
    decorated_key b(token(7), partition_key(std::string("\xff", 1)));
    decorated_key c(token(8), partition_key(std::string("\x00", 1)));
    BOOST_TEST((a < b));
    BOOST_TEST((b < c));
    BOOST_TEST((a == decorated_key(token(7), partition_key(std::string("\x01", 1)))));
    BOOST_TEST((decorated_key(int_key(9)).get_token() == murmur3_token(int_key(9))));
}

BOOST_AUTO_TEST_CASE(token_of_every_byte_container_agrees) {
    std::string s("\x00\x00\x00\x01", 4);
    std::vector<uint8_t> u(s.begin(), s.end());
    auto expected = murmur3_token(int_key(1));
    BOOST_TEST((murmur3_token(s) == expected));
    BOOST_TEST((murmur3_token(std::string_view(s)) == expected));
    BOOST_TEST((murmur3_token(std::span<const uint8_t>(u)) == expected));
    BOOST_TEST((murmur3_token(std::as_bytes(std::span<const char>(s))) == expected));
}
