// Randomized tests of the memtable and its reader against a model (a map of merged mutations):
// partition ranges, slices, forward and reversed, forwarding windows, next_partition, writes during reads, occupancy.
#include "db/dirty_memory_manager.hh"
#include "db/memtable.hh"
#include "db/memtable_reader.hh"
#include "mutation/fragment_stream_validator.hh"
#include "runtime/reactor.hh"
#include "reader/mutation_fragment_filter.hh"
#include "test/lib/random_mutation.hh"
#include "test/lib/reef_test.hh"
#include "test/lib/reversed_stream.hh"
#include "test/lib/simple_keys.hh"

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

using namespace reef;
using testing::mutation_generator;
using testing::pkey;
using testing::describe;
using testing::same;

namespace {

using model_type = std::map<dht::decorated_key, mutation>;

// The next fragment, after a yield to the reactor. In debug builds (-O0
// with ASan) GCC 12 does not make symmetric transfer a tail call, so a
// coroutine that keeps awaiting coroutines which finish without
// suspending grows the stack by a few frames per await, and a test body
// that never truly suspends overflows it after a few thousand fragments.
// Yielding unwinds the stack to the reactor.
future<std::optional<mutation_fragment>> next(mutation_reader& r) {
    co_await yield();
    co_return co_await r();
}

future<std::vector<mutation_fragment>> read_everything(mutation_reader& r) {
    std::vector<mutation_fragment> out;
    while (auto f = co_await next(r)) {
        out.push_back(std::move(*f));
    }
    co_return out;
}

void validate(const schema& s, const std::vector<mutation_fragment>& fs, bool reversed) {
    fragment_stream_validator v(s, reversed);
    for (auto& f : fs) {
        v(f);
    }
    v.on_end_of_stream();
}

// One partition of the model as a sliced read gives it: to_fragments
// through a filter over the slice, every fragment fed (the filter itself
// drops what is outside; no skipping, so nothing of the reader's walk is
// reused here).
std::vector<mutation_fragment> sliced_partition(const mutation& m, const clustering_ranges& slice, bool reversed) {
    auto frags = to_fragments(m, reversed);
    mutation_fragment_filter filter(*m.schema(), slice, reversed);
    std::vector<mutation_fragment> out{frags.front()};
    for (size_t i = 1; i < frags.size(); ++i) {
        filter.consume(frags[i], out);
    }
    return out;
}

// The whole read of the model: the partitions in the range, in order.
std::vector<mutation_fragment> expected_read(const model_type& model, const dht::partition_range& pr,
                                             const clustering_ranges& slice, bool reversed) {
    std::vector<mutation_fragment> out;
    for (auto& [k, m] : model) {
        if (pr.contains(k)) {
            auto p = sliced_partition(m, slice, reversed);
            out.insert(out.end(), p.begin(), p.end());
        }
    }
    return out;
}

dht::ring_position random_ring_position(mutation_generator& g, const std::vector<dht::decorated_key>& keys) {
    auto& k = keys[g.rnd(0, int(keys.size()) - 1)];
    switch (g.rnd(0, 2)) {
    case 0: return dht::ring_position::before_token(k.get_token());
    case 1: return dht::ring_position::after_token(k.get_token());
    default: return dht::ring_position::for_key(k);
    }
}

std::optional<dht::partition_range::bound> random_bound(mutation_generator& g, const std::vector<dht::decorated_key>& keys) {
    if (g.rnd(0, 3) == 0) {
        return std::nullopt;
    }
    return dht::partition_range::bound{random_ring_position(g, keys), bool(g.rnd(0, 1))};
}

// A random range over the keys (possibly empty or inverted), or a pair of
// ranges the second of which starts after the first ends (for
// fast_forward_to): split at a key.
std::vector<dht::partition_range> random_partition_ranges(mutation_generator& g, const std::vector<dht::decorated_key>& keys) {
    switch (g.rnd(0, 4)) {
    case 0: return {dht::partition_range::full()};
    case 1: return {dht::partition_range::singular(keys[g.rnd(0, int(keys.size()) - 1)])};
    case 2: {
        auto& split = keys[g.rnd(0, int(keys.size()) - 1)];
        bool first_has_it = g.rnd(0, 1);
        dht::partition_range a(random_bound(g, keys), dht::partition_range::bound{dht::ring_position::for_key(split), first_has_it});
        dht::partition_range b(dht::partition_range::bound{dht::ring_position::for_key(split), !first_has_it}, random_bound(g, keys));
        // The second starts at or after the split; if its random end is
        // before that, it is simply empty.
        return {a, b};
    }
    default: return {dht::partition_range(random_bound(g, keys), random_bound(g, keys))};
    }
}

clustering_ranges random_slice(mutation_generator& g, bool reversed) {
    auto r = g.make_ranges();
    return reversed ? reverse_ranges(r) : r;
}

struct model_memtable {
    schema_ptr s;
    std::shared_ptr<memtable> mt;
    model_type model;
    std::vector<dht::decorated_key> keys;  // sorted, all that may be written

    model_memtable(schema_ptr schema, int nkeys) : s(schema), mt(std::make_shared<memtable>(schema)) {
        for (int i = 0; i < nkeys; ++i) {
            keys.push_back(pkey(i));
        }
        std::sort(keys.begin(), keys.end());
    }
    void apply(const mutation& m) {
        mt->apply(m);
        auto [it, inserted] = model.try_emplace(m.decorated_key(), m);
        if (!inserted) {
            it->second.apply(m);
        }
    }
    void apply_random(mutation_generator& g, int max_rows = 8) {
        apply(g.make(keys[g.rnd(0, int(keys.size()) - 1)], max_rows));
    }
};

// Timestamps of a stream, walked over its fragments (another path than
// the memtable's walk over partitions).
void stream_timestamps(const std::vector<mutation_fragment>& fs, write_time::timestamp_type& lo, write_time::timestamp_type& hi) {
    auto note = [&](write_time::timestamp_type ts) {
        if (ts != write_time::missing_timestamp) {
            lo = std::min(lo, ts);
            hi = std::max(hi, ts);
        }
    };
    auto cells = [&](const row& r) {
        for (auto& [id, c] : r.cells()) {
            std::visit([&](auto& v) {
                if constexpr (std::is_same_v<std::decay_t<decltype(v)>, atomic_cell>) {
                    note(v.timestamp());
                } else {
                    note(v.tomb.timestamp);
                    for (auto& [path, cell] : v.cells) {
                        note(cell.timestamp());
                    }
                }
            }, c);
        }
    };
    for (auto& f : fs) {
        if (auto* ps = std::get_if<partition_start>(&f)) {
            note(ps->partition_tombstone.timestamp);
        } else if (auto* sr = std::get_if<static_row>(&f)) {
            cells(sr->cells);
        } else if (auto* cr = std::get_if<clustering_row>(&f)) {
            note(cr->marker.timestamp);
            note(cr->row_tombstone.timestamp);
            cells(cr->cells);
        } else if (auto* rtc = std::get_if<range_tombstone_change>(&f)) {
            note(rtc->tomb.timestamp);
        }
    }
}

// Reads without forwarding, calling next_partition at random points, and
// checks every fragment against the expected stream: exactly the same
// fragments (the reader promises to_fragments through the filter, so equal
// representations are the right test, not just equivalent ones).
future<> check_plain_read(model_memtable& t, mutation_generator& g, std::string ctx) {
    bool reversed = g.rnd(0, 1);
    auto slice = random_slice(g, reversed);
    auto ranges = random_partition_ranges(g, t.keys);
    bool skips = g.rnd(0, 2) == 0;
    bool skipped_any = false;
    size_t buffer = g.rnd(0, 1) ? 0 : size_t(g.rnd(1, 5));
    std::vector<mutation_fragment> expected;
    for (auto& pr : ranges) {
        auto e = expected_read(t.model, pr, slice, reversed);
        expected.insert(expected.end(), e.begin(), e.end());
    }
    validate(*t.s, expected, reversed);
    auto r = make_memtable_reader(t.mt, t.s, {.range = ranges.front(), .slice = slice, .order = read_order_for(reversed)},
                                  buffer);
    std::vector<mutation_fragment> got;
    size_t i = 0;
    for (size_t ri = 0; ri < ranges.size(); ++ri) {
        if (ri > 0) {
            auto& pr = ranges[ri];
            co_await r.fast_forward_to(pr);
        }
        while (auto f = co_await next(r)) {
            BOOST_REQUIRE_MESSAGE(i < expected.size(), ctx << ": extra fragment " << describe(*f));
            BOOST_REQUIRE_MESSAGE(same(*f, expected[i]), ctx << ": fragment " << i << " is " << describe(*f)
                                                              << ", expected " << describe(expected[i]));
            ++i;
            got.push_back(std::move(*f));
            if (skips && !std::holds_alternative<partition_end>(got.back()) && g.rnd(0, 3) == 0) {
                co_await r.next_partition();
                skipped_any = true;
                while (i < expected.size() && !std::holds_alternative<partition_start>(expected[i])) {
                    ++i;
                }
                skips = g.rnd(0, 1);  // sometimes read the rest whole
            }
        }
    }
    BOOST_REQUIRE_MESSAGE(i == expected.size(), ctx << ": " << i << " fragments read, " << expected.size() << " expected");
    if (!skipped_any) {
        validate(*t.s, got, reversed);  // a skipped partition leaves a truncated one behind
    }
    co_await r.close();
}

// A forwarding read: each partition is read through random windows; the
// windows' fragments, gathered into a partition, must equal the model's
// partition filtered by the slice and then by the windows. Windows clip
// range tombstones at their own bounds, so the streams differ from one
// filter over the intersection by where a range tombstone is split; the
// mutations built from them (range tombstone lists are canonical) must be
// equal. No drop_shadowed: neither side drops anything, so it would only hide differences.
future<> check_forwarding_read(model_memtable& t, mutation_generator& g, std::string ctx) {
    bool reversed = g.rnd(0, 1);
    auto slice = random_slice(g, reversed);
    auto pr = random_partition_ranges(g, t.keys).front();
    size_t buffer = g.rnd(0, 1) ? 0 : size_t(g.rnd(1, 5));
    auto r = make_memtable_reader(
        t.mt, t.s,
        {.range = pr, .slice = slice, .order = read_order_for(reversed), .forwarding = streamed_forwarding::yes}, buffer);
    std::vector<dht::decorated_key> want_keys;
    for (auto& [k, m] : t.model) {
        if (pr.contains(k)) {
            want_keys.push_back(k);
        }
    }
    size_t pi = 0;
    while (auto f = co_await next(r)) {
        BOOST_REQUIRE_MESSAGE(std::holds_alternative<partition_start>(*f), ctx << ": expected partition_start, got " << describe(*f));
        BOOST_REQUIRE_MESSAGE(pi < want_keys.size(), ctx << ": extra partition");
        auto& key = std::get<partition_start>(*f).key;
        BOOST_REQUIRE_MESSAGE(key == want_keys[pi], ctx << ": partition " << pi << " has the wrong key");
        const mutation& m = t.model.at(key);
        std::vector<mutation_fragment> stream{std::move(*f)};
        while (auto g2 = co_await next(r)) {
            BOOST_REQUIRE_MESSAGE(std::holds_alternative<static_row>(*g2), ctx << ": before any window: " << describe(*g2));
            stream.push_back(std::move(*g2));
        }
        auto windows = random_slice(g, reversed);
        bool all_windows = g.rnd(0, 3) != 0;
        if (!all_windows && !windows.empty()) {
            windows.erase(windows.begin() + g.rnd(0, int(windows.size()) - 1), windows.end());
        }
        // Sometimes a window is cut short by the next one opening at the
        // position just after the last fragment read (as the combined
        // reader does to skip deleted rows); the windows as read are then
        // [start, cut) and [cut, end of the next one).
        position_in_partition_comparator order(*t.s, reversed);
        clustering_ranges read_windows;
        for (size_t wi = 0; wi < windows.size(); ++wi) {
            position_range w = windows[wi];
            position_range window = w;
            co_await r.fast_forward_to(std::move(window));
            int cut_after = g.rnd(0, 2) == 0 ? g.rnd(1, 6) : -1;
            const auto& cut_end = wi + 1 < windows.size() ? windows[wi + 1].end : w.end;
            std::optional<position_in_partition> cut;
            tombstone open;  // in force in this window's output
            int n = 0;
            while (auto g2 = co_await next(r)) {
                BOOST_REQUIRE_MESSAGE(!std::holds_alternative<partition_start>(*g2) && !std::holds_alternative<partition_end>(*g2),
                                      ctx << ": inside a window: " << describe(*g2));
                if (auto* rtc = std::get_if<range_tombstone_change>(&*g2)) {
                    open = rtc->tomb;
                }
                auto after = std::holds_alternative<clustering_row>(*g2)
                    ? position_in_partition::after_key(std::get<clustering_row>(*g2).key) : position_of(*g2);
                stream.push_back(std::move(*g2));
                if (++n == cut_after && order(after, cut_end) < 0) {
                    cut = std::move(after);
                    break;
                }
            }
            if (!cut) {
                read_windows.push_back(w);
                continue;
            }
            // Each window starts with nothing in force (what the combined
            // reader assumes of its sources), so the cut window's tombstone
            // ends at the cut.
            if (open) {
                stream.push_back(range_tombstone_change{*cut, {}});
            }
            if (order(w.start, *cut) < 0) {
                read_windows.push_back({w.start, *cut});
            }
            position_range rest{*cut, cut_end};
            if (wi + 1 < windows.size()) {
                windows[wi + 1] = rest;
            } else {
                windows.push_back(rest);
            }
        }
        windows = read_windows;
        stream.push_back(partition_end{});
        validate(*t.s, stream, reversed);
        auto got = mutation_from_fragments(t.s, stream, reversed);
        // The expectation: the slice's stream through a second filter over the windows.
        auto sliced = sliced_partition(m, slice, reversed);
        mutation_fragment_filter window_filter(*t.s, windows, reversed);
        std::vector<mutation_fragment> want_stream{sliced.front()};
        for (size_t i = 1; i < sliced.size(); ++i) {
            window_filter.consume(sliced[i], want_stream);
        }
        auto want = mutation_from_fragments(t.s, want_stream, reversed);
        if (!(got == want)) {
            // Shown with --log_level=message.
            for (auto& w : windows) {
                BOOST_TEST_MESSAGE("window " << to_string(w.start) << " .. " << to_string(w.end));
            }
            for (auto& w : slice) {
                BOOST_TEST_MESSAGE("slice " << to_string(w.start) << " .. " << to_string(w.end));
            }
            for (auto& f : stream) {
                BOOST_TEST_MESSAGE("got " << describe(f));
            }
            for (auto& f : want_stream) {
                BOOST_TEST_MESSAGE("want " << describe(f));
            }
        }
        BOOST_REQUIRE_MESSAGE(got == want, ctx << ": partition " << pi << " through windows\n got  " << to_string(got)
                                               << "\n want " << to_string(want));
        ++pi;
        co_await r.next_partition();
    }
    BOOST_REQUIRE_MESSAGE(pi == want_keys.size(), ctx << ": " << pi << " partitions read, " << want_keys.size() << " expected");
    co_await r.close();
}

std::string context(uint64_t seed, const schema& s, int i) {
    return "seed " + std::to_string(seed) + " table " + s.table() + " case " + std::to_string(i);
}

} // namespace

// Random memtables (several mutations per key, so merging matters) read
// with random ranges and slices, forward and reversed, plain and
// forwarding, against the model; also partition_count, empty and the
// timestamp bounds.
REEF_TEST_CASE(test_reads_match_model) {
    uint64_t seed = testing::pick_seed();
    BOOST_TEST_MESSAGE("seed " << seed << " (set REEF_SEED to repeat)");
    for (auto s : testing::random_test_schemas()) {
        mutation_generator g(s, seed);
        for (int i = 0; i < 100; ++i) {
            auto ctx = context(seed, *s, i);
            model_memtable t(s, g.rnd(1, 12));
            BOOST_REQUIRE(t.mt->empty());
            int writes = g.rnd(0, 3 * int(t.keys.size()));
            write_time::timestamp_type lo = std::numeric_limits<write_time::timestamp_type>::max(), hi = write_time::missing_timestamp;
            for (int w = 0; w < writes; ++w) {
                auto m = g.make(t.keys[g.rnd(0, int(t.keys.size()) - 1)], g.rnd(0, 1) ? 8 : 30);
                stream_timestamps(to_fragments(m), lo, hi);
                t.apply(m);
            }
            BOOST_REQUIRE_EQUAL(t.mt->partition_count(), t.model.size());
            BOOST_REQUIRE_EQUAL(t.mt->empty(), t.model.empty());
            BOOST_REQUIRE_EQUAL(t.mt->min_timestamp(), lo);
            BOOST_REQUIRE_EQUAL(t.mt->max_timestamp(), hi);
            BOOST_REQUIRE_EQUAL(t.mt->occupancy(), t.mt->compute_occupancy());
            for (int rd = 0; rd < 6; ++rd) {
                auto rctx = ctx + " read " + std::to_string(rd);
                if (g.rnd(0, 2) == 0) {
                    co_await check_forwarding_read(t, g, rctx);
                } else {
                    co_await check_plain_read(t, g, rctx);
                }
            }
        }
    }
}

// A plain full read validates as one stream and rebuilds the model exactly.
REEF_TEST_CASE(test_full_read_rebuilds_model) {
    uint64_t seed = testing::pick_seed();
    BOOST_TEST_MESSAGE("seed " << seed << " (set REEF_SEED to repeat)");
    for (auto s : testing::random_test_schemas()) {
        mutation_generator g(s, seed);
        for (int i = 0; i < 50; ++i) {
            model_memtable t(s, g.rnd(1, 20));
            for (int w = 0; w < 40; ++w) {
                t.apply_random(g);
            }
            for (bool reversed : {false, true}) {
                auto r = make_memtable_reader(t.mt, t.s, {.order = read_order_for(reversed)});
                auto got = co_await read_everything(r);
                co_await r.close();
                validate(*s, got, reversed);
                auto ms = mutations_from_fragments(s, got, reversed);
                BOOST_REQUIRE_EQUAL(ms.size(), t.model.size());
                size_t j = 0;
                for (auto& [k, m] : t.model) {
                    BOOST_REQUIRE_MESSAGE(ms[j] == m, context(seed, *s, i) << (reversed ? " reversed" : "") << "\n got  "
                                                                           << to_string(ms[j]) << "\n want " << to_string(m));
                    ++j;
                }
            }
        }
    }
}

// One read with writes (write()) between its fills: see test_writes_during_read for what is checked.
template <typename Write>
future<> check_writes_during_read(model_memtable& t, mutation_generator& g, std::string ctx, clustering_ranges slice,
                                  bool reversed, Write write) {
    auto& s = t.s;
    auto start = t.model;
    auto pr = g.rnd(0, 2) ? dht::partition_range::full() : random_partition_ranges(g, t.keys).front();
    auto r = make_memtable_reader(t.mt, t.s, {.range = pr, .slice = slice, .order = read_order_for(reversed)},
                                  size_t(g.rnd(1, 4)));
    std::vector<mutation_fragment> got;
    std::set<dht::decorated_key> skipped;
    size_t partition_first = 0;
    while (true) {
        if (g.rnd(0, 1)) {
            for (int w = g.rnd(1, 3); w > 0; --w) {
                write();
            }
        }
        auto f = co_await next(r);
        if (!f) {
            break;
        }
        if (std::holds_alternative<partition_start>(*f)) {
            partition_first = got.size();
        }
        got.push_back(std::move(*f));
        if (!std::holds_alternative<partition_end>(got.back()) && g.rnd(0, 15) == 0) {
            // Drop the skipped partition's fragments: what stays is whole partitions.
            skipped.insert(std::get<partition_start>(got[partition_first]).key);
            got.erase(got.begin() + std::ptrdiff_t(partition_first), got.end());
            co_await r.next_partition();
        }
    }
    co_await r.close();
    validate(*s, got, reversed);
    auto read = mutations_from_fragments(s, got, reversed);
    std::map<dht::decorated_key, const mutation*> by_key;
    for (auto& m : read) {
        by_key[m.decorated_key()] = &m;
        BOOST_REQUIRE_MESSAGE(pr.contains(m.decorated_key()), ctx << ": partition outside the range");
    }
    for (auto& [k, m0] : start) {
        if (!pr.contains(k) || skipped.count(k)) {
            continue;
        }
        BOOST_REQUIRE_MESSAGE(by_key.count(k), ctx << ": a partition present at the start was not read");
        auto floor = mutation_from_fragments(s, sliced_partition(m0, slice, reversed), reversed);
        mutation merged = *by_key[k];
        merged.apply(floor);
        BOOST_REQUIRE_MESSAGE(merged == *by_key[k], ctx << ": read lost data present at the start\n read  "
                                                       << to_string(*by_key[k]) << "\n start " << to_string(floor));
    }
    for (auto& m : read) {
        auto ceiling = mutation_from_fragments(s, sliced_partition(t.model.at(m.decorated_key()), slice, reversed), reversed);
        mutation merged = ceiling;
        merged.apply(m);
        BOOST_REQUIRE_MESSAGE(merged == ceiling, ctx << ": read holds data the memtable never had\n read " << to_string(m)
                                                     << "\n end  " << to_string(ceiling));
    }
}

// Writes between fill_buffer calls (buffers of 1 to 4 fragments, so at
// many points), into the partitions being read. The definition checked:
// the stream is valid; each partition read holds at least what the model
// held when the read started (applying the start's sliced partition to it
// changes nothing) and at most what it holds at the end (applying it to
// the end's sliced partition changes nothing); every partition of the
// range that existed at the start is read unless next_partition skipped it.
// Run under ASan (debug mode) this also checks that no iterator dangles.
REEF_TEST_CASE(test_writes_during_read) {
    uint64_t seed = testing::pick_seed();
    BOOST_TEST_MESSAGE("seed " << seed << " (set REEF_SEED to repeat)");
    for (auto s : testing::random_test_schemas()) {
        mutation_generator g(s, seed);
        for (int i = 0; i < 100; ++i) {
            auto ctx = context(seed, *s, i);
            model_memtable t(s, g.rnd(1, 6));
            for (int w = g.rnd(0, 10); w > 0; --w) {
                t.apply_random(g, 20);
            }
            bool reversed = g.rnd(0, 1);
            auto slice = random_slice(g, reversed);
            co_await check_writes_during_read(t, g, ctx, std::move(slice), reversed, [&] { t.apply_random(g, 20); });
        }
    }
}

namespace {

// n rows of the wide schema (ks.w: c1 int, c2 int DESC) over a wider key space than the generator's, so that
// partitions reach the row lookup index's size.
mutation wide_rows(const schema_ptr& s, const dht::decorated_key& k, mutation_generator& g, int n) {
    mutation m(s, k);
    for (int i = 0; i < n; ++i) {
        deletable_row r;
        r.marker = row_marker{g.rnd(0, 5)};
        m.partition().apply_row(*s, clustering_key_prefix({testing::int_value(g.rnd(-40, 40)), testing::int_value(g.rnd(0, 3))}), r);
    }
    return m;
}

// Sorted ranges between random positions of that key space (prefixes of every length), in the read's order.
clustering_ranges wide_slice(mutation_generator& g, const schema& s, bool reversed) {
    if (g.rnd(0, 6) == 0) {
        return {position_range::full()};
    }
    position_in_partition_comparator cmp(s);
    std::vector<position_in_partition> bounds;
    for (int i = 2 * g.rnd(1, 3); i > 0; --i) {
        std::vector<bytes> v;
        int len = g.rnd(0, 4) == 0 ? g.rnd(0, 1) : 2;
        if (len > 0) {
            v.push_back(testing::int_value(g.rnd(-45, 45)));
        }
        if (len > 1) {
            v.push_back(testing::int_value(g.rnd(-1, 4)));
        }
        clustering_key_prefix p(std::move(v));
        bounds.push_back(g.rnd(0, 1) ? position_in_partition::before_key(std::move(p)) : position_in_partition::after_key(std::move(p)));
    }
    std::sort(bounds.begin(), bounds.end(), [&](auto& a, auto& b) { return cmp(a, b) < 0; });
    clustering_ranges out;
    for (size_t i = 0; i + 1 < bounds.size(); i += 2) {
        if (cmp(bounds[i], bounds[i + 1]) < 0) {
            out.push_back({bounds[i], bounds[i + 1]});
        }
    }
    return reversed ? reverse_ranges(out) : out;
}

} // namespace

// Partitions of a few hundred rows, which the reads' lookups give a row lookup index (mutation/row_lookup_index.hh):
// plain reads against the model, with writes (new rows drop the index) between them, and reads with writes between
// their fills (as test_writes_during_read). Most reads must have gone through an index.
REEF_TEST_CASE(test_reads_through_row_lookup_index) {
    uint64_t seed = testing::pick_seed();
    BOOST_TEST_MESSAGE("seed " << seed << " (set REEF_SEED to repeat)");
    auto s = testing::random_test_wide_schema();
    mutation_generator g(s, seed);
    int reads = 0, indexed = 0;
    for (int i = 0; i < 16; ++i) {
        auto ctx = context(seed, *s, i);
        model_memtable t(s, g.rnd(1, 3));
        for (auto& k : t.keys) {
            t.apply(wide_rows(s, k, g, g.rnd(100, 200)));
        }
        for (int w = g.rnd(0, 6); w > 0; --w) {
            t.apply_random(g, 20);
        }
        auto write = [&] {
            if (g.rnd(0, 1)) {
                t.apply(wide_rows(s, t.keys[g.rnd(0, int(t.keys.size()) - 1)], g, g.rnd(1, 3)));
            } else {
                t.apply_random(g, 8);
            }
        };
        for (int rd = 0; rd < 80; ++rd) {
            bool reversed = g.rnd(0, 1);
            auto slice = wide_slice(g, *s, reversed);
            auto rctx = ctx + " read " + std::to_string(rd);
            bool any_index = false;
            for (auto& [k, p] : t.mt->partitions()) {
                // Built as the row cache builds it, or left to the reads' lookups.
                if (g.rnd(0, 1)) {
                    p.build_row_lookup_index(*s);
                }
                any_index |= p.has_row_lookup_index();
            }
            ++reads;
            indexed += any_index;
            if (g.rnd(0, 12) == 0) {
                co_await check_writes_during_read(t, g, rctx, std::move(slice), reversed, write);
                continue;
            }
            if (g.rnd(0, 12) == 0) {
                write();
            }
            auto pr = g.rnd(0, 1) ? dht::partition_range::full() : dht::partition_range::singular(t.keys[g.rnd(0, int(t.keys.size()) - 1)]);
            auto expected = expected_read(t.model, pr, slice, reversed);
            validate(*s, expected, reversed);
            auto r = make_memtable_reader(t.mt, t.s, {.range = pr, .slice = slice, .order = read_order_for(reversed)},
                                          g.rnd(0, 1) ? 0 : size_t(g.rnd(1, 5)));
            auto got = co_await read_everything(r);
            co_await r.close();
            BOOST_REQUIRE_MESSAGE(got.size() == expected.size(), rctx << ": " << got.size() << " fragments, expected " << expected.size());
            for (size_t j = 0; j < got.size(); ++j) {
                BOOST_REQUIRE_MESSAGE(same(got[j], expected[j]), rctx << ": fragment " << j << " is " << describe(got[j])
                                                                      << ", expected " << describe(expected[j]));
            }
        }
    }
    BOOST_TEST_MESSAGE(indexed << " of " << reads << " reads with a row lookup index in the memtable");
    BOOST_REQUIRE(2 * indexed > reads);
}

// A reader closed early, or dropped without reading, and a reader that
// outlives the caller's handle on the memtable.
REEF_TEST_CASE(test_early_close_and_lifetime) {
    auto s = testing::random_test_schema();
    mutation_generator g(s, testing::pick_seed());
    model_memtable t(s, 10);
    for (int w = 0; w < 50; ++w) {
        t.apply_random(g, 30);
    }
    {
        auto r = make_memtable_reader(t.mt, s, read_options{});
        auto f = co_await next(r);
        BOOST_REQUIRE(f && std::holds_alternative<partition_start>(*f));
        co_await r.close();
    }
    {
        auto r = make_memtable_reader(t.mt, s, {.order = read_order::reversed});
        (void)r;  // destroyed unread
    }
    auto expected = expected_read(t.model, dht::partition_range::full(), {position_range::full()}, false);
    auto r = make_memtable_reader(t.mt, s, read_options{}, 3);
    auto first = co_await next(r);
    t.mt.reset();  // the reader's reference keeps it alive
    std::vector<mutation_fragment> got{std::move(*first)};
    while (auto f = co_await next(r)) {
        got.push_back(std::move(*f));
    }
    co_await r.close();
    BOOST_REQUIRE_EQUAL(got.size(), expected.size());
    for (size_t i = 0; i < got.size(); ++i) {
        BOOST_REQUIRE_MESSAGE(same(got[i], expected[i]), "fragment " << i);
    }
}

// apply() keeps occupancy() equal to a recount from scratch, for random
// merges (rows, collections, range tombstones that split and join).
BOOST_AUTO_TEST_CASE(test_occupancy_matches_recount) {
    testing::for_random_cases(150, [](schema_ptr s, mutation_generator& g) {
        memtable mt(s);
        for (int w = 0; w < 20; ++w) {
            mt.apply(g.make(pkey(g.rnd(0, 5)), 10));
            BOOST_REQUIRE_EQUAL(mt.occupancy(), mt.compute_occupancy());
        }
    });
}

// apply_bound(m), what a write reserves before it is admitted, is at least what apply(m) adds, for random merges
// into partitions that already hold rows, collections and range tombstones; and the memtable's dirty memory
// account follows its occupancy, as active, then sealed, then released.
BOOST_AUTO_TEST_CASE(test_apply_bound_covers_growth_and_dirty_memory_follows) {
    size_t over = 0, with_range_tombstones = 0;
    testing::for_random_cases(150, [&](schema_ptr s, mutation_generator& g) {
        dirty_memory_manager dm("test", 1 << 30);
        {
            memtable mt(s);
            mt.set_dirty_memory(&dm);
            for (int w = 0; w < 20; ++w) {
                auto m = g.make(pkey(g.rnd(0, 5)), 10);
                size_t before = mt.occupancy();
                size_t bound = memtable::apply_bound(*s, m);
                mt.apply(m);
                size_t grew = mt.occupancy() > before ? mt.occupancy() - before : 0;
                if (grew > bound) {
                    ++over;
                    with_range_tombstones += !m.partition().range_tombstones().empty();
                    BOOST_TEST_MESSAGE("grew " << grew << " > bound " << bound);
                }
                BOOST_REQUIRE_EQUAL(dm.dirty(), mt.occupancy());
                BOOST_REQUIRE_EQUAL(dm.unspooled(), mt.occupancy());
            }
            mt.mark_sealed();
            BOOST_REQUIRE_EQUAL(dm.unspooled(), 0u);
            mt.apply(g.make(pkey(g.rnd(0, 5)), 10));  // a write of its phase still in flight
            BOOST_REQUIRE_EQUAL(dm.dirty(), mt.occupancy());
            BOOST_REQUIRE_EQUAL(dm.unspooled(), 0u);
            BOOST_REQUIRE_GE(dm.stats().peak_dirty, mt.occupancy());
        }
        BOOST_REQUIRE_EQUAL(dm.dirty(), 0u);  // the destructor released it
    });
    BOOST_TEST_MESSAGE(over << " writes grew past their bound, " << with_range_tombstones << " with range tombstones");
    BOOST_REQUIRE_EQUAL(over, 0u);
}

// Occupancy grows with every new row, by a sane amount per row, is at
// least the bytes of the keys and values, and does not count a write
// twice when it is applied again.
BOOST_AUTO_TEST_CASE(test_occupancy_grows_and_is_sane) {
    auto s = testing::int_table_schema();
    memtable mt(s);
    BOOST_REQUIRE_EQUAL(mt.occupancy(), 0u);
    size_t raw = 0;
    size_t last = 0;
    for (int p = 0; p < 50; ++p) {
        auto key = pkey(p);
        for (int c = 0; c < 40; ++c) {
            mutation m(s, key);
            deletable_row r;
            r.marker = row_marker{c};
            std::string value(c % 3 == 0 ? 100 : 4, 'x');
            r.cells.apply(0, atomic_cell::make_live(c, value));
            m.partition().apply_row(*s, testing::ck(c), r);
            raw += 4 + value.size() + (c == 0 ? 4 : 0);
            mt.apply(m);
            size_t now = mt.occupancy();
            BOOST_REQUIRE_GT(now, last);
            // A row of a 4-byte key and one cell: a map node, a key, a cell
            // vector; 100-byte values add a block of their own.
            size_t grew = now - last;
            BOOST_TEST_MESSAGE("row " << c << " of partition " << p << ": " << grew << " bytes");
            BOOST_REQUIRE_GE(grew, value.size());
            // The partition's first row also brings the partition's entry.
            BOOST_REQUIRE_LE(grew, c == 0 ? 1000u : 400u);
            last = now;
            mt.apply(m);
            BOOST_REQUIRE_EQUAL(mt.occupancy(), now);
        }
    }
    BOOST_REQUIRE_GE(mt.occupancy(), raw);
    BOOST_REQUIRE_LE(mt.occupancy(), raw * 8);
    BOOST_REQUIRE_EQUAL(mt.occupancy(), mt.compute_occupancy());
    BOOST_REQUIRE_EQUAL(mt.partition_count(), 50u);
}

// A mutation of another table is refused, naming both.
BOOST_AUTO_TEST_CASE(test_other_table_refused) {
    memtable mt(testing::random_test_schema());
    auto other = testing::random_test_wide_schema();
    mutation m(other, pkey(1));
    BOOST_CHECK_THROW(mt.apply(m), std::invalid_argument);
    BOOST_CHECK(mt.empty());
}

// What a read sees of writes made while it runs (buffers of one fragment,
// so the reader's position is the consumer's): a row or a partition ahead
// of the position is read, one behind it is not; forward and reversed.
REEF_TEST_CASE(test_writes_ahead_are_seen) {
    auto s = testing::int_table_schema();
    auto row_at = [&](const dht::decorated_key& k, int c) {
        mutation m(s, k);
        deletable_row r;
        r.marker = row_marker{1};
        m.partition().apply_row(*s, testing::ck(c), r);
        return m;
    };
    std::vector<dht::decorated_key> keys;
    for (int i = 0; i < 3; ++i) {
        keys.push_back(pkey(i));
    }
    std::sort(keys.begin(), keys.end());
    for (bool reversed : {false, true}) {
        auto mt = std::make_shared<memtable>(s);
        for (int c = 0; c < 20; c += 2) {
            mt->apply(row_at(keys[0], c));
            mt->apply(row_at(keys[2], c));
        }
        auto r = make_memtable_reader(mt, s, {.order = read_order_for(reversed)}, 1);
        std::vector<int> rows;
        std::vector<dht::decorated_key> partitions;
        while (auto f = co_await next(r)) {
            if (auto* cr = std::get_if<clustering_row>(&*f)) {
                int c = testing::int_of(cr->key.component(0));
                rows.push_back(c);
                // Right after row 10 of the first partition: 11 and 9, one
                // on each side (and the other in the next partition).
                if (c == 10 && partitions.size() == 1) {
                    mt->apply(row_at(keys[0], 11));
                    mt->apply(row_at(keys[0], 9));
                }
            } else if (auto* ps = std::get_if<partition_start>(&*f)) {
                partitions.push_back(ps->key);
            } else if (std::holds_alternative<partition_end>(*f) && partitions.size() == 1) {
                mt->apply(row_at(keys[1], 5));  // a partition between the two
                mt->apply(row_at(keys[0], 30)); // behind: the partition is done
            }
        }
        co_await r.close();
        std::vector<int> first = reversed ? std::vector<int>{18, 16, 14, 12, 10, 9, 8, 6, 4, 2, 0}
                                          : std::vector<int>{0, 2, 4, 6, 8, 10, 11, 12, 14, 16, 18};
        std::vector<int> want = first;
        want.push_back(5);
        for (int c = 0; c < 20; c += 2) {
            want.push_back(reversed ? 18 - c : c);
        }
        BOOST_CHECK(partitions == keys);
        BOOST_CHECK_EQUAL_COLLECTIONS(rows.begin(), rows.end(), want.begin(), want.end());
    }
}
