// Tests of Cassandra's vint codec: known encodings, round trips at every size
// boundary, and truncated buffers.
#include "utils/vint.hh"

#include <boost/test/unit_test.hpp>

#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

using namespace reef::utils;

namespace {

std::vector<std::byte> bytes_of(std::initializer_list<int> l) {
    std::vector<std::byte> v;
    for (int b : l) {
        v.push_back(static_cast<std::byte>(b));
    }
    return v;
}

// std::byte has no operator<<, so compare as ints to get readable failures.
std::vector<int> ints(const std::vector<std::byte>& v) {
    std::vector<int> out;
    for (auto b : v) {
        out.push_back(static_cast<int>(b));
    }
    return out;
}

std::vector<std::byte> encode_u(uint64_t v) {
    std::vector<std::byte> out(max_vint_size);
    out.resize(encode_unsigned_vint(v, out));
    return out;
}

std::vector<std::byte> encode_s(int64_t v) {
    std::vector<std::byte> out(max_vint_size);
    out.resize(encode_signed_vint(v, out));
    return out;
}

void check_bytes(const std::vector<std::byte>& got, std::initializer_list<int> want) {
    BOOST_TEST(ints(got) == std::vector<int>(want), boost::test_tools::per_element());
}

// 0, then 2^k - 1 and 2^k for every k, then the maximum: every size boundary.
std::vector<uint64_t> edge_values() {
    std::vector<uint64_t> v{0};
    for (int k = 1; k < 64; ++k) {
        v.push_back((uint64_t(1) << k) - 1);
        v.push_back(uint64_t(1) << k);
    }
    v.push_back(std::numeric_limits<uint64_t>::max());
    return v;
}

void check_unsigned_round_trip(uint64_t v) {
    auto enc = encode_u(v);
    BOOST_TEST_CONTEXT("value " << v) {
        BOOST_TEST(enc.size() == unsigned_vint_size(v));
        BOOST_TEST(vint_length_from_first_byte(enc[0]) == enc.size());
        auto d = try_decode_unsigned_vint(std::span<const std::byte>(enc));
        BOOST_REQUIRE(d);
        BOOST_TEST(d->value == v);
        BOOST_TEST(d->length == enc.size());
        // Trailing bytes belong to the next value and are not consumed.
        auto longer = enc;
        longer.push_back(std::byte{0x42});
        size_t off = 0;
        BOOST_TEST(read_unsigned_vint(std::span<const std::byte>(longer), off) == v);
        BOOST_TEST(off == enc.size());
    }
}

} // namespace

BOOST_AUTO_TEST_CASE(vint_known_unsigned_encodings) {
    check_bytes(encode_u(0), {0x00});
    check_bytes(encode_u(1), {0x01});
    check_bytes(encode_u(127), {0x7f});
    check_bytes(encode_u(128), {0x80, 0x80});
    check_bytes(encode_u(16383), {0xbf, 0xff});
    check_bytes(encode_u(16384), {0xc0, 0x40, 0x00});
    check_bytes(encode_u((uint64_t(1) << 56) - 1), {0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff});
    check_bytes(encode_u(uint64_t(1) << 56), {0xff, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00});
    check_bytes(encode_u(std::numeric_limits<uint64_t>::max()), {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff});
}

BOOST_AUTO_TEST_CASE(vint_known_signed_encodings) {
    check_bytes(encode_s(0), {0x00});
    check_bytes(encode_s(-1), {0x01});
    check_bytes(encode_s(1), {0x02});
    check_bytes(encode_s(-64), {0x7f});
    check_bytes(encode_s(64), {0x80, 0x80});
    check_bytes(encode_s(std::numeric_limits<int64_t>::min()), {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff});
    check_bytes(encode_s(std::numeric_limits<int64_t>::max()), {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe});
}

BOOST_AUTO_TEST_CASE(vint_sizes_at_boundaries) {
    BOOST_TEST(vint_size(0) == 1u);
    BOOST_TEST(vint_size(127) == 1u);
    BOOST_TEST(vint_size(128) == 2u);
    for (size_t n = 1; n <= 8; ++n) {
        uint64_t largest = (uint64_t(1) << (7 * n)) - 1;
        BOOST_TEST(vint_size(largest) == n);
        BOOST_TEST(vint_size(largest + 1) == n + 1);
    }
    BOOST_TEST(vint_size(std::numeric_limits<uint64_t>::max()) == 9u);
    BOOST_TEST(signed_vint_size(-64) == 1u);
    BOOST_TEST(signed_vint_size(-65) == 2u);
    BOOST_TEST(signed_vint_size(63) == 1u);
    BOOST_TEST(signed_vint_size(64) == 2u);
}

BOOST_AUTO_TEST_CASE(vint_unsigned_round_trips) {
    for (uint64_t v : edge_values()) {
        check_unsigned_round_trip(v);
    }
    std::mt19937_64 rng(20261121);
    for (int i = 0; i < 10000; ++i) {
        // Random widths, so every encoded size is well represented.
        check_unsigned_round_trip(rng() >> (rng() % 64));
    }
}

BOOST_AUTO_TEST_CASE(vint_signed_round_trips) {
    std::vector<int64_t> values;
    for (uint64_t v : edge_values()) {
        values.push_back(static_cast<int64_t>(v));
        values.push_back(-static_cast<int64_t>(v >> 1));
    }
    values.push_back(std::numeric_limits<int64_t>::min());
    std::mt19937_64 rng(7);
    for (int i = 0; i < 10000; ++i) {
        values.push_back(static_cast<int64_t>(rng()) >> (rng() % 64));
    }
    for (int64_t v : values) {
        BOOST_TEST_CONTEXT("value " << v) {
            BOOST_TEST(zigzag_decode(zigzag_encode(v)) == v);
            auto enc = encode_s(v);
            BOOST_TEST(enc.size() == signed_vint_size(v));
            auto d = try_decode_signed_vint(std::span<const std::byte>(enc));
            BOOST_REQUIRE(d);
            BOOST_TEST(d->value == v);
            BOOST_TEST(d->length == enc.size());
        }
    }
}

BOOST_AUTO_TEST_CASE(vint_truncated_buffers) {
    for (uint64_t v : edge_values()) {
        auto enc = encode_u(v);
        for (size_t cut = 0; cut < enc.size(); ++cut) {
            BOOST_TEST_CONTEXT("value " << v << " cut at " << cut) {
                // A prefix in a larger buffer: the decoder must stop at the span's end.
                std::span<const std::byte> prefix(enc.data(), cut);
                BOOST_TEST(!try_decode_unsigned_vint(prefix));
                BOOST_TEST(!try_decode_signed_vint(prefix));
                size_t off = 0;
                BOOST_CHECK_THROW(read_unsigned_vint(prefix, off), vint_error);
                BOOST_TEST(off == 0u);
            }
        }
    }
    std::vector<std::byte> buf = bytes_of({0x05, 0xc0});
    size_t off = 0;
    BOOST_TEST(read_unsigned_vint(std::span<const std::byte>(buf), off) == 5u);
    try {
        read_unsigned_vint(std::span<const std::byte>(buf), off);
        BOOST_FAIL("expected vint_error");
    } catch (const vint_error& e) {
        BOOST_TEST(std::string(e.what()).find("offset 1") != std::string::npos);
    }
    off = 3;
    BOOST_CHECK_THROW(read_unsigned_vint(std::span<const std::byte>(buf), off), vint_error);
}

BOOST_AUTO_TEST_CASE(vint_encode_into_short_span_throws) {
    std::byte out[2];
    BOOST_CHECK_THROW(encode_unsigned_vint(16384, out), vint_error);
    BOOST_TEST(encode_unsigned_vint(16383, out) == 2u);
}

BOOST_AUTO_TEST_CASE(vint_append_and_char_spans) {
    std::string s;
    append_unsigned_vint(s, 300);
    append_signed_vint(s, -300);
    size_t off = 0;
    BOOST_TEST(read_unsigned_vint(std::span<const char>(s), off) == 300u);
    BOOST_TEST(read_signed_vint(std::span<const char>(s), off) == -300);
    BOOST_TEST(off == s.size());
    std::vector<uint8_t> u(s.begin(), s.end());
    off = 0;
    BOOST_TEST(read_unsigned_vint(std::span<const uint8_t>(u), off) == 300u);
    auto d = try_decode_signed_vint(std::span<const uint8_t>(u).subspan(off));
    BOOST_REQUIRE(d);
    BOOST_TEST(d->value == -300);
}

BOOST_AUTO_TEST_CASE(vint_non_minimal_encodings_decode) {
    // Cassandra's reader accepts a value padded into a longer form.
    auto buf = bytes_of({0x80, 0x05});
    auto d = try_decode_unsigned_vint(std::span<const std::byte>(buf));
    BOOST_REQUIRE(d);
    BOOST_TEST(d->value == 5u);
    BOOST_TEST(d->length == 2u);
}
