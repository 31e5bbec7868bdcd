// Tests of json_writer: Jackson's pretty layout (as in the corpus oracles), escaping that any JSON reader takes
// back to the same string, compact mode, and misuse refused.
#include "utils/json_writer.hh"
#include "test/lib/peer_corpus.hh"

#include <boost/test/unit_test.hpp>
#include <random>

using reef::utils::json_writer;

BOOST_AUTO_TEST_CASE(test_pretty_layout) {
    json_writer w;
    w.begin_array();
    w.begin_object();
    w.key("partition").begin_object();
    w.key("key").begin_array(true).value("0").end_array();
    w.member("position", uint64_t(15));
    w.end_object();
    w.key("liveness_info").begin_object(true).member("tstamp", "1620986780251000").end_object();
    w.key("cells").begin_array().end_array();
    w.member("deleted", true);
    w.key("nothing").null();
    w.end_object();
    w.end_array();
    BOOST_CHECK(w.complete());
    BOOST_CHECK_EQUAL(w.str(), R"([
  {
    "partition" : {
      "key" : [ "0" ],
      "position" : 15
    },
    "liveness_info" : { "tstamp" : "1620986780251000" },
    "cells" : [ ],
    "deleted" : true,
    "nothing" : null
  }
])");
    json_writer c(false);
    c.begin_object().member("a", int64_t(-1)).key("b").begin_array().value("x").value("y").end_array().end_object();
    BOOST_CHECK_EQUAL(c.str(), R"({"a":-1,"b":["x","y"]})");
}

BOOST_AUTO_TEST_CASE(test_escaping_round_trips) {
    std::mt19937 rng(11);
    for (int i = 0; i < 2000; ++i) {
        std::string s(rng() % 20, '\0');
        for (auto& c : s) {
            // Mostly the interesting bytes: controls, quotes, backslashes; some ASCII.
            c = char(rng() % 3 == 0 ? 'a' + rng() % 26 : rng() % 0x5e);
        }
        json_writer w;
        w.begin_object().member(s, s).end_object();
        auto docs = reef::testing::read_json_documents(w.str());
        BOOST_REQUIRE_EQUAL(docs.size(), 1u);
        BOOST_REQUIRE_EQUAL(docs[0].members.size(), 1u);
        BOOST_CHECK(docs[0].members[0].first == s);
        BOOST_CHECK(docs[0].members[0].second.text == s);
    }
    std::string out;
    json_writer::append_quoted(out, std::string_view("\x01\"\\/\xc3\xa9", 6));
    BOOST_CHECK_EQUAL(out, "\"\\u0001\\\"\\\\/\xc3\xa9\"");
}

BOOST_AUTO_TEST_CASE(test_misuse_is_refused) {
    json_writer a;
    a.begin_object();
    BOOST_CHECK_THROW(a.value("no key"), std::logic_error);
    json_writer b;
    b.begin_array();
    BOOST_CHECK_THROW(b.key("k"), std::logic_error);
    BOOST_CHECK_THROW(b.end_object(), std::logic_error);
    BOOST_CHECK(!b.complete());
    json_writer c;
    c.begin_object().key("k");
    BOOST_CHECK_THROW(c.key("k2"), std::logic_error);
    BOOST_CHECK_THROW(c.end_object(), std::logic_error);
    json_writer d;
    d.value("x");
    BOOST_CHECK_THROW(d.value("y"), std::logic_error);
}
