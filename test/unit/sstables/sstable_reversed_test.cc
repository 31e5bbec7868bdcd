// Reversed reads of mx sstables: partition_reversing_data_source's stream, parsed by the ordinary parser, is each
// partition's forward stream reversed fragment for fragment (random sstables: wide partitions with promoted indexes,
// range tombstones, static rows; LZ4, CRC-checked and plain; random windows), also when the walk starts inside a
// promoted index block (clipped to the slice it was chosen for). The reversed sstable reader gives what the memtable
// reader gives in reversed mode, fragment for fragment (random ranges and slices, with and without clustering
// windows); every corpus partition read reversed is its forward read reversed; a reversed read of the last rows of
// a large partition reads a few windows of Data.db, not the partition.
#include "db/memtable.hh"
#include "cql/cql_parser.hh"
#include "db/memtable_reader.hh"
#include "reader/combined_reader.hh"
#include "reader/mutation_fragment_filter.hh"
#include "runtime/file.hh"
#include "runtime/reactor.hh"
#include "sstables/components.hh"
#include "sstables/index_entry.hh"
#include "sstables/mx_reader.hh"
#include "sstables/partition_reversing_data_source.hh"
#include "sstables/reversed_sstable_reader.hh"
#include "sstables/sstable_reader.hh"
#include "sstables/statistics.hh"
#include "sstables/writer.hh"
#include "test/lib/combined_model.hh"
#include "test/lib/mutation_model.hh"
#include "test/lib/mx_test_support.hh"
#include "sstables/sstable.hh"
#include "test/lib/read_and_close.hh"
#include "test/lib/random_mutation.hh"
#include "test/lib/reversed_stream.hh"
#include "test/lib/reef_test.hh"
#include "test/lib/simple_keys.hh"
#include "test/lib/tmpdir.hh"
#include "test/lib/writable_mutation.hh"

#include <boost/test/unit_test.hpp>

#include <algorithm>

using namespace reef;
using namespace reef::sstables;
using namespace reef::testing;

namespace {

// Counts the uncompressed bytes a source hands out.
class counting_source final : public data_source_impl {
public:
    counting_source(data_source inner, uint64_t& count) : _inner(std::move(inner)), _count(count) {}
    future<temporary_buffer> get() override {
        auto b = co_await _inner.get();
        _count += b.size();
        co_return b;
    }
    future<> close() override { return _inner.close(); }

private:
    data_source _inner;
    uint64_t& _count;
};

// A written sstable, its components, header and Index.db entries.
struct written_sstable {
    descriptor d;
    sstable_components components;
    std::shared_ptr<const serialization_header> header;
    std::vector<index_entry> entries;
    file data;
};

future<written_sstable> load_written(descriptor d) {
    written_sstable w;
    w.d = d;
    w.components = co_await load_components(d);
    auto stats = co_await load_statistics(d);
    w.header = std::make_shared<const serialization_header>(*stats.header);
    auto index_path = d.filename(component_type::index);
    auto index_bytes = co_await read_entire_file(index_path);
    w.entries = parse_index_entries(index_bytes, d.version, index_path);
    w.data = co_await open_file_dma(d.filename(component_type::data), open_flags::ro);
    co_return w;
}

// The reversed stream of partition i of w (Data.db [entries[i], entries[i + 1])) parsed by the full-scan reader.
future<std::vector<mutation_fragment>> read_reversed_partition(const schema_ptr& s, const written_sstable& w, size_t i,
                                                               std::optional<reversal_start> start,
                                                               partition_reversing_options o, uint64_t& bytes_read) {
    uint64_t p = w.entries[i].data_position;
    uint64_t q = i + 1 < w.entries.size() ? w.entries[i + 1].data_position : w.components.data_length();
    auto open = [&w, &bytes_read](uint64_t pos, uint64_t len) {
        return data_source(std::make_unique<counting_source>(make_data_source(w.data, w.components, pos, len, integrity_check::no), bytes_read));
    };
    auto file = w.d.filename(component_type::data);
    auto src = make_partition_reversing_data_source(open, *w.header, file, p, q, start, o);
    auto r = make_mx_full_scan_reader(s, w.header, std::move(src), file + " (reversed)", UINT64_MAX / 2,
                                      dht::partition_range::full(), {}, p);
    co_return co_await read_and_close(std::move(r), true);
}

writer_options random_writer_options(mutation_generator& g, int i) {
    writer_options o;
    switch (i % 3) {
    case 0: o.chunk_length = 1 << g.rnd(10, 14); break;
    case 1: o.compression.reset(); o.crc_chunk_size = 1 << g.rnd(9, 16); break;
    case 2: o.compression.reset(); break;
    }
    o.column_index_size = g.rnd(0, 2) ? g.rnd(64, 2048) : 64 * 1024;
    return o;
}

partition_reversing_options random_reversing_options(mutation_generator& g, const writer_options& wo) {
    partition_reversing_options o;
    static const uint64_t windows[] = {1, 64, 700, 4096, 32768};
    o.window = windows[g.rnd(0, 4)];
    o.alignment = g.rnd(0, 1) ? 1 : (wo.compression ? wo.chunk_length : 4096);
    o.output_buffer = size_t(g.rnd(0, 1) ? g.rnd(1, 300) : 16 * 1024);
    return o;
}


// The next fragment of r (nullopt at the end of the stream or window), after a yield (coroutine rule 5).
future<std::optional<mutation_fragment>> next(mutation_reader& r) {
    co_await yield();
    co_return co_await r();
}

// A stream with its range tombstone changes in one canonical form: of changes at one position only the last, and
// no change to the tombstone already in force. (Windows may open and close a tombstone at one position, or close
// and reopen it where a window is cut: the same data.)
std::vector<mutation_fragment> normalized(std::vector<mutation_fragment> fs) {
    std::vector<mutation_fragment> out;
    tombstone in_force;
    for (size_t i = 0; i < fs.size(); ++i) {
        if (auto* rtc = std::get_if<range_tombstone_change>(&fs[i])) {
            if (i + 1 < fs.size()) {
                auto* next = std::get_if<range_tombstone_change>(&fs[i + 1]);
                if (next && next->position == rtc->position) {
                    continue;
                }
            }
            if (rtc->tomb == in_force) {
                continue;
            }
            in_force = rtc->tomb;
        }
        out.push_back(std::move(fs[i]));
    }
    return out;
}

// Everything r gives until the end of the stream or window.
future<std::vector<mutation_fragment>> drain(mutation_reader& r) {
    std::vector<mutation_fragment> out;
    while (auto f = co_await next(r)) {
        out.push_back(std::move(*f));
    }
    co_return out;
}

// Reads r and the model reader m (both forwarding, reversed) partition by partition through the same random windows;
// r's windows are sometimes cut short by the next one opening right after the last fragment read (as the combined
// reader does), which m is given as two windows. Each partition's fragments must be the same, changes normalized.
future<> compare_forwarding(mutation_reader& r, mutation_reader& m, mutation_generator& g, const schema& s) {
    position_in_partition_comparator order(s, true);
    while (true) {
        auto a = co_await drain(r);
        auto b = co_await drain(m);
        BOOST_REQUIRE_MESSAGE(same(a, b), "partition start\n" << describe(a) << "!=\n" << describe(b));
        if (a.empty()) {
            break;
        }
        BOOST_REQUIRE(std::holds_alternative<partition_start>(a.front()));
        auto windows = reverse_ranges(g.make_ranges());
        if (g.rnd(0, 3) == 0 && !windows.empty()) {
            windows.pop_back();
        }
        for (size_t wi = 0; wi < windows.size(); ++wi) {
            auto w = windows[wi];
            position_range for_r = w;
            co_await r.fast_forward_to(std::move(for_r));
            int cut_after = g.rnd(0, 2) == 0 ? g.rnd(1, 5) : -1;
            const auto& cut_end = wi + 1 < windows.size() ? windows[wi + 1].end : w.end;
            std::optional<position_in_partition> cut;
            int n = 0;
            tombstone open;  // in force in this window's output
            while (auto f = co_await next(r)) {
                if (auto* rtc = std::get_if<range_tombstone_change>(&*f)) {
                    open = rtc->tomb;
                }
                auto after = std::holds_alternative<clustering_row>(*f)
                    ? position_in_partition::after_key(std::get<clustering_row>(*f).key) : position_of(*f);
                a.push_back(std::move(*f));
                if (++n == cut_after && order(after, cut_end) < 0 && order(w.start, after) < 0) {
                    cut = std::move(after);
                    break;
                }
            }
            if (!cut) {
                position_range for_m = w;
                co_await m.fast_forward_to(std::move(for_m));
                auto x = co_await drain(m);
                b.insert(b.end(), x.begin(), x.end());
                continue;
            }
            // r's window was [w.start, cut), and the next one starts at cut. Each window starts with nothing in force
            // (what the combined reader assumes of its sources), so the cut window's tombstone ends at the cut.
            if (open) {
                a.push_back(range_tombstone_change{*cut, {}});
            }
            // Named: an aggregate temporary inside co_await is destroyed twice by GCC 12 (coroutine rule 2).
            position_range first_part{w.start, *cut};
            co_await m.fast_forward_to(std::move(first_part));
            auto x = co_await drain(m);
            b.insert(b.end(), x.begin(), x.end());
            position_range rest{*cut, cut_end};
            if (wi + 1 < windows.size()) {
                windows[wi + 1] = rest;
            } else {
                windows.push_back(rest);
            }
        }
        auto na = normalized(a);
        auto nb = normalized(b);
        BOOST_REQUIRE_MESSAGE(same(na, nb), "through windows\n" << describe(na) << "!=\n" << describe(nb));
        co_await r.next_partition();
        co_await m.next_partition();
    }
}

} // namespace

REEF_TEST_CASE(partition_reversing_data_source_reverses_every_partition) {
    uint64_t seed = pick_seed();
    BOOST_TEST_MESSAGE("seed " << seed << " (set REEF_SEED to repeat)");
#ifdef REEF_DEBUG
    constexpr int cases = 3;
#else
    constexpr int cases = 12;
#endif
    tmpdir dir;
    int generation = 0;
    size_t partitions = 0, with_index = 0, started_inside = 0, opened_inside = 0;
    for (auto s : random_test_schemas()) {
        mutation_generator g(s, seed);
        for (int i = 0; i < cases; ++i) {
            auto context = "seed " + std::to_string(seed) + " table " + s->table() + " case " + std::to_string(i);
            BOOST_TEST_CONTEXT(context) {
                auto mt = std::make_shared<memtable>(s);
                int count = g.rnd(1, 12);
                for (int p = 0; p < count; ++p) {
                    // Each table's first case has a wide partition with small promoted index blocks (the checks below
                    // need walks that start inside blocks, whatever the seed: debug runs have few cases).
                    bool wide = (i == 0 && p == 0) || g.rnd(0, 2);
                    mt->apply(with_typed_values(s, g.make(pkey(g.rnd(0, 100000)), wide ? 300 : 8)));
                }
                auto wo = random_writer_options(g, i);
                if (i == 0) {
                    wo.column_index_size = g.rnd(64, 2048);
                }
                descriptor d{dir.path(), sstable_version::me, std::to_string(++generation), "big"};
                {
                    auto w = make_memtable_reader(mt, s, read_options{});
                    co_await write_sstable(w, s, d, wo);
                    co_await w.close();
                }
                auto w = co_await load_written(d);
                std::vector<std::vector<mutation_fragment>> forward;
                {
                    auto r = make_mx_full_scan_reader(s, w.header, make_data_source(w.data, w.components, 0, w.components.data_length(), integrity_check::no),
                                                      d.filename(component_type::data), w.components.data_length());
                    forward = partitions_of(co_await read_and_close(std::move(r), false));
                }
                BOOST_REQUIRE_EQUAL(forward.size(), w.entries.size());
                position_in_partition_comparator fwd_cmp(*s);
                for (size_t k = 0; k < w.entries.size(); ++k) {
                    auto expected = reverse_partition(forward[k]);
                    uint64_t bytes = 0;
                    auto o = random_reversing_options(g, wo);
                    auto got = co_await read_reversed_partition(s, w, k, std::nullopt, o, bytes);
                    BOOST_REQUIRE_MESSAGE(same(got, expected), "partition " << k << " window " << o.window << "\n"
                                                                            << describe(got) << "!=\n" << describe(expected));
                    ++partitions;
                    auto& pi = w.entries[k].promoted;
                    if (!pi) {
                        continue;
                    }
                    ++with_index;
                    uint64_t p = w.entries[k].data_position;
                    uint64_t q = k + 1 < w.entries.size() ? w.entries[k + 1].data_position : w.components.data_length();
                    for (int t = 0; t < 4; ++t) {
                        // A slice ending at a random position: the walk starts in the block holding it.
                        auto end = g.rnd(0, 5) ? g.bound() : position_in_partition::after_all_clustered_rows();
                        auto start = find_reversal_start(*pi, p, q, end, fwd_cmp, w.header->clustering_types, d.version,
                                                         d.filename(component_type::index));
                        started_inside += start.end != q - 1;
                        opened_inside += bool(start.open_at_end);
                        clustering_ranges slice = reverse_ranges({position_range{position_in_partition::before_all_clustered_rows(), end}});
                        uint64_t partial_bytes = 0;
                        auto partial = co_await read_reversed_partition(s, w, k, start, random_reversing_options(g, wo), partial_bytes);
                        auto a = filtered(*s, partial, slice, true);
                        auto b = filtered(*s, expected, slice, true);
                        BOOST_REQUIRE_MESSAGE(same(a, b), "partition " << k << " up to " << to_string(end) << "\n"
                                                                       << describe(a) << "!=\n" << describe(b));
                    }
                }
                co_await w.data.close();
            }
            co_await yield();
        }
    }
    BOOST_TEST_MESSAGE(partitions << " partitions reversed, " << with_index << " with a promoted index; " << started_inside
                                  << " walks started inside, " << opened_inside << " inside a range tombstone");
    BOOST_CHECK_GT(started_inside, 0u);
    BOOST_CHECK_GT(opened_inside, 0u);
}

REEF_TEST_CASE(reversed_sstable_reader_matches_memtable_reader) {
    uint64_t seed = pick_seed();
    BOOST_TEST_MESSAGE("seed " << seed << " (set REEF_SEED to repeat)");
#ifdef REEF_DEBUG
    constexpr int cases = 3;
#else
    constexpr int cases = 10;
#endif
    tmpdir dir;
    int generation = 0;
    size_t reads = 0, forwarding_reads = 0, fragments = 0;
    sstable_reader_stats stats;
    for (auto s : random_test_schemas()) {
        mutation_generator g(s, seed);
        for (int i = 0; i < cases; ++i) {
            auto context = "seed " + std::to_string(seed) + " table " + s->table() + " case " + std::to_string(i);
            BOOST_TEST_CONTEXT(context) {
                auto mt = std::make_shared<memtable>(s);
                // The first case of each schema always has partitions of many promoted index blocks, so that the
                // jumps are exercised whatever the seed (debug runs only three cases).
                int partitions = i > 0 && g.rnd(0, 4) == 0 ? g.rnd(0, 3) : g.rnd(10, 60);
                for (int p = 0; p < partitions; ++p) {
                    mt->apply(with_typed_values(s, g.make(pkey(g.rnd(0, 100000)), i == 0 || g.rnd(0, 2) ? 200 : 8)));
                }
                auto wo = random_writer_options(g, i);
                if (i == 0) {
                    wo.column_index_size = g.rnd(64, 2048);
                }
                wo.min_index_interval = g.rnd(1, 8);
                descriptor d{dir.path(), sstable_version::me, std::to_string(++generation), "big"};
                {
                    auto w = make_memtable_reader(mt, s, read_options{});
                    co_await write_sstable(w, s, d, wo);
                    co_await w.close();
                }
                std::vector<dht::decorated_key> keys;
                for (auto& [k, p] : mt->partitions()) {
                    keys.push_back(k);
                }
                cache::cache_tracker tracker(size_t(64) << 20);
                auto sst = co_await sstables::open_sstable(d, tracker);
                auto handles = sst->read_handles();
                handles.stats = &stats;  // counts the reversed reads' jumps between ranges
                clustering_ranges everything{position_range::full()};
                auto forward_reader = make_sstable_reader(s, sst->read_handles(), reader_permit(), {.slice = everything});
                auto forward = partitions_of(co_await read_and_close(std::move(forward_reader), false));
                std::vector<mutation_fragment> all_reversed;
                for (auto& p : forward) {
                    auto r = reverse_partition(p);
                    all_reversed.insert(all_reversed.end(), r.begin(), r.end());
                }
                for (int q = 0; q < 12; ++q) {
                    auto pr = random_partition_range(g, keys);
                    if (g.rnd(0, 6) == 0) {
                        pr = dht::partition_range::singular(pkey(g.rnd(100001, 200000)));  // most likely absent
                    }
                    auto slice = reverse_ranges(g.rnd(0, 2) == 0 ? clustering_ranges{position_range::full()} : g.make_ranges());
                    auto model_reader = make_memtable_reader(mt, s, {.range = pr, .slice = slice, .order = read_order::reversed});
                    auto model = co_await read_and_close(std::move(model_reader), true);
                    auto got_reader =
                        make_sstable_reader(s, handles, reader_permit(), {.range = pr, .slice = slice, .order = read_order::reversed});
                    auto got = co_await read_and_close(std::move(got_reader), true);
                    // Fragment for fragment: the sstable's own forward stream reversed, through the slice.
                    std::vector<mutation_fragment> expected;
                    for (auto& p : forward) {
                        if (pr.contains(std::get<partition_start>(p.front()).key)) {
                            auto f = filtered(*s, reverse_partition(p), slice, true);
                            expected.insert(expected.end(), f.begin(), f.end());
                        }
                    }
                    BOOST_REQUIRE_MESSAGE(same(got, expected), "query " << q << "\n" << describe(got) << "!=\n" << describe(expected));
                    // And what the memtable reader gives reversed (the sstable round trip changes how some cells are
                    // represented, not what they mean: compared as mutations, as the forward reader's test does).
                    auto a = canonical_mutations(s, got, true);
                    auto b = canonical_mutations(s, model, true);
                    BOOST_REQUIRE_MESSAGE(a == b, "query " << q << ": the reversed read differs from the memtable's");
                    ++reads;
                    fragments += got.size();
                }
                for (int q = 0; q < 4; ++q) {
                    auto pr = random_partition_range(g, keys);
                    auto slice = reverse_ranges(g.rnd(0, 2) == 0 ? clustering_ranges{position_range::full()} : g.make_ranges());
                    auto r = make_sstable_reader(s, handles, reader_permit(),
                                                 {.range = pr,
                                                  .slice = slice,
                                                  .order = read_order::reversed,
                                                  .forwarding = streamed_forwarding::yes});
                    // The model of forwarding: the in-memory reader over the sstable's stream reversed.
                    auto m = make_fragment_vector_reader(s, all_reversed, pr, streamed_forwarding::yes, true, slice);
                    std::exception_ptr err;
                    try {
                        co_await compare_forwarding(r, m, g, *s);
                    } catch (...) {
                        err = std::current_exception();
                    }
                    co_await r.close();
                    co_await m.close();
                    if (err) {
                        std::rethrow_exception(err);
                    }
                    ++forwarding_reads;
                }
                co_await sst->close();
            }
            co_await yield();
        }
    }
    BOOST_TEST_MESSAGE(reads << " reversed reads (" << fragments << " fragments), " << forwarding_reads << " with windows; "
                             << stats.reversed_jumps << " jumps between ranges or windows");
    // Multi-range slices (and windows) over partitions of many promoted index blocks: the jumps are exercised.
    BOOST_CHECK_GT(stats.reversed_jumps, 0u);
}

// Every partition of every corpus sstable read reversed (through the index, one partition range for the whole
// sstable and singular ranges) is its forward read reversed, and so is every slice of it.
REEF_TEST_CASE(reversed_sstable_reader_reads_the_corpus) {
    auto corpus = require_peer_corpus();
    if (!corpus) {
        co_return;
    }
    size_t sstables = 0, partitions = 0, with_index = 0;
    sstable_reader_stats stats;
    cache::cache_tracker tracker(size_t(64) << 20);
    uint64_t seed = pick_seed();
    BOOST_TEST_MESSAGE("seed " << seed << " (set REEF_SEED to repeat)");
    mutation_generator g(random_test_schema(), seed);
    for (auto& name : corpus_dataset_names()) {
        for (auto& cs : load_sstables(*corpus / name)) {
#ifdef REEF_DEBUG
            // Debug (ASan) builds read the sstables up to 150 kB, and gen_nb_large_partition (317 promoted index blocks).
            if (cs.data.size() > 150000 && name != "gen_nb_large_partition") {
                continue;
            }
#endif
            auto context = cs.data_path.string();
            BOOST_TEST_CONTEXT(context) {
                auto schema = schema_from_header(*cs.stats.header);
                auto token = token_function_for(cs.stats.validation->partitioner);
                auto d = descriptor::from_path(cs.data_path.string());
                auto sst = co_await sstables::open_sstable(d, tracker);
                auto counted = sst->read_handles();
                counted.stats = &stats;
                clustering_ranges everything{position_range::full()};
                auto forward_reader = make_sstable_reader(schema, sst->read_handles(), reader_permit(), {.slice = everything});
                auto forward = partitions_of(co_await read_and_close(std::move(forward_reader), false));
                auto reversed_reader = make_sstable_reader(
                    schema, sst->read_handles(), reader_permit(), {.slice = reverse_ranges(everything), .order = read_order::reversed});
                auto reversed = partitions_of(co_await read_and_close(std::move(reversed_reader), true));
                BOOST_REQUIRE_EQUAL(forward.size(), reversed.size());
                for (size_t k = 0; k < forward.size(); ++k) {
                    auto expected = reverse_partition(forward[k]);
                    BOOST_REQUIRE_MESSAGE(same(reversed[k], expected), "partition " << k << "\n" << describe(reversed[k])
                                                                                    << "!=\n" << describe(expected));
#ifdef REEF_DEBUG
                    // Debug (ASan) builds read slices of an even sample of about 5 partitions of each sstable.
                    if (k % std::max<size_t>(1, forward.size() / 5) != 0) {
                        continue;
                    }
#endif
                    // A few slices of it, read alone: the clustering values of its own rows and changes as bounds.
                    std::vector<position_in_partition> positions;
                    for (auto& f : forward[k]) {
                        if (std::holds_alternative<clustering_row>(f) || std::holds_alternative<range_tombstone_change>(f)) {
                            positions.push_back(position_of(f));
                        }
                    }
                    auto& key = std::get<partition_start>(forward[k].front()).key;
                    position_in_partition_comparator cmp(*schema);
                    for (int t = 0; t < (positions.size() > 20 ? 4 : 1); ++t) {
                        clustering_ranges slice{position_range::full()};
                        if (positions.size() >= 2) {
                            // One range, or (every other slice) two: the walk jumps from the upper one's block to
                            // the lower one's through the writer's promoted index (header length, end-open markers).
                            std::vector<position_in_partition> picked;
                            for (int n = t % 2 ? 4 : 2; n > 0; --n) {
                                picked.push_back(positions[size_t(g.rnd(0, int(positions.size()) - 1))]);
                            }
                            std::sort(picked.begin(), picked.end(), [&](auto& x, auto& y) { return cmp(x, y) < 0; });
                            clustering_ranges ranges;
                            for (size_t i = 0; i + 1 < picked.size(); i += 2) {
                                auto& a = picked[i];
                                auto& b = picked[i + 1];
                                auto start = a.is_clustering_row() ? position_in_partition::before_key(a.key()) : a;
                                auto end = b.is_clustering_row() ? position_in_partition::after_key(b.key()) : b;
                                if (!ranges.empty() && cmp(start, ranges.back().end) < 0) {
                                    start = ranges.back().end;
                                }
                                if (cmp(start, end) < 0) {
                                    ranges.push_back(position_range{start, end});
                                }
                            }
                            if (!ranges.empty()) {
                                slice = std::move(ranges);
                            }
                        }
                        auto rs = reverse_ranges(slice);
                        auto got_reader = make_sstable_reader(
                            schema, counted, reader_permit(),
                            {.range = dht::partition_range::singular(key), .slice = rs, .order = read_order::reversed});
                        auto got = co_await read_and_close(std::move(got_reader), true);
                        auto want = filtered(*schema, expected, rs, true);
                        BOOST_REQUIRE_MESSAGE(same(got, want), "partition " << k << " slice " << to_string(slice[0].start) << " .. "
                                                                         << to_string(slice.back().end) << " (" << slice.size()
                                                                         << " ranges)\n" << describe(got) << "!=\n"
                                                                         << describe(want));
                    }
                    ++partitions;
                    co_await yield();
                }
                with_index += std::count_if(forward.begin(), forward.end(), [](auto& p) { return p.size() > 100; });
                co_await sst->close();
                ++sstables;
            }
        }
    }
    BOOST_TEST_MESSAGE(sstables << " sstables, " << partitions << " partitions read reversed (" << with_index
                                << " of more than 100 fragments); " << stats.reversed_jumps << " jumps between ranges");
    BOOST_CHECK_GE(sstables, 40u);
    BOOST_CHECK_GT(stats.reversed_jumps, 0u);  // two-range slices of the corpus's promoted-index partitions
}

// A reversed read of the last 100 rows (and of the first 100) of one large partition reads a few windows of Data.db:
// the partition header, and the blocks around those rows, not the partition.
REEF_TEST_CASE(reversed_read_of_a_large_partition_reads_only_its_end) {
#ifdef REEF_DEBUG
    constexpr int rows = 30000;
#else
    constexpr int rows = 200000;
#endif
    auto s = int_table_schema();
    tmpdir dir;
    auto key = pkey(7);
    for (int variant = 0; variant < 2; ++variant) {
        std::vector<mutation_fragment> fs;
        fs.push_back(partition_start{key, {}});
        for (int i = 0; i < rows; ++i) {
            clustering_row r;
            r.key = ck(i);
            r.marker = row_marker{1000 + i % 7};
            r.cells.apply(0, atomic_cell::make_live(1000 + i % 7, std::string(reinterpret_cast<const char*>(int_value(i).data()), 4)));
            fs.push_back(std::move(r));
        }
        fs.push_back(partition_end{});
        writer_options wo;
        if (variant == 0) {
            wo.chunk_length = 4096;
        } else {
            wo.compression.reset();
            wo.crc_chunk_size = 4096;
        }
        wo.column_index_size = 4096;
        descriptor d{dir.path(), sstable_version::me, std::to_string(variant + 1), "big"};
        {
            auto w = make_fragment_vector_reader(s, std::move(fs));
            co_await write_sstable(w, s, d, wo);
            co_await w.close();
        }
        cache::cache_tracker tracker(size_t(64) << 20);
        auto sst = co_await sstables::open_sstable(d, tracker);
        uint64_t partition_bytes = sst->components().data_length();
        struct query {
            int first, last;  // rows [first, last]
        };
        for (auto q : {query{rows - 100, rows - 1}, query{0, 99}, query{rows / 2, rows / 2 + 99}}) {
            clustering_ranges slice = reverse_ranges({position_range{position_in_partition::before_key(ck(q.first)),
                                                                     position_in_partition::after_key(ck(q.last))}});
            auto pr = dht::partition_range::singular(key);
            // The first read brings the index page in; the second reads Data.db only.
            auto first_reader =
                make_sstable_reader(s, sst->read_handles(), reader_permit(), {.range = pr, .slice = slice, .order = read_order::reversed});
            auto first = co_await read_and_close(std::move(first_reader), true);
            auto before = engine().io().bytes_read;
            auto got_reader =
                make_sstable_reader(s, sst->read_handles(), reader_permit(), {.range = pr, .slice = slice, .order = read_order::reversed});
            auto got = co_await read_and_close(std::move(got_reader), true);
            uint64_t data_bytes = engine().io().bytes_read - before;
            BOOST_REQUIRE_EQUAL(got.size(), 102u);
            for (int i = 0; i < 100; ++i) {
                auto& r = std::get<clustering_row>(got[size_t(i) + 1]);
                BOOST_REQUIRE(r.key == ck(q.last - i));
            }
            BOOST_TEST_MESSAGE("variant " << variant << " rows " << q.first << ".." << q.last << ": " << data_bytes
                                          << " bytes of Data.db read, of " << partition_bytes);
            // The header's chunk, a 32 KiB window back from the slice's block, and rounding to chunks and pages.
            BOOST_CHECK_LE(data_bytes, uint64_t(4096 + 32 * 1024 + 4096 + 3 * 4096));
            BOOST_CHECK_LT(data_bytes * 8, partition_bytes);
        }
        co_await sst->close();
    }
}

namespace {

// Bytes of a string, served as a data source in pieces of up to 1000 bytes.
class memory_source final : public data_source_impl {
public:
    explicit memory_source(std::string bytes) : _bytes(std::move(bytes)) {}
    future<temporary_buffer> get() override {
        size_t n = std::min<size_t>(1000, _bytes.size() - _pos);
        auto b = temporary_buffer(_bytes.data() + _pos, n);
        _pos += n;
        co_return b;
    }

private:
    std::string _bytes;
    size_t _pos = 0;
};

} // namespace

// Corrupt partitions (a byte of a partition's uncompressed Data.db changed, past the checksums) read backwards
// either read or fail with malformed_sstable_exception naming the file: never a crash (ASan in debug), a hang or
// another error.
// The reversed reader is the reversed read's only: asked for a forward read it says so, before it touches the sstable.
REEF_TEST_CASE(reversed_sstable_reader_refuses_a_forward_read) {
    auto s = random_test_schemas().front();
    std::string error;
    try {
        auto r = make_reversed_sstable_reader(s, sstable_read_handles{}, reader_permit(), read_options{});
    } catch (const std::invalid_argument& e) {
        error = e.what();
    }
    BOOST_REQUIRE_MESSAGE(error.find("read_order::forward") != std::string::npos, "error: " << error);
    co_return;
}

REEF_TEST_CASE(partition_reversing_data_source_refuses_corrupt_partitions) {
    uint64_t seed = pick_seed();
    BOOST_TEST_MESSAGE("seed " << seed << " (set REEF_SEED to repeat)");
    tmpdir dir;
    auto s = random_test_wide_schema();
    mutation_generator g(s, seed);
    auto mt = std::make_shared<memtable>(s);
    for (int p = 0; p < 6; ++p) {
        mt->apply(with_typed_values(s, g.make(pkey(p), 60)));
    }
    writer_options wo;
    wo.compression.reset();
    wo.column_index_size = 256;
    descriptor d{dir.path(), sstable_version::me, "1", "big"};
    {
        auto w = make_memtable_reader(mt, s, read_options{});
        co_await write_sstable(w, s, d, wo);
        co_await w.close();
    }
    auto w = co_await load_written(d);
    std::string data;
    {
        auto src = make_data_source(w.data, w.components, 0, w.components.data_length(), integrity_check::no);
        while (true) {
            auto b = co_await src.get();
            if (b.empty()) {
                break;
            }
            data.append(b.get(), b.size());
        }
        co_await src.close();
    }
    auto file = d.filename(component_type::data);
    position_in_partition_comparator fwd_cmp(*s);
#ifdef REEF_DEBUG
    constexpr int flips = 150;
#else
    constexpr int flips = 1500;
#endif
    size_t refused = 0, read = 0;
    for (int t = 0; t < flips; ++t) {
        size_t k = size_t(g.rnd(0, int(w.entries.size()) - 1));
        uint64_t p = w.entries[k].data_position;
        uint64_t q = k + 1 < w.entries.size() ? w.entries[k + 1].data_position : data.size();
        auto bad = data;
        bad[size_t(g.rnd(int(p), int(q) - 1))] ^= char(1 << g.rnd(0, 7));
        auto open = [&bad](uint64_t pos, uint64_t len) {
            return data_source(std::make_unique<memory_source>(bad.substr(pos, len)));
        };
        std::optional<reversal_start> start;
        if (w.entries[k].promoted && g.rnd(0, 1)) {
            start = find_reversal_start(*w.entries[k].promoted, p, q, g.bound(), fwd_cmp, w.header->clustering_types,
                                        d.version, d.filename(component_type::index));
        }
        partition_reversing_options o;
        o.window = uint64_t(g.rnd(1, 2000));
        auto src = make_partition_reversing_data_source(open, *w.header, file, p, q, start, o);
        auto r = make_mx_full_scan_reader(s, w.header, std::move(src), file + " (reversed)", UINT64_MAX / 2,
                                          dht::partition_range::full(), {}, p);
        try {
            co_await read_and_close(std::move(r), true);
            ++read;
        } catch (const malformed_sstable_exception& e) {
            BOOST_REQUIRE(std::string(e.what()).find(file) != std::string::npos);
            ++refused;
        } catch (const std::exception& e) {
            // The stream validator's verdict on what parsed (a flipped clustering byte can disorder rows).
            BOOST_REQUIRE_MESSAGE(std::string(e.what()).find("fragment stream") != std::string::npos ||
                                      std::string(e.what()).find("order") != std::string::npos,
                                  "unexpected error: " << e.what());
            ++refused;
        }
        co_await yield();
    }
    co_await w.data.close();
    BOOST_TEST_MESSAGE(refused << " corrupt partitions refused, " << read << " read");
    BOOST_CHECK_GT(refused, 0u);
}

// As the table reads: reversed sstable readers (with clustering windows where the case asks) merged by the combined
// reader, with its range-tombstone skips, give what the same merge of memtable readers gives (random combined cases:
// 1..4 sources with timestamp layers, partition ranges, slices, windows, next_partition; the reversed ones).
REEF_TEST_CASE(reversed_sstable_readers_combined_match_memtable_readers) {
    uint64_t seed = pick_seed();
    BOOST_TEST_MESSAGE("seed " << seed << " (set REEF_SEED to repeat)");
#ifdef REEF_DEBUG
    constexpr int cases = 40;
#else
    constexpr int cases = 300;
#endif
    tmpdir dir;
    int generation = 0;
    size_t checked = 0;
    combined_reader_stats stats, model_stats;
    cache::cache_tracker tracker(size_t(64) << 20);
    for (auto s : random_test_schemas()) {
        mutation_generator g(s, seed);
        for (int i = 0; i < cases; ++i) {
            auto context = "seed " + std::to_string(seed) + " table " + s->table() + " case " + std::to_string(i);
            BOOST_TEST_CONTEXT(context) {
                auto c = make_combined_case(g, i % 2 == 1);
                if (!c.reversed) {
                    continue;
                }
                auto slice = c.slice ? *c.slice : clustering_ranges{position_range::full()};
                std::vector<std::shared_ptr<memtable>> memtables;
                std::vector<sstables::shared_sstable> sstables;
                for (auto& source : c.sources) {
                    auto mt = std::make_shared<memtable>(s);
                    for (auto& m : source) {
                        mt->apply(with_typed_values(s, m));
                    }
                    memtables.push_back(mt);
                    writer_options wo;
                    wo.column_index_size = g.rnd(0, 1) ? 64 : 64 * 1024;
                    wo.min_index_interval = g.rnd(1, 4);
                    descriptor d{dir.path(), sstable_version::me, std::to_string(++generation), "big"};
                    auto w = make_memtable_reader(mt, s, read_options{});
                    co_await write_sstable(w, s, d, wo);
                    co_await w.close();
                    sstables.push_back(co_await sstables::open_sstable(d, tracker));
                }
                std::vector<combined_reader_source> from_memtables, from_sstables;
                auto options_for = [&](size_t k) {
                    return read_options{.range = c.plan.ranges.front(),
                                        .slice = slice,
                                        .order = read_order::reversed,
                                        .forwarding = c.source_forwarding[k]};
                };
                for (size_t k = 0; k < c.sources.size(); ++k) {
                    from_memtables.push_back(combined_reader_source{
                        make_memtable_reader(memtables[k], s, options_for(k)), c.max_timestamps[k], c.source_forwarding[k]});
                    from_sstables.push_back(combined_reader_source{
                        make_sstable_reader(s, sstables[k]->read_handles(), reader_permit(), options_for(k)), c.max_timestamps[k],
                        c.source_forwarding[k]});
                }
                auto want_reader = make_combined_reader(s, std::move(from_memtables), true, c.forwarding(), &model_stats);
                auto got_reader = make_combined_reader(s, std::move(from_sstables), true, c.forwarding(), &stats);
                std::exception_ptr err;
                read_result want, got;
                try {
                    want = co_await read_by_plan(want_reader, s, c.plan, true);
                    got = co_await read_by_plan(got_reader, s, c.plan, true);
                } catch (...) {
                    err = std::current_exception();
                }
                co_await want_reader.close();
                co_await got_reader.close();
                for (auto& sst : sstables) {
                    co_await sst->close();
                }
                if (err) {
                    std::rethrow_exception(err);
                }
                BOOST_REQUIRE(got.keys == want.keys);
                BOOST_REQUIRE_EQUAL(got.mutations.size(), want.mutations.size());
                for (size_t k = 0; k < got.mutations.size(); ++k) {
                    auto a = visible(got.mutations[k]);
                    auto b = visible(want.mutations[k]);
                    BOOST_REQUIRE_MESSAGE(a == b, "partition " << k << "\n" << to_string(a) << "\n!=\n" << to_string(b));
                }
                ++checked;
            }
            co_await yield();
        }
    }
    BOOST_TEST_MESSAGE(checked << " reversed combined reads; range skips " << stats.range_skips << ", partition skips "
                               << stats.partition_skips << " (over memtables: " << model_stats.range_skips << ", "
                               << model_stats.partition_skips << ")");
    BOOST_CHECK_GT(checked, 0u);
}

// oa sstables written by Cassandra 5.0.9 (test/resource/sstables/oa_*): oa's partition deletion takes one byte when
// live and twelve otherwise (oa_far_future deletes a partition; oa_lz4 has promoted indexes), and every partition
// read reversed, whole and from every promoted index block, is the forward stream reversed.
REEF_TEST_CASE(partition_reversing_data_source_reads_oa) {
    namespace fs = std::filesystem;
    auto resources = resource_sstables_dir();
    BOOST_REQUIRE_MESSAGE(resources, "test/resource/sstables is missing");
    size_t partitions = 0, deleted = 0, from_blocks = 0;
    for (auto name : {"oa_lz4", "oa_far_future"}) {
        BOOST_TEST_CONTEXT(name) {
            auto s = parse_create_table(read_file(*resources / name / "schema.cql"));
            auto d = descriptor::from_path((*resources / name / "oa-2-big-Data.db").string());
            auto w = co_await load_written(d);
            std::vector<std::vector<mutation_fragment>> forward;
            {
                auto r = make_mx_full_scan_reader(s, w.header, make_data_source(w.data, w.components, 0, w.components.data_length(), integrity_check::no),
                                                  d.filename(component_type::data), w.components.data_length());
                forward = partitions_of(co_await read_and_close(std::move(r), false));
            }
            BOOST_REQUIRE_EQUAL(forward.size(), w.entries.size());
            position_in_partition_comparator fwd_cmp(*s);
            for (size_t k = 0; k < w.entries.size(); ++k) {
                auto expected = reverse_partition(forward[k]);
                for (uint64_t window : {uint64_t(1), uint64_t(64), uint64_t(4096)}) {
                    uint64_t bytes = 0;
                    partition_reversing_options o;
                    o.window = window;
                    auto got = co_await read_reversed_partition(s, w, k, std::nullopt, o, bytes);
                    BOOST_REQUIRE_MESSAGE(same(got, expected), "partition " << k << " window " << window << "\n"
                                                                            << describe(got) << "!=\n" << describe(expected));
                }
                ++partitions;
                deleted += bool(std::get<partition_start>(forward[k].front()).partition_tombstone);
                if (auto& pi = w.entries[k].promoted) {
                    uint64_t p = w.entries[k].data_position;
                    uint64_t q = k + 1 < w.entries.size() ? w.entries[k + 1].data_position : w.components.data_length();
                    auto start = find_reversal_start(*pi, p, q, position_in_partition::after_all_clustered_rows(), fwd_cmp,
                                                     w.header->clustering_types, d.version, d.filename(component_type::index));
                    uint64_t bytes = 0;
                    auto got = co_await read_reversed_partition(s, w, k, start, partition_reversing_options{}, bytes);
                    BOOST_REQUIRE_MESSAGE(same(got, expected), "partition " << k << " from its last block");
                    ++from_blocks;
                }
            }
            co_await w.data.close();
        }
    }
    BOOST_TEST_MESSAGE(partitions << " oa partitions reversed, " << deleted << " with a partition deletion, "
                                  << from_blocks << " from a promoted index block");
    BOOST_CHECK_GT(deleted, 0u);
    BOOST_CHECK_GT(from_blocks, 0u);
}
