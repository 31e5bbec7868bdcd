// Tests of position_in_partition's order against an independent model: every
// position of a small two-column table is mapped to a rank on a number line.
#include "mutation/position_in_partition.hh"
#include "schema/schema.hh"
#include "test/lib/random_mutation.hh"
#include "test/lib/simple_keys.hh"

#include <boost/test/unit_test.hpp>
#include <random>
#include <vector>

using namespace reef;
using testing::int_value;

namespace {

struct modeled {
    position_in_partition pos;
    long rank;  // the model: positions compare as their ranks
};

// Two int clustering columns with values 0..3, each ASC or DESC. A value v
// of a DESC column sits at 3 - v. Ranks: a full key (a, b) is at
// 100*(10a + b) + 50, "before" it 49, "after" it 51; a one-column prefix a:
// before at 100*10a + 0, after at 100*(10a + 9) + 99; empty prefix before
// all at -1, after all at 100000; static row -2, start -3, end 100001.
std::vector<modeled> all_positions(bool desc0, bool desc1) {
    auto at0 = [&](int a) { return desc0 ? 3 - a : a; };
    auto at1 = [&](int b) { return desc1 ? 3 - b : b; };
    std::vector<modeled> out;
    out.push_back({position_in_partition::for_partition_start(), -3});
    out.push_back({position_in_partition::for_static_row(), -2});
    out.push_back({position_in_partition::before_all_clustered_rows(), -1});
    out.push_back({position_in_partition::after_all_clustered_rows(), 100000});
    out.push_back({position_in_partition::for_partition_end(), 100001});
    for (int a = 0; a < 4; ++a) {
        clustering_key_prefix p1({int_value(a)});
        out.push_back({position_in_partition::before_key(p1), 100L * (10 * at0(a))});
        out.push_back({position_in_partition::after_key(p1), 100L * (10 * at0(a) + 9) + 99});
        for (int b = 0; b < 4; ++b) {
            clustering_key_prefix p2({int_value(a), int_value(b)});
            long base = 100L * (10 * at0(a) + at1(b));
            out.push_back({position_in_partition::for_key(p2), base + 50});
            out.push_back({position_in_partition::before_key(p2), base + 49});
            out.push_back({position_in_partition::after_key(p2), base + 51});
        }
    }
    return out;
}

schema_ptr make_schema(bool desc0, bool desc1) {
    return schema_builder("ks", "t")
        .with_column("pk", int32_type(), column_kind::partition_key)
        .with_column("c0", int32_type(), column_kind::clustering_key, desc0 ? clustering_order::desc : clustering_order::asc)
        .with_column("c1", int32_type(), column_kind::clustering_key, desc1 ? clustering_order::desc : clustering_order::asc)
        .build();
}

int sign(long v) { return v < 0 ? -1 : v > 0 ? 1 : 0; }

} // namespace

BOOST_AUTO_TEST_CASE(test_order_matches_model) {
    for (bool desc0 : {false, true}) {
        for (bool desc1 : {false, true}) {
            auto s = make_schema(desc0, desc1);
            position_in_partition_comparator cmp(*s);
            auto ps = all_positions(desc0, desc1);
            for (auto& x : ps) {
                for (auto& y : ps) {
                    BOOST_REQUIRE_MESSAGE(cmp(x.pos, y.pos) == sign(x.rank - y.rank),
                                          to_string(x.pos) << " vs " << to_string(y.pos) << " desc0=" << desc0
                                                           << " desc1=" << desc1);
                }
            }
        }
    }
}

// A reversed stream holds reversed() positions, and its comparator must
// order them exactly opposite to the forward order of the originals.
BOOST_AUTO_TEST_CASE(test_reversed_order_is_the_mirror) {
    for (bool desc0 : {false, true}) {
        auto s = make_schema(desc0, !desc0);
        position_in_partition_comparator fwd(*s);
        position_in_partition_comparator rev(*s, true);
        auto ps = all_positions(desc0, !desc0);
        for (auto& x : ps) {
            for (auto& y : ps) {
                if (x.pos.region() != partition_region::clustered || y.pos.region() != partition_region::clustered) {
                    continue;  // start, static row and end keep their places
                }
                BOOST_REQUIRE_MESSAGE(rev(x.pos.reversed(), y.pos.reversed()) == -fwd(x.pos, y.pos),
                                      to_string(x.pos) << " vs " << to_string(y.pos));
            }
        }
    }
}

BOOST_AUTO_TEST_CASE(test_bound_kinds) {
    BOOST_CHECK(weight_of(bound_kind::incl_start) == bound_weight::before_all_prefixed);
    BOOST_CHECK(weight_of(bound_kind::excl_start) == bound_weight::after_all_prefixed);
    BOOST_CHECK(weight_of(bound_kind::incl_end) == bound_weight::after_all_prefixed);
    BOOST_CHECK(weight_of(bound_kind::excl_end) == bound_weight::before_all_prefixed);
    for (auto k : {bound_kind::incl_start, bound_kind::excl_start, bound_kind::incl_end, bound_kind::excl_end}) {
        BOOST_CHECK(reverse(reverse(k)) == k);
        // Reversing a bound keeps its weight's meaning mirrored.
        BOOST_CHECK_EQUAL(int(weight_of(reverse(k))), -int(weight_of(k)));
    }
}

// clustering_comparator's inline paths (fixed-size integers, byte-order types) against each type's own compare,
// ASC and DESC, on random values with many ties, sign-bit edges, empty values and, for byte-order types, prefixes;
// and compare_key against the comparator on built positions.
BOOST_AUTO_TEST_CASE(test_comparator_fast_paths_match_type_compare) {
    uint64_t seed = testing::pick_seed();
    BOOST_TEST_MESSAGE("seed " << seed << " (set REEF_SEED to repeat)");
    std::mt19937_64 rng(seed);
    struct typed {
        data_type type;
        size_t size;  // 0: variable
    };
    std::vector<typed> types{{bigint_type(), 8}, {int32_type(), 4},     {smallint_type(), 2}, {tinyint_type(), 1},
                             {counter_type(), 8}, {timestamp_type(), 8}, {date_type(), 4},     {time_type(), 8},
                             {text_type(), 0},   {ascii_type(), 0},     {blob_type(), 0},     {inet_type(), 0},
                             {duration_type(), 0}, {double_type(), 8},  {varint_type(), 0}};
    const uint8_t edges[] = {0x00, 0x01, 0x7f, 0x80, 0x81, 0xfe, 0xff};
    auto value = [&](const typed& t) {
        if (rng() % 16 == 0) {
            return bytes{};
        }
        size_t n = t.size ? t.size : rng() % 5;
        bytes v(n);
        for (auto& b : v) {
            b = rng() % 2 ? edges[rng() % std::size(edges)] : uint8_t(rng());
        }
        return v;
    };
    for (auto& t : types) {
        for (bool desc : {false, true}) {
            auto type = desc ? reversed_type(t.type) : t.type;
            clustering_comparator cmp(std::vector<data_type>{type, int32_type()});
            clustering_comparator second(std::vector<data_type>{int32_type()});
            position_in_partition_comparator pcmp(cmp, false);
            BOOST_TEST_CONTEXT("type " << type->cql_name() << (desc ? " DESC" : "")) {
                std::vector<bytes> pool;
                for (int i = 0; i < 24; ++i) {
                    pool.push_back(value(t));
                }
                for (int i = 0; i < 3000; ++i) {
                    auto& a = pool[rng() % pool.size()];
                    auto& b = pool[rng() % pool.size()];
                    int want = type->compare(a, b);
                    want = want < 0 ? -1 : want > 0 ? 1 : 0;
                    clustering_key_prefix ka({a, int_value(int(rng() % 2))}), kb({b, int_value(int(rng() % 2))});
                    int want2 = want ? want : second(clustering_key_prefix({ka.to_vector()[1]}),
                                                  clustering_key_prefix({kb.to_vector()[1]}));
                    BOOST_REQUIRE_EQUAL(cmp(ka, kb), want2);
                    clustering_key_prefix pa({a});
                    BOOST_REQUIRE_EQUAL(cmp.compare_common(pa, kb), want);
                    auto w = rng() % 2 ? bound_weight::equal : bound_weight::after_all_prefixed;
                    auto pos_b = rng() % 2 ? position_in_partition::before_key(pa) : position_in_partition::for_key(kb);
                    auto built = w == bound_weight::equal ? position_in_partition::for_key(ka)
                                                          : position_in_partition::after_key(ka);
                    BOOST_REQUIRE_EQUAL(pcmp.compare_key(ka, w, pos_b), pcmp(built, pos_b));
                }
            }
        }
    }
}
