// md5: RFC 1321's test suite (appendix A.5), and the same digest whatever the split of the input into updates.
#include "utils/md5.hh"

#include <boost/test/unit_test.hpp>

#include <random>
#include <string>

using namespace reef::utils;

namespace {
std::string hex(const md5::digest& d) {
    static const char* digits = "0123456789abcdef";
    std::string s;
    for (auto b : d) {
        s += digits[b >> 4];
        s += digits[b & 15];
    }
    return s;
}
} // namespace

BOOST_AUTO_TEST_CASE(rfc_1321_suite) {
    BOOST_CHECK_EQUAL(hex(md5::of("")), "d41d8cd98f00b204e9800998ecf8427e");
    BOOST_CHECK_EQUAL(hex(md5::of("a")), "0cc175b9c0f1b6a831c399e269772661");
    BOOST_CHECK_EQUAL(hex(md5::of("abc")), "900150983cd24fb0d6963f7d28e17f72");
    BOOST_CHECK_EQUAL(hex(md5::of("message digest")), "f96b697d7cb7938d525a2f31aaf161d0");
    BOOST_CHECK_EQUAL(hex(md5::of("abcdefghijklmnopqrstuvwxyz")), "c3fcd3d76192e4007dfb496cca67e13b");
    BOOST_CHECK_EQUAL(hex(md5::of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")),
                      "d174ab98d277d9f5a5611c2c9f419d9f");
    BOOST_CHECK_EQUAL(
        hex(md5::of("12345678901234567890123456789012345678901234567890123456789012345678901234567890")),
        "57edf4a22be3c955ac49da2e2107b67a");
}

BOOST_AUTO_TEST_CASE(any_split_gives_the_same_digest) {
    std::mt19937 rng(7);
    for (int round = 0; round < 200; ++round) {
        std::string s(rng() % 300, '\0');
        for (auto& c : s) {
            c = char(rng());
        }
        auto whole = md5::of(s);
        md5 h;
        size_t pos = 0;
        while (pos < s.size()) {
            size_t n = std::min<size_t>(s.size() - pos, rng() % 70);
            h.update(std::string_view(s).substr(pos, n));
            pos += n;
        }
        BOOST_REQUIRE(h.finish() == whole);
    }
}
