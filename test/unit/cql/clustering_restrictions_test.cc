// clustering_ranges_from_cql: random WHERE conjunctions (random_where: equality and IN prefixes, single and tuple bounds,
// inclusive or not, shuffled) over a table with ASC and DESC clustering columns; every key of a small domain is in
// the ranges exactly when the relations' predicate holds, and the ranges are sorted, non-empty and disjoint.
// Invalid relations are errors naming them.
#include "mutation/position_in_partition.hh"
#include "cql/cql_parser.hh"
#include "test/lib/random_mutation.hh"
#include "test/lib/random_where.hh"
#include "cql/clustering_restrictions.hh"

#include <boost/test/unit_test.hpp>

#include <random>

using namespace reef;
using namespace reef::cql;

namespace {

schema_ptr three_columns() {
    return parse_create_table("CREATE TABLE ks.t (pk int, ck1 int, ck2 text, ck3 int, s int static, v int, "
                              "PRIMARY KEY (pk, ck1, ck2, ck3)) WITH CLUSTERING ORDER BY (ck1 ASC, ck2 DESC, ck3 ASC)");
}

std::vector<clustering_key_prefix> all_keys(const schema& s) {
    std::vector<clustering_key_prefix> keys;
    auto i = int32_type(), t = text_type();
    for (int a = 0; a < 5; ++a) {
        for (std::string b : {"a", "b", "c", "d"}) {
            for (int c = 0; c < 4; ++c) {
                keys.push_back(clustering_key_prefix({i->from_string(std::to_string(a)), t->from_string(b),
                                                      i->from_string(std::to_string(c))}));
            }
        }
    }
    (void)s;
    return keys;
}

std::string message_of(const schema& s, std::string_view where) {
    try {
        clustering_ranges_from_cql(s, where);
    } catch (const bad_restriction& e) {
        return e.what();
    }
    return "(no error)";
}

} // namespace

BOOST_AUTO_TEST_CASE(ranges_match_the_relations_predicate) {
    auto s = three_columns();
    uint64_t seed = testing::pick_seed();
    BOOST_TEST_MESSAGE("seed " << seed << " (set REEF_SEED to repeat)");
    std::mt19937_64 rng(seed);
    auto keys = all_keys(*s);
    position_in_partition_comparator cmp(*s);
    auto i = int32_type(), t = text_type();
    // Values a little outside the keys' domain too.
    auto value = [&](size_t col) -> bytes {
        if (col == 1) {
            const char* texts[] = {"", "a", "b", "bb", "c", "d", "e"};
            return t->from_string(texts[rng() % 7]);
        }
        return i->from_string(std::to_string(int(rng() % 7) - 1));
    };
    size_t nonempty = 0;
#ifdef REEF_DEBUG
    constexpr int cases = 300;
#else
    constexpr int cases = 4000;
#endif
    for (int n = 0; n < cases; ++n) {
        auto w = testing::random_where(*s, rng, value);
        BOOST_TEST_CONTEXT("seed " << seed << " case " << n << ": " << w.text) {
            auto ranges = clustering_ranges_from_cql(*s, w.text);
            for (size_t r = 0; r < ranges.size(); ++r) {
                BOOST_TEST(cmp(ranges[r].start, ranges[r].end) < 0);
                if (r) {
                    BOOST_TEST(cmp(ranges[r - 1].end, ranges[r].start) <= 0);
                }
            }
            for (auto& k : keys) {
                auto p = position_in_partition::for_key(k);
                bool in = std::any_of(ranges.begin(), ranges.end(), [&](const position_range& r) {
                    return cmp(r.start, p) < 0 && cmp(p, r.end) < 0;
                });
                BOOST_TEST(in == w.matches(k), to_string(p));
                nonempty += in;
            }
        }
    }
    BOOST_TEST(nonempty > 0u);
}

BOOST_AUTO_TEST_CASE(examples) {
    auto s = three_columns();
    position_in_partition_comparator cmp(*s);
    auto i = int32_type(), t = text_type();
    auto ck = [&](std::vector<bytes> v) { return clustering_key_prefix(std::move(v)); };
    BOOST_TEST((clustering_ranges_from_cql(*s, "") == clustering_ranges{position_range::full()}));
    // ck2 is DESC: values >= 'b' and < 'd' are [before ('d'-exclusive end) ... after 'b'] in clustering order.
    auto r = clustering_ranges_from_cql(*s, "ck1 = 3 AND ck2 >= 'b' AND ck2 < 'd'");
    BOOST_REQUIRE(r.size() == 1u);
    BOOST_TEST((r[0].start == position_in_partition::after_key(ck({i->from_string("3"), t->from_string("d")}))), to_string(r[0].start));
    BOOST_TEST((r[0].end == position_in_partition::after_key(ck({i->from_string("3"), t->from_string("b")}))), to_string(r[0].end));
    // A tuple bound over an ASC then a DESC column: two ranges.
    r = clustering_ranges_from_cql(*s, "(ck1, ck2) > (1, 'x')");
    BOOST_REQUIRE(r.size() == 2u);
    BOOST_TEST((r[0].start == position_in_partition::before_key(ck({i->from_string("1")}))), to_string(r[0].start));
    BOOST_TEST((r[0].end == position_in_partition::before_key(ck({i->from_string("1"), t->from_string("x")}))), to_string(r[0].end));
    BOOST_TEST((r[1].start == position_in_partition::after_key(ck({i->from_string("1")}))), to_string(r[1].start));
    BOOST_TEST((r[1].end == position_in_partition::after_all_clustered_rows()), to_string(r[1].end));
    // Nothing can match.
    BOOST_TEST(clustering_ranges_from_cql(*s, "ck1 > 3 AND ck1 < 2").empty());
    BOOST_TEST(clustering_ranges_from_cql(*s, "ck1 IN ()").empty());
    // IN: one range per value, in clustering order (ck2 is DESC), repeats merged.
    r = clustering_ranges_from_cql(*s, "ck1 = 2 AND ck2 IN ('a', 'c', 'a')");
    BOOST_REQUIRE(r.size() == 2u);
    BOOST_TEST((r[0] == position_range::for_prefix(ck({i->from_string("2"), t->from_string("c")}))));
    BOOST_TEST((r[1] == position_range::for_prefix(ck({i->from_string("2"), t->from_string("a")}))));
}

BOOST_AUTO_TEST_CASE(bad_relations_are_errors_naming_them) {
    auto s = three_columns();
    auto has = [&](std::string_view where, std::string_view part) {
        auto m = message_of(*s, where);
        BOOST_TEST(m.find(part) != std::string::npos, "`" << where << "` gave: " << m);
    };
    has("v = 3", "relation `v = 3`: v is a regular column, not a clustering column");
    has("s = 3", "s is a static column");
    has("pk = 3", "pk is a partition key column");
    has("nope = 3", "no column nope");
    has("ck2 = 'a'", "relation `ck2 = 'a'`: ck2 is restricted but ck1 before it is not");
    has("ck1 = 1 AND ck3 = 2", "relation `ck3 = 2`: ck3 is restricted but ck2 before it is not");
    has("ck1 > 1 AND ck2 = 'a'", "relation `ck2 = 'a'`: ck2 cannot be restricted after the range on ck1");
    has("ck1 > 1 AND ck2 > 'a'", "relation `ck2 > 'a'`: ck2 cannot be restricted after the range on ck1 (`ck1 > 1`)");
    has("ck2 < 'a' AND ck1 > 1", "relation `ck2 < 'a'`: ck2 cannot be restricted after the range on ck1 (`ck1 > 1`)");
    has("ck1 = 1 AND ck1 = 2", "relation `ck1 = 2`: ck1 is already restricted by `ck1 = 1`");
    has("ck1 = 1 AND ck1 > 0", "relation `ck1 > 0`: ck1 is restricted both by `ck1 = 1` and by a range");
    has("ck1 > 1 AND ck1 >= 2", "relation `ck1 >= 2`: there is already a lower bound, `ck1 > 1`");
    has("ck1 CONTAINS 1", "operator CONTAINS is not supported");
    has("(ck1, ck2) IN ((1, 'a'))", "relation `(ck1, ck2) IN ((1, 'a'))`: IN on a tuple of columns is not supported");
    has("ck1 IN (1, 2) AND ck1 = 2", "relation `ck1 = 2`: ck1 is already restricted by `ck1 IN (1, 2)`");
    has("ck1 IN (1, 'x')", "'x' is not a valid int value for ck1");
    has("ck1 != 1", "relation `ck1 != 1`: operator != is not supported");
    has("ck1 = 'x'", "relation `ck1 = 'x'`: 'x' is not a valid int value for ck1");
    has("(ck1, ck3) > (1, 2)", "must be consecutive clustering columns");
    has("(ck1, ck2) > (1)", "2 columns but 1 values");
    has("ck1 = 1 ck2 = 'a'", "AND between relations");
    has("ck1 = 1 AND", "bad WHERE text");
}

// A tuple IN (values flat, tuple after tuple) selects exactly the keys equal on those columns to one of its tuples.
BOOST_AUTO_TEST_CASE(tuple_in_selects_its_tuples) {
    auto s = three_columns();
    auto i = int32_type(), t = text_type();
    std::mt19937_64 rng(7);
    position_in_partition_comparator cmp(*s);
    for (int round = 0; round < 200; ++round) {
        clustering_relation in{{0, 1}, restriction_op::in, {}, "(ck1, ck2) IN (...)"};
        std::vector<std::pair<int, std::string>> tuples;
        for (size_t n = rng() % 4; n > 0; --n) {
            tuples.emplace_back(int(rng() % 5), std::string(1, char('a' + rng() % 4)));
            in.values.push_back(i->from_string(std::to_string(tuples.back().first)));
            in.values.push_back(t->from_string(tuples.back().second));
        }
        auto ranges = clustering_ranges_from_relations(*s, {in});
        for (auto& k : all_keys(*s)) {
            auto a = std::stoi(i->to_string(k.components()[0]));
            auto b = t->to_string(k.components()[1]);
            bool expected = std::find(tuples.begin(), tuples.end(), std::make_pair(a, b)) != tuples.end();
            auto pos = position_in_partition::for_key(k);
            bool got = std::any_of(ranges.begin(), ranges.end(), [&](const position_range& r) {
                return cmp(r.start, pos) <= 0 && cmp(pos, r.end) < 0;
            });
            BOOST_REQUIRE_EQUAL(got, expected);
        }
    }
}
