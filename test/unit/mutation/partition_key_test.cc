// Tests of partition_key: single and composite (CompositeType) serialization,
// splitting and its errors, and the unsigned byte order.
#include "mutation/partition_key.hh"

#include <boost/test/unit_test.hpp>

#include <string>
#include <string_view>
#include <vector>

using namespace reef;

BOOST_AUTO_TEST_CASE(partition_key_single_column_is_raw_bytes) {
    std::string_view v("\x00\x00\x00\x05", 4);
    std::vector<std::string_view> parts{v};
    auto k = partition_key::from_components(parts);
    BOOST_TEST(k.view() == v);
    BOOST_TEST(k.size() == 4u);
    auto back = k.components(1);
    BOOST_REQUIRE(back.size() == 1u);
    BOOST_TEST(back[0] == v);
    BOOST_TEST((partition_key::from_single_value(v) == k));
}

BOOST_AUTO_TEST_CASE(partition_key_composite_layout) {
    std::vector<std::string_view> parts{std::string_view("\x00\x00\x00\x01", 4), "ab", ""};
    auto k = partition_key::from_components(parts);
    std::string expected("\x00\x04\x00\x00\x00\x01\x00"
                         "\x00\x02"
                         "ab\x00"
                         "\x00\x00\x00",
                         15);
    BOOST_TEST(k.view() == expected);
    auto back = k.components(3);
    BOOST_REQUIRE(back.size() == 3u);
    BOOST_TEST(back[0] == parts[0]);
    BOOST_TEST(back[1] == parts[1]);
    BOOST_TEST(back[2] == parts[2]);
}

// A default-constructed component has a null data() (a CQL '' bound from an empty value): UBSan caught it passed
// to memcpy.
BOOST_AUTO_TEST_CASE(partition_key_composite_with_a_null_empty_component) {
    std::vector<std::string_view> parts{std::string_view("\x00\x00\x00\x03", 4), std::string_view()};
    auto k = partition_key::from_components(parts);
    BOOST_TEST(k.view() == std::string_view("\x00\x04\x00\x00\x00\x03\x00\x00\x00\x00", 10));
    auto back = k.components(2);
    BOOST_REQUIRE(back.size() == 2u);
    BOOST_TEST(back[1].empty());
}

BOOST_AUTO_TEST_CASE(partition_key_composite_round_trip_long_component) {
    std::string big(70000, 'x');
    std::string max(max_composite_component_size, 'y');
    std::vector<std::string_view> ok{max, "z"};
    auto k = partition_key::from_components(ok);
    auto back = k.components(2);
    BOOST_TEST(back[0].size() == max.size());
    BOOST_TEST(back[1] == "z");
    std::vector<std::string_view> too_big{big, "z"};
    BOOST_CHECK_THROW(partition_key::from_components(too_big), key_format_error);
}

BOOST_AUTO_TEST_CASE(partition_key_split_errors) {
    BOOST_CHECK_THROW(split_composite(""), key_format_error);
    // Truncated length.
    BOOST_CHECK_THROW(split_composite(std::string_view("\x00", 1)), key_format_error);
    // Declared length runs past the end.
    BOOST_CHECK_THROW(split_composite(std::string_view("\x00\x05" "abc\x00", 6)), key_format_error);
    // Missing end-of-component byte.
    BOOST_CHECK_THROW(split_composite(std::string_view("\x00\x02" "ab", 4)), key_format_error);
    // Non-zero end-of-component byte.
    BOOST_CHECK_THROW(split_composite(std::string_view("\x00\x02" "ab\x01", 5)), key_format_error);
    // Wrong number of columns.
    std::vector<std::string_view> two{"a", "b"};
    auto k = partition_key::from_components(two);
    BOOST_CHECK_THROW(k.components(3), key_format_error);
    BOOST_CHECK_THROW(k.components(0), key_format_error);
    BOOST_CHECK_THROW(partition_key::from_components({}), key_format_error);
}

BOOST_AUTO_TEST_CASE(partition_key_orders_unsigned_bytes) {
    partition_key low(std::string("\x7f", 1));
    partition_key high(std::string("\x80", 1));
    partition_key prefix(std::string("\x7f", 1));
    partition_key longer(std::string("\x7f\x00", 2));
    BOOST_TEST((low < high));
    BOOST_TEST((prefix < longer));
    BOOST_TEST((low == prefix));
    BOOST_TEST((partition_key() < low));
}
