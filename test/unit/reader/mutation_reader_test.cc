// Tests of the reader interface over the in-memory fragment reader: whole
// reads, next_partition, partition ranges and clustering windows, each
// output checked by the stream validator and against the input.
#include "mutation/fragment_stream_validator.hh"
#include "reader/mutation_reader.hh"
#include "test/lib/reef_test.hh"
#include "test/lib/simple_keys.hh"

#include <algorithm>
#include <random>
#include <set>

using namespace reef;
using testing::ck;
using testing::int_of;
using testing::pkey;

namespace {

// n partitions in token order, each with some rows and one range tombstone.
std::vector<mutation_fragment> make_data(std::mt19937& rng, int n, std::vector<dht::decorated_key>& keys) {
    keys.clear();
    for (int i = 0; i < n; ++i) {
        keys.push_back(pkey(i));
    }
    std::sort(keys.begin(), keys.end());
    std::vector<mutation_fragment> out;
    for (auto& k : keys) {
        out.push_back(partition_start{k, {}});
        int a = int(rng() % 10), b = a + 1 + int(rng() % 5);
        for (int c = 0; c < 20; ++c) {
            if (c == a) {
                out.push_back(range_tombstone_change{position_in_partition::before_key(ck(c)), tombstone{7, 1}});
            }
            if (c == b) {
                out.push_back(range_tombstone_change{position_in_partition::before_key(ck(c)), {}});
            }
            if (rng() % 2) {
                out.push_back(clustering_row{ck(c), {}, {}, {}});
            }
        }
        out.push_back(partition_end{});
    }
    return out;
}

void validate(const schema& s, const std::vector<mutation_fragment>& fs) {
    fragment_stream_validator v(s);
    for (auto& f : fs) {
        v(f);
    }
    v.on_end_of_stream();
}

size_t count_partitions(const std::vector<mutation_fragment>& fs) {
    return std::count_if(fs.begin(), fs.end(), [](auto& f) { return std::holds_alternative<partition_start>(f); });
}

} // namespace

REEF_TEST_CASE(test_read_all_and_next_partition) {
    auto s = testing::int_table_schema();
    std::mt19937 rng(1);
    std::vector<dht::decorated_key> keys;
    auto data = make_data(rng, 30, keys);
    {
        auto r = make_fragment_vector_reader(s, data);
        auto got = co_await read_all(r);
        validate(*s, got);
        BOOST_CHECK_EQUAL(got.size(), data.size());
        co_await r.close();
    }
    {
        // Read only each partition's start, skipping the rest.
        auto r = make_fragment_vector_reader(s, data);
        std::vector<dht::decorated_key> seen;
        while (auto f = co_await r()) {
            BOOST_REQUIRE(std::holds_alternative<partition_start>(*f));
            seen.push_back(std::get<partition_start>(*f).key);
            co_await r.next_partition();
        }
        BOOST_CHECK(seen == keys);
        co_await r.close();
    }
}

REEF_TEST_CASE(test_partition_ranges) {
    auto s = testing::int_table_schema();
    std::mt19937 rng(2);
    std::vector<dht::decorated_key> keys;
    auto data = make_data(rng, 30, keys);
    // [keys[5], keys[10]) then the single partition keys[20], then (keys[25], end).
    using bound = dht::partition_range::bound;
    auto r = make_fragment_vector_reader(
        s, data, dht::partition_range(bound{dht::ring_position::for_key(keys[5]), true}, bound{dht::ring_position::for_key(keys[10]), false}));
    auto first = co_await read_all(r);
    validate(*s, first);
    BOOST_CHECK_EQUAL(count_partitions(first), 5u);
    BOOST_CHECK(std::get<partition_start>(first.front()).key == keys[5]);
    // Ranges are named before co_await: see ARCHITECTURE.md, coroutine rule 2.
    auto single = dht::partition_range::singular(keys[20]);
    co_await r.fast_forward_to(single);
    auto second = co_await read_all(r);
    BOOST_CHECK_EQUAL(count_partitions(second), 1u);
    BOOST_CHECK(std::get<partition_start>(second.front()).key == keys[20]);
    auto tail = dht::partition_range(bound{dht::ring_position::for_key(keys[25]), false}, std::nullopt);
    co_await r.fast_forward_to(tail);
    auto third = co_await read_all(r);
    BOOST_CHECK_EQUAL(count_partitions(third), 4u);
    co_await r.close();
}

// Clustering windows: the rows and tombstones seen through windows are the
// ones inside them, and every window's output is a valid clipped stream.
REEF_TEST_CASE(test_forwarding_windows) {
    auto s = testing::int_table_schema();
    std::mt19937 rng(3);
    std::vector<dht::decorated_key> keys;
    auto data = make_data(rng, 10, keys);
    auto r = make_fragment_vector_reader(s, data, dht::partition_range::full(), streamed_forwarding::yes);
    size_t partitions = 0;
    while (auto f = co_await r()) {
        BOOST_REQUIRE(std::holds_alternative<partition_start>(*f));
        ++partitions;
        // Nothing clustered before a window is opened.
        BOOST_CHECK(!(co_await r()));
        std::set<int> rows;
        for (auto [a, b] : std::vector<std::pair<int, int>>{{2, 5}, {5, 6}, {9, 15}}) {
            position_range window_range{position_in_partition::before_key(ck(a)), position_in_partition::before_key(ck(b))};
            co_await r.fast_forward_to(std::move(window_range));
            std::vector<mutation_fragment> window{partition_start{std::get<partition_start>(*f).key, {}}};
            while (auto g = co_await r()) {
                if (auto* row = std::get_if<clustering_row>(&*g)) {
                    int c = int_of(row->key.component(0));
                    BOOST_CHECK(c >= a && c < b);
                    rows.insert(c);
                }
                window.push_back(std::move(*g));
            }
            window.push_back(partition_end{});
            validate(*s, window);
        }
        // Compare with the partition's rows inside the windows.
        std::set<int> want;
        bool in = false;
        for (auto& g : data) {
            if (auto* ps = std::get_if<partition_start>(&g)) {
                in = ps->key == std::get<partition_start>(*f).key;
            } else if (auto* row = std::get_if<clustering_row>(&g); row && in) {
                int c = int_of(row->key.component(0));
                if ((c >= 2 && c < 6) || (c >= 9 && c < 15)) {
                    want.insert(c);
                }
            }
        }
        BOOST_CHECK(rows == want);
        co_await r.next_partition();
    }
    BOOST_CHECK_EQUAL(partitions, 10u);
    co_await r.close();
}

// A window opened in the middle of another, at the position of a change
// already produced: the reader emits there the tombstone in force (what the
// combined reader's skip relies on).
REEF_TEST_CASE(test_forwarding_in_the_middle_of_a_window) {
    auto s = testing::int_table_schema();
    auto k = pkey(1);
    std::vector<mutation_fragment> data{
        partition_start{k, {}},
        clustering_row{ck(1), {}, {}, {}},
        range_tombstone_change{position_in_partition::before_key(ck(2)), tombstone{7, 1}},
        clustering_row{ck(2), {}, {}, {}},
        clustering_row{ck(3), {}, {}, {}},
        range_tombstone_change{position_in_partition::after_key(ck(4)), {}},
        clustering_row{ck(5), {}, {}, {}},
        partition_end{},
    };
    auto r = make_fragment_vector_reader(s, data, dht::partition_range::full(), streamed_forwarding::yes, false,
                                         std::nullopt, 1);
    BOOST_REQUIRE(std::holds_alternative<partition_start>(*co_await r()));
    BOOST_REQUIRE(!co_await r());
    auto full = position_range::full();
    co_await r.fast_forward_to(std::move(full));
    BOOST_REQUIRE(std::holds_alternative<clustering_row>(*co_await r()));
    auto change = co_await r();
    BOOST_REQUIRE(change && std::holds_alternative<range_tombstone_change>(*change));
    // Resume at the change just produced, then past row 2.
    std::vector<position_in_partition> starts{position_in_partition::before_key(ck(2)), position_in_partition::after_key(ck(2))};
    for (size_t i = 0; i < starts.size(); ++i) {
        auto& start = starts[i];
        position_range rest{start, position_in_partition::after_all_clustered_rows()};
        co_await r.fast_forward_to(std::move(rest));
        auto first = co_await r();
        BOOST_REQUIRE(first && std::holds_alternative<range_tombstone_change>(*first));
        BOOST_CHECK(std::get<range_tombstone_change>(*first).position == start);
        BOOST_CHECK(std::get<range_tombstone_change>(*first).tomb == (tombstone{7, 1}));
        auto next = co_await r();
        BOOST_REQUIRE(next && std::holds_alternative<clustering_row>(*next));
        BOOST_CHECK(int_of(std::get<clustering_row>(*next).key.component(0)) == (start.weight() == bound_weight::before_all_prefixed ? 2 : 3));
    }
    co_await r.close();
}

// A fragment-by-fragment loop over a long partition: buffered fragments
// come back as ready futures, so the loop does not deepen the stack (in
// debug builds symmetric transfer is not a tail call, and a coroutine per
// fragment overflowed it).
REEF_TEST_CASE(test_long_read_fragment_by_fragment) {
    auto s = testing::int_table_schema();
    const int rows = 200000;
    std::vector<mutation_fragment> data;
    data.push_back(partition_start{pkey(1), {}});
    for (int c = 0; c < rows; ++c) {
        data.push_back(clustering_row{ck(c), row_marker{1}, {}, {}});
    }
    data.push_back(partition_end{});
    auto r = make_fragment_vector_reader(s, std::move(data));
    fragment_stream_validator v(*s);
    size_t n = 0;
    while (auto f = co_await r()) {
        v(*f);
        ++n;
    }
    v.on_end_of_stream();
    BOOST_CHECK_EQUAL(n, size_t(rows) + 2);
    co_await r.close();
}

// move_buffer_content_to hands a reader's buffer on whole into an empty buffer and appends to one that is not
// empty; either way the stream is unchanged, and the reader's buffer is empty after.
REEF_TEST_CASE(test_move_buffer_content_to) {
    auto s = testing::int_table_schema();
    std::mt19937 rng(5);
    std::vector<dht::decorated_key> keys;
    auto data = make_data(rng, 10, keys);
    auto r = make_fragment_vector_reader(s, data, dht::partition_range::full(), streamed_forwarding::no, false,
                                         std::nullopt, 7);
    fragment_buffer buf;
    std::vector<mutation_fragment> got;
    bool appended = false;
    while (!r.done()) {
        co_await r.fill_buffer();
        appended |= !buf.empty() && !r.is_buffer_empty();
        r.move_buffer_content_to(buf);
        BOOST_REQUIRE(r.is_buffer_empty());
        // Leave one fragment in buf every other time, so the next move appends.
        size_t keep = got.size() % 2;
        while (buf.size() > keep) {
            got.push_back(std::move(buf.front()));
            buf.pop_front();
        }
    }
    while (!buf.empty()) {
        got.push_back(std::move(buf.front()));
        buf.pop_front();
    }
    co_await r.close();
    BOOST_REQUIRE(appended);
    validate(*s, got);
    BOOST_REQUIRE_EQUAL(got.size(), data.size());
    for (size_t i = 0; i < got.size(); ++i) {
        BOOST_REQUIRE_EQUAL(got[i].index(), data[i].index());
        if (auto* cr = std::get_if<clustering_row>(&got[i])) {
            BOOST_REQUIRE_EQUAL(int_of(cr->key.component(0)), int_of(std::get<clustering_row>(data[i]).key.component(0)));
        }
    }
}
