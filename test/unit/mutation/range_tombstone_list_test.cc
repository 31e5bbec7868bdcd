// Tests of range_tombstone_list: against a per-position model over clustering keys 0..20, independence
// from the order of apply, and the change stream form (valid streams, forward and reversed, read back).
#include "mutation/fragment_stream_validator.hh"
#include "mutation/range_tombstone_list.hh"
#include "schema/schema.hh"
#include "test/lib/simple_keys.hh"

#include <boost/test/unit_test.hpp>
#include <algorithm>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

using namespace reef;

namespace {

using testing::ck;
using testing::int_value;

schema_ptr make_schema() { return testing::int_table_schema(); }

constexpr int max_key = 20;
// The model's positions, in order: before all rows, then for each key
// before(k), the row k, after(k), then after all rows.
constexpr int slot_count = 3 * (max_key + 1) + 2;

position_in_partition slot_position(int slot) {
    if (slot == 0) {
        return position_in_partition::before_all_clustered_rows();
    }
    if (slot == slot_count - 1) {
        return position_in_partition::after_all_clustered_rows();
    }
    int k = (slot - 1) / 3, w = (slot - 1) % 3;
    return w == 0 ? position_in_partition::before_key(ck(k))
         : w == 1 ? position_in_partition::for_key(ck(k))
                  : position_in_partition::after_key(ck(k));
}

bool is_bound_slot(int slot) { return slot == 0 || slot == slot_count - 1 || (slot - 1) % 3 != 1; }

struct model_range {
    int start, end;
    tombstone t;
};

uint64_t pick_seed() {
    if (const char* s = std::getenv("REEF_SEED")) {
        return std::stoull(s);
    }
    return std::random_device{}();
}

// Rebuilds a list from its stream form as a partition of fragments would
// carry it, checks the stream, and returns the list read back.
range_tombstone_list through_stream(const schema& s, const range_tombstone_list& l, bool reversed) {
    auto changes = l.to_changes(reversed);
    fragment_stream_validator v(s, reversed);
    v(partition_start{testing::pkey(1), {}});
    for (auto& c : changes) {
        v(c);
    }
    v(partition_end{});
    v.on_end_of_stream();
    for (size_t i = 1; i < changes.size(); ++i) {
        BOOST_REQUIRE_MESSAGE(!(changes[i].tomb == changes[i - 1].tomb), "a change repeats the tombstone in force");
    }
    range_tombstone_list back(s);
    back.apply_changes(changes, reversed);
    return back;
}

void check_canonical(const schema& s, const range_tombstone_list& l) {
    position_in_partition_comparator cmp(s);
    for (size_t i = 0; i < l.size(); ++i) {
        auto& r = l.ranges()[i];
        BOOST_REQUIRE(cmp(r.start, r.end) < 0);
        BOOST_REQUIRE(!r.tomb.empty());
        if (i > 0) {
            auto& p = l.ranges()[i - 1];
            int c = cmp(p.end, r.start);
            BOOST_REQUIRE(c <= 0);
            BOOST_REQUIRE_MESSAGE(!(c == 0 && p.tomb == r.tomb), "touching ranges with equal tombstones");
        }
    }
}

} // namespace

BOOST_AUTO_TEST_CASE(test_split_and_merge) {
    auto s = make_schema();
    range_tombstone_list l(*s);
    auto before = [](int k) { return position_in_partition::before_key(ck(k)); };
    auto after = [](int k) { return position_in_partition::after_key(ck(k)); };
    tombstone t1{1, 10}, t2{2, 10}, t0{0, 10};
    l.apply(before(2), after(8), t1);
    l.apply(before(4), after(5), t2);
    BOOST_REQUIRE_EQUAL(l.size(), 3u);
    BOOST_CHECK(l.ranges()[0] == (range_tombstone_entry{before(2), before(4), t1}));
    BOOST_CHECK(l.ranges()[1] == (range_tombstone_entry{before(4), after(5), t2}));
    BOOST_CHECK(l.ranges()[2] == (range_tombstone_entry{after(5), after(8), t1}));
    // An older tombstone over the whole span fills only the gaps around it.
    l.apply(before(0), after(10), t0);
    BOOST_REQUIRE_EQUAL(l.size(), 5u);
    BOOST_CHECK(l.ranges()[0] == (range_tombstone_entry{before(0), before(2), t0}));
    BOOST_CHECK(l.ranges()[4] == (range_tombstone_entry{after(8), after(10), t0}));
    // A newer one over all of it merges everything into one range.
    l.apply(before(1), after(9), t2);
    l.apply(after(9), after(10), t2);
    BOOST_REQUIRE_EQUAL(l.size(), 2u);
    BOOST_CHECK(l.ranges()[1] == (range_tombstone_entry{before(1), after(10), t2}));
    BOOST_CHECK(l.search(position_in_partition::for_key(ck(0))) == t0);
    BOOST_CHECK(l.search(position_in_partition::for_key(ck(10))) == t2);
    BOOST_CHECK(l.search(position_in_partition::for_key(ck(11))).empty());
    // Touching ranges: a change hands over without an empty one between.
    auto changes = l.to_changes();
    BOOST_REQUIRE_EQUAL(changes.size(), 3u);
    BOOST_CHECK(changes[1].position == before(1) && changes[1].tomb == t2);
    BOOST_CHECK(changes[2].tomb.empty());
    auto rchanges = l.to_changes(true);
    BOOST_REQUIRE_EQUAL(rchanges.size(), 3u);
    BOOST_CHECK(rchanges[0].position == after(10).reversed() && rchanges[0].tomb == t2);
    BOOST_CHECK(rchanges[1].position == before(1).reversed() && rchanges[1].tomb == t0);
    BOOST_CHECK(rchanges[2].position == before(0).reversed() && rchanges[2].tomb.empty());
    // Bad bounds are refused; empty ranges and tombstones change nothing.
    BOOST_CHECK_THROW(l.apply(position_in_partition::for_key(ck(1)), after(3), t1), std::invalid_argument);
    BOOST_CHECK_THROW(l.apply(after(3), before(1), t1), std::invalid_argument);
    auto copy = l;
    l.apply(after(3), after(3), t2);
    l.apply(before(12), after(13), tombstone{});
    BOOST_CHECK(l == copy);
}

BOOST_AUTO_TEST_CASE(test_against_model_and_apply_order) {
    auto s = make_schema();
    uint64_t seed = pick_seed();
    BOOST_TEST_MESSAGE("seed " << seed << " (set REEF_SEED to repeat)");
    std::mt19937_64 rng(seed);
    std::vector<int> bound_slots;
    for (int i = 0; i < slot_count; ++i) {
        if (is_bound_slot(i)) {
            bound_slots.push_back(i);
        }
    }
    auto rnd = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    for (int iter = 0; iter < 5000; ++iter) {
        uint64_t case_seed = rng();
        BOOST_TEST_CONTEXT("seed " << seed << " case " << iter << " case seed " << case_seed) {
            rng.seed(case_seed);
            std::vector<model_range> ranges;
            int n = rnd(0, iter % 10 == 0 ? 60 : 10);
            for (int i = 0; i < n; ++i) {
                int a = bound_slots[rnd(0, int(bound_slots.size()) - 1)];
                int b = bound_slots[rnd(0, int(bound_slots.size()) - 1)];
                if (a > b) {
                    std::swap(a, b);
                }
                // Few timestamps and deletion times: ties and equal tombstones are common.
                ranges.push_back({a, b, tombstone{rnd(0, 4), rnd(0, 2)}});
            }
            std::vector<tombstone> model(slot_count);
            range_tombstone_list l(*s);
            for (auto& r : ranges) {
                for (int i = r.start; i < r.end; ++i) {
                    model[i].apply(r.t);
                }
                l.apply(slot_position(r.start), slot_position(r.end), r.t);
            }
            check_canonical(*s, l);
            for (int i = 0; i < slot_count; ++i) {
                BOOST_REQUIRE_MESSAGE(l.search(slot_position(i)) == model[i], "slot " << i);
            }
            // Any other order gives the same list.
            std::shuffle(ranges.begin(), ranges.end(), rng);
            range_tombstone_list other(*s);
            for (auto& r : ranges) {
                other.apply(slot_position(r.start), slot_position(r.end), r.t);
            }
            BOOST_REQUIRE(other == l);
            // So does merging two halves into each other.
            range_tombstone_list half1(*s), half2(*s);
            for (size_t i = 0; i < ranges.size(); ++i) {
                (i % 2 ? half1 : half2).apply(slot_position(ranges[i].start), slot_position(ranges[i].end), ranges[i].t);
            }
            half1.apply(half2);
            BOOST_REQUIRE(half1 == l);
            // The change streams are valid and read back to the same list.
            BOOST_REQUIRE(through_stream(*s, l, false) == l);
            BOOST_REQUIRE(through_stream(*s, l, true) == l);
        }
    }
}

BOOST_AUTO_TEST_CASE(test_any_change_stream_reads_as_the_model) {
    // Streams as readers produce them: several changes at one position,
    // changes that repeat the tombstone in force, empty ones in gaps.
    auto s = make_schema();
    uint64_t seed = pick_seed();
    BOOST_TEST_MESSAGE("seed " << seed << " (set REEF_SEED to repeat)");
    std::mt19937_64 rng(seed);
    auto rnd = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    std::vector<int> bound_slots;
    for (int i = 0; i < slot_count; ++i) {
        if (is_bound_slot(i)) {
            bound_slots.push_back(i);
        }
    }
    for (int iter = 0; iter < 3000; ++iter) {
        BOOST_TEST_CONTEXT("seed " << seed << " case " << iter) {
            bool reversed = rnd(0, 1);
            std::vector<int> slots;
            int n = rnd(0, 8);
            for (int i = 0; i < n; ++i) {
                slots.push_back(bound_slots[rnd(0, int(bound_slots.size()) - 1)]);
            }
            std::sort(slots.begin(), slots.end());
            if (reversed) {
                std::reverse(slots.begin(), slots.end());
            }
            std::vector<range_tombstone_change> changes;
            std::vector<tombstone> tombs;
            for (size_t i = 0; i < slots.size(); ++i) {
                tombstone t = i + 1 == slots.size() || rnd(0, 3) == 0 ? tombstone{} : tombstone{rnd(0, 3), rnd(0, 1)};
                tombs.push_back(t);
                auto p = slot_position(slots[i]);
                changes.push_back({reversed ? p.reversed() : p, t});
            }
            std::vector<tombstone> model(slot_count);
            for (size_t i = 0; i + 1 < slots.size(); ++i) {
                int lo = std::min(slots[i], slots[i + 1]), hi = std::max(slots[i], slots[i + 1]);
                for (int k = lo; k < hi; ++k) {
                    model[k] = tombs[i];
                }
            }
            range_tombstone_list l(*s);
            l.apply_changes(changes, reversed);
            check_canonical(*s, l);
            for (int i = 0; i < slot_count; ++i) {
                BOOST_REQUIRE_MESSAGE(l.search(slot_position(i)) == model[i], "slot " << i << " reversed " << reversed);
            }
            BOOST_REQUIRE(through_stream(*s, l, !reversed) == l);
        }
    }
}
