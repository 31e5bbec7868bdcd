// Reversed reads of mx sstables: partition_reversing_data_source's stream, parsed by the ordinary parser, is each
// partition's forward stream reversed fragment for fragment (random sstables: wide partitions with promoted indexes,
// range tombstones, static rows; LZ4, CRC-checked and plain; random windows), also when the walk starts inside a
// promoted index block (clipped to the slice it was chosen for).
#include "db/memtable.hh"
#include "db/memtable_reader.hh"
#include "reader/mutation_fragment_filter.hh"
#include "runtime/file.hh"
#include "runtime/reactor.hh"
#include "sstables/components.hh"
#include "sstables/index_entry.hh"
#include "sstables/mx_reader.hh"
#include "sstables/partition_reversing_data_source.hh"
#include "sstables/statistics.hh"
#include "sstables/writer.hh"
#include "test/lib/mutation_model.hh"
#include "test/lib/mx_test_support.hh"
#include "test/lib/random_mutation.hh"
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

std::string describe(const mutation_fragment& f) {
    return std::visit(
        [](const auto& x) -> std::string {
            using T = std::decay_t<decltype(x)>;
            if constexpr (std::is_same_v<T, partition_start>) {
                return "partition_start " + x.key.get_token().to_string() + " " + tomb_text(x.partition_tombstone);
            } else if constexpr (std::is_same_v<T, static_row>) {
                return "static_row";
            } else if constexpr (std::is_same_v<T, clustering_row>) {
                return "row " + to_string(position_in_partition::for_key(x.key)) + " " + tomb_text(x.row_tombstone);
            } else if constexpr (std::is_same_v<T, range_tombstone_change>) {
                return "rtc " + to_string(x.position) + " " + tomb_text(x.tomb);
            } else {
                return "partition_end";
            }
        },
        f);
}

std::string describe(const std::vector<mutation_fragment>& fs) {
    std::string out;
    for (auto& f : fs) {
        out += "  " + describe(f) + "\n";
    }
    return out;
}

bool same(const mutation_fragment& a, const mutation_fragment& b) {
    if (a.index() != b.index()) {
        return false;
    }
    if (auto* x = std::get_if<partition_start>(&a)) {
        auto& y = std::get<partition_start>(b);
        return x->key == y.key && x->partition_tombstone == y.partition_tombstone;
    }
    if (auto* x = std::get_if<static_row>(&a)) {
        return x->cells == std::get<static_row>(b).cells;
    }
    if (auto* x = std::get_if<clustering_row>(&a)) {
        auto& y = std::get<clustering_row>(b);
        return x->key == y.key && x->marker == y.marker && x->row_tombstone == y.row_tombstone && x->cells == y.cells;
    }
    if (auto* x = std::get_if<range_tombstone_change>(&a)) {
        auto& y = std::get<range_tombstone_change>(b);
        return x->position == y.position && x->tomb == y.tomb;
    }
    return true;
}

bool same(const std::vector<mutation_fragment>& a, const std::vector<mutation_fragment>& b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](auto& x, auto& y) { return same(x, y); });
}

// One partition's forward stream as a reversed reader gives it: rows in the opposite order, each change moved to its
// position reversed() and carrying the tombstone that was in force before it.
std::vector<mutation_fragment> reverse_partition(const std::vector<mutation_fragment>& fwd) {
    std::vector<mutation_fragment> out;
    std::vector<mutation_fragment> clustered;
    tombstone in_force;
    for (auto& f : fwd) {
        if (std::holds_alternative<partition_start>(f) || std::holds_alternative<static_row>(f)) {
            out.push_back(f);
        } else if (auto* rtc = std::get_if<range_tombstone_change>(&f)) {
            clustered.push_back(range_tombstone_change{rtc->position.reversed(), in_force});
            in_force = rtc->tomb;
        } else if (std::holds_alternative<clustering_row>(f)) {
            clustered.push_back(f);
        }
    }
    out.insert(out.end(), clustered.rbegin(), clustered.rend());
    out.push_back(partition_end{});
    return out;
}

// A partition's stream through mutation_fragment_filter (slice in the stream's order).
std::vector<mutation_fragment> filtered(const schema& s, const std::vector<mutation_fragment>& p,
                                        const clustering_ranges& slice, bool reversed) {
    std::vector<mutation_fragment> out{p.front()};
    mutation_fragment_filter filter(s, slice, reversed);
    for (size_t i = 1; i < p.size(); ++i) {
        filter.consume(p[i], out);
    }
    return out;
}

// Splits a stream into its partitions.
std::vector<std::vector<mutation_fragment>> partitions_of(std::vector<mutation_fragment> fs) {
    std::vector<std::vector<mutation_fragment>> out;
    for (auto& f : fs) {
        if (std::holds_alternative<partition_start>(f)) {
            out.emplace_back();
        }
        out.back().push_back(std::move(f));
    }
    return out;
}

future<std::vector<mutation_fragment>> read_and_close(mutation_reader r, bool reversed) {
    std::exception_ptr err;
    std::vector<mutation_fragment> out;
    try {
        out = co_await read_validated(r, reversed);
    } catch (...) {
        err = std::current_exception();
    }
    co_await r.close();
    if (err) {
        std::rethrow_exception(err);
    }
    co_return out;
}

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
    auto stats_path = d.filename(component_type::statistics);
    auto stats_bytes = co_await read_entire_file(stats_path);
    auto stats = parse_statistics(std::as_bytes(std::span<const char>(stats_bytes)), d.version, stats_path);
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
        return data_source(std::make_unique<counting_source>(make_data_source(w.data, w.components, pos, len), bytes_read));
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
                    mt->apply(with_typed_values(s, g.make(pkey(g.rnd(0, 100000)), g.rnd(0, 2) ? 300 : 8)));
                }
                auto wo = random_writer_options(g, i);
                descriptor d{dir.path(), sstable_version::me, std::to_string(++generation), "big"};
                {
                    auto w = make_memtable_reader(mt, s, dht::partition_range::full(), {position_range::full()}, false);
                    co_await write_sstable(w, s, d, wo);
                    co_await w.close();
                }
                auto w = co_await load_written(d);
                std::vector<std::vector<mutation_fragment>> forward;
                {
                    auto r = make_mx_full_scan_reader(s, w.header, make_data_source(w.data, w.components, 0, w.components.data_length()),
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
