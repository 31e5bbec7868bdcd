// Tests of java_double_format against the JVM: every line of test/resource/java_double_format/vectors.txt (Java 17's
// own Double.toString / Float.toString of edge cases and of values whose text is not the shortest) must come out
// the same. REEF_JAVA_FORMAT_VECTORS names another file in that format (test/interop/java_double_format_diff.py
// streams a fresh random batch from the JVM through /dev/stdin).
#include "utils/java_double_format.hh"
#include "test/lib/peer_corpus.hh"

#include <boost/test/unit_test.hpp>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

using reef::utils::java_double_to_string;
using reef::utils::java_float_to_string;

namespace {

std::string vectors_path() {
    if (const char* p = std::getenv("REEF_JAVA_FORMAT_VECTORS")) {
        return p;
    }
    auto root = reef::testing::repo_root_dir();
    BOOST_REQUIRE_MESSAGE(root, "the repository root (ARCHITECTURE.md) is not above the test");
    return (*root / "test" / "resource" / "java_double_format" / "vectors.txt").string();
}

} // namespace

BOOST_AUTO_TEST_CASE(test_jvm_vectors) {
    auto path = vectors_path();
    std::ifstream in(path);
    BOOST_REQUIRE_MESSAGE(in, "cannot open " << path);
    size_t doubles = 0, floats = 0, mismatches = 0;
    std::string line;
    size_t line_no = 0;
    while (std::getline(in, line)) {
        ++line_no;
        if (line.empty() || line[0] == '#') {
            continue;
        }
        std::istringstream fields(line);
        std::string kind, hex, expected;
        fields >> kind >> hex >> expected;
        BOOST_REQUIRE_MESSAGE(!expected.empty() && (kind == "d" || kind == "f"),
                              path << ":" << line_no << ": not \"d|f HEX TEXT\": " << line);
        uint64_t bits = std::stoull(hex, nullptr, 16);
        std::string ours;
        if (kind == "d") {
            ours = java_double_to_string(std::bit_cast<double>(bits));
            ++doubles;
        } else {
            ours = java_float_to_string(std::bit_cast<float>(uint32_t(bits)));
            ++floats;
        }
        if (ours != expected) {
            if (++mismatches <= 20) {
                BOOST_ERROR(path << ":" << line_no << ": " << kind << " " << hex << ": java " << expected
                                 << ", reef " << ours);
            }
        }
    }
    BOOST_TEST_MESSAGE(path << ": " << doubles << " doubles, " << floats << " floats, " << mismatches
                            << " differ");
    std::printf("%s: %zu doubles, %zu floats, %zu differ\n", path.c_str(), doubles, floats, mismatches);
    BOOST_CHECK_EQUAL(mismatches, 0u);
    // A truncated or empty file is a failure, not a pass.
    BOOST_CHECK_GT(doubles, 1000u);
    BOOST_CHECK_GT(floats, 1000u);
}

// Texts that show where Java 17 differs from the shortest digits (checked on the JVM: JDK 19+ prints 1.0E23,
// 1.15292150460684698E18 as 1.152921504606847E18, 7.8304013E8f as 7.830401E8; the other texts are the same).
BOOST_AUTO_TEST_CASE(test_java17_texts) {
    BOOST_CHECK_EQUAL(java_double_to_string(1e23), "9.999999999999999E22");
    BOOST_CHECK_EQUAL(java_double_to_string(std::ldexp(1.0, 60)), "1.15292150460684698E18");
    BOOST_CHECK_EQUAL(java_double_to_string(std::numeric_limits<double>::denorm_min()), "4.9E-324");
    BOOST_CHECK_EQUAL(java_double_to_string(std::numeric_limits<double>::max()), "1.7976931348623157E308");
    BOOST_CHECK_EQUAL(java_float_to_string(7.8304013E8f), "7.8304013E8");
    BOOST_CHECK_EQUAL(java_float_to_string(std::numeric_limits<float>::denorm_min()), "1.4E-45");
    BOOST_CHECK_EQUAL(java_double_to_string(1e7), "1.0E7");
    BOOST_CHECK_EQUAL(java_double_to_string(9999999.0), "9999999.0");
    BOOST_CHECK_EQUAL(java_double_to_string(0.001), "0.001");
    BOOST_CHECK_EQUAL(java_double_to_string(-0.0), "-0.0");
    BOOST_CHECK_EQUAL(java_float_to_string(1e-5f), "1.0E-5");
    BOOST_CHECK_EQUAL(java_double_to_string(std::numeric_limits<double>::quiet_NaN()), "NaN");
    BOOST_CHECK_EQUAL(java_double_to_string(-std::numeric_limits<double>::infinity()), "-Infinity");
    BOOST_CHECK_EQUAL(java_float_to_string(std::numeric_limits<float>::infinity()), "Infinity");
}
