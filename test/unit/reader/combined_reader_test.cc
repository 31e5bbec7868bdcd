// Tests of the combined reader: random mutations split among 1..4 sources read back merged, forward and
// reversed, with slices, partition ranges, next_partition and windows, against the merged model; and the skip.
#include "mutation/fragment_stream_validator.hh"
#include "reader/combined_reader.hh"
#include "runtime/reactor.hh"
#include "test/lib/combined_model.hh"
#include "test/lib/random_mutation.hh"
#include "test/lib/reef_test.hh"
#include "test/lib/simple_keys.hh"

#include <algorithm>
#include <set>

using namespace reef;
using testing::ck;
using testing::int_of;
using testing::max_timestamp;
using testing::pkey;
using testing::visible;

namespace {

// A source that hands out one fragment per fill and logs what it produced,
// so that a test sees exactly what the combined reader took from it. Its
// inner reader must produce one fragment per fill too, so that a skip in
// the middle of a window finds nothing produced and not handed out.
class logging_reader final : public mutation_reader_impl {
public:
    logging_reader(mutation_reader inner, std::vector<mutation_fragment>* log)
        : mutation_reader_impl(inner.schema()), _inner(std::move(inner)), _log(log) {
        _max_buffer_fragments = 1;
    }
    future<> fill_buffer() override {
        while (!is_buffer_full() && !_end_of_stream) {
            auto f = co_await _inner();
            if (!f) {
                _end_of_stream = true;
                break;
            }
            _log->push_back(*f);
            push(std::move(*f));
        }
    }
    future<> next_partition() override {
        _end_of_stream = false;
        co_await _inner.next_partition();
    }
    future<> fast_forward_to(const dht::partition_range& pr) override { co_await _inner.fast_forward_to(pr); }
    future<> fast_forward_to(position_range pr) override { co_await _inner.fast_forward_to(std::move(pr)); }
    future<> close() noexcept override { co_await _inner.close(); }

private:
    mutation_reader _inner;
    std::vector<mutation_fragment>* _log;
};

// Sources in fragment vector readers.
mutation_reader fragment_vector_source(const testing::combined_case& c, size_t i) {
    std::vector<mutation_fragment> fs;
    for (auto& m : c.sources[i]) {
        for (auto& f : to_fragments(m, c.reversed)) {
            fs.push_back(std::move(f));
        }
    }
    return make_fragment_vector_reader(c.s, std::move(fs), c.plan.ranges.front(), c.source_forwarding[i], c.reversed,
                                       c.slice, c.buffer_fragments[i]);
}

} // namespace

REEF_TEST_CASE(test_combined_random_against_model) {
    uint64_t seed = testing::pick_seed();
    BOOST_TEST_MESSAGE("seed " << seed << " (set REEF_SEED to repeat)");
    combined_reader_stats stats;
    for (auto s : testing::random_test_schemas()) {
        testing::mutation_generator g(s, seed);
#ifdef REEF_DEBUG
        constexpr int cases = 300;  // ASan: keep the test case under ~20 s
#else
        constexpr int cases = 2000;
#endif
        for (int i = 0; i < cases; ++i) {
            auto context = "seed " + std::to_string(seed) + " table " + s->table() + " case " + std::to_string(i);
            auto c = testing::make_combined_case(g, i % 2 == 1);
            co_await testing::check_combined_case(c, fragment_vector_source, context, stats);
            // Back to the loop: in debug builds (-O0, no tail calls) every
            // co_await that completes at once keeps its stack frames until
            // the task really suspends.
            co_await yield();
        }
    }
    BOOST_TEST_MESSAGE("range skips " << stats.range_skips << ", partition skips " << stats.partition_skips
                                      << ", covered fragments dropped " << stats.covered_fragments_dropped);
    // The layered cases do skip (so the comparison above covered skips).
    BOOST_CHECK_GT(stats.range_skips, 0u);
    BOOST_CHECK_GT(stats.partition_skips, 0u);
}

// A source that is not a forwarding reader is named in a clear error.
REEF_TEST_CASE(test_combined_rejects_non_forwarding_source) {
    auto s = testing::int_table_schema();
    mutation m(s, pkey(1));
    m.partition().apply_row(*s, ck(1), deletable_row{row_marker{1}, {}, {}});
    std::vector<combined_reader_source> inputs;
    inputs.push_back({make_fragment_vector_reader(s, to_fragments(m), dht::partition_range::full(), streamed_forwarding::yes), 1});
    inputs.push_back({make_fragment_vector_reader(s, to_fragments(m)), 1});
    auto r = make_combined_reader(s, std::move(inputs), false, streamed_forwarding::no);
    bool thrown = false;
    try {
        co_await read_all(r);
    } catch (const std::logic_error& e) {
        thrown = std::string(e.what()).find("source 1") != std::string::npos;
    }
    BOOST_CHECK(thrown);
    co_await r.close();
}

namespace {

// Rows ck(from..to) with a marker at ts.
void add_rows(mutation& m, int from, int to, write_time::timestamp_type ts) {
    for (int c = from; c <= to; ++c) {
        m.partition().apply_row(*m.schema(), ck(c), deletable_row{row_marker{ts}, {}, {}});
    }
}

struct skip_run {
    explicit skip_run(schema_ptr s) : got(std::move(s), pkey(1)) {}
    combined_reader_stats stats;
    std::vector<mutation_fragment> old_log;  // what the old source produced
    mutation got;
};

// Reads `newer` and `older` (the latter through a logging reader) combined,
// checks the stream and that it reads as the merge of the two, and returns
// what the older source produced.
future<> read_newer_over_older(const mutation& newer, const mutation& older, bool reversed, skip_run& run) {
    auto s = newer.schema();
    std::vector<combined_reader_source> inputs;
    auto full = dht::partition_range::full();
    inputs.push_back({make_fragment_vector_reader(s, to_fragments(newer, reversed), full, streamed_forwarding::yes, reversed),
                      max_timestamp(to_fragments(newer))});
    auto inner = make_fragment_vector_reader(s, to_fragments(older, reversed), full, streamed_forwarding::yes, reversed,
                                             std::nullopt, 1);
    inputs.push_back({mutation_reader(std::make_unique<logging_reader>(std::move(inner), &run.old_log)),
                      max_timestamp(to_fragments(older))});
    auto r = make_combined_reader(s, std::move(inputs), reversed, streamed_forwarding::no, &run.stats);
    auto fs = co_await read_all(r);
    co_await r.close();
    fragment_stream_validator v(*s, reversed);
    for (auto& f : fs) {
        v(f);
    }
    v.on_end_of_stream();
    run.got = mutation_from_fragments(s, fs, reversed);
    auto want = newer;
    want.apply(older);
    BOOST_CHECK_MESSAGE(visible(run.got) == visible(want), "got " << to_string(run.got) << "\nwant " << to_string(want));
}

// The keys of the rows a log holds.
std::set<int> logged_rows(const std::vector<mutation_fragment>& log) {
    std::set<int> out;
    for (auto& f : log) {
        if (auto* r = std::get_if<clustering_row>(&f)) {
            out.insert(int_of(r->key.component(0)));
        }
    }
    return out;
}

} // namespace

// A newer source's range tombstone above the older source's max timestamp:
// the older source is fast-forwarded past it and never produces the rows it
// deletes (but the one that was its head when the tombstone began).
REEF_TEST_CASE(test_combined_skips_rows_under_newer_range_tombstone) {
    auto s = testing::int_table_schema();
    for (int direction = 0; direction < 2; ++direction) {
        bool reversed = direction == 1;
        mutation newer(s, pkey(1));
        newer.partition().apply_range_tombstone(position_in_partition::before_key(ck(10)),
                                                position_in_partition::after_key(ck(89)), tombstone{50, 1});
        add_rows(newer, 5, 5, 60);
        add_rows(newer, 50, 50, 60);  // written after the deletion: stays
        mutation older(s, pkey(1));
        add_rows(older, 0, 99, 10);
        skip_run run(s);
        co_await read_newer_over_older(newer, older, reversed, run);
        BOOST_CHECK_GE(run.stats.range_skips, 1u);
        auto produced = logged_rows(run.old_log);
        int head = reversed ? 89 : 10;  // the older source's head when the tombstone began
        for (int c = 10; c <= 89; ++c) {
            BOOST_CHECK_MESSAGE(!produced.contains(c) || c == head, "row " << c << " read under the tombstone, reversed " << reversed);
        }
        for (int c = 0; c < 100; c += 9) {
            BOOST_CHECK(produced.contains(c) == (c < 10 || c >= 90 || c == head));
        }
        // The rows outside the tombstone and the newer row inside it are read.
        std::set<int> rows;
        auto got = visible(run.got);
        for (auto& [key, r] : got.partition().rows()) {
            rows.insert(int_of(key.component(0)));
        }
        std::set<int> want{5, 50};
        for (int c = 0; c < 10; ++c) {
            want.insert(c);
        }
        for (int c = 90; c < 100; ++c) {
            want.insert(c);
        }
        BOOST_CHECK(rows == want);
    }
}

// At an equal timestamp nothing is skipped: the older source could hold a
// tombstone with the same timestamp and a later deletion time, which wins.
REEF_TEST_CASE(test_combined_does_not_skip_at_equal_timestamp) {
    auto s = testing::int_table_schema();
    for (int direction = 0; direction < 2; ++direction) {
        bool reversed = direction == 1;
        mutation newer(s, pkey(1));
        newer.partition().apply_range_tombstone(position_in_partition::before_key(ck(10)),
                                                position_in_partition::after_key(ck(89)), tombstone{10, 1});
        newer.partition().apply(tombstone{10, 1});
        mutation older(s, pkey(1));
        add_rows(older, 0, 99, 9);
        older.partition().apply_range_tombstone(position_in_partition::before_key(ck(20)),
                                                position_in_partition::after_key(ck(30)), tombstone{10, 2});
        skip_run run(s);
        co_await read_newer_over_older(newer, older, reversed, run);
        BOOST_CHECK_EQUAL(run.stats.range_skips, 0u);
        BOOST_CHECK_EQUAL(run.stats.partition_skips, 0u);
        BOOST_CHECK_EQUAL(logged_rows(run.old_log).size(), 100u);
        // The older source's tombstone with the later deletion time wins.
        BOOST_CHECK(run.got.partition().range_tombstones().search(position_in_partition::for_key(ck(25))) == (tombstone{10, 2}));
    }
}

// A newer partition tombstone above the older source's max timestamp: the
// older source leaves the partition at once, static row and rows unread.
REEF_TEST_CASE(test_combined_skips_partition_under_newer_partition_tombstone) {
    auto s = testing::random_test_schema();
    for (int direction = 0; direction < 2; ++direction) {
        bool reversed = direction == 1;
        mutation newer(s, pkey(1));
        newer.partition().apply(tombstone{50, 1});
        mutation older(s, pkey(1));
        older.partition().apply_static(*s, 0, atomic_cell::make_live(10, "a"));
        add_rows(older, 0, 20, 10);
        skip_run run(s);
        co_await read_newer_over_older(newer, older, reversed, run);
        BOOST_CHECK_EQUAL(run.stats.partition_skips, 1u);
        BOOST_REQUIRE_EQUAL(run.old_log.size(), 1u);
        BOOST_CHECK(std::holds_alternative<partition_start>(run.old_log[0]));
        BOOST_CHECK(run.got.partition().rows().empty());
        BOOST_CHECK(run.got.partition().static_row().empty());
    }
}

// A tombstone over more of the newer source's rows than the skip looks
// ahead: the older source skips part of the way at a time, and still reads
// almost nothing under it.
REEF_TEST_CASE(test_combined_skips_in_steps_under_long_tombstone) {
    auto s = testing::int_table_schema();
    for (int direction = 0; direction < 2; ++direction) {
        bool reversed = direction == 1;
        mutation newer(s, pkey(1));
        newer.partition().apply_range_tombstone(position_in_partition::before_key(ck(0)),
                                                position_in_partition::after_key(ck(1999)), tombstone{50, 1});
        for (int c = 0; c < 2000; c += 2) {
            add_rows(newer, c, c, 60);
        }
        mutation older(s, pkey(1));
        add_rows(older, 0, 2099, 10);
        skip_run run(s);
        co_await read_newer_over_older(newer, older, reversed, run);
        BOOST_CHECK_GE(run.stats.range_skips, 5u);
        auto produced = logged_rows(run.old_log);
        size_t covered = std::count_if(produced.begin(), produced.end(), [](int c) { return c < 2000; });
        BOOST_CHECK_MESSAGE(covered <= run.stats.range_skips + 1, covered << " covered rows read in " << run.stats.range_skips << " skips");
        BOOST_CHECK_EQUAL(produced.size() - covered, 100u);
    }
}

// A long run of a source's fills that change nothing in the output (range
// tombstones under another source's winning one, at the same timestamp so
// nothing is skipped): the reader must not pile up stack while it reads
// them (coroutine rule 5: in debug builds this overflowed).
REEF_TEST_CASE(test_combined_long_run_without_output) {
    auto s = testing::int_table_schema();
    auto k = pkey(1);
    std::vector<mutation_fragment> covering{
        partition_start{k, {}},
        range_tombstone_change{position_in_partition::before_all_clustered_rows(), tombstone{10, 5}},
        range_tombstone_change{position_in_partition::after_all_clustered_rows(), {}},
        partition_end{},
    };
    std::vector<mutation_fragment> covered{partition_start{k, {}}};
    for (int c = 0; c < 20000; ++c) {
        covered.push_back(range_tombstone_change{position_in_partition::before_key(ck(c)), tombstone{10, 1}});
        covered.push_back(range_tombstone_change{position_in_partition::after_key(ck(c)), {}});
    }
    covered.push_back(partition_end{});
    auto full = dht::partition_range::full();
    std::vector<combined_reader_source> inputs;
    inputs.push_back({make_fragment_vector_reader(s, covering, full, streamed_forwarding::yes), 10});
    inputs.push_back({make_fragment_vector_reader(s, covered, full, streamed_forwarding::yes, false, std::nullopt, 1), 10});
    combined_reader_stats stats;
    auto r = make_combined_reader(s, std::move(inputs), false, streamed_forwarding::no, &stats);
    auto fs = co_await read_all(r);
    co_await r.close();
    BOOST_CHECK_EQUAL(stats.range_skips, 0u);
    // partition_start, the one tombstone opened and closed, partition_end.
    BOOST_CHECK_EQUAL(fs.size(), 4u);
}

// Whole-partition sources: read (and dropped where covered) rather than
// skipped; refused under a forwarding combined reader.
REEF_TEST_CASE(test_combined_whole_partition_sources) {
    auto s = testing::int_table_schema();
    mutation newer(s, pkey(1));
    newer.partition().apply_range_tombstone(position_in_partition::before_key(ck(10)),
                                            position_in_partition::after_key(ck(89)), tombstone{50, 1});
    mutation older(s, pkey(1));
    add_rows(older, 0, 99, 10);
    auto full = dht::partition_range::full();
    auto sources = [&] {
        std::vector<combined_reader_source> inputs;
        inputs.push_back({make_fragment_vector_reader(s, to_fragments(newer), full), 50, streamed_forwarding::no});
        inputs.push_back({make_fragment_vector_reader(s, to_fragments(older), full, streamed_forwarding::no, false,
                                                      std::nullopt, 1),
                          10, streamed_forwarding::no});
        return inputs;
    };
    combined_reader_stats stats;
    auto r = make_combined_reader(s, sources(), false, streamed_forwarding::no, &stats);
    auto fs = co_await read_all(r);
    co_await r.close();
    auto got = mutation_from_fragments(s, fs);
    auto want = newer;
    want.apply(older);
    BOOST_CHECK(visible(got) == visible(want));
    BOOST_CHECK_EQUAL(stats.range_skips, 0u);
    BOOST_CHECK_GE(stats.covered_fragments_dropped, 79u);  // rows 11..89 at least
    BOOST_CHECK_EQUAL(got.partition().rows().size(), 20u);
    BOOST_CHECK_THROW(make_combined_reader(s, sources(), false, streamed_forwarding::yes), std::logic_error);
}
