// Tests of Index.db parsing over every corpus sstable: the entries match the oracle dump's partitions and
// positions, promoted indexes decode with the schema's clustering types into ordered, contiguous blocks that
// cover their partition, and index_entry_length frames entries exactly as the parser does.
#include "sstables/exceptions.hh"
#include "sstables/index_entry.hh"
#include "sstables/promoted_index_cursor.hh"
#include "test/lib/random_mutation.hh"
#include "test/lib/sstable_corpus.hh"

#include <boost/test/unit_test.hpp>
#include <random>

using namespace reef;
using namespace reef::sstables;
using reef::testing::corpus_sstable;

namespace {

// Per sstable, in file-name order, the "position" of each partition in expected.json. A text scan, not a JSON
// parse: the large oracles take too long to build as trees in debug builds.
std::vector<std::vector<uint64_t>> oracle_partition_positions(const std::filesystem::path& dataset) {
    auto text = *reef::testing::read_corpus_file(reef::testing::expected_json_path(dataset));
    std::vector<std::vector<uint64_t>> out;
    // Each sstable's dump is a top-level array: "[" at the start of a line.
    size_t pos = 0;
    while (pos < text.size()) {
        if (text[pos] == '[' && (pos == 0 || text[pos - 1] == '\n')) {
            out.emplace_back();
        }
        if (text.compare(pos, 15, "\"partition\" : {") == 0) {
            auto p = text.find("\"position\" : ", pos);
            BOOST_REQUIRE(p != std::string::npos && !out.empty());
            out.back().push_back(std::stoull(text.substr(p + 13, 20)));
            pos = p;
        }
        pos = text.find_first_of("[\"", pos + 1);
    }
    return out;
}

} // namespace

BOOST_AUTO_TEST_CASE(test_index_entries_match_the_oracle) {
    auto all = reef::testing::all_test_sstables();
    size_t checked = 0, with_promoted = 0, blocks_decoded = 0, positions_checked = 0, cursors = 0;
    std::filesystem::path last_dataset;
    std::vector<std::vector<uint64_t>> oracle;
    size_t nth_in_dataset = 0;
    for (auto& t : all) {
        BOOST_TEST_CONTEXT(t.name()) {
            if (t.dataset != last_dataset) {
                last_dataset = t.dataset;
                nth_in_dataset = 0;
                oracle.clear();
                if (std::filesystem::exists(reef::testing::expected_json_path(t.dataset))) {
                    oracle = oracle_partition_positions(t.dataset);
                }
            }
            auto index_name = t.path(component_type::index);
            auto bytes = reef::testing::read_file(index_name);
            auto entries = parse_index_entries(bytes, t.desc.version, index_name);
            // Framing agrees with the parser.
            uint64_t pos = 0;
            for (auto& e : entries) {
                BOOST_REQUIRE_EQUAL(e.index_position, pos);
                auto len = index_entry_length(std::string_view(bytes).substr(pos), index_name, pos);
                BOOST_REQUIRE(len);
                pos += *len;
            }
            BOOST_CHECK_EQUAL(pos, bytes.size());
            // Positions: each entry's partition holds the position the oracle printed (after its header).
            if (nth_in_dataset < oracle.size()) {
                auto& positions = oracle[nth_in_dataset];
                BOOST_REQUIRE_EQUAL(entries.size(), positions.size());
                positions_checked += entries.size();
                for (size_t i = 0; i < entries.size(); ++i) {
                    BOOST_CHECK_GT(positions[i], entries[i].data_position + 2 + entries[i].key.size());
                    if (i + 1 < entries.size()) {
                        BOOST_CHECK_LE(positions[i], entries[i + 1].data_position);
                    }
                }
            }
            ++nth_in_dataset;
            for (size_t i = 0; i < entries.size(); ++i) {
                auto& e = entries[i];
                if (!e.promoted) {
                    continue;
                }
                ++with_promoted;
                auto& pi = *e.promoted;
                BOOST_CHECK(pi.block_count() >= 1);
                if (!t.table) {
                    continue;
                }
                auto types = t.table->clustering_types();
                auto blocks = pi.all_blocks(types, t.desc.version, index_name);
                blocks_decoded += blocks.size();
                position_in_partition_comparator cmp(*t.table);
                // The first block starts right after the partition header; blocks are contiguous and ordered.
                BOOST_CHECK_EQUAL(blocks.front().offset, pi.partition_header_length);
                for (size_t b = 0; b < blocks.size(); ++b) {
                    BOOST_CHECK(cmp(blocks[b].first.position(), blocks[b].last.position()) <= 0);
                    if (b + 1 < blocks.size()) {
                        BOOST_CHECK_EQUAL(blocks[b].offset + blocks[b].width, blocks[b + 1].offset);
                        BOOST_CHECK(cmp(blocks[b].last.position(), blocks[b + 1].first.position()) < 0);
                    }
                }
                // Binary search agrees with a linear scan, for every bound of every block and the positions
                // just before and after each.
                // (At most 12 blocks probed per partition: each probe decodes log2(n) blocks.)
                for (size_t pb = 0; pb < blocks.size(); pb += 1 + blocks.size() / 12) {
                    auto& probe_block = blocks[pb];
                    for (auto& bound : {probe_block.first, probe_block.last}) {
                        auto p = bound.position();
                        for (auto pos : {p, position_in_partition::before_key(bound.prefix),
                                         position_in_partition::after_key(bound.prefix)}) {
                            size_t linear = 0;
                            while (linear < blocks.size() && cmp(blocks[linear].last.position(), pos) < 0) {
                                ++linear;
                            }
                            BOOST_CHECK_EQUAL(pi.first_block_not_before(pos, cmp, types, t.desc.version, index_name), linear);
                        }
                    }
                }
                BOOST_CHECK_EQUAL(pi.first_block_not_before(position_in_partition::for_partition_end(), cmp, types,
                                                            t.desc.version, index_name), blocks.size());
                BOOST_CHECK_EQUAL(pi.first_block_not_before(position_in_partition::before_all_clustered_rows(), cmp,
                                                            types, t.desc.version, index_name), 0u);
                // The cursor, asked for increasing positions, gives the linear scan's block, the previous block's
                // end-open marker as the tombstone in force, and decodes each block at most once.
                if (i + 1 < entries.size()) {
                    std::vector<position_in_partition> probes;
                    for (auto& b : blocks) {
                        for (auto& bound : {b.first, b.last}) {
                            probes.push_back(bound.position());
                            probes.push_back(position_in_partition::before_key(bound.prefix));
                            probes.push_back(position_in_partition::after_key(bound.prefix));
                        }
                    }
                    probes.push_back(position_in_partition::after_all_clustered_rows());
                    std::sort(probes.begin(), probes.end(), [&](auto& a, auto& b) { return cmp(a, b) < 0; });
                    uint64_t length = entries[i + 1].data_position - e.data_position;
                    promoted_index_cursor cursor(pi, length, *t.table, types, t.desc.version, index_name);
                    for (auto& pos : probes) {
                        size_t linear = 0;
                        while (linear < blocks.size() && cmp(blocks[linear].last.position(), pos) < 0) {
                            ++linear;
                        }
                        auto ep = cursor.advance_to(pos);
                        BOOST_CHECK_EQUAL(ep.block, linear);
                        BOOST_CHECK_EQUAL(ep.offset, linear < blocks.size() ? blocks[linear].offset : length - 1);
                        std::optional<deletion_time> marker = linear > 0 ? blocks[linear - 1].end_open_marker : std::nullopt;
                        BOOST_CHECK(ep.open == (marker ? marker->to_tombstone() : tombstone{}));
                    }
                    BOOST_CHECK_LE(cursor.decoded_blocks(), blocks.size());
                    ++cursors;
                }
                // The last block ends with the partition (its end-of-partition byte included).
                if (i + 1 < entries.size()) {
                    auto partition_size = entries[i + 1].data_position - e.data_position;
                    BOOST_CHECK_EQUAL(blocks.back().offset + blocks.back().width, partition_size);
                }
            }
            ++checked;
        }
    }
    BOOST_TEST_MESSAGE("sstables " << checked << ", promoted indexes " << with_promoted << ", blocks " << blocks_decoded
                                   << ", partition positions checked " << positions_checked << ", cursors " << cursors);
    if (!all.empty()) {
        BOOST_CHECK_GT(cursors, 0u);
        BOOST_CHECK_GT(positions_checked, 70000u);
        BOOST_CHECK_GT(with_promoted, 0u);
        BOOST_CHECK_GT(blocks_decoded, 0u);
    }
}

BOOST_AUTO_TEST_CASE(test_index_entry_length_needs_whole_header) {
    // key "ab", position 7, no promoted index.
    std::string e("\x00\x02" "ab" "\x07" "\x00", 6);
    for (size_t cut = 0; cut < e.size(); ++cut) {
        BOOST_CHECK(!index_entry_length(std::string_view(e).substr(0, cut), "Index.db", 0));
    }
    BOOST_CHECK_EQUAL(*index_entry_length(e, "Index.db", 0), 6u);
    auto entries = parse_index_entries(e, sstable_version::me, "Index.db");
    BOOST_REQUIRE_EQUAL(entries.size(), 1u);
    BOOST_CHECK_EQUAL(entries[0].key.view(), "ab");
    BOOST_CHECK_EQUAL(entries[0].data_position, 7u);
    BOOST_CHECK(!entries[0].promoted);
}

BOOST_AUTO_TEST_CASE(test_index_entry_errors_name_file_and_offset) {
    // A promoted index size that runs past the end.
    std::string e("\x00\x02" "ab" "\x07" "\x40", 6);
    try {
        parse_index_entries(e, sstable_version::nb, "x-Index.db", 1000);
        BOOST_FAIL("expected an exception");
    } catch (const malformed_sstable_exception& ex) {
        BOOST_TEST_MESSAGE(ex.what());
        BOOST_CHECK_EQUAL(ex.file(), "x-Index.db");
        BOOST_CHECK_EQUAL(ex.offset(), 1005u);
    }
    // A key longer than the bytes.
    std::string k("\x00\x09" "ab", 4);
    BOOST_CHECK_THROW(parse_index_entries(k, sstable_version::nb, "x-Index.db"), malformed_sstable_exception);
}

namespace {

data_type random_clustering_type(std::mt19937_64& rng) {
    static const std::vector<data_type> types = {int32_type(), bigint_type(), uuid_type(), boolean_type(),
                                                 text_type(),  blob_type(),   reversed_type(int32_type()),
                                                 reversed_type(text_type())};
    return types[rng() % types.size()];
}

bytes random_value(std::mt19937_64& rng, const data_type& t) {
    if (rng() % 6 == 0) {
        return {};  // empty (a header bit, no bytes)
    }
    auto fixed = t->value_length_if_fixed();
    bytes v(fixed ? *fixed : 1 + rng() % 40);
    for (auto& b : v) {
        b = uint8_t(rng());
    }
    return v;
}

clustering_bound random_bound(std::mt19937_64& rng, const std::vector<data_type>& types) {
    static const clustering_kind kinds[] = {
        clustering_kind::excl_end_bound, clustering_kind::incl_start_bound,
        clustering_kind::excl_end_incl_start_boundary, clustering_kind::clustering,
        clustering_kind::incl_end_excl_start_boundary, clustering_kind::incl_end_bound,
        clustering_kind::excl_start_bound};
    clustering_bound b;
    b.kind = kinds[rng() % std::size(kinds)];
    size_t n = b.kind == clustering_kind::clustering ? types.size() : rng() % (types.size() + 1);
    std::vector<bytes> values;
    for (size_t i = 0; i < n; ++i) {
        values.push_back(random_value(rng, types[i]));
    }
    b.prefix = clustering_key_prefix(std::move(values));
    return b;
}

deletion_time random_deletion(std::mt19937_64& rng, sstable_version v) {
    if (rng() % 2) {
        return deletion_time{};
    }
    deletion_time d;
    d.marked_for_delete_at = int64_t(rng() >> 1) * (has_uint_deletion_time(v) ? 1 : (rng() % 2 ? 1 : -1));
    d.local_deletion_time = has_uint_deletion_time(v) ? int64_t(uint32_t(rng())) : int64_t(int32_t(rng()));
    return d;
}

} // namespace

// Random entries (up to 70 clustering columns, so several clustering headers; empty values; every bound kind;
// deletion times in both forms) written by write_index_entry read back the same, and every cut of an entry is
// either "need more" or refused, never misread.
BOOST_AUTO_TEST_CASE(test_random_entries_round_trip) {
    uint64_t seed = reef::testing::pick_seed();
    BOOST_TEST_MESSAGE("seed " << seed << " (set REEF_SEED to repeat)");
    std::mt19937_64 rng(seed);
    for (int round = 0; round < 300; ++round) {
        BOOST_TEST_CONTEXT("seed " << seed << " round " << round) {
            auto v = std::vector<sstable_version>{sstable_version::mc, sstable_version::nb, sstable_version::oa}[rng() % 3];
            std::vector<data_type> types;
            size_t ncols = rng() % 4 == 0 ? rng() % 70 : rng() % 4;
            for (size_t i = 0; i < ncols; ++i) {
                types.push_back(random_clustering_type(rng));
            }
            struct expected_entry {
                std::string key;
                uint64_t position, header_length;
                deletion_time deletion;
                std::vector<promoted_index_block> blocks;
                size_t begin, end;
            };
            std::vector<expected_entry> expected;
            std::string file;
            size_t count = 1 + rng() % 8;
            for (size_t i = 0; i < count; ++i) {
                expected_entry e;
                e.key = std::string(rng() % 60, 'k');
                for (auto& c : e.key) {
                    c = char(rng());
                }
                e.position = rng() >> (rng() % 64);
                e.header_length = rng() % 5000;
                e.deletion = random_deletion(rng, v);
                size_t nblocks = rng() % 3 == 0 ? 0 : 1 + rng() % 6;
                for (size_t b = 0; b < nblocks; ++b) {
                    promoted_index_block blk;
                    blk.first = random_bound(rng, types);
                    blk.last = random_bound(rng, types);
                    blk.offset = rng() >> (rng() % 64);
                    blk.width = rng() % 200000;
                    if (rng() % 2) {
                        auto d = random_deletion(rng, v);
                        if (!d.live()) {
                            blk.end_open_marker = d;
                        }
                    }
                    e.blocks.push_back(std::move(blk));
                }
                e.begin = file.size();
                write_index_entry(file, e.key, e.position, e.header_length, e.deletion, e.blocks, types, v);
                e.end = file.size();
                expected.push_back(std::move(e));
            }
            auto entries = parse_index_entries(file, v, "Index.db", 100);
            BOOST_REQUIRE_EQUAL(entries.size(), expected.size());
            for (size_t i = 0; i < entries.size(); ++i) {
                auto& got = entries[i];
                auto& want = expected[i];
                BOOST_CHECK_EQUAL(got.index_position, 100 + want.begin);
                BOOST_CHECK(got.key.view() == want.key);
                BOOST_CHECK_EQUAL(got.data_position, want.position);
                BOOST_REQUIRE_EQUAL(bool(got.promoted), !want.blocks.empty());
                if (got.promoted) {
                    BOOST_CHECK_EQUAL(got.promoted->partition_header_length, want.header_length);
                    BOOST_CHECK(got.promoted->partition_deletion == want.deletion);
                    auto blocks = got.promoted->all_blocks(types, v, "Index.db");
                    BOOST_REQUIRE_EQUAL(blocks.size(), want.blocks.size());
                    for (size_t b = 0; b < blocks.size(); ++b) {
                        BOOST_CHECK(blocks[b].first == want.blocks[b].first);
                        BOOST_CHECK(blocks[b].last == want.blocks[b].last);
                        BOOST_CHECK_EQUAL(blocks[b].offset, want.blocks[b].offset);
                        BOOST_CHECK_EQUAL(blocks[b].width, want.blocks[b].width);
                        BOOST_CHECK(blocks[b].end_open_marker == want.blocks[b].end_open_marker);
                    }
                }
                // Every cut of the entry: "need more", or the whole length; a parse of the cut is refused.
                std::string_view whole = std::string_view(file).substr(want.begin, want.end - want.begin);
                for (size_t cut = 0; cut < whole.size(); cut += 1 + rng() % 7) {
                    auto len = index_entry_length(whole.substr(0, cut), "Index.db", 0);
                    BOOST_CHECK(!len || *len == whole.size());
                    BOOST_CHECK_THROW(parse_index_entries(whole.substr(0, cut == 0 ? 1 : cut), v, "Index.db"),
                                      malformed_sstable_exception);
                }
                BOOST_CHECK_EQUAL(*index_entry_length(whole, "Index.db", 0), whole.size());
            }
        }
    }
}

// The smallest promoted index: a table without clustering columns, blocks of five bytes.
BOOST_AUTO_TEST_CASE(test_smallest_blocks) {
    std::vector<promoted_index_block> blocks(3);
    for (size_t i = 0; i < blocks.size(); ++i) {
        blocks[i].offset = i;
        blocks[i].width = 65536;  // a width delta of 0: one byte
    }
    std::string out;
    write_index_entry(out, "k", 0, 3, deletion_time{}, blocks, {}, sstable_version::oa);
    auto entries = parse_index_entries(out, sstable_version::oa, "Index.db");
    BOOST_REQUIRE_EQUAL(entries.size(), 1u);
    BOOST_REQUIRE(entries[0].promoted);
    BOOST_CHECK_EQUAL(entries[0].promoted->blocks.size(), 15u);
    auto back = entries[0].promoted->all_blocks({}, sstable_version::oa, "Index.db");
    BOOST_REQUIRE_EQUAL(back.size(), 3u);
    BOOST_CHECK_EQUAL(back[2].offset, 2u);
    BOOST_CHECK_EQUAL(back[2].width, 65536u);
}

namespace {

// A stored deletion time, written in version v's form and read back as the index reader reads it.
deletion_time stored(int64_t timestamp, int64_t ldt, sstable_version v) {
    std::string bytes;
    write_deletion_time(bytes, deletion_time{timestamp, ldt}, v);
    byte_reader in("Index.db", std::as_bytes(std::span<const char>(bytes.data(), bytes.size())));
    auto d = read_deletion_time(in, v);
    BOOST_REQUIRE(in.at_end());
    return d;
}

} // namespace

// deletion_time::to_tombstone against Cassandra 5.0's rule (FORMAT.md, "Impossible times"): live is no tombstone; a
// deletion time in 0..4294967294 stays; one outside (mc..nb's negative int32s, oa's 0xFFFFFFFF) reads as
// INVALID_DELETION_TIME, 4294967294. The Data.db parser's marker and row deletions go through the same function.
BOOST_AUTO_TEST_CASE(test_deletion_time_to_tombstone_normalizes) {
    for (auto v : {sstable_version::mc, sstable_version::nb, sstable_version::oa}) {
        BOOST_TEST_CONTEXT("version " << int(v)) {
            BOOST_CHECK(stored(write_time::missing_timestamp, no_deletion_time_32, v).to_tombstone() == tombstone{});
            BOOST_CHECK(deletion_time{}.to_tombstone() == tombstone{});
            BOOST_CHECK(stored(7, 0, v).to_tombstone() == (tombstone{7, 0}));
            BOOST_CHECK(stored(7, 1442880000, v).to_tombstone() == (tombstone{7, 1442880000}));
            BOOST_CHECK(stored(7, no_deletion_time_32, v).to_tombstone() == (tombstone{7, no_deletion_time_32}));
        }
    }
    // mc..nb store a signed int32: every negative one is impossible.
    for (int64_t ldt : {int64_t(-1), int64_t(-2), int64_t(std::numeric_limits<int32_t>::min())}) {
        BOOST_CHECK(stored(7, ldt, sstable_version::nb).to_tombstone() == (tombstone{7, invalid_deletion_time}));
    }
    // oa stores an unsigned one: past 2038 is real, only 0xFFFFFFFF is impossible.
    BOOST_CHECK(stored(7, 0x80000000LL, sstable_version::oa).to_tombstone() == (tombstone{7, 0x80000000LL}));
    BOOST_CHECK(stored(7, 4294967294LL, sstable_version::oa).to_tombstone() == (tombstone{7, invalid_deletion_time}));
    BOOST_CHECK(stored(7, 4294967295LL, sstable_version::oa).to_tombstone() == (tombstone{7, invalid_deletion_time}));
    BOOST_CHECK(invalid_deletion_time == 4294967294LL);

    // Random stored values, boundaries favoured, against the rule written out.
    uint64_t seed = reef::testing::pick_seed();
    BOOST_TEST_MESSAGE("seed " << seed << " (set REEF_SEED to repeat)");
    std::mt19937_64 rng(seed);
    const int64_t edges[] = {0, 1, int64_t(no_deletion_time_32) - 1, int64_t(no_deletion_time_32), 0x80000000LL,
                             4294967293LL, 4294967294LL, 4294967295LL};
    for (int i = 0; i < 10000; ++i) {
        auto v = rng() % 2 ? sstable_version::oa : sstable_version::me;
        int64_t raw = rng() % 4 == 0 ? edges[rng() % std::size(edges)] + int64_t(rng() % 3) - 1 : int64_t(rng());
        int64_t ldt = has_uint_deletion_time(v) ? int64_t(uint32_t(raw)) : int64_t(int32_t(raw));
        int64_t ts = int64_t(rng() >> 1);
        auto d = stored(ts, ldt, v);
        BOOST_REQUIRE_EQUAL(d.local_deletion_time, ldt);
        bool possible = ldt >= 0 && ldt <= 4294967294LL;
        BOOST_REQUIRE(d.to_tombstone() == (tombstone{ts, possible ? ldt : 4294967294LL}));
    }
}

// The partition deletion (Data.db's header, the promoted index's copy): oa reads it as to_tombstone() does; mc..nb
// need both "live" sentinels together and read the time's 32 bits unsigned, whole.
BOOST_AUTO_TEST_CASE(test_partition_tombstone) {
    auto mc = sstable_version::mc;
    BOOST_CHECK(partition_tombstone(deletion_time{}, mc) == std::optional(tombstone{}));
    BOOST_CHECK(!partition_tombstone(deletion_time{7, no_deletion_time_32}, mc));
    BOOST_CHECK(!partition_tombstone(deletion_time{write_time::missing_timestamp, 100}, mc));
    BOOST_CHECK(partition_tombstone(deletion_time{7, 100}, mc) == std::optional(tombstone{7, 100}));
    BOOST_CHECK(partition_tombstone(deletion_time{7, -2}, mc) == std::optional(tombstone{7, 4294967294LL}));
    BOOST_CHECK(partition_tombstone(deletion_time{7, -1}, mc) == std::optional(tombstone{7, 4294967295LL}));
    auto oa = sstable_version::oa;
    BOOST_CHECK(partition_tombstone(deletion_time{}, oa) == std::optional(tombstone{}));
    BOOST_CHECK(partition_tombstone(deletion_time{7, 100}, oa) == std::optional(tombstone{7, 100}));
    BOOST_CHECK(partition_tombstone(deletion_time{7, 4294967295LL}, oa) == std::optional(tombstone{7, invalid_deletion_time}));
}
