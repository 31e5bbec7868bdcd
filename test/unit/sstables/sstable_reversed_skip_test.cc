// The reversed sstable reader's jumps between its slice's ranges: a reversed read of two small ranges at both ends of
// a partition of many promoted index blocks reads Data.db bytes bounded by those ranges' blocks (computed from the
// promoted index), not the partition; reads whose ranges start and end inside range tombstones (bounds and
// boundaries, nested, open across many blocks) jump into them and give, fragment for fragment, the forward read
// reversed and sliced, with the right tombstone in force on every row.
#include "reader/mutation_fragment_filter.hh"
#include "runtime/file.hh"
#include "sstables/index_entry.hh"
#include "sstables/sstable.hh"
#include "sstables/sstable_reader.hh"
#include "sstables/writer.hh"
#include "test/lib/random_mutation.hh"
#include "test/lib/read_and_close.hh"
#include "test/lib/reef_test.hh"
#include "test/lib/reversed_stream.hh"
#include "test/lib/simple_keys.hh"
#include "test/lib/tmpdir.hh"

#include <boost/test/unit_test.hpp>

#include <algorithm>

using namespace reef;
using namespace reef::sstables;
using namespace reef::testing;

namespace {

// Rows 0..rows-1 of one partition (int key 7, cells at timestamp 1000 + i % 7), with the given range tombstone
// changes before the rows they name: {row, tombstone} opens (or changes to) tombstone before `row`.
std::vector<mutation_fragment> int_partition(int rows, const std::vector<std::pair<int, tombstone>>& changes) {
    std::vector<mutation_fragment> fs;
    fs.push_back(partition_start{pkey(7), {}});
    size_t c = 0;
    for (int i = 0; i < rows; ++i) {
        while (c < changes.size() && changes[c].first == i) {
            fs.push_back(range_tombstone_change{position_in_partition::before_key(ck(i)), changes[c].second});
            ++c;
        }
        clustering_row r;
        r.key = ck(i);
        r.marker = row_marker{1000 + i % 7};
        r.cells.apply(0, atomic_cell::make_live(1000 + i % 7,
                                                std::string(reinterpret_cast<const char*>(int_value(i).data()), 4)));
        fs.push_back(std::move(r));
    }
    while (c < changes.size()) {
        fs.push_back(range_tombstone_change{position_in_partition::after_all_clustered_rows(), changes[c].second});
        ++c;
    }
    fs.push_back(partition_end{});
    return fs;
}

future<sstables::shared_sstable> write_int_sstable(const schema_ptr& s, std::vector<mutation_fragment> fs,
                                                   const tmpdir& dir, int generation, writer_options wo,
                                                   cache::cache_tracker& tracker) {
    descriptor d{dir.path(), sstable_version::me, std::to_string(generation), "big"};
    {
        auto w = make_fragment_vector_reader(s, std::move(fs));
        co_await write_sstable(w, s, d, wo);
        co_await w.close();
    }
    co_return co_await sstables::open_sstable(d, tracker);
}

// The promoted index blocks of the sstable's only partition, as Index.db stores them.
future<std::vector<promoted_index_block>> blocks_of(const sstables::sstable& sst) {
    auto path = sst.desc().filename(component_type::index);
    auto bytes = co_await read_entire_file(path);
    auto entries = parse_index_entries(bytes, sst.desc().version, path);
    BOOST_REQUIRE_EQUAL(entries.size(), 1u);
    BOOST_REQUIRE(entries[0].promoted);
    co_return entries[0].promoted->all_blocks(sst.header()->clustering_types, sst.desc().version, path);
}

// Rows [first, last) as a forward clustering range.
position_range rows_range(int first, int last) {
    return position_range{position_in_partition::before_key(ck(first)), position_in_partition::before_key(ck(last))};
}

// The blocks (indexes) a forward range's rows lie in: from the first whose last position is not before its start to
// the first whose last position is not before its end.
std::pair<size_t, size_t> blocks_of_range(const std::vector<promoted_index_block>& blocks, const position_range& r,
                                          const position_in_partition_comparator& cmp) {
    auto first_not_before = [&](const position_in_partition& p) {
        return size_t(std::partition_point(blocks.begin(), blocks.end(),
                                           [&](const promoted_index_block& b) { return cmp(b.last.position(), p) < 0; }) -
                      blocks.begin());
    };
    return {first_not_before(r.start), std::min(first_not_before(r.end), blocks.size() - 1)};
}

} // namespace

// A reversed read of rows [10, 20) and [rows - 100, rows - 90) of one large partition reads the partition's header,
// the blocks holding those rows and one block before each (the walk passes a range's start into the block before
// it), each read rounded to chunks and pages: not the rows between, which the walk jumps over; and it builds only
// the rows of the ranges (and the first past each), passing over the others of the blocks it walks.
REEF_TEST_CASE(reversed_read_of_two_far_ranges_reads_only_their_blocks) {
#ifdef REEF_DEBUG
    constexpr int rows = 30000;
#else
    constexpr int rows = 200000;
#endif
    auto s = int_table_schema();
    tmpdir dir;
    cache::cache_tracker tracker(size_t(64) << 20);
    position_in_partition_comparator cmp(*s);
    for (int variant = 0; variant < 2; ++variant) {
        writer_options wo;
        uint64_t chunk = 4096;
        if (variant == 0) {
            wo.chunk_length = uint32_t(chunk);
        } else {
            wo.compression.reset();
            wo.crc_chunk_size = uint32_t(chunk);
        }
        wo.column_index_size = 4096;
        auto sst = co_await write_int_sstable(s, int_partition(rows, {}), dir, variant + 1, wo, tracker);
        auto blocks = co_await blocks_of(*sst);
        uint64_t partition_bytes = sst->components().data_length();
        BOOST_REQUIRE_GT(blocks.size(), 100u);

        clustering_ranges forward{rows_range(10, 20), rows_range(rows - 100, rows - 90)};
        auto slice = reverse_ranges(forward);
        // What the read may read: the header, and per range its blocks and the one before, at most.
        uint64_t max_width = 0;
        for (auto& b : blocks) {
            max_width = std::max(max_width, b.width);
        }
        uint64_t wanted = blocks.front().offset;  // the partition header (key, deletion)
        for (auto& r : forward) {
            auto [first, last] = blocks_of_range(blocks, r, cmp);
            for (size_t b = first; b <= last; ++b) {
                wanted += blocks[b].width;
            }
            wanted += max_width;
        }

        auto pr = dht::partition_range::singular(pkey(7));
        sstable_reader_stats stats;
        auto h = sst->read_handles();
        h.stats = &stats;
        // The first read brings the index page in; the second reads Data.db only.
        auto first_reader = make_sstable_reader(s, h, reader_permit(), {.range = pr, .slice = slice, .order = read_order::reversed});
        auto first = co_await read_and_close(std::move(first_reader), true);
        stats = {};
        auto io_before = sst->data_file().io_counters();
        auto got_reader = make_sstable_reader(s, h, reader_permit(), {.range = pr, .slice = slice, .order = read_order::reversed});
        auto got = co_await read_and_close(std::move(got_reader), true);
        auto io_after = sst->data_file().io_counters();
        uint64_t bytes = io_after.bytes - io_before.bytes;
        uint64_t reads = io_after.reads - io_before.reads;

        BOOST_REQUIRE_EQUAL(got.size(), 22u);
        int expect[] = {rows - 91, rows - 92, rows - 93, rows - 94, rows - 95, rows - 96, rows - 97, rows - 98, rows - 99,
                        rows - 100, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10};
        for (int i = 0; i < 20; ++i) {
            BOOST_REQUIRE(std::get<clustering_row>(got[size_t(i) + 1]).key == ck(expect[i]));
        }
        // Four windows are read (the header's chunk, a range's blocks, the step back past its start, the other range's
        // blocks and step back: the last two are adjacent), each rounded at both ends to a chunk (decompressed or
        // checked whole; a page, 4 KiB, for O_DIRECT).
        uint64_t bound = wanted + 4 * 2 * chunk;
        BOOST_TEST_MESSAGE("variant " << variant << ": " << bytes << " bytes of Data.db in " << reads << " reads (bound "
                                      << bound << ": " << wanted << " of blocks, " << blocks.size() << " blocks of up to "
                                      << max_width << " bytes), of " << partition_bytes << "; jumps "
                                      << stats.reversed_jumps << "; rows built " << stats.rows_read << ", passed over "
                                      << stats.rows_skipped);
        BOOST_CHECK_LE(reads, 12u);
        BOOST_CHECK_LE(bytes, bound);
        BOOST_CHECK_LT(bytes * 8, partition_bytes);
        BOOST_CHECK_EQUAL(stats.reversed_jumps, 1u);  // from the upper range's blocks to the lower one's
        // Rows are built only in the ranges, and the first past each (where the parser pauses for the filter to
        // catch up); those before a range in the blocks walked are passed over by their size.
        BOOST_CHECK_LE(stats.rows_read, 20u + 2 * forward.size());
        BOOST_CHECK_GT(stats.rows_skipped, 0u);
        co_await sst->close();
    }
}

// Range tombstones open across many blocks, nested (boundaries where one starts or ends inside another): reversed
// reads of multi-range slices whose ranges start, end and jump inside them give the forward read reversed and
// sliced, and every row they give is under the tombstone its region has.
REEF_TEST_CASE(reversed_jumps_into_range_tombstones) {
#ifdef REEF_DEBUG
    constexpr int rows = 3000;
    constexpr int slices = 60;
#else
    constexpr int rows = 6000;
    constexpr int slices = 400;
#endif
    auto s = int_table_schema();
    tmpdir dir;
    cache::cache_tracker tracker(size_t(64) << 20);
    // Regions: [100, 900) under 5; [1500, 1800) under 7, [1800, 1900) under 9 (nested: boundaries), [1900, 2500)
    // under 7; [rows - 300, the end) under 3, open at the partition's end.
    tombstone t3{3, 30}, t5{5, 50}, t7{7, 70}, t9{9, 90};
    std::vector<std::pair<int, tombstone>> changes{{100, t5}, {900, {}},  {1500, t7},       {1800, t9},
                                                   {1900, t7}, {2500, {}}, {rows - 300, t3}, {rows, {}}};
    auto region = [&](int k) {
        tombstone t;
        for (auto& [at, c] : changes) {
            if (at <= k) {
                t = c;
            }
        }
        return t;
    };
    auto fs = int_partition(rows, changes);
    uint64_t seed = pick_seed();
    BOOST_TEST_MESSAGE("seed " << seed << " (set REEF_SEED to repeat)");
    mutation_generator g(s, seed);
    sstable_reader_stats stats;
    size_t checked_rows = 0;
    for (int variant = 0; variant < 2; ++variant) {
        writer_options wo;
        if (variant == 1) {
            wo.compression.reset();
        }
        wo.column_index_size = variant == 0 ? 512 : 2048;
        auto sst = co_await write_int_sstable(s, fs, dir, variant + 1, wo, tracker);
        auto blocks = co_await blocks_of(*sst);
        BOOST_REQUIRE_GT(blocks.size(), 20u);
        size_t open_ends = std::count_if(blocks.begin(), blocks.end(), [](auto& b) { return bool(b.end_open_marker); });
        BOOST_REQUIRE_GT(open_ends, 5u);  // blocks that end inside a tombstone: where jumps land
        auto pr = dht::partition_range::singular(pkey(7));
        clustering_ranges everything{position_range::full()};
        auto forward_reader = make_sstable_reader(s, sst->read_handles(), reader_permit(), {.range = pr, .slice = everything});
        auto forward = co_await read_and_close(std::move(forward_reader), false);
        auto reversed = reverse_partition(forward);
        auto h = sst->read_handles();
        h.stats = &stats;
        std::vector<clustering_ranges> fixed{
            {rows_range(150, 160), rows_range(1850, 1860), rows_range(2400, 2410)},
            {rows_range(100, 101), rows_range(1799, 1801), rows_range(1899, 1901), rows_range(rows - 2, rows)},
            {rows_range(0, 2), rows_range(899, 900), rows_range(2499, 2501), rows_range(rows - 301, rows - 299)},
        };
        for (int q = 0; q < slices; ++q) {
            clustering_ranges slice;
            if (q < int(fixed.size())) {
                slice = fixed[size_t(q)];
            } else {
                // 1 to 4 ranges of 1 to 30 rows at random places, in order.
                std::vector<int> starts;
                for (int n = g.rnd(1, 4); n > 0; --n) {
                    starts.push_back(g.rnd(0, rows - 1));
                }
                std::sort(starts.begin(), starts.end());
                int covered = -1;
                for (int a : starts) {
                    a = std::max(a, covered);
                    int b = std::min(rows, a + g.rnd(1, 30));
                    if (a < b) {
                        slice.push_back(rows_range(a, b));
                        covered = b;
                    }
                }
            }
            auto rs = reverse_ranges(slice);
            auto got_reader = make_sstable_reader(s, h, reader_permit(), {.range = pr, .slice = rs, .order = read_order::reversed});
            auto got = co_await read_and_close(std::move(got_reader), true);
            auto want = filtered(*s, reversed, rs, true);
            BOOST_REQUIRE_MESSAGE(same(got, want), "variant " << variant << " slice " << q << "\n"
                                                              << describe(got) << "!=\n" << describe(want));
            // The tombstone in force on every row given is its region's.
            tombstone in_force;
            for (auto& f : got) {
                if (auto* rtc = std::get_if<range_tombstone_change>(&f)) {
                    in_force = rtc->tomb;
                } else if (auto* r = std::get_if<clustering_row>(&f)) {
                    int k = int_of(r->key.components()[0]);
                    BOOST_REQUIRE_MESSAGE(in_force == region(k), "variant " << variant << " slice " << q << " row " << k
                                                                            << ": " << tomb_text(in_force) << " in force, "
                                                                            << tomb_text(region(k)) << " expected");
                    ++checked_rows;
                }
            }
        }
        co_await sst->close();
    }
    BOOST_TEST_MESSAGE(checked_rows << " rows checked; " << stats.reversed_jumps << " jumps");
    BOOST_CHECK_GT(stats.reversed_jumps, uint64_t(slices));
}
