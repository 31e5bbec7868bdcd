// Tests of the big-endian codecs: byte layout for every width, signed values,
// and the checked variants' bounds errors.
#include "utils/big_endian.hh"

#include <boost/test/unit_test.hpp>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

using namespace reef::utils;

BOOST_AUTO_TEST_CASE(big_endian_layout) {
    std::array<std::byte, 15> buf{};
    write_be<uint8_t>(std::span<std::byte>(buf), 0, 0xab);
    write_be<uint16_t>(std::span<std::byte>(buf), 1, 0x0102);
    write_be<uint32_t>(std::span<std::byte>(buf), 3, 0x03040506);
    write_be<uint64_t>(std::span<std::byte>(buf), 7, 0x0708090a0b0c0d0eULL);
    std::array<uint8_t, 15> expected{0xab, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14};
    for (size_t i = 0; i < buf.size(); ++i) {
        BOOST_TEST(static_cast<uint8_t>(buf[i]) == expected[i]);
    }
    std::span<const std::byte> in(buf);
    BOOST_TEST(read_be<uint8_t>(in, 0) == 0xab);
    BOOST_TEST(read_be<uint16_t>(in, 1) == 0x0102);
    BOOST_TEST(read_be<uint32_t>(in, 3) == 0x03040506u);
    BOOST_TEST(read_be<uint64_t>(in, 7) == 0x0708090a0b0c0d0eULL);
    BOOST_TEST(read_be_unchecked<uint32_t>(buf.data() + 3) == 0x03040506u);
}

BOOST_AUTO_TEST_CASE(big_endian_signed_values) {
    std::array<std::byte, 8> buf{};
    write_be_unchecked<int64_t>(buf.data(), -2);
    BOOST_TEST(static_cast<uint8_t>(buf[0]) == 0xff);
    BOOST_TEST(static_cast<uint8_t>(buf[7]) == 0xfe);
    BOOST_TEST(read_be_unchecked<int64_t>(buf.data()) == -2);
    write_be_unchecked<int32_t>(buf.data(), INT32_MIN);
    BOOST_TEST(read_be_unchecked<int32_t>(buf.data()) == INT32_MIN);
    write_be_unchecked<int16_t>(buf.data(), -300);
    BOOST_TEST(read_be_unchecked<int16_t>(buf.data()) == -300);
    write_be_unchecked<int8_t>(buf.data(), -1);
    BOOST_TEST(read_be_unchecked<int8_t>(buf.data()) == -1);
}

BOOST_AUTO_TEST_CASE(big_endian_char_spans) {
    std::string s(4, '\0');
    write_be<uint32_t>(std::span<char>(s), 0, 0x80000001u);
    BOOST_TEST(s == std::string("\x80\x00\x00\x01", 4));
    BOOST_TEST(read_be<uint32_t>(std::span<const char>(s), 0) == 0x80000001u);
    BOOST_TEST(read_be_unchecked<int32_t>(s.data()) == INT32_MIN + 1);
}

BOOST_AUTO_TEST_CASE(big_endian_bounds_errors) {
    std::vector<std::byte> buf(6, std::byte{0x11});
    std::span<const std::byte> in(buf);
    BOOST_TEST(read_be<uint16_t>(in, 4) == 0x1111);
    BOOST_CHECK_THROW(read_be<uint16_t>(in, 5), big_endian_error);
    BOOST_CHECK_THROW(read_be<uint64_t>(in, 0), big_endian_error);
    BOOST_CHECK_THROW(read_be<uint8_t>(in, 6), big_endian_error);
    // An offset so large that offset + size would wrap.
    BOOST_CHECK_THROW(read_be<uint32_t>(in, SIZE_MAX - 1), big_endian_error);
    try {
        read_be<uint32_t>(in, 3);
        BOOST_FAIL("expected big_endian_error");
    } catch (const big_endian_error& e) {
        std::string what = e.what();
        BOOST_TEST(what.find("offset 3") != std::string::npos);
        BOOST_TEST(what.find("4 bytes") != std::string::npos);
        BOOST_TEST(what.find("6 bytes") != std::string::npos);
    }
    BOOST_CHECK_THROW(write_be<uint32_t>(std::span<std::byte>(buf), 3, 0), big_endian_error);
    // A failed write leaves the buffer alone.
    for (auto b : buf) {
        BOOST_TEST(static_cast<uint8_t>(b) == 0x11);
    }
}

BOOST_AUTO_TEST_CASE(big_endian_uint8_spans) {
    std::vector<uint8_t> u(8);
    write_be<uint64_t>(std::span<uint8_t>(u), 0, 0x0102030405060708ULL);
    BOOST_TEST(u[0] == 1);
    BOOST_TEST(u[7] == 8);
    BOOST_TEST(read_be<uint16_t>(std::span<const uint8_t>(u), 6) == 0x0708);
    BOOST_TEST(read_be_unchecked<uint32_t>(u.data()) == 0x01020304u);
    BOOST_CHECK_THROW(read_be<uint16_t>(std::span<const uint8_t>(u), 7), big_endian_error);
}
