// Randomized tests of mutation_fragment_filter against a model: for random rows, range
// tombstones and clustering ranges, forward and reversed, the filtered stream is valid,
// holds exactly the rows inside the ranges, and has the model's tombstone in force at every key.
#include "mutation/fragment_stream_validator.hh"
#include "reader/mutation_fragment_filter.hh"
#include "reader/mutation_reader.hh"
#include "schema/schema.hh"
#include "test/lib/simple_keys.hh"

#include <boost/test/unit_test.hpp>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

using namespace reef;
using testing::ck;

namespace {

constexpr int keys = 20;

// Grid positions: 2k is "before key k", 2k+1 is "after key k".
position_in_partition grid(int g) {
    return g % 2 == 0 ? position_in_partition::before_key(ck(g / 2)) : position_in_partition::after_key(ck(g / 2));
}

struct test_case {
    std::set<int> rows;
    std::vector<std::pair<int, tombstone>> changes;  // grid position, tombstone from there on; sorted; last empty
    std::vector<std::pair<int, int>> ranges;         // [grid start, grid end), sorted, disjoint

    // The tombstone in force at key k in the input.
    tombstone in_force_at(int k) const {
        tombstone t;
        for (auto& [g, tomb] : changes) {
            if (g <= 2 * k) {  // before(k) < at(k) < after(k)
                t = tomb;
            }
        }
        return t;
    }
    bool selected(int k) const {
        for (auto [s, e] : ranges) {
            if (s <= 2 * k && 2 * k + 1 <= e) {
                return true;
            }
        }
        return false;
    }
};

test_case random_case(std::mt19937& rng) {
    test_case tc;
    for (int k = 0; k < keys; ++k) {
        if (rng() % 2) {
            tc.rows.insert(k);
        }
    }
    std::set<int> points;
    int nchanges = int(rng() % 6);
    while (int(points.size()) < nchanges * 2) {
        points.insert(int(rng() % (2 * keys)));
    }
    bool open = false;
    for (int g : points) {
        open = !open;
        tc.changes.push_back({g, open ? tombstone{int64_t(1 + rng() % 5), 100} : tombstone{}});
    }
    // Sometimes change the tombstone without closing (adjacent ranges).
    if (!tc.changes.empty() && rng() % 3 == 0) {
        for (auto& c : tc.changes) {
            if (c.second) {
                c.second.timestamp += 10;
                break;
            }
        }
    }
    std::set<int> bounds;
    int nranges = 1 + int(rng() % 4);
    while (int(bounds.size()) < nranges * 2) {
        bounds.insert(int(rng() % (2 * keys + 1)));
    }
    std::vector<int> b(bounds.begin(), bounds.end());
    for (size_t i = 0; i + 1 < b.size(); i += 2) {
        tc.ranges.push_back({b[i], b[i + 1]});
    }
    return tc;
}

// The partition's fragments between partition_start and partition_end.
std::vector<mutation_fragment> input_stream(const test_case& tc, bool reversed) {
    std::vector<std::pair<position_in_partition, mutation_fragment>> items;
    for (int k : tc.rows) {
        items.push_back({position_in_partition::for_key(ck(k)), clustering_row{ck(k), {}, {}, {}}});
    }
    for (size_t i = 0; i < tc.changes.size(); ++i) {
        if (!reversed) {
            items.push_back({grid(tc.changes[i].first), range_tombstone_change{grid(tc.changes[i].first), tc.changes[i].second}});
        } else {
            // Read backwards, a change carries what was in force before it.
            tombstone before = i ? tc.changes[i - 1].second : tombstone{};
            auto p = grid(tc.changes[i].first).reversed();
            items.push_back({p, range_tombstone_change{p, before}});
        }
    }
    auto s = testing::int_table_schema();
    position_in_partition_comparator cmp(*s, reversed);
    std::stable_sort(items.begin(), items.end(), [&](auto& a, auto& b) { return cmp(a.first, b.first) < 0; });
    std::vector<mutation_fragment> out;
    for (auto& [p, f] : items) {
        out.push_back(std::move(f));
    }
    return out;
}

// How a case feeds its filter: each way must give the same stream.
enum class feed {
    // Built from the schema, owning its ranges, every fragment through consume().
    plain,
    // Borrowing the ranges with a given comparator, rows through consume_row_key() (the row appended by the
    // caller when inside), into a reader's fragment_buffer.
    borrowed_row_keys,
    // Owning its ranges with a given comparator, copied and moved in the middle of the stream (the copies must
    // walk their own ranges, or the borrowed ones).
    copied_midway,
    // Borrowing, copied and moved in the middle of the stream.
    borrowed_copied_midway,
};

std::vector<mutation_fragment> filtered(const schema& s, const test_case& tc, const clustering_ranges& ranges,
                                        bool reversed, feed how) {
    std::vector<mutation_fragment> out;
    auto key = dht::decorated_key(partition_key(std::string("\0\0\0\1", 4)));
    out.push_back(partition_start{key, {}});
    auto input = input_stream(tc, reversed);
    position_in_partition_comparator cmp(s, reversed);
    if (how == feed::borrowed_row_keys) {
        mutation_fragment_filter filter(cmp, &ranges);
        fragment_buffer buf;
        for (auto& f : input) {
            bool more;
            if (auto* r = std::get_if<clustering_row>(&f)) {
                if (filter.consume_row_key(r->key, buf)) {
                    buf.push_back(std::move(f));
                }
                more = filter.has_ranges_left();
            } else {
                more = filter.consume(std::move(f), buf);
            }
            if (!more) {
                break;
            }
        }
        filter.finish(buf);
        for (; !buf.empty(); buf.pop_front()) {
            out.push_back(std::move(buf.front()));
        }
        out.push_back(partition_end{});
        return out;
    }
    std::optional<mutation_fragment_filter> filter;
    if (how == feed::plain) {
        filter.emplace(s, ranges, reversed);
    } else if (how == feed::copied_midway) {
        filter.emplace(cmp, clustering_ranges(ranges));
    } else {
        filter.emplace(cmp, &ranges);
    }
    for (size_t i = 0; i < input.size(); ++i) {
        if (how != feed::plain && i == input.size() / 2) {
            // A copy, then the original gone: the copy goes on alone.
            mutation_fragment_filter copy(*filter);
            filter.reset();
            mutation_fragment_filter moved(std::move(copy));
            filter.emplace(cmp, clustering_ranges{});
            *filter = moved;
        }
        if (!filter->consume(std::move(input[i]), out)) {
            break;  // past the last range: the rest may be skipped
        }
    }
    filter->finish(out);
    out.push_back(partition_end{});
    return out;
}

void check_case(const test_case& tc, bool reversed, uint32_t seed, feed how) {
    auto s = testing::int_table_schema();
    clustering_ranges ranges;
    for (auto [a, b] : tc.ranges) {
        ranges.push_back({grid(a), grid(b)});
    }
    if (reversed) {
        ranges = reverse_ranges(ranges);
    }
    auto out = filtered(*s, tc, ranges, reversed, how);

    std::string ctx = "seed " + std::to_string(seed) + (reversed ? " reversed" : " forward") + " feed " +
                      std::to_string(int(how));
    fragment_stream_validator v(*s, reversed);
    try {
        for (auto& f : out) {
            v(f);
        }
        v.on_end_of_stream();
    } catch (const std::exception& e) {
        BOOST_FAIL(ctx << ": " << e.what());
    }
    // Rows: exactly those inside the ranges.
    std::set<int> got_rows;
    for (auto& f : out) {
        if (auto* r = std::get_if<clustering_row>(&f)) {
            got_rows.insert(testing::int_of(r->key.component(0)));
        }
    }
    std::set<int> want_rows;
    for (int k : tc.rows) {
        if (tc.selected(k)) {
            want_rows.insert(k);
        }
    }
    BOOST_REQUIRE_MESSAGE(got_rows == want_rows, ctx << ": rows differ");
    // Tombstone in force at every key: the input's inside ranges, none outside.
    position_in_partition_comparator cmp(*s, reversed);
    for (int k = 0; k < keys; ++k) {
        auto at = position_in_partition::for_key(ck(k));
        tombstone t;
        for (auto& f : out) {
            if (auto* c = std::get_if<range_tombstone_change>(&f)) {
                if (cmp(c->position, at) < 0) {
                    t = c->tomb;
                }
            }
        }
        tombstone want = tc.selected(k) ? tc.in_force_at(k) : tombstone{};
        BOOST_REQUIRE_MESSAGE(t == want, ctx << ": key " << k << " has tombstone ts " << t.timestamp << ", want "
                                             << want.timestamp);
    }
}

} // namespace

BOOST_AUTO_TEST_CASE(test_filter_matches_model) {
    uint32_t base = std::random_device{}();
    for (uint32_t i = 0; i < 3000; ++i) {
        uint32_t seed = base + i;
        std::mt19937 rng(seed);
        auto tc = random_case(rng);
        for (auto how : {feed::plain, feed::borrowed_row_keys, feed::copied_midway, feed::borrowed_copied_midway}) {
            check_case(tc, false, seed, how);
            check_case(tc, true, seed, how);
        }
    }
}

BOOST_AUTO_TEST_CASE(test_skip_target) {
    auto s = testing::int_table_schema();
    clustering_ranges ranges{{grid(4), grid(7)}, {grid(20), grid(25)}};
    mutation_fragment_filter filter(*s, ranges);
    std::vector<mutation_fragment> out;
    BOOST_CHECK(filter.skip_target() == grid(4));
    filter.consume(clustering_row{ck(0), {}, {}, {}}, out);
    BOOST_CHECK(out.empty());
    BOOST_CHECK(filter.skip_target() == grid(4));
    BOOST_CHECK(filter.consume(clustering_row{ck(2), {}, {}, {}}, out));
    BOOST_CHECK_EQUAL(out.size(), 1u);
    BOOST_CHECK(!filter.skip_target());  // inside the first range
    BOOST_CHECK(filter.consume(clustering_row{ck(5), {}, {}, {}}, out));
    BOOST_CHECK(filter.skip_target() == grid(20));
    BOOST_CHECK(!filter.consume(clustering_row{ck(13), {}, {}, {}}, out));  // past the last range
    BOOST_CHECK_EQUAL(out.size(), 1u);
    BOOST_CHECK(!filter.skip_target());
    BOOST_CHECK(!filter.skip_target_position());
}

BOOST_AUTO_TEST_CASE(test_skip_target_position_borrows) {
    auto s = testing::int_table_schema();
    clustering_ranges ranges{{grid(4), grid(7)}, {grid(20), grid(25)}};
    mutation_fragment_filter filter(position_in_partition_comparator(*s), &ranges);
    std::vector<mutation_fragment> out;
    BOOST_CHECK(filter.skip_target_position() == &ranges[0].start);
    BOOST_CHECK(filter.current_end_position() == &ranges[0].end);
    BOOST_CHECK(!filter.consume_row_key(ck(0), out));
    BOOST_CHECK(filter.consume_row_key(ck(2), out));
    BOOST_CHECK(!filter.skip_target_position());
    BOOST_CHECK(filter.current_end_position() == &ranges[0].end);
    BOOST_CHECK(!filter.consume_row_key(ck(5), out));
    BOOST_CHECK(filter.has_ranges_left());
    BOOST_CHECK(filter.skip_target_position() == &ranges[1].start);
    BOOST_CHECK(filter.current_end_position() == &ranges[1].end);
    BOOST_CHECK(!filter.consume_row_key(ck(13), out));
    BOOST_CHECK(!filter.has_ranges_left());
    BOOST_CHECK(!filter.current_end_position());
    BOOST_CHECK(out.empty());
}
