// Tests of Index.db parsing over every corpus sstable: the entries match the oracle dump's partitions and
// positions, promoted indexes decode with the schema's clustering types into ordered, contiguous blocks that
// cover their partition, and index_entry_length frames entries exactly as the parser does.
#include "sstables/exceptions.hh"
#include "sstables/index_entry.hh"
#include "test/lib/sstable_corpus.hh"

#include <boost/test/unit_test.hpp>

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
    size_t checked = 0, with_promoted = 0, blocks_decoded = 0, positions_checked = 0;
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
                                   << ", partition positions checked " << positions_checked);
    if (!all.empty()) {
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
