// Tests of json_reader: values, source texts and offsets; random strings written by json_writer read back the
// same; every malformed text refused with the offset of the problem.
#include "utils/json_reader.hh"
#include "utils/json_writer.hh"

#include <boost/test/unit_test.hpp>
#include <random>

using namespace reef::utils;

BOOST_AUTO_TEST_CASE(test_values_texts_and_offsets) {
    auto v = parse_json(R"( { "a" : [1, -2.50, 1E+300, "x\"\\\/\n\u00e9\ud83d\ude00", true, null], "b": {} } )");
    BOOST_REQUIRE(v.is_object());
    BOOST_CHECK_EQUAL(v.offset, 1u);
    auto* a = v.get("a");
    BOOST_REQUIRE(a && a->is_array());
    BOOST_REQUIRE_EQUAL(a->items.size(), 6u);
    BOOST_CHECK_EQUAL(a->items[0].text, "1");
    BOOST_CHECK_EQUAL(a->items[1].text, "-2.50");
    BOOST_CHECK_EQUAL(a->items[2].text, "1E+300");
    BOOST_CHECK(a->items[3].is_string());
    BOOST_CHECK_EQUAL(a->items[3].text, "x\"\\/\n\xc3\xa9\xf0\x9f\x98\x80");
    BOOST_CHECK_EQUAL(a->items[4].text, "true");
    BOOST_CHECK(a->items[5].is_null());
    BOOST_CHECK_EQUAL(a->offset, 9u);
    BOOST_CHECK_EQUAL(a->items[1].offset, 13u);
    BOOST_CHECK(v.get("b")->is_object());
    BOOST_CHECK(!v.get("c"));
    auto docs = parse_json_documents("[1]\n[2, 3]\n{}\n");
    BOOST_REQUIRE_EQUAL(docs.size(), 3u);
    BOOST_CHECK_EQUAL(docs[1].items.size(), 2u);
    BOOST_CHECK(parse_json_documents("  \n").empty());
}

BOOST_AUTO_TEST_CASE(test_malformed_texts_name_the_offset) {
    struct c {
        std::string text;
        size_t offset;
    };
    for (auto& [text, offset] : std::vector<c>{{"", 0}, {"[1, 2", 5}, {"[1 2]", 3}, {"{\"a\" 1}", 5}, {"{1: 2}", 1},
                                               {"\"abc", 4}, {"\"a\\x\"", 3}, {"01", 1}, {"-", 1}, {"1.", 2},
                                               {"1e", 2}, {"[nul]", 1}, {"\"\\u12g4\"", 5}, {"[1] x", 4},
                                               {"\"a\x01\"", 2}, {std::string(300, '['), 257}}) {
        BOOST_TEST_CONTEXT(text) {
            try {
                parse_json(text);
                BOOST_ERROR("parsed");
            } catch (const json_parse_error& e) {
                BOOST_CHECK_EQUAL(e.offset(), offset);
                BOOST_CHECK(std::string(e.what()).find("offset " + std::to_string(offset)) != std::string::npos);
            }
        }
    }
}

BOOST_AUTO_TEST_CASE(test_random_strings_written_read_back) {
    auto seed = std::random_device{}();
    BOOST_TEST_MESSAGE("seed " << seed);
    std::mt19937 rng(seed);
    for (int i = 0; i < 2000; ++i) {
        std::string s;
        int n = std::uniform_int_distribution<int>(0, 20)(rng);
        for (int j = 0; j < n; ++j) {
            // ASCII including control characters, and multi-byte UTF-8.
            int kind = std::uniform_int_distribution<int>(0, 3)(rng);
            if (kind == 0) {
                s += "\xe2\x82\xac";
            } else {
                s += char(std::uniform_int_distribution<int>(1, 127)(rng));
            }
        }
        json_writer w(false);
        w.begin_array().value(s).value(int64_t(i)).end_array();
        auto v = parse_json(w.str());
        BOOST_REQUIRE_EQUAL(v.items.size(), 2u);
        BOOST_CHECK_MESSAGE(v.items[0].text == s, "seed " << seed << " case " << i);
        BOOST_CHECK_EQUAL(v.items[1].text, std::to_string(i));
    }
}
