// Tests of mutation_partition and mutation: the merge rules, fragment streams round trips (forward and
// reversed, always valid), and merging random mutations directly or through their streams, in any order.
#include "mutation/fragment_stream_validator.hh"
#include "mutation/mutation.hh"
#include "schema/schema.hh"
#include "test/lib/random_mutation.hh"
#include "test/lib/simple_keys.hh"

#include <boost/test/unit_test.hpp>
#include <algorithm>
#include <cstdlib>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

using namespace reef;

namespace {

using testing::int_value;

schema_ptr make_schema() { return testing::random_test_schema(); }

dht::decorated_key key(int k) { return testing::pkey(k); }

using generator = testing::mutation_generator;
using testing::for_random_cases;

void validate(const schema& s, const std::vector<mutation_fragment>& fs, bool reversed) {
    fragment_stream_validator v(s, reversed);
    for (auto& f : fs) {
        v(f);
    }
    v.on_end_of_stream();
}

} // namespace

BOOST_AUTO_TEST_CASE(test_marker_rules) {
    // LivenessInfo.supersedes: timestamp, then expiring over plain, then expiry.
    row_marker plain{5}, older{4}, expiring{5, 10, 100}, later_expiry{5, 10, 200};
    BOOST_CHECK(marker_supersedes(plain, older));
    BOOST_CHECK(!marker_supersedes(older, plain));
    BOOST_CHECK(marker_supersedes(expiring, plain));
    BOOST_CHECK(!marker_supersedes(plain, expiring));
    BOOST_CHECK(marker_supersedes(later_expiry, expiring));
    BOOST_CHECK(marker_supersedes(plain, row_marker{}));
    BOOST_CHECK(!marker_supersedes(plain, plain));
    // Same timestamp and expiry: the greater TTL, so the merge has one outcome.
    row_marker ttl_short{5, 5, 100};
    BOOST_CHECK(marker_supersedes(expiring, ttl_short));
    BOOST_CHECK(!marker_supersedes(ttl_short, expiring));
}

BOOST_AUTO_TEST_CASE(test_partition_merge_rules) {
    auto s = make_schema();
    auto ck = [](int k) { return clustering_key_prefix({int_value(k)}); };
    mutation a(s, key(1)), b(s, key(1));
    a.partition().apply(tombstone{3, 10});
    b.partition().apply(tombstone{3, 11});
    a.partition().apply_row(*s, ck(1), deletable_row{row_marker{5}, tombstone{}, {}});
    deletable_row rb{row_marker{4}, tombstone{6, 1}, {}};
    rb.cells.apply(0, atomic_cell::make_live(7, "x"));
    b.partition().apply_row(*s, ck(1), rb);
    b.partition().apply_range_tombstone(position_in_partition::before_key(ck(0)), position_in_partition::after_key(ck(2)),
                                        tombstone{8, 1});
    a.apply(b);
    auto& p = a.partition();
    BOOST_CHECK(p.partition_tombstone() == (tombstone{3, 11}));
    auto& r = p.rows().at(ck(1));
    BOOST_CHECK(r.marker == row_marker{5});
    BOOST_CHECK(r.tomb == (tombstone{6, 1}));
    BOOST_CHECK(std::get<atomic_cell>(*r.cells.find(0)).value() == "x");
    BOOST_CHECK(p.tombstone_for_row(ck(1)) == (tombstone{8, 1}));
    BOOST_CHECK(p.tombstone_for_row(ck(5)) == (tombstone{3, 11}));
    BOOST_CHECK_THROW(a.apply(mutation(s, key(2))), std::invalid_argument);

    // A stream with a range tombstone open at partition_end is refused.
    mutation_partition_builder builder(s);
    builder.consume(partition_start{key(1), {}});
    builder.consume(range_tombstone_change{position_in_partition::before_key(ck(1)), tombstone{1, 1}});
    BOOST_CHECK_THROW(builder.consume(partition_end{}), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(test_fragments_round_trip) {
    for_random_cases(4000, [](const schema_ptr& s, generator& g) {
        auto m = g.make(key(g.rnd(0, 3)));
        for (bool reversed : {false, true}) {
            auto fs = to_fragments(m, reversed);
            validate(*s, fs, reversed);
            auto back = mutation_from_fragments(s, fs, reversed);
            BOOST_REQUIRE_MESSAGE(back == m, "reversed " << reversed << ": " << to_string(back) << "\n  vs\n" << to_string(m));
        }
    });
}

// The builder fed fragments by move gives what it gives fed copies: a row new to the partition is moved in whole, a
// row it holds already (here m2's rows and static row inside m1's partition) merged cell by cell.
BOOST_AUTO_TEST_CASE(test_builder_moving_fragments_equals_copying) {
    for_random_cases(1500, [](const schema_ptr& s, generator& g) {
        auto k = key(g.rnd(0, 3));
        auto m1 = g.make(k), m2 = g.make(k);
        auto stream = to_fragments(m1);
        auto end = stream.back();
        stream.pop_back();
        for (auto& f : to_fragments(m2)) {
            if (std::holds_alternative<clustering_row>(f) || std::holds_alternative<static_row>(f)) {
                stream.push_back(f);
            }
        }
        stream.push_back(end);
        mutation_partition_builder copying(s), moving(s);
        std::optional<mutation> by_copy, by_move;
        for (auto& f : stream) {
            if (auto m = copying.consume(std::as_const(f))) {
                by_copy = std::move(m);
            }
            if (auto m = moving.consume(std::move(f))) {
                by_move = std::move(m);
            }
        }
        BOOST_REQUIRE(by_copy && by_move);
        BOOST_REQUIRE_MESSAGE(*by_move == *by_copy, to_string(*by_move) << "\n  vs\n" << to_string(*by_copy));
    });
}

BOOST_AUTO_TEST_CASE(test_merge_equals_merging_streams) {
    for_random_cases(1500, [](const schema_ptr& s, generator& g) {
        auto k = key(g.rnd(0, 3));
        auto m1 = g.make(k), m2 = g.make(k), m3 = g.make(k);
        auto ab = m1;
        ab.apply(m2);
        auto ba = m2;
        ba.apply(m1);
        BOOST_REQUIRE_MESSAGE(ab == ba, to_string(ab) << "\n  vs\n" << to_string(ba));
        // Both streams fed into one builder, in either order and either
        // direction, give the merge.
        for (bool reversed : {false, true}) {
            auto f1 = to_fragments(m1, reversed), f2 = to_fragments(m2, reversed);
            for (bool swap : {false, true}) {
                auto both = swap ? f2 : f1;
                auto& second = swap ? f1 : f2;
                both.insert(both.end(), second.begin(), second.end());
                auto parts = mutations_from_fragments(s, both, reversed);
                BOOST_REQUIRE_EQUAL(parts.size(), 2u);
                parts[0].apply(parts[1]);
                BOOST_REQUIRE_MESSAGE(parts[0] == ab, "reversed " << reversed << " swapped " << swap);
                validate(*s, to_fragments(parts[0], reversed), reversed);
            }
        }
        // Associative too: (m1 + m2) + m3 == m1 + (m2 + m3).
        auto left = ab;
        left.apply(m3);
        auto right = m2;
        right.apply(m3);
        auto right_all = m1;
        right_all.apply(right);
        BOOST_REQUIRE(left == right_all);
    });
}

BOOST_AUTO_TEST_CASE(test_to_string) {
    auto s = make_schema();
    mutation m(s, key(1));
    m.partition().apply(tombstone{3, 5});
    deletable_row r{row_marker{4}, tombstone{}, {}};
    r.cells.apply(0, atomic_cell::make_live(4, std::string("\x01\x02", 2)));
    m.partition().apply_row(*s, testing::ck(7), r);
    auto text = to_string(m);
    BOOST_CHECK_MESSAGE(text.find("tomb {3, 5}") != std::string::npos, text);
    BOOST_CHECK_MESSAGE(text.find("v: 0102@4") != std::string::npos, text);
    BOOST_CHECK_MESSAGE(text.find("00000007") != std::string::npos, text);
}

BOOST_AUTO_TEST_CASE(test_cell_tie_on_ttl_only) {
    // Equal but for the TTL: the greater TTL wins whichever side it is on,
    // so merges stay order independent (mutation/README.md, cells rule 6).
    auto a = atomic_cell::make_expiring(5, "x", 10, 100), b = atomic_cell::make_expiring(5, "x", 20, 100);
    BOOST_CHECK(reconcile(a, b) == b);
    BOOST_CHECK(reconcile(b, a) == b);
}

namespace {

// Nothing left in p is deleted by a tombstone that covers it.
void check_nothing_shadowed(const mutation_partition& p) {
    for (auto& [id, c] : p.static_row().cells()) {
        if (auto* cell = std::get_if<atomic_cell>(&c)) {
            BOOST_REQUIRE(!p.partition_tombstone().deletes(cell->timestamp()));
        }
    }
    for (auto& r : p.range_tombstones()) {
        BOOST_REQUIRE(r.tomb.supersedes(p.partition_tombstone()));
    }
    for (auto& [key, r] : p.rows()) {
        tombstone active = p.tombstone_for_row(key);
        BOOST_REQUIRE(r.marker.empty() || !active.deletes(r.marker.timestamp));
        BOOST_REQUIRE(!r.marker.empty() || r.tomb || !r.cells.empty());
        for (auto& [id, c] : r.cells.cells()) {
            if (auto* cell = std::get_if<atomic_cell>(&c)) {
                BOOST_REQUIRE(!active.deletes(cell->timestamp()));
            } else {
                auto& coll = std::get<collection_cells>(c);
                BOOST_REQUIRE(!coll.tomb || coll.tomb.supersedes(active));
                for (auto& e : coll.cells) {
                    BOOST_REQUIRE(!active.deletes(e.second.timestamp()) && !coll.tomb.deletes(e.second.timestamp()));
                }
            }
        }
    }
}

} // namespace

BOOST_AUTO_TEST_CASE(test_drop_shadowed) {
    auto s = make_schema();
    auto ck = [](int k) { return clustering_key_prefix({int_value(k)}); };
    mutation m(s, key(1));
    auto& p = m.partition();
    p.apply(tombstone{3, 1});
    deletable_row r{row_marker{3}, tombstone{2, 1}, {}};
    r.cells.apply(0, atomic_cell::make_live(4, "kept"));
    p.apply_row(*s, ck(1), r);
    p.apply_row(*s, ck(2), deletable_row{row_marker{5}, tombstone{}, {}});
    p.apply_range_tombstone(position_in_partition::before_key(ck(2)), position_in_partition::after_key(ck(3)), tombstone{5, 1});
    p.apply_range_tombstone(position_in_partition::before_key(ck(5)), position_in_partition::after_key(ck(6)), tombstone{1, 1});
    p.drop_shadowed();
    // Row 1: the marker (ts 3) and the row tombstone (older than the
    // partition's) go, the newer cell stays; row 2 is deleted by the range
    // tombstone; the range under the partition tombstone goes.
    BOOST_REQUIRE_EQUAL(p.rows().size(), 1u);
    auto& r1 = p.rows().at(ck(1));
    BOOST_CHECK(r1.marker.empty());
    BOOST_CHECK(!r1.tomb);
    BOOST_CHECK_EQUAL(r1.cells.size(), 1u);
    BOOST_REQUIRE_EQUAL(p.range_tombstones().size(), 1u);
    BOOST_CHECK(p.range_tombstones().ranges()[0].tomb == (tombstone{5, 1}));
}

BOOST_AUTO_TEST_CASE(test_drop_shadowed_commutes_with_merge) {
    for_random_cases(1500, [](const schema_ptr& s, generator& g) {
        auto k = key(g.rnd(0, 3));
        auto m1 = g.make(k), m2 = g.make(k);
        auto merged = m1;
        merged.apply(m2);
        merged.partition().drop_shadowed();
        check_nothing_shadowed(merged.partition());
        auto again = merged;
        again.partition().drop_shadowed();
        BOOST_REQUIRE_MESSAGE(again == merged, "drop_shadowed is idempotent");
        auto d1 = m1, d2 = m2;
        d1.partition().drop_shadowed();
        d2.partition().drop_shadowed();
        d1.apply(d2);
        d1.partition().drop_shadowed();
        BOOST_REQUIRE_MESSAGE(d1 == merged, "dropping before merging changes nothing");
        validate(*s, to_fragments(merged, true), true);
    });
}

BOOST_AUTO_TEST_CASE(test_purge) {
    auto s = make_schema();
    auto ck = [](int k) { return clustering_key_prefix({int_value(k)}); };
    auto make = [&] {
        mutation m(s, key(1));
        auto& p = m.partition();
        p.apply(tombstone{3, 5});
        deletable_row r{row_marker{4, 10, 20}, tombstone{}, {}};
        r.cells.apply(0, atomic_cell::make_expiring(4, "x", 10, 20));
        p.apply_row(*s, ck(1), r);
        // Deleted by the partition tombstone.
        p.apply_row(*s, ck(2), deletable_row{row_marker{2}, tombstone{}, {}});
        p.apply_range_tombstone(position_in_partition::before_key(ck(5)), position_in_partition::after_key(ck(6)),
                                tombstone{9, 30});
        return m;
    };
    // Deletion times are compared strictly (localDeletionTime < gcBefore).
    auto m = make();
    m.partition().purge(25, 5);
    BOOST_CHECK(m.partition().partition_tombstone() == (tombstone{3, 5}));
    BOOST_CHECK_EQUAL(m.partition().rows().size(), 1u);
    // Expired but not purgeable: the cell becomes a tombstone from its write
    // time (expiry - ttl); the expired marker stays.
    auto& r1 = m.partition().rows().at(ck(1));
    BOOST_CHECK(std::get<atomic_cell>(*r1.cells.find(0)) == atomic_cell::make_dead(4, 10));
    BOOST_CHECK(r1.marker == (row_marker{4, 10, 20}));
    m.partition().purge(25, 6);
    BOOST_CHECK(!m.partition().partition_tombstone());
    // The cell tombstone (deletion time 10) is not purgeable before 11.
    BOOST_CHECK_EQUAL(m.partition().rows().size(), 1u);
    m.partition().purge(25, 21);
    BOOST_CHECK(m.partition().rows().empty());
    BOOST_CHECK_EQUAL(m.partition().range_tombstones().size(), 1u);
    // Written at or after max_purgeable: kept whatever its age.
    m.partition().purge(100, 100, 9);
    BOOST_CHECK_EQUAL(m.partition().range_tombstones().size(), 1u);
    m.partition().purge(100, 100);
    BOOST_CHECK(m.partition() == mutation_partition(*s));
    // The tombstone an expired cell becomes is purged in the same pass when
    // its date (expiry - ttl = 10) is before gc_before, though the expiry
    // (20) is not (Cassandra 4.0+'s AbstractCell.purge).
    auto m2 = make();
    m2.partition().purge(25, 11);
    auto& r2 = m2.partition().rows().at(ck(1));
    BOOST_CHECK(r2.cells.empty());
    BOOST_CHECK(r2.marker == (row_marker{4, 10, 20}));
}

BOOST_AUTO_TEST_CASE(test_purge_leaves_nothing_purgeable) {
    for_random_cases(1500, [](const schema_ptr& s, generator& g) {
        auto m = g.make(key(g.rnd(0, 3)));
        deletion_time_type now = g.rnd(0, 4), gc_before = g.rnd(0, 3);
        m.partition().purge(now, gc_before);
        auto& p = m.partition();
        check_nothing_shadowed(p);
        auto purgeable = [&](tombstone t) { return t && t.deletion_time < gc_before; };
        auto check_cells = [&](const row& r) {
            for (auto& [id, c] : r.cells()) {
                auto check = [&](const atomic_cell& cell) {
                    // No expired cell is left: it went, or became a tombstone
                    // (dated expiry - ttl) that is not purgeable either.
                    BOOST_REQUIRE(cell.is_live(now) ||
                                  (cell.is_dead_marker() && cell.local_deletion_time() >= gc_before));
                };
                if (auto* cell = std::get_if<atomic_cell>(&c)) {
                    check(*cell);
                } else {
                    auto& coll = std::get<collection_cells>(c);
                    BOOST_REQUIRE(!purgeable(coll.tomb));
                    BOOST_REQUIRE(coll.tomb || !coll.cells.empty());
                    for (auto& e : coll.cells) {
                        check(e.second);
                    }
                }
            }
        };
        BOOST_REQUIRE(!purgeable(p.partition_tombstone()));
        check_cells(p.static_row());
        for (auto& r : p.range_tombstones()) {
            BOOST_REQUIRE(!purgeable(r.tomb));
        }
        for (auto& [key, r] : p.rows()) {
            BOOST_REQUIRE(!purgeable(r.tomb));
            BOOST_REQUIRE(r.marker.empty() || r.marker.is_live(now) || r.marker.expiry >= gc_before);
            check_cells(r.cells);
        }
        validate(*s, to_fragments(m), false);
    });
}
