// Statistics.db tests: every corpus sstable's Statistics.db parses, and its values agree with the dataset's
// schema.cql and the oracle dump (partitioner, column names and types, timestamp bounds); truncated and
// byte-flipped copies fail with malformed_sstable_exception, never anything worse.
#include "cql/cql_parser.hh"
#include "sstables/exceptions.hh"
#include "sstables/statistics.hh"
#include "sstables/version.hh"
#include "test/lib/peer_corpus.hh"
#include "test/lib/sstable_corpus.hh"
#include "utils/crc32.hh"
#include "test/lib/random_mutation.hh"

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <filesystem>
#include <random>
#include <set>
#include <cstring>

using namespace reef;
using namespace reef::sstables;
namespace fs = std::filesystem;

namespace {

std::vector<std::byte> file_bytes(const fs::path& p) {
    auto s = testing::read_file(p);
    std::vector<std::byte> b(s.size());
    std::memcpy(b.data(), s.data(), s.size());
    return b;
}

// Every Statistics.db of the corpus, sorted by dataset and file name (the order of expected.json's documents).
std::vector<fs::path> statistics_files(const fs::path& dataset) {
    std::vector<fs::path> out;
    for (auto& e : fs::directory_iterator(dataset)) {
        if (e.path().filename().string().ends_with("-Statistics.db")) {
            out.push_back(e.path());
        }
    }
    std::sort(out.begin(), out.end());
    return out;
}

std::vector<fs::path> datasets(const fs::path& corpus) {
    std::vector<fs::path> out;
    for (auto& e : fs::directory_iterator(corpus)) {
        if (e.is_directory() && e.path().filename().string()[0] != '_') {
            out.push_back(e.path());
        }
    }
    std::sort(out.begin(), out.end());
    return out;
}

statistics parse_file(const fs::path& p) {
    auto d = descriptor::from_path(p.string());
    auto bytes = file_bytes(p);
    return parse_statistics(bytes, d.version, p.string());
}

// Every timestamp of a dump document: "tstamp" strings and deletion_info's "marked_deleted".
void collect_timestamps(const testing::json_value& v, std::vector<int64_t>& out) {
    for (auto& [k, m] : v.members) {
        if ((k == "tstamp" || k == "marked_deleted") && m.type == testing::json_value::kind::string) {
            out.push_back(std::stoll(m.text));
        }
        collect_timestamps(m, out);
    }
    for (auto& i : v.items) {
        collect_timestamps(i, out);
    }
}

void collect_cell_names(const testing::json_value& v, std::set<std::string>& out) {
    if (auto cells = v.get("cells")) {
        for (auto& c : cells->items) {
            if (auto n = c.get("name")) {
                out.insert(n->text);
            }
        }
    }
    for (auto& [k, m] : v.members) {
        collect_cell_names(m, out);
    }
    for (auto& i : v.items) {
        collect_cell_names(i, out);
    }
}

std::vector<std::string> class_names(const std::vector<serialization_header_column>& cs) {
    std::vector<std::string> out;
    for (auto& c : cs) {
        out.push_back(c.name + " " + c.type->class_name());
    }
    return out;
}

std::vector<std::string> class_names(const std::vector<column_definition>& cs) {
    std::vector<std::string> out;
    for (auto& c : cs) {
        out.push_back(c.name + " " + c.type->class_name());
    }
    return out;
}

} // namespace

BOOST_AUTO_TEST_CASE(test_every_corpus_statistics_parses_and_agrees_with_the_dump) {
    auto corpus = testing::require_peer_corpus();
    if (!corpus) {
        return;
    }
    size_t files = 0;
    for (auto& dataset : datasets(*corpus)) {
        auto name = dataset.filename().string();
        BOOST_TEST_CONTEXT(name) {
            auto stats_files = statistics_files(dataset);
            BOOST_REQUIRE(!stats_files.empty());
            // Under ASan, reading the largest dumps takes minutes: they are checked in dev mode.
#ifdef REEF_DEBUG
            auto json = testing::read_corpus_file(testing::expected_json_path(dataset), 1u << 20);
#else
            auto json = testing::read_corpus_file(testing::expected_json_path(dataset));
#endif
            auto docs = json ? testing::read_json_documents(*json) : std::vector<testing::json_value>(stats_files.size());
            BOOST_REQUIRE_EQUAL(docs.size(), stats_files.size());
            auto table = parse_create_table(testing::read_file(dataset / "schema.cql"));
            for (size_t i = 0; i < stats_files.size(); ++i) {
                statistics st;
                BOOST_REQUIRE_NO_THROW(st = parse_file(stats_files[i]));
                ++files;
                BOOST_REQUIRE(st.validation && st.stats && st.header && st.compaction);
                bool legacy = name.starts_with("cassandra_legacy_");
                BOOST_CHECK_EQUAL(st.validation->partitioner,
                                  legacy ? "org.apache.cassandra.dht.ByteOrderedPartitioner"
                                         : "org.apache.cassandra.dht.Murmur3Partitioner");
                BOOST_CHECK(st.validation->bloom_filter_fp_chance > 0 && st.validation->bloom_filter_fp_chance < 1);
                auto& s = *st.stats;
                auto& h = *st.header;
                BOOST_CHECK_LE(s.min_timestamp, s.max_timestamp);
                // (The header's encoding stats need not be minimums: Cassandra's offline writer leaves them at
                // the epoch, 2015, above the corpus' small timestamps; Data.db deltas then wrap around.)
                std::vector<int64_t> ts;
                collect_timestamps(docs[i], ts);
                for (auto t : ts) {
                    BOOST_CHECK_LE(s.min_timestamp, t);
                    BOOST_CHECK_GE(s.max_timestamp, t);
                }
                // Column names and types: the schema's (the header holds the table's columns as written).
                BOOST_CHECK_EQUAL(h.partition_key_type->class_name(), table->partition_key_type()->class_name());
                BOOST_REQUIRE_EQUAL(h.clustering_types.size(), table->clustering_types().size());
                for (size_t c = 0; c < h.clustering_types.size(); ++c) {
                    BOOST_CHECK_EQUAL(h.clustering_types[c]->class_name(), table->clustering_types()[c]->class_name());
                }
                auto hs = class_names(h.static_columns), ts_ = class_names(table->static_columns());
                auto hr = class_names(h.regular_columns), tr = class_names(table->regular_columns());
                BOOST_CHECK_EQUAL_COLLECTIONS(hs.begin(), hs.end(), ts_.begin(), ts_.end());
                BOOST_CHECK_EQUAL_COLLECTIONS(hr.begin(), hr.end(), tr.begin(), tr.end());
                // Every cell the dump names is a header column.
                std::set<std::string> names;
                collect_cell_names(docs[i], names);
                for (auto& n : names) {
                    bool found = false;
                    for (auto* group : {&h.static_columns, &h.regular_columns}) {
                        for (auto& c : *group) {
                            found |= c.name == n;
                        }
                    }
                    BOOST_CHECK_MESSAGE(found, "cell " << n << " is not a header column");
                }
                auto v = descriptor::from_path(stats_files[i].string()).version;
                auto f = features_of(v);
                BOOST_CHECK_EQUAL(s.originating_host_id.has_value() && !f.has_originating_host_id, false);
                BOOST_CHECK_EQUAL(s.pending_repair.has_value(), false);
                BOOST_CHECK_GE(s.total_rows, 0);
                BOOST_CHECK(!s.estimated_partition_size.buckets.empty());
            }
        }
    }
    BOOST_TEST_MESSAGE(files << " Statistics.db files");
    BOOST_CHECK_GE(files, 79u);
}

// Values that the corpus documents: mc's min/max clustering of legacy_mc_inaccurate_min_max, nb's host id,
// the overflowing negative-expiration TTLs.
BOOST_AUTO_TEST_CASE(test_statistics_spot_values) {
    auto corpus = testing::require_peer_corpus();
    if (!corpus) {
        return;
    }
    auto one = [&](const char* dataset) { return parse_file(statistics_files(*corpus / dataset).at(0)); };
    auto nb = one("gen_nb_all_types_uncompressed");
    // The offline writer (CQLSSTableWriter) has no host id to record.
    BOOST_CHECK(!nb.stats->originating_host_id.has_value());
    for (const char* d : {"scylla_counter_test_me", "cassandra_legacy_me_simple", "cassandra_legacy_nb_simple", "gen_me_ttl"}) {
        // Written by nodes (Scylla, Cassandra), which record their host id; gen_me_ttl by the offline writer.
        BOOST_CHECK_EQUAL(one(d).stats->originating_host_id.has_value(), std::string_view(d) != "gen_me_ttl");
    }
    BOOST_CHECK(!nb.stats->is_transient);
    auto me = one("gen_me_all_types_uncompressed");
    BOOST_CHECK_EQUAL(me.stats->min_timestamp, nb.stats->min_timestamp);
    BOOST_CHECK_EQUAL(me.stats->max_timestamp, nb.stats->max_timestamp);
    BOOST_CHECK_EQUAL(me.stats->total_rows, 15);
    BOOST_CHECK_EQUAL(nb.stats->total_rows, 15);
    BOOST_CHECK_EQUAL(me.header->regular_columns.size(), nb.header->regular_columns.size());
    auto simple = one("scylla_simple");
    BOOST_CHECK_EQUAL(simple.header->partition_key_type->class_name(), "org.apache.cassandra.db.marshal.Int32Type");
    BOOST_CHECK_EQUAL(simple.stats->min_timestamp, 1521457894468365);
    BOOST_CHECK_EQUAL(simple.stats->max_timestamp, 1521457926635446);
    BOOST_CHECK_EQUAL(simple.stats->min_local_deletion_time, no_deletion_time_32);
    BOOST_REQUIRE_EQUAL(simple.stats->min_clustering_values.size(), 1u);
    // ck 101 .. 105
    BOOST_CHECK(simple.stats->min_clustering_values[0] ==
                std::vector<std::byte>({std::byte(0), std::byte(0), std::byte(0), std::byte(101)}));
    BOOST_CHECK(simple.stats->max_clustering_values[0] ==
                std::vector<std::byte>({std::byte(0), std::byte(0), std::byte(0), std::byte(105)}));
    auto ttl = one("scylla_write_ttled_row");
    BOOST_CHECK_GT(ttl.stats->max_ttl, 0);
    BOOST_CHECK_NE(ttl.stats->min_local_deletion_time, no_deletion_time_32);
}

// A prefix of the file never parses, and every byte flip either parses or fails with
// malformed_sstable_exception; with checksums (na, nb) every flip fails.
BOOST_AUTO_TEST_CASE(test_truncated_and_corrupt_statistics) {
    auto corpus = testing::require_peer_corpus();
    if (!corpus) {
        return;
    }
    for (const char* dataset : {"scylla_simple", "gen_me_collections", "gen_nb_collections", "gen_nb_key_types",
                                "cassandra_legacy_mc_simple"}) {
        auto path = statistics_files(*corpus / dataset).at(0);
        auto d = descriptor::from_path(path.string());
        auto bytes = file_bytes(path);
        BOOST_TEST_CONTEXT(dataset) {
            for (size_t n = 0; n < bytes.size(); ++n) {
                std::vector<std::byte> prefix(bytes.begin(), bytes.begin() + n);
                BOOST_CHECK_THROW(parse_statistics(prefix, d.version, "prefix"), malformed_sstable_exception);
            }
            bool checksummed = features_of(d.version).has_metadata_checksum;
            std::mt19937 rng(42);
            for (size_t i = 0; i < bytes.size(); ++i) {
                auto copy = bytes;
                copy[i] ^= std::byte(1u << (rng() % 8));
                try {
                    parse_statistics(copy, d.version, "flipped");
                    BOOST_CHECK_MESSAGE(!checksummed, "a flip at " << i << " went unnoticed");
                } catch (const malformed_sstable_exception&) {
                }
            }
        }
    }
}

BOOST_AUTO_TEST_CASE(test_statistics_error_names_file_and_offset) {
    // A TOC listing a part past the end of the file.
    std::vector<std::byte> b(4 + 8, std::byte(0));
    b[3] = std::byte(1);   // one part
    b[7] = std::byte(3);   // the serialization header
    b[11] = std::byte(200); // at offset 200
    try {
        parse_statistics(b, sstable_version::mc, "x-Statistics.db");
        BOOST_FAIL("expected an exception");
    } catch (const malformed_sstable_exception& e) {
        BOOST_CHECK_EQUAL(e.file(), "x-Statistics.db");
        BOOST_CHECK_EQUAL(e.offset(), 8u);
        BOOST_CHECK(std::string(e.what()).find("outside the file") != std::string::npos);
    }
    BOOST_CHECK_THROW(parse_statistics(b, sstable_version::oa, "y"), malformed_sstable_exception);
}

// oa (Cassandra 5.0), from the two oa sets of test/resource/sstables (written by Cassandra 5.0.9): unsigned deletion
// times, the tombstone histogram's int64 points, the covered clustering slice, the partition-deletion marker and
// the key range agree with what Cassandra's dump of the same sstable shows; the 4 zero bytes per histogram bin that
// Cassandra 5.0 pads the stats part with are read, and must be zeros.
BOOST_AUTO_TEST_CASE(test_oa_statistics) {
    auto dir = testing::resource_sstables_dir();
    BOOST_REQUIRE_MESSAGE(dir, "test/resource/sstables is missing");
    for (auto name : {"oa_lz4", "oa_far_future"}) {
        BOOST_TEST_CONTEXT(name) {
            auto dataset = *dir / name;
            auto path = dataset / "oa-2-big-Statistics.db";
            auto st = parse_file(path);
            BOOST_REQUIRE(st.stats && st.header);
            auto& s = *st.stats;
            BOOST_CHECK(s.uint_deletion_time);
            BOOST_CHECK(st.header->version == sstable_version::oa);
            BOOST_CHECK(s.min_clustering_values.empty() && s.max_clustering_values.empty());
            BOOST_REQUIRE(s.covered_clustering && s.first_key && s.last_key && s.token_space_coverage);
            BOOST_REQUIRE_EQUAL(s.clustering_types.size(), st.header->clustering_types.size());

            auto docs = testing::read_json_documents(*testing::read_corpus_file(testing::expected_json_path(dataset)));
            BOOST_REQUIRE_EQUAL(docs.size(), 1u);
            auto& partitions = docs[0].items;
            BOOST_REQUIRE(!partitions.empty());
            // The key range: the first and the last partition's keys (int keys, 4 bytes big-endian).
            auto int_key = [](const std::vector<std::byte>& k) {
                BOOST_REQUIRE_EQUAL(k.size(), 4u);
                uint32_t v = 0;
                for (auto b : k) {
                    v = (v << 8) | uint8_t(b);
                }
                return std::to_string(int32_t(v));
            };
            BOOST_CHECK_EQUAL(int_key(*s.first_key), partitions.front().get("partition")->get("key")->items[0].text);
            BOOST_CHECK_EQUAL(int_key(*s.last_key), partitions.back().get("partition")->get("key")->items[0].text);
            bool partition_deletion = false;
            int64_t rows = 0;
            for (auto& p : partitions) {
                partition_deletion |= p.get("partition")->get("deletion_info") != nullptr;
                if (auto* r = p.get("rows")) {
                    for (auto& row : r->items) {
                        // Cassandra counts the static row too.
                        rows += row.get("type")->text == "row" || row.get("type")->text == "static_block";
                    }
                }
            }
            BOOST_CHECK_EQUAL(s.has_partition_level_deletions, partition_deletion);
            BOOST_CHECK_EQUAL(s.total_rows, rows);
        }
    }
    auto far = parse_file(*dir / "oa_far_future" / "oa-2-big-Statistics.db");
    auto& s = *far.stats;
    // Written at --now 3000000000 (2065): past INT32_MAX, so only an unsigned reading gives these.
    BOOST_CHECK_EQUAL(uint32_t(s.min_local_deletion_time), 3000000000u);
    BOOST_REQUIRE(!s.estimated_tombstone_drop_time.bins.empty());
    for (auto& [point, count] : s.estimated_tombstone_drop_time.bins) {
        BOOST_CHECK_GE(point, 3000000000.0);
        BOOST_CHECK_GT(count, 0);
    }
    // The data has a range deletion ck > 1 AND ck < 5 and rows at ck 1..2: [1, 5).
    BOOST_CHECK(s.covered_clustering->first.kind == clustering_kind::incl_start_bound);
    BOOST_CHECK(s.covered_clustering->second.kind == clustering_kind::excl_end_bound);

    // A non-zero padding byte (with the part's CRC fixed up) is refused, naming the offset.
    auto path = *dir / "oa_far_future" / "oa-2-big-Statistics.db";
    auto bytes = file_bytes(path);
    auto part_start = far.toc[2].second;
    auto part_end = far.toc[3].second - 4;  // before the part's CRC
    BOOST_REQUIRE(far.toc[2].first == metadata_type::stats);
    auto padded = bytes;
    padded[part_end - 1] = std::byte{1};
    auto crc = utils::crc32(std::span<const std::byte>(padded).subspan(part_start, part_end - part_start));
    for (int i = 0; i < 4; ++i) {
        padded[part_end + i] = std::byte(uint8_t(crc >> (24 - 8 * i)));
    }
    try {
        parse_statistics(padded, sstable_version::oa, "p-Statistics.db");
        BOOST_FAIL("expected an exception");
    } catch (const malformed_sstable_exception& e) {
        BOOST_CHECK_EQUAL(e.file(), "p-Statistics.db");
        BOOST_CHECK_EQUAL(e.offset(), part_end - 4 * s.estimated_tombstone_drop_time.bins.size());
        BOOST_CHECK_MESSAGE(std::string(e.what()).find("padding") != std::string::npos, e.what());
    }
}
