// Tests of rows (cell and collection merging) and of the fragment stream
// validator: valid streams pass, each broken rule is named.
#include "mutation/fragment.hh"
#include "mutation/fragment_stream_validator.hh"
#include "schema/schema.hh"
#include "test/lib/simple_keys.hh"

#include <boost/test/unit_test.hpp>
#include <string>
#include <vector>

using namespace reef;
using testing::int_value;

namespace {

schema_ptr make_schema() {
    return schema_builder("ks", "t")
        .with_column("pk", int32_type(), column_kind::partition_key)
        .with_column("ck", int32_type(), column_kind::clustering_key)
        .with_column("s", int32_type(), column_kind::static_column)
        .with_column("v", int32_type(), column_kind::regular_column)
        .build();
}

clustering_row crow(int k) { return clustering_row{testing::ck(k), {}, {}, {}}; }

range_tombstone_change rtc(position_in_partition p, tombstone t) { return {std::move(p), t}; }

// Runs the fragments through a validator; returns the error, or "" if valid.
std::string check(const std::vector<mutation_fragment>& fs, bool reversed = false) {
    auto s = make_schema();
    fragment_stream_validator v(*s, reversed);
    try {
        for (auto& f : fs) {
            v(f);
        }
        v.on_end_of_stream();
    } catch (const invalid_fragment_stream& e) {
        return e.what();
    }
    return "";
}

bool mentions(const std::string& error, const std::string& what) { return error.find(what) != std::string::npos; }

} // namespace

BOOST_AUTO_TEST_CASE(test_row_merges_cells_and_collections) {
    row r;
    r.apply(3, atomic_cell::make_live(10, "a"));
    r.apply(1, atomic_cell::make_live(10, "x"));
    r.apply(3, atomic_cell::make_live(9, "old"));
    r.apply(3, atomic_cell::make_dead(10, 100));
    BOOST_REQUIRE_EQUAL(r.size(), 2u);
    BOOST_CHECK_EQUAL(r.cells()[0].first, 1u);
    BOOST_CHECK(std::get<atomic_cell>(*r.find(3)).is_dead_marker());
    auto cmp = [](bytes_view a, bytes_view b) { return compare_unsigned(a, b); };
    r.apply(5, collection_cells{{}, {{bytes{1}, atomic_cell::make_live(1, "one")}, {bytes{3}, atomic_cell::make_live(1, "three")}}}, cmp);
    r.apply(5, collection_cells{tombstone{0, 50}, {{bytes{2}, atomic_cell::make_live(2, "two")}, {bytes{3}, atomic_cell::make_live(2, "THREE")}}}, cmp);
    auto& coll = std::get<collection_cells>(*r.find(5));
    BOOST_CHECK(coll.tomb == (tombstone{0, 50}));
    BOOST_REQUIRE_EQUAL(coll.cells.size(), 3u);
    BOOST_CHECK(coll.cells[1].first == bytes{2});
    BOOST_CHECK(coll.cells[2].second.value() == "THREE");
    BOOST_CHECK_THROW(r.apply(5, atomic_cell::make_live(1, "x")), std::logic_error);
}

BOOST_AUTO_TEST_CASE(test_valid_streams_pass) {
    auto k1 = testing::pkey(1), k2 = testing::pkey(2);
    // Partitions in token order: int keys 1 then 2 (see token tests: 1 < 2).
    tombstone t{5, 100};
    BOOST_CHECK_EQUAL(check({}), "");
    BOOST_CHECK_EQUAL(check({partition_start{k1, {}}, static_row{}, crow(1),
                             rtc(position_in_partition::after_key(clustering_key_prefix({int_value(1)})), t),
                             crow(2),
                             rtc(position_in_partition::before_key(clustering_key_prefix({int_value(3)})), {}),
                             crow(3), partition_end{}, partition_start{k2, t}, partition_end{}}),
                      "");
    // Reversed: rows descend, change positions are reversed() ones.
    BOOST_CHECK_EQUAL(check({partition_start{k1, {}}, crow(3),
                             rtc(position_in_partition::before_key(clustering_key_prefix({int_value(3)})).reversed(), t),
                             crow(2),
                             rtc(position_in_partition::after_key(clustering_key_prefix({int_value(1)})).reversed(), {}),
                             crow(1), partition_end{}},
                            true),
                      "");
}

BOOST_AUTO_TEST_CASE(test_each_broken_rule_is_named) {
    auto k1 = testing::pkey(1), k2 = testing::pkey(2);
    tombstone t{5, 100};
    BOOST_CHECK(mentions(check({partition_start{k2, {}}, partition_end{}, partition_start{k1, {}}, partition_end{}}),
                         "partition out of order"));
    BOOST_CHECK(mentions(check({partition_start{k1, {}}, partition_end{}, partition_start{k1, {}}, partition_end{}}),
                         "partition out of order"));
    BOOST_CHECK(mentions(check({partition_start{k1, {}}, partition_start{k2, {}}}), "inside a partition"));
    BOOST_CHECK(mentions(check({crow(1)}), "outside a partition"));
    BOOST_CHECK(mentions(check({partition_start{k1, {}}, crow(2), crow(1), partition_end{}}), "backwards"));
    BOOST_CHECK(mentions(check({partition_start{k1, {}}, crow(1), crow(1), partition_end{}}), "same key"));
    BOOST_CHECK(mentions(check({partition_start{k1, {}}, crow(1), static_row{}, partition_end{}}), "backwards"));
    BOOST_CHECK(mentions(check({partition_start{k1, {}}, static_row{}, static_row{}, partition_end{}}), "second static row"));
    BOOST_CHECK(mentions(check({partition_start{k1, {}},
                                rtc(position_in_partition::before_key(clustering_key_prefix({int_value(1)})), t),
                                crow(1), partition_end{}}),
                         "range tombstone is in force"));
    BOOST_CHECK(mentions(check({partition_start{k1, {}},
                                rtc(position_in_partition::for_key(clustering_key_prefix({int_value(1)})), t)}),
                         "before or after"));
    BOOST_CHECK(mentions(check({partition_start{k1, {}}, crow(1)}), "ends inside a partition"));
    // Forward order in a reversed stream is an error.
    BOOST_CHECK(mentions(check({partition_start{k1, {}}, crow(1), crow(2), partition_end{}}, true), "backwards"));
}
