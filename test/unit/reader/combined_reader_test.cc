// Tests of the combined reader: random mutations split among 1..4 sources read back merged, forward and
// reversed, with slices, partition ranges, next_partition and windows, against the merged model; and the skip.
#include "mutation/fragment_stream_validator.hh"
#include "reader/combined_reader.hh"
#include "runtime/reactor.hh"
#include "test/lib/random_mutation.hh"
#include "test/lib/reef_test.hh"
#include "test/lib/simple_keys.hh"

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <sstream>

using namespace reef;
using testing::ck;
using testing::int_of;
using testing::pkey;

namespace {

// Every write timestamp in a fragment, rewritten by fn (cells, collection
// elements, markers, and partition, row, collection and range tombstones).
void map_timestamps(mutation_fragment& f, const std::function<api::timestamp_type(api::timestamp_type)>& fn) {
    auto tomb = [&](tombstone& t) {
        if (t) {
            t.timestamp = fn(t.timestamp);
        }
    };
    auto cell = [&](const atomic_cell& c) {
        auto ts = fn(c.timestamp());
        if (c.is_dead_marker()) {
            return atomic_cell::make_dead(ts, c.local_deletion_time());
        }
        if (c.is_expiring()) {
            return atomic_cell::make_expiring(ts, std::string(c.value()), c.ttl(), c.local_deletion_time());
        }
        return atomic_cell::make_live(ts, std::string(c.value()));
    };
    auto cells = [&](row& r) {
        row out;
        for (auto& [id, c] : r.cells()) {
            if (auto* a = std::get_if<atomic_cell>(&c)) {
                out.apply(id, cell(*a));
            } else {
                collection_cells coll = std::get<collection_cells>(c);
                tomb(coll.tomb);
                for (auto& [path, element] : coll.cells) {
                    element = cell(element);
                }
                // Into an empty column: the element order stays as it is.
                out.apply(id, std::move(coll), [](bytes_view, bytes_view) { return 0; });
            }
        }
        r = std::move(out);
    };
    if (auto* ps = std::get_if<partition_start>(&f)) {
        tomb(ps->partition_tombstone);
    } else if (auto* sr = std::get_if<static_row>(&f)) {
        cells(sr->cells);
    } else if (auto* cr = std::get_if<clustering_row>(&f)) {
        if (!cr->marker.empty()) {
            cr->marker.timestamp = fn(cr->marker.timestamp);
        }
        tomb(cr->row_tombstone);
        cells(cr->cells);
    } else if (auto* rtc = std::get_if<range_tombstone_change>(&f)) {
        tomb(rtc->tomb);
    }
}

api::timestamp_type max_timestamp(std::vector<mutation_fragment> fs) {
    api::timestamp_type max = api::missing_timestamp;
    for (auto& f : fs) {
        map_timestamps(f, [&](api::timestamp_type ts) {
            max = std::max(max, ts);
            return ts;
        });
    }
    return max;
}

mutation shift_timestamps(const mutation& m, api::timestamp_type delta) {
    auto fs = to_fragments(m);
    for (auto& f : fs) {
        map_timestamps(f, [&](api::timestamp_type ts) { return ts + delta; });
    }
    return mutation_from_fragments(m.schema(), fs);
}

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

// How a test reads: the partition ranges (the first at creation, then
// fast_forward_to), the keys left by next_partition right after their
// partition_start, and, for a forwarding read, the windows of each
// partition (in the read's order).
struct read_plan {
    std::vector<dht::partition_range> ranges;
    std::set<dht::decorated_key> skipped;
    std::optional<clustering_ranges> windows;
};

struct read_result {
    std::vector<dht::decorated_key> keys;  // every partition_start seen, skipped ones too
    std::vector<mutation> mutations;       // the partitions read
};

// Reads as the plan says; every partition (window by window, then closed)
// goes through the stream validator.
future<read_result> read_by_plan(mutation_reader& r, schema_ptr s, const read_plan& plan, bool reversed) {
    read_result out;
    fragment_stream_validator v(*s, reversed);
    std::vector<mutation_fragment> fs;
    for (size_t i = 0; i < plan.ranges.size(); ++i) {
        if (i > 0) {
            co_await r.fast_forward_to(plan.ranges[i]);
        }
        while (auto f = co_await r()) {
            auto* ps = std::get_if<partition_start>(&*f);
            BOOST_REQUIRE_MESSAGE(ps, "expected partition_start, got " << kind_name(*f));
            out.keys.push_back(ps->key);
            if (plan.skipped.contains(ps->key)) {
                co_await r.next_partition();
                continue;
            }
            std::vector<mutation_fragment> partition{std::move(*f)};
            if (!plan.windows) {
                while (true) {
                    auto g = co_await r();
                    BOOST_REQUIRE_MESSAGE(g, "stream ends inside a partition");
                    bool end = std::holds_alternative<partition_end>(*g);
                    partition.push_back(std::move(*g));
                    if (end) {
                        break;
                    }
                }
            } else {
                while (auto g = co_await r()) {
                    partition.push_back(std::move(*g));
                }
                for (auto& w : *plan.windows) {
                    co_await r.fast_forward_to(w);
                    while (auto g = co_await r()) {
                        partition.push_back(std::move(*g));
                    }
                }
                partition.push_back(partition_end{});
                co_await r.next_partition();
            }
            for (auto& g : partition) {
                v(g);
            }
            out.mutations.push_back(mutation_from_fragments(s, partition, reversed));
        }
    }
    v.on_end_of_stream();
    co_return out;
}

// What a read returns: the partition with what its tombstones delete dropped.
mutation visible(mutation m) {
    m.partition().drop_shadowed();
    return m;
}

struct source_data {
    std::vector<mutation_fragment> fragments;  // whole partitions in ring order
    api::timestamp_type max_timestamp = api::missing_timestamp;
};

mutation_reader make_source(schema_ptr s, const source_data& d, const read_plan& plan, bool reversed,
                            const std::optional<clustering_ranges>& slice, size_t buffer_fragments) {
    std::vector<mutation_fragment> fs;
    for (auto& m : mutations_from_fragments(s, d.fragments)) {
        for (auto& f : to_fragments(m, reversed)) {
            fs.push_back(std::move(f));
        }
    }
    return make_fragment_vector_reader(s, std::move(fs), plan.ranges.front(), streamed_forwarding::yes, reversed, slice,
                                       buffer_fragments);
}

std::string what(std::exception_ptr e) {
    try {
        std::rethrow_exception(e);
    } catch (const std::exception& x) {
        return x.what();
    } catch (...) {
        return "unknown exception";
    }
}

std::string describe(const std::vector<mutation>& ms) {
    std::ostringstream o;
    for (auto& m : ms) {
        o << "\n  " << to_string(m);
    }
    return o.str();
}

dht::partition_range random_range(testing::mutation_generator& g, const std::vector<dht::decorated_key>& keys,
                                   size_t& from) {
    using bound = dht::partition_range::bound;
    // A range over keys[from..], moving `from` past it.
    if (from >= keys.size() || g.rnd(0, 3) == 0) {
        from = keys.size();
        return from ? dht::partition_range(bound{dht::ring_position::for_key(keys.back()), false}, std::nullopt)
                    : dht::partition_range::full();
    }
    size_t a = from + size_t(g.rnd(0, int(keys.size() - from) - 1));
    size_t b = a + size_t(g.rnd(0, int(keys.size() - a) - 1));
    from = b + 1;
    if (a == b && g.rnd(0, 1)) {
        return dht::partition_range::singular(keys[a]);
    }
    return dht::partition_range(bound{dht::ring_position::for_key(keys[a]), true},
                                bound{dht::ring_position::for_key(keys[b]), bool(g.rnd(0, 1))});
}

// One random case: mutations of a few keys split among sources, read
// combined and compared with the model.
future<> random_case(schema_ptr s, testing::mutation_generator& g, const std::string& context, bool with_skip_layers,
                     combined_reader_stats& stats) {
    std::vector<dht::decorated_key> keys;
    int nkeys = g.rnd(1, 5);
    for (int i = 0; i < nkeys; ++i) {
        keys.push_back(pkey(g.rnd(0, 9)));
    }
    std::sort(keys.begin(), keys.end());
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());

    // Layers: source i's timestamps are raised by 10 * layer, so that a
    // newer source's tombstones can be above an older source's every write
    // (an LSM's flushes); same layers keep the frequent ties.
    int nsources = g.rnd(1, 4);
    std::vector<int> layer(nsources, 0);
    if (with_skip_layers) {
        for (auto& l : layer) {
            l = g.rnd(0, 3);
        }
    }
    std::vector<std::vector<mutation>> per_source(nsources);
    std::vector<mutation> model;
    for (auto& k : keys) {
        std::optional<mutation> merged;
        int versions = g.rnd(1, 4);
        for (int v = 0; v < versions; ++v) {
            int i = g.rnd(0, nsources - 1);
            auto m = shift_timestamps(g.make(k, 6), 10 * layer[i]);
            if (!merged) {
                merged = m;
            } else {
                merged->apply(m);
            }
            auto& ms = per_source[i];
            if (!ms.empty() && ms.back().decorated_key() == k) {
                ms.back().apply(m);
            } else {
                ms.push_back(std::move(m));
            }
        }
        model.push_back(std::move(*merged));
    }
    std::vector<source_data> sources(nsources);
    for (int i = 0; i < nsources; ++i) {
        for (auto& m : per_source[i]) {
            for (auto& f : to_fragments(m)) {
                sources[i].fragments.push_back(std::move(f));
            }
        }
        sources[i].max_timestamp = max_timestamp(sources[i].fragments);
    }

    bool reversed = g.rnd(0, 1);
    std::optional<clustering_ranges> slice;
    if (g.rnd(0, 1)) {
        slice = g.make_ranges();
        if (reversed) {
            slice = reverse_ranges(*slice);
        }
    }
    read_plan plan;
    size_t from = 0;
    int nranges = g.rnd(0, 2) ? 1 : g.rnd(2, 3);
    for (int i = 0; i < nranges; ++i) {
        plan.ranges.push_back(g.rnd(0, 2) || i > 0 ? random_range(g, keys, from) : dht::partition_range::full());
        if (i == 0 && plan.ranges[0].start() == std::nullopt && plan.ranges[0].end() == std::nullopt) {
            break;  // the full range: nothing after it
        }
    }
    for (auto& k : keys) {
        if (g.rnd(0, 5) == 0) {
            plan.skipped.insert(k);
        }
    }
    if (g.rnd(0, 2) == 0) {
        plan.windows = g.make_ranges();
        if (reversed) {
            plan.windows = reverse_ranges(*plan.windows);
        }
    }
    auto fwd = plan.windows ? streamed_forwarding::yes : streamed_forwarding::no;

    // The model: the merged mutations read by the same plan through the
    // fragment vector reader (whose slicing and windows have their own tests).
    std::vector<mutation_fragment> model_fragments;
    for (auto& m : model) {
        for (auto& f : to_fragments(m, reversed)) {
            model_fragments.push_back(std::move(f));
        }
    }
    auto model_reader = make_fragment_vector_reader(s, std::move(model_fragments), plan.ranges.front(), fwd, reversed, slice);
    auto want = co_await read_by_plan(model_reader, s, plan, reversed);
    co_await model_reader.close();

    std::vector<combined_reader_source> inputs;
    for (auto& src : sources) {
        // Buffers of 1 to 3 fragments, or large ones.
        size_t buffer_fragments = g.rnd(0, 3) ? size_t(g.rnd(1, 3)) : 128;
        inputs.push_back(combined_reader_source{make_source(s, src, plan, reversed, slice, buffer_fragments), src.max_timestamp});
    }
    auto combined = make_combined_reader(s, std::move(inputs), reversed, fwd, &stats);
    read_result got;
    try {
        got = co_await read_by_plan(combined, s, plan, reversed);
    } catch (...) {
        BOOST_ERROR(context << (reversed ? " reversed" : "") << ": " << what(std::current_exception()));
    }
    co_await combined.close();

    // The comparison: the same partitions, each equal to the model's once
    // shadowed data is dropped from both. The combined stream may differ
    // from the model's in representation only: it skips (never reads) a
    // source's data that a newer tombstone deletes, and it may carry range
    // tombstones that the partition tombstone covers; drop_shadowed removes
    // exactly such data and tombstones, and nothing a read returns.
    BOOST_CHECK_MESSAGE(got.keys == want.keys, context << ": partitions differ");
    std::vector<mutation> got_visible, want_visible;
    for (auto& m : got.mutations) {
        got_visible.push_back(visible(m));
    }
    for (auto& m : want.mutations) {
        want_visible.push_back(visible(m));
    }
    BOOST_CHECK_MESSAGE(got_visible == want_visible, context << (reversed ? " reversed" : "") << ":\n got" << describe(got_visible)
                                                          << "\n want" << describe(want_visible));
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
            co_await random_case(s, g, context, i % 2 == 1, stats);
            // Back to the loop: in debug builds (-O0, no tail calls) every
            // co_await that completes at once keeps its stack frames until
            // the task really suspends.
            co_await yield();
        }
    }
    BOOST_TEST_MESSAGE("range skips " << stats.range_skips << ", partition skips " << stats.partition_skips
                                      << ", covered fragments dropped " << stats.covered_fragments_dropped);
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
void add_rows(mutation& m, int from, int to, api::timestamp_type ts) {
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
