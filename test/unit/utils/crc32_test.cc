// Tests of crc32 against the published check values and its incremental form.
#include "utils/crc32.hh"

#include <boost/test/unit_test.hpp>

#include <cstring>
#include <random>
#include <string>
#include <vector>

using namespace reef::utils;

BOOST_AUTO_TEST_CASE(crc32_known_vectors) {
    BOOST_TEST(crc32(std::string_view("")) == 0u);
    BOOST_TEST(crc32(std::string_view("123456789")) == 0xCBF43926u);
    BOOST_TEST(crc32(std::string_view("The quick brown fox jumps over the lazy dog")) == 0x414FA339u);
    BOOST_TEST(crc32(std::string_view("a")) == 0xE8B7BE43u);
}

BOOST_AUTO_TEST_CASE(crc32_incremental_equals_whole) {
    std::mt19937 rng(3);
    std::vector<std::byte> data(5000);
    for (auto& b : data) {
        b = static_cast<std::byte>(rng());
    }
    uint32_t whole = crc32(std::span<const std::byte>(data));
    for (size_t cut : {size_t(0), size_t(1), size_t(7), size_t(4096), data.size()}) {
        std::span<const std::byte> all(data);
        BOOST_TEST(crc32_update(crc32(all.first(cut)), all.subspan(cut)) == whole);
    }
    crc32_hasher h;
    std::span<const std::byte> all(data);
    for (size_t pos = 0; pos < data.size(); pos += 333) {
        h.update(all.subspan(pos, std::min<size_t>(333, data.size() - pos)));
    }
    BOOST_TEST(h.value() == whole);
    h.reset();
    h.update(std::span<const char>("123456789", 9));
    BOOST_TEST(h.value() == 0xCBF43926u);
}

BOOST_AUTO_TEST_CASE(crc32_accepts_every_byte_container) {
    std::string s("123456789");
    std::vector<uint8_t> u(s.begin(), s.end());
    std::vector<std::byte> b(u.size());
    std::memcpy(b.data(), u.data(), u.size());
    BOOST_TEST(crc32(s) == 0xCBF43926u);
    BOOST_TEST(crc32(std::span<const uint8_t>(u)) == 0xCBF43926u);
    BOOST_TEST(crc32(std::span<const std::byte>(b)) == 0xCBF43926u);
    crc32_hasher h;
    h.update(std::span<const uint8_t>(u));
    BOOST_TEST(h.value() == 0xCBF43926u);
}
