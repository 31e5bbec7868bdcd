// Rows the sstable reader does not want are passed over by their size, unread: row_position_comparator orders a row's
// stored clustering values as position_in_partition_comparator orders its position (random keys, prefixes and
// bounds, forward and reversed), and a 1-row read deep inside a promoted index block, or in a partition without a
// promoted index, builds only the rows it returns (plus the one row that shows the slice is behind), whether it
// reads through a slice or a forwarding window; what it returns is what the memtable reader returns.
#include "db/memtable.hh"
#include "db/memtable_reader.hh"
#include "sstables/index_entry.hh"
#include "sstables/mx_fragments.hh"
#include "sstables/sstable.hh"
#include "sstables/sstable_reader.hh"
#include "sstables/writer.hh"
#include "test/lib/mutation_model.hh"
#include "test/lib/random_mutation.hh"
#include "test/lib/read_and_close.hh"
#include "test/lib/reef_test.hh"
#include "test/lib/simple_keys.hh"
#include "test/lib/tmpdir.hh"

#include <boost/test/unit_test.hpp>

using namespace reef;
using namespace reef::sstables;
using namespace reef::testing;

namespace {

int sign(int c) { return c < 0 ? -1 : c > 0 ? 1 : 0; }

// A row's key as the parser holds it: the key's values, then (a compact table's prefix) nulls.
clustering_values stored(const clustering_key_prefix& k, size_t columns) {
    clustering_values v;
    for (auto c : k.components()) {
        v.emplace_back(bytes(c.begin(), c.end()));
    }
    v.resize(columns);
    return v;
}

} // namespace

BOOST_AUTO_TEST_CASE(row_position_comparator_matches_position_comparator) {
    size_t compared = 0, ties = 0;
    for_random_cases(3000, [&](const schema_ptr& s, mutation_generator& g) {
        size_t columns = s->clustering_key().size();
        auto key = g.clustering_key();
        // Sometimes a prefix (the rest null), as a compact table's row may be.
        if (g.rnd(0, 3) == 0) {
            auto c = key.to_vector();
            c.resize(size_t(g.rnd(0, int(c.size()))));
            key = clustering_key_prefix(std::move(c));
        }
        auto row = stored(key, columns);
        position_in_partition pos = position_in_partition::for_static_row();
        switch (g.rnd(0, 5)) {
        case 0: pos = position_in_partition::for_key(key); break;  // the row's own position
        case 1: pos = position_in_partition::for_key(g.clustering_key()); break;
        case 2: pos = g.rnd(0, 1) ? position_in_partition::before_all_clustered_rows()
                                  : position_in_partition::after_all_clustered_rows(); break;
        case 3: pos = g.rnd(0, 1) ? position_in_partition::for_static_row() : position_in_partition::for_partition_end(); break;
        default: pos = g.bound(); break;
        }
        for (bool reversed : {false, true}) {
            auto p = reversed && pos.region() == partition_region::clustered ? pos.reversed() : pos;
            int expected = sign(position_in_partition_comparator(*s, reversed)(position_in_partition::for_key(key), p));
            int got = sign(row_position_comparator(*s, reversed)(row, p));
            BOOST_REQUIRE_MESSAGE(got == expected, "row " << to_string(position_in_partition::for_key(key)) << " vs "
                                                           << to_string(p) << (reversed ? " reversed" : "") << ": "
                                                           << got << ", expected " << expected);
            ++compared;
            ties += expected == 0;
        }
    });
    BOOST_TEST_MESSAGE(compared << " comparisons, " << ties << " ties");
    BOOST_CHECK_GT(ties, 0u);
}

namespace {

// ks.t (pk int, ck int, v int): partition 1 with `rows` rows ck = 0, 2, 4, ... (v = ck), written uncompressed with
// 64 KiB promoted index blocks (some 4,000 rows each).
future<sstables::shared_sstable> write_partition(const schema_ptr& s, tmpdir& dir, cache::cache_tracker& tracker,
                                                 int rows, std::shared_ptr<memtable>& mt) {
    mt = std::make_shared<memtable>(s);
    mutation m(s, pkey(1));
    for (int i = 0; i < rows; ++i) {
        auto& r = m.partition().clustered_row(ck(2 * i));
        auto v = int_value(2 * i);
        r.cells.apply(0, atomic_cell::make_live(1, std::string(v.begin(), v.end())));
    }
    mt->apply(m);
    writer_options o;
    o.compression.reset();
    o.column_index_size = 64 * 1024;
    descriptor d{dir.path(), sstable_version::me, std::to_string(rows), "big"};
    auto w = make_memtable_reader(mt, s, read_options{});
    co_await write_sstable(w, s, d, o);
    co_await w.close();
    co_return co_await sstables::open_sstable(d, tracker);
}

// Reads partition 1 through `slice`, or (forwarding) the full slice through one window, counting rows; checks the
// result against the memtable's.
future<sstable_reader_stats> read_counted(const schema_ptr& s, sstables::sstable& sst, const std::shared_ptr<memtable>& mt,
                                          clustering_ranges slice, bool forwarding) {
    sstable_reader_stats stats;
    auto h = sst.read_handles();
    h.stats = &stats;
    auto pr = dht::partition_range::singular(pkey(1));
    std::vector<mutation_fragment> got;
    if (forwarding) {
        // The partition's head, then each range as a window; the stream gives no partition_end.
        auto r = make_sstable_reader(s, h, reader_permit(), {.range = pr, .forwarding = streamed_forwarding::yes});
        while (auto f = co_await r()) {
            got.push_back(std::move(*f));
        }
        for (auto& w : slice) {
            co_await r.fast_forward_to(w);
            while (auto f = co_await r()) {
                got.push_back(std::move(*f));
            }
        }
        co_await r.close();
        BOOST_REQUIRE(!got.empty());
        got.push_back(partition_end{});
    } else {
        auto r = make_sstable_reader(s, h, reader_permit(), {.range = pr, .slice = slice});
        got = co_await read_and_close(std::move(r));
    }
    auto e = make_memtable_reader(mt, s, {.range = pr, .slice = slice});
    auto expected = co_await read_and_close(std::move(e));
    BOOST_REQUIRE(canonical_mutations(s, got, false) == canonical_mutations(s, expected, false));
    co_return stats;
}

} // namespace

REEF_TEST_CASE(one_row_deep_inside_a_block_builds_only_that_row) {
    auto s = int_table_schema();
    tmpdir dir;
    cache::cache_tracker tracker(size_t(64) << 20);
    std::shared_ptr<memtable> mt;
    constexpr int rows = 20000;
    auto sst = co_await write_partition(s, dir, tracker, rows, mt);
    for (bool forwarding : {false, true}) {
        for (int i : {0, 1, 1500, 2999, 4500, 10001, 13400, rows - 1}) {
            BOOST_TEST_CONTEXT("row " << i << (forwarding ? " through a window" : " through a slice")) {
                clustering_ranges slice{position_range::for_prefix(ck(2 * i))};
                auto stats = co_await read_counted(s, *sst, mt, slice, forwarding);
                // The row itself, and without forwarding the row after it (which shows the slice is behind).
                BOOST_CHECK_LE(stats.rows_read, 2u);
                BOOST_CHECK_GE(stats.rows_read, 1u);
                // A table without static columns: the partition starts from the index, its header unread.
                BOOST_CHECK_EQUAL(stats.headers_skipped, 1u);
                // Rows before it in its block are passed over unread (each block holds some 3,000).
                if (i == 1500 || i == 4500 || i == 13400) {
                    BOOST_CHECK_GT(stats.rows_skipped, 100u);
                }
            }
        }
        // A missing key between two rows, and two ranges in different blocks.
        {
            clustering_ranges slice{position_range::for_prefix(ck(2 * 7001 + 1))};
            auto stats = co_await read_counted(s, *sst, mt, slice, forwarding);
            BOOST_CHECK_LE(stats.rows_read, 1u);
            BOOST_CHECK_GT(stats.rows_skipped, 100u);
        }
        {
            clustering_ranges slice{position_range::for_prefix(ck(2 * 4500)), position_range::for_prefix(ck(2 * 4600)),
                                    position_range::for_prefix(ck(2 * 15000))};
            auto stats = co_await read_counted(s, *sst, mt, slice, forwarding);
            BOOST_CHECK_LE(stats.rows_read, 6u);
            BOOST_CHECK_GT(stats.rows_skipped, 1000u);
        }
    }
    co_await sst->close();
}

REEF_TEST_CASE(rows_past_the_slice_are_skipped_without_a_promoted_index) {
    auto s = int_table_schema();
    tmpdir dir;
    cache::cache_tracker tracker(size_t(64) << 20);
    std::shared_ptr<memtable> mt;
    constexpr int rows = 500;  // some 7 KiB: one block, no promoted index
    auto sst = co_await write_partition(s, dir, tracker, rows, mt);
    for (int i : {0, 250, rows - 1}) {
        BOOST_TEST_CONTEXT("row " << i) {
            clustering_ranges slice{position_range::for_prefix(ck(2 * i))};
            auto stats = co_await read_counted(s, *sst, mt, slice, false);
            BOOST_CHECK_EQUAL(stats.rows_read, 1u);
            BOOST_CHECK_EQUAL(stats.rows_skipped, uint64_t(rows - 1));
        }
    }
    co_await sst->close();
}
