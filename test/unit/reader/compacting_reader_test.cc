// Tests of the compacting reader against the model: compaction mode must give mutation_partition::purge's
// result, query mode a query result built here from drop_shadowed and liveness; forward and reversed, with
// next_partition at random points, sliced sources and clustering windows, every output stream validated; and a
// few hand-made cases.
#include "mutation/fragment_stream_validator.hh"
#include "reader/compacting_reader.hh"
#include "test/lib/mutation_model.hh"
#include "test/lib/random_mutation.hh"
#include "test/lib/reef_test.hh"
#include "test/lib/simple_keys.hh"
#include "runtime/reactor.hh"

#include <algorithm>
#include <random>
#include <set>

using namespace reef;
using namespace reef::testing;

namespace {

// The model of compaction: purge.
std::optional<mutation> model_compaction(mutation m, deletion_time_type now, deletion_time_type gc_before,
                                         write_time::timestamp_type max_purgeable) {
    m.partition().purge(now, gc_before, max_purgeable);
    if (is_empty(m)) {
        return std::nullopt;
    }
    return m;
}

// m's partition tombstone and static row, its rows inside `ranges`
// (forward) and its range tombstones clipped to them: what a forwarding
// read of those windows returns.
mutation restrict_to(const mutation& m, const clustering_ranges& ranges) {
    const schema& s = *m.schema();
    position_in_partition_comparator cmp(s);
    mutation out(m.schema(), m.decorated_key());
    auto& p = out.partition();
    p.apply(m.partition().partition_tombstone());
    for (auto& [id, c] : m.partition().static_row().cells()) {
        p.apply_static(s, id, c);
    }
    for (auto& [key, r] : m.partition().rows()) {
        auto pos = position_in_partition::for_key(key);
        for (auto& w : ranges) {
            if (cmp(w.start, pos) <= 0 && cmp(pos, w.end) < 0) {
                p.apply_row(s, key, r);
            }
        }
    }
    for (auto& e : m.partition().range_tombstones()) {
        for (auto& w : ranges) {
            auto& start = cmp(e.start, w.start) < 0 ? w.start : e.start;
            auto& end = cmp(e.end, w.end) < 0 ? e.end : w.end;
            if (cmp(start, end) < 0) {
                p.apply_range_tombstone(start, end, e.tomb);
            }
        }
    }
    return out;
}

struct read_result {
    std::vector<mutation_fragment> fragments;  // of the partitions read whole
    std::vector<dht::decorated_key> skipped;
};

// Reads everything, calling next_partition after a partition_start or a
// few fragments into a partition when `skip` says so; a skipped
// partition's fragments are left out of the result. The whole stream seen
// goes through the validator.
future<read_result> read_with_skips(mutation_reader& r, const schema& s, bool reversed, std::mt19937_64& rng,
                                    int skip_one_in) {
    read_result out;
    fragment_stream_validator v(s, reversed);
    std::vector<mutation_fragment> current;
    while (true) {
        // Buffer by buffer, as readers are meant to be consumed (a co_await
        // per fragment also deepens the stack of a debug build, where
        // symmetric transfer is not a tail call, until something suspends).
        if (r.is_buffer_empty()) {
            if (r.is_end_of_stream()) {
                break;
            }
            co_await r.fill_buffer();
            continue;
        }
        auto f = r.pop_mutation_fragment();
        v(f);
        current.push_back(std::move(f));
        if (std::holds_alternative<partition_end>(current.back())) {
            std::move(current.begin(), current.end(), std::back_inserter(out.fragments));
            current.clear();
            continue;
        }
        if (skip_one_in && std::uniform_int_distribution<int>(1, skip_one_in)(rng) == 1) {
            out.skipped.push_back(std::get<partition_start>(current.front()).key);
            current.clear();
            co_await r.next_partition();
            // The validator saw the partition begin and not end: a fresh
            // one for the rest (the order of the partitions kept is checked
            // against the model).
            v = fragment_stream_validator(s, reversed);
        }
    }
    v.on_end_of_stream();
    BOOST_REQUIRE(current.empty());
    co_return out;
}

std::vector<mutation_fragment> stream_of(const std::vector<mutation>& ms, bool reversed) {
    std::vector<mutation_fragment> out;
    for (auto& m : ms) {
        auto f = to_fragments(m, reversed);
        std::move(f.begin(), f.end(), std::back_inserter(out));
    }
    return out;
}

void check_no_tombstones(const std::vector<mutation_fragment>& fs, deletion_time_type now) {
    for (auto& f : fs) {
        BOOST_REQUIRE(!std::holds_alternative<range_tombstone_change>(f));
        if (auto* ps = std::get_if<partition_start>(&f)) {
            BOOST_REQUIRE(!ps->partition_tombstone);
        }
        const row* cells = nullptr;
        if (auto* cr = std::get_if<clustering_row>(&f)) {
            BOOST_REQUIRE(!cr->row_tombstone);
            BOOST_REQUIRE(cr->marker.empty() || cr->marker.is_live(now));
            cells = &cr->cells;
        } else if (auto* sr = std::get_if<static_row>(&f)) {
            cells = &sr->cells;
        }
        if (!cells) {
            continue;
        }
        for (auto& [id, c] : cells->cells()) {
            if (auto* cell = std::get_if<atomic_cell>(&c)) {
                BOOST_REQUIRE(cell->is_live(now));
            } else {
                BOOST_REQUIRE(!std::get<collection_cells>(c).tomb);
            }
        }
    }
}

struct random_params {
    deletion_time_type now;
    deletion_time_type gc_before;
    write_time::timestamp_type max_purgeable;
};

random_params random_times(mutation_generator& g) {
    // Deletion and expiry times are in [0, 3], timestamps in [0, 5].
    random_params p{g.rnd(0, 4), g.rnd(-1, 4), std::numeric_limits<write_time::timestamp_type>::max()};
    if (g.rnd(0, 2) == 0) {
        p.max_purgeable = g.rnd(0, 6);
    }
    return p;
}

// Printed only when a check fails (test contexts are streamed lazily).
struct described {
    const std::vector<mutation>& ms;
};
std::ostream& operator<<(std::ostream& os, const described& d) {
    return os << describe(d.ms);
}

future<> run_random(compaction_mode mode, int cases_per_schema, int skip_one_in) {
    uint64_t seed = pick_seed();
    BOOST_TEST_MESSAGE("seed " << seed << " (set REEF_SEED to repeat)");
    for (auto s : random_test_schemas()) {
        mutation_generator g(s, seed);
        for (int i = 0; i < cases_per_schema; ++i) {
            bool reversed = g.rnd(0, 1);
            auto times = random_times(g);
            // Enough partitions now and then to span several buffers.
            int n = g.rnd(0, 4) == 0 ? g.rnd(10, 40) : g.rnd(1, 4);
            std::set<dht::decorated_key> keys;
            for (int k = 0; k < n; ++k) {
                keys.insert(pkey(g.rnd(0, 1000)));
            }
            std::vector<mutation> input;
            for (auto& k : keys) {
                input.push_back(g.make(k, g.rnd(0, 1) ? 8 : 3));
            }
            // A query reads a slice now and then: the source clips range
            // tombstones to it, and rows in it are still shadowed by those
            // that start before it.
            std::optional<clustering_ranges> slice;
            if (mode == compaction_mode::query && g.rnd(0, 1)) {
                slice = g.make_ranges();
            }
            std::optional<clustering_ranges> stream_slice;
            if (slice) {
                stream_slice = reversed ? reverse_ranges(*slice) : *slice;
            }
            auto source = make_fragment_vector_reader(s, stream_of(input, reversed), dht::partition_range::full(),
                                                      streamed_forwarding::no, reversed, stream_slice);
            // Compaction asks max_purgeable per partition now and then, as
            // overlapping sstables make it differ from key to key.
            bool per_key = mode == compaction_mode::compaction && g.rnd(0, 2) == 0;
            auto max_purgeable_of = [](const dht::decorated_key& k) -> write_time::timestamp_type {
                return write_time::timestamp_type(uint64_t(k.get_token().value()) % 7);
            };
            auto r = per_key ? make_compacting_reader(std::move(source), times.now, mode, times.gc_before,
                                                      max_purgeable_fn(max_purgeable_of))
                             : make_compacting_reader(std::move(source), times.now, mode, times.gc_before,
                                                      times.max_purgeable);
            std::exception_ptr ex;
            read_result got;
            try {
                got = co_await read_with_skips(r, *s, reversed, g.rng(), skip_one_in);
            } catch (...) {
                ex = std::current_exception();
            }
            co_await r.close();
            // A real suspension unwinds the stack the ready awaits built up.
            co_await yield();
            BOOST_TEST_CONTEXT("seed " << seed << " table " << s->table() << " case " << i << " reversed " << reversed
                                       << " now " << times.now << " gc_before " << times.gc_before
                                       << " max_purgeable " << times.max_purgeable << " per key " << per_key
                                       << " sliced " << bool(slice)
                                       << "\ninput:\n"
                                       << described{input}) {
                if (ex) {
                    try {
                        std::rethrow_exception(ex);
                    } catch (const std::exception& e) {
                        BOOST_FAIL("read failed: " << e.what());
                    }
                }
                std::vector<mutation> expected;
                std::set<dht::decorated_key> skipped(got.skipped.begin(), got.skipped.end());
                for (auto& m : input) {
                    auto model = mode == compaction_mode::query
                                     ? model_query(m, times.now, slice)
                                     : model_compaction(m, times.now, times.gc_before,
                                                        per_key ? max_purgeable_of(m.decorated_key())
                                                                : times.max_purgeable);
                    if (!model) {
                        BOOST_REQUIRE_MESSAGE(!skipped.contains(m.decorated_key()), "an empty partition came out");
                        continue;
                    }
                    if (!skipped.contains(m.decorated_key())) {
                        expected.push_back(std::move(*model));
                    }
                }
                if (mode == compaction_mode::query) {
                    check_no_tombstones(got.fragments, times.now);
                }
                auto actual = mutations_from_fragments(s, got.fragments, reversed);
                BOOST_REQUIRE_MESSAGE(actual == expected, "expected:\n" << describe(expected) << "got:\n"
                                                                        << describe(actual));
            }
        }
    }
}

} // namespace

REEF_TEST_CASE(test_compaction_mode_matches_purge) {
    co_await run_random(compaction_mode::compaction, 600, 0);
}

REEF_TEST_CASE(test_query_mode_matches_model_query) {
    co_await run_random(compaction_mode::query, 700, 0);
}

REEF_TEST_CASE(test_next_partition_skips_what_was_seen) {
    co_await run_random(compaction_mode::compaction, 300, 4);
    co_await run_random(compaction_mode::query, 300, 4);
}

namespace {

// One partition through the compacting reader, the output validated.
future<std::vector<mutation_fragment>> compact(const mutation& m, compaction_mode mode, deletion_time_type now,
                                               deletion_time_type gc_before, bool reversed = false) {
    auto s = m.schema();
    auto source = make_fragment_vector_reader(s, to_fragments(m, reversed), dht::partition_range::full(),
                                              streamed_forwarding::no, reversed);
    auto r = make_compacting_reader(std::move(source), now, mode, gc_before);
    auto out = co_await read_all(r);
    co_await r.close();
    fragment_stream_validator v(*s, reversed);
    for (auto& f : out) {
        v(f);
    }
    v.on_end_of_stream();
    co_return out;
}

size_t count_of(const std::vector<mutation_fragment>& fs, size_t index) {
    return std::count_if(fs.begin(), fs.end(), [&](auto& f) { return f.index() == index; });
}

schema_ptr static_table() {
    schema_builder b("ks", "st");
    b.with_column("pk", int32_type(), column_kind::partition_key)
        .with_column("ck", int32_type(), column_kind::clustering_key)
        .with_column("s", int32_type(), column_kind::static_column)
        .with_column("v", int32_type(), column_kind::regular_column);
    b.options().gc_grace_seconds = 10;
    return b.build();
}

} // namespace

REEF_TEST_CASE(test_hand_made_cases) {
    auto s = static_table();
    // A partition with only a live static cell and a deleted row: a query
    // returns the static row alone (CQL: one row with a null ck).
    mutation m(s, pkey(1));
    m.partition().apply_static(*s, 0, atomic_cell::make_live(5, "s"));
    m.partition().apply_row(*s, ck(1), deletable_row{row_marker{3}, tombstone{4, 100}, {}});
    auto q = co_await compact(m, compaction_mode::query, 200, 0);
    BOOST_REQUIRE_EQUAL(q.size(), 3u);
    BOOST_CHECK(std::holds_alternative<static_row>(q[1]));
    // Compaction keeps the row tombstone until gc_before passes its
    // deletion time, then the row is gone.
    auto c1 = co_await compact(m, compaction_mode::compaction, 200, 100);
    BOOST_CHECK_EQUAL(count_of(c1, 2), 1u);
    auto c2 = co_await compact(m, compaction_mode::compaction, 200, 101);
    BOOST_CHECK_EQUAL(count_of(c2, 2), 0u);
    // gc_before defaults to now - gc_grace_seconds (10 here).
    auto r = make_compacting_reader(make_fragment_vector_reader(s, to_fragments(m)), 110, compaction_mode::compaction);
    auto c3 = co_await read_all(r);
    co_await r.close();
    BOOST_CHECK_EQUAL(count_of(c3, 2), 1u);
    auto r2 = make_compacting_reader(make_fragment_vector_reader(s, to_fragments(m)), 111, compaction_mode::compaction);
    auto c4 = co_await read_all(r2);
    co_await r2.close();
    BOOST_CHECK_EQUAL(count_of(c4, 2), 0u);

    // An expiring cell is dead at its expiry instant, and the row with it.
    mutation e(s, pkey(2));
    deletable_row er;
    er.cells.apply(0, atomic_cell::make_expiring(1, "v", 10, 50));
    e.partition().apply_row(*s, ck(1), er);
    auto out1 = co_await compact(e, compaction_mode::query, 49, 0);
    BOOST_CHECK_EQUAL(out1.size(), 3u);
    auto out2 = co_await compact(e, compaction_mode::query, 50, 0);
    BOOST_CHECK(out2.empty());
    // Compaction turns it into a tombstone from its write time (40) until
    // gc_before passes 40.
    auto ce = co_await compact(e, compaction_mode::compaction, 50, 40);
    BOOST_REQUIRE_EQUAL(ce.size(), 3u);
    auto& dead = std::get<atomic_cell>(*std::get<clustering_row>(ce[1]).cells.find(0));
    BOOST_CHECK(dead == atomic_cell::make_dead(1, 40));
    auto out3 = co_await compact(e, compaction_mode::compaction, 50, 41);
    BOOST_CHECK(out3.empty());

    // A range tombstone deletes the rows it covers in both directions; a
    // query shows neither it nor them, compaction keeps it alone.
    mutation rt(s, pkey(3));
    for (int k = 0; k < 5; ++k) {
        rt.partition().apply_row(*s, ck(k), deletable_row{row_marker{2}, {}, {}});
    }
    rt.partition().apply_range_tombstone(position_in_partition::before_key(ck(1)), position_in_partition::after_key(ck(3)),
                                         tombstone{2, 10});
    for (bool reversed : {false, true}) {
        auto rq = co_await compact(rt, compaction_mode::query, 20, 0, reversed);
        BOOST_CHECK_EQUAL(count_of(rq, 2), 2u);
        BOOST_CHECK_EQUAL(count_of(rq, 3), 0u);
        auto rc = co_await compact(rt, compaction_mode::compaction, 20, 0, reversed);
        BOOST_CHECK_EQUAL(count_of(rc, 2), 2u);
        BOOST_CHECK_EQUAL(count_of(rc, 3), 2u);
        auto rp = co_await compact(rt, compaction_mode::compaction, 20, 11, reversed);
        BOOST_CHECK_EQUAL(count_of(rp, 3), 0u);
    }

    // Only a partition tombstone: nothing to query; compaction keeps the
    // partition until the tombstone is purgeable.
    mutation pt(s, pkey(4));
    pt.partition().apply(tombstone{1, 10});
    auto out4 = co_await compact(pt, compaction_mode::query, 20, 0);
    BOOST_CHECK(out4.empty());
    auto out5 = co_await compact(pt, compaction_mode::compaction, 20, 10);
    BOOST_CHECK_EQUAL(out5.size(), 2u);
    auto out6 = co_await compact(pt, compaction_mode::compaction, 20, 11);
    BOOST_CHECK(out6.empty());

    // Clustering windows are refused without forwarding.
    auto w = make_compacting_reader(make_fragment_vector_reader(s, to_fragments(m)), 0, compaction_mode::query);
    bool threw = false;
    try {
        co_await w.fast_forward_to(position_range::full());
    } catch (const std::logic_error&) {
        threw = true;
    }
    BOOST_CHECK(threw);
    co_await w.close();
}

namespace {

// One partition of `rows` rows, all older than its partition tombstone,
// made as they are read, one fragment per fill_buffer.
class deleted_partition_reader final : public mutation_reader_impl {
public:
    deleted_partition_reader(schema_ptr s, int rows) : mutation_reader_impl(std::move(s)), _rows(rows) {
        _max_buffer_fragments = 1;
    }
    future<> fill_buffer() override {
        while (!is_buffer_full() && !_end_of_stream) {
            if (_next == -1) {
                push(partition_start{pkey(1), tombstone{10, 1}});
            } else if (_next < _rows) {
                push(clustering_row{ck(_next), row_marker{1}, {}, {}});
            } else {
                push(partition_end{});
                _end_of_stream = true;
            }
            ++_next;
        }
        co_return;
    }
    future<> next_partition() override { co_return; }
    future<> fast_forward_to(const dht::partition_range&) override { co_return; }
    future<> fast_forward_to(position_range) override { co_return; }
    future<> close() noexcept override { co_return; }

private:
    int _rows;
    int _next = -1;
};

} // namespace

// Every row dropped: one fill_buffer of the compacting reader runs through
// the whole partition, awaiting the source per fragment, and yields now and
// then (in a debug build the frames of sources that never suspend pile up
// until something does; 100,000 of them overflowed the stack).
REEF_TEST_CASE(test_long_run_of_dropped_fragments) {
    auto s = testing::int_table_schema();
    for (auto mode : {compaction_mode::query, compaction_mode::compaction}) {
        mutation_reader source(std::make_unique<deleted_partition_reader>(s, 100000));
        auto r = make_compacting_reader(std::move(source), 20, mode, 0);
        auto out = co_await read_all(r);
        co_await r.close();
        // A query sees nothing; compaction keeps the partition tombstone.
        BOOST_CHECK_EQUAL(out.size(), mode == compaction_mode::query ? 0u : 2u);
    }
}

namespace {

// Fragments until the end of the stream (or of the window).
future<> read_to_end(mutation_reader& r, std::vector<mutation_fragment>& out) {
    while (true) {
        if (r.is_buffer_empty()) {
            if (r.is_end_of_stream()) {
                co_return;
            }
            co_await r.fill_buffer();
            continue;
        }
        out.push_back(r.pop_mutation_fragment());
    }
}

// A forwarding consumer: each partition's start (and static row), then the
// windows one by one, then next_partition. The partition_end that a
// forwarding stream leaves out is added, so the result is a whole stream.
future<std::vector<mutation_fragment>> read_windows(mutation_reader& r, const clustering_ranges& windows) {
    std::vector<mutation_fragment> out;
    while (true) {
        size_t before = out.size();
        co_await read_to_end(r, out);
        if (out.size() == before) {
            co_return out;
        }
        for (auto& w : windows) {
            position_range window = w;
            co_await r.fast_forward_to(std::move(window));
            co_await read_to_end(r, out);
        }
        out.push_back(partition_end{});
        co_await r.next_partition();
    }
}

future<> run_forwarding(compaction_mode mode, int cases_per_schema) {
    uint64_t seed = pick_seed();
    BOOST_TEST_MESSAGE("seed " << seed << " (set REEF_SEED to repeat)");
    for (auto s : random_test_schemas()) {
        mutation_generator g(s, seed);
        for (int i = 0; i < cases_per_schema; ++i) {
            bool reversed = g.rnd(0, 1);
            auto times = random_times(g);
            std::set<dht::decorated_key> keys;
            for (int k = g.rnd(1, 4); k > 0; --k) {
                keys.insert(pkey(g.rnd(0, 1000)));
            }
            std::vector<mutation> input;
            for (auto& k : keys) {
                input.push_back(g.make(k));
            }
            auto windows = g.make_ranges();
            auto stream_windows = reversed ? reverse_ranges(windows) : windows;
            auto source = make_fragment_vector_reader(s, stream_of(input, reversed), dht::partition_range::full(),
                                                      streamed_forwarding::yes, reversed, std::nullopt,
                                                      size_t(g.rnd(1, 8)));
            auto r = make_compacting_reader(std::move(source), times.now, mode, times.gc_before, times.max_purgeable,
                                            streamed_forwarding::yes);
            std::exception_ptr ex;
            std::vector<mutation_fragment> got;
            try {
                got = co_await read_windows(r, stream_windows);
            } catch (...) {
                ex = std::current_exception();
            }
            co_await r.close();
            co_await yield();
            BOOST_TEST_CONTEXT("seed " << seed << " table " << s->table() << " case " << i << " reversed " << reversed
                                       << " now " << times.now << " gc_before " << times.gc_before
                                       << " max_purgeable " << times.max_purgeable << " windows " << windows.size()
                                       << "\ninput:\n" << described{input}) {
                if (ex) {
                    try {
                        std::rethrow_exception(ex);
                    } catch (const std::exception& e) {
                        BOOST_FAIL("read failed: " << e.what());
                    }
                }
                fragment_stream_validator v(*s, reversed);
                for (auto& f : got) {
                    v(f);
                }
                v.on_end_of_stream();
                // Every partition comes out, with what its windows hold.
                std::vector<mutation> expected;
                for (auto& m : input) {
                    if (mode == compaction_mode::query) {
                        expected.push_back(*model_query(m, times.now, windows, true));
                    } else {
                        auto purged = m;
                        purged.partition().purge(times.now, times.gc_before, times.max_purgeable);
                        expected.push_back(restrict_to(purged, windows));
                    }
                }
                if (mode == compaction_mode::query) {
                    check_no_tombstones(got, times.now);
                }
                auto actual = mutations_from_fragments(s, got, reversed);
                BOOST_REQUIRE_MESSAGE(actual == expected, "expected:\n" << describe(expected) << "got:\n"
                                                                        << describe(actual));
            }
        }
    }
}

} // namespace

REEF_TEST_CASE(test_forwarding_windows) {
    co_await run_forwarding(compaction_mode::compaction, 500);
    co_await run_forwarding(compaction_mode::query, 500);
}

// Partition-range fast-forwarding: read one partition's range (whole, or
// only its first fragment), then forward to a later partition's range;
// the output after the jump is that partition compacted, nothing of the
// one left behind leaks into it.
REEF_TEST_CASE(test_partition_range_fast_forward) {
    uint64_t seed = pick_seed();
    BOOST_TEST_MESSAGE("seed " << seed << " (set REEF_SEED to repeat)");
    for (auto s : random_test_schemas()) {
        mutation_generator g(s, seed);
        for (int i = 0; i < 300; ++i) {
            std::set<dht::decorated_key> keys;
            while (keys.size() < 3) {
                keys.insert(pkey(g.rnd(0, 1000)));
            }
            std::vector<mutation> input;
            for (auto& k : keys) {
                input.push_back(g.make(k));
            }
            auto mode = g.rnd(0, 1) ? compaction_mode::query : compaction_mode::compaction;
            auto times = random_times(g);
            bool whole_first = g.rnd(0, 1);
            auto& first = input[size_t(g.rnd(0, 1))];
            auto& second = input[2];
            auto model = [&](const mutation& m) {
                return mode == compaction_mode::query
                           ? model_query(m, times.now)
                           : model_compaction(m, times.now, times.gc_before, times.max_purgeable);
            };
            auto source = make_fragment_vector_reader(s, stream_of(input, false),
                                                      dht::partition_range::singular(first.decorated_key()),
                                                      streamed_forwarding::no, false, std::nullopt,
                                                      size_t(g.rnd(1, 8)));
            auto r = make_compacting_reader(std::move(source), times.now, mode, times.gc_before, times.max_purgeable);
            std::vector<mutation_fragment> before;
            if (whole_first) {
                co_await read_to_end(r, before);
            } else if (auto f = co_await r()) {
                before.push_back(std::move(*f));
            }
            auto next = dht::partition_range::singular(second.decorated_key());
            co_await r.fast_forward_to(next);
            std::vector<mutation_fragment> after;
            co_await read_to_end(r, after);
            co_await r.close();
            co_await yield();
            BOOST_TEST_CONTEXT("seed " << seed << " table " << s->table() << " case " << i << " whole " << whole_first
                                       << "\ninput:\n" << described{input}) {
                auto m1 = model(first);
                auto m2 = model(second);
                if (whole_first) {
                    auto got = mutations_from_fragments(s, before);
                    BOOST_REQUIRE_EQUAL(got.size(), m1 ? 1u : 0u);
                    if (m1) {
                        BOOST_REQUIRE_MESSAGE(got[0] == *m1, to_string(got[0]) << "\n" << to_string(*m1));
                    }
                } else {
                    BOOST_REQUIRE_EQUAL(before.size(), m1 ? 1u : 0u);
                    if (m1) {
                        BOOST_REQUIRE(std::get<partition_start>(before[0]).key == first.decorated_key());
                    }
                }
                fragment_stream_validator v(*s);
                for (auto& f : after) {
                    v(f);
                }
                v.on_end_of_stream();
                auto got = mutations_from_fragments(s, after);
                BOOST_REQUIRE_EQUAL(got.size(), m2 ? 1u : 0u);
                if (m2) {
                    BOOST_REQUIRE_MESSAGE(got[0] == *m2, to_string(got[0]) << "\n" << to_string(*m2));
                }
            }
        }
    }
}
