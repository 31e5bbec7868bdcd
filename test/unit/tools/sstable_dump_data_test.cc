// dump-data against the oracle: for every corpus dataset, the dump of its sstables (in file name order, with the
// oracle's clock, 1750000000) is expected.json byte for byte; and the verb reads real files the same way.
#include "test/lib/mx_test_support.hh"
#include "test/lib/reef_test.hh"
#include "cql/cql_parser.hh"
#include "tools/sstable_dump_data.hh"
#include "tools/sstable_schema_check.hh"

#include <filesystem>
#include <optional>

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

using namespace reef;
using namespace reef::testing;

namespace {

// The first line where two texts differ, for the failure message.
std::string first_difference(const std::string& a, const std::string& b) {
    size_t line = 1, start = 0;
    for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
        if (a[i] != b[i]) {
            auto end_a = a.find('\n', i), end_b = b.find('\n', i);
            return "line " + std::to_string(line) + ":\n  ours:     " + a.substr(start, end_a - start) +
                   "\n  expected: " + b.substr(start, end_b - start);
        }
        if (a[i] == '\n') {
            ++line;
            start = i + 1;
        }
    }
    return "one is a prefix of the other (" + std::to_string(a.size()) + " vs " + std::to_string(b.size()) + " bytes)";
}

#ifdef REEF_DEBUG
constexpr size_t max_json = 4u << 20;
#else
constexpr size_t max_json = std::string::npos;
#endif

} // namespace

BOOST_DATA_TEST_CASE(test_dump_data_is_the_oracle, boost::unit_test::data::make(corpus_dataset_names()), name) {
    auto corpus = require_peer_corpus();
    if (!corpus) {
        return;
    }
    auto expected = read_corpus_file(expected_json_path(*corpus / name), max_json);
    if (!expected) {
        BOOST_TEST_MESSAGE(name << ": the dump is too large for a debug build; compared in dev mode");
        return;
    }
    std::string ours;
    for (auto& s : load_sstables(*corpus / name)) {
        ours += tools::dump_data_json(*s.stats.header, s.data, s.data_path.string(), 1750000000);
    }
    BOOST_CHECK_MESSAGE(ours == *expected, name << ": " << first_difference(ours, *expected));
}

// The same for the small sets of test/resource/sstables (codecs, na, and oa: Cassandra 5.0's partition deletion
// form and its unsigned reading of expiries past 2038, in oa_far_future), which are in the repository.
BOOST_AUTO_TEST_CASE(test_dump_data_of_resource_sets_is_the_oracle) {
    auto dir = resource_sstables_dir();
    BOOST_REQUIRE_MESSAGE(dir, "test/resource/sstables is missing");
    size_t sets = 0;
    for (auto& e : std::filesystem::directory_iterator(*dir)) {
        if (!e.is_directory()) {
            continue;
        }
        auto name = e.path().filename().string();
        auto expected = read_corpus_file(expected_json_path(e.path()), max_json);
        BOOST_REQUIRE_MESSAGE(expected, name << ": no expected.json");
        std::string ours;
        for (auto& s : load_sstables(e.path())) {
            ours += tools::dump_data_json(*s.stats.header, s.data, s.data_path.string(), 1750000000);
        }
        BOOST_CHECK_MESSAGE(ours == *expected, name << ": " << first_difference(ours, *expected));
        ++sets;
    }
    BOOST_CHECK_GE(sets, 9u);
}

// The verb itself: files opened, Data.db read through its checked source (a compressed and an uncompressed set).
REEF_TEST_CASE(test_dump_data_verb_reads_files) {
    auto corpus = require_peer_corpus();
    if (!corpus) {
        co_return;
    }
    std::vector<std::string> names{"scylla_simple", "gen_nb_rt_static"};
    for (auto& name : names) {
        auto s = load_sstables(*corpus / name).at(0);
        auto d = sstables::descriptor::from_path(s.data_path.string());
        std::vector<sstables::descriptor> ds{d};
        auto text = co_await tools::dump_data_json(std::move(ds));
        // The clock only changes "expired" flags, which these sets do not have.
        BOOST_CHECK_EQUAL(text, *read_corpus_file(expected_json_path(*corpus / name)));
    }
}

// --schema and --now: every dataset's schema.cql agrees with its sstables' headers, and the verb given that
// schema and the oracle's clock prints expected.json (the schema names nothing the dump prints).
REEF_TEST_CASE(test_dump_data_with_schema_and_now) {
    auto corpus = require_peer_corpus();
    if (!corpus) {
        co_return;
    }
    size_t checked = 0, dumped = 0;
    for (auto& name : corpus_dataset_names()) {
        auto dir = *corpus / name;
        if (!std::filesystem::exists(dir / "schema.cql")) {
            continue;
        }
        auto s = tools::load_schema_file((dir / "schema.cql").string());
        std::vector<sstables::descriptor> ds;
        for (auto& sst : load_sstables(dir)) {
            tools::check_schema_against_header(*s, *sst.stats.header, sst.data_path.string());
            ds.push_back(sstables::descriptor::from_path(sst.data_path.string()));
            ++checked;
        }
        // The dump itself on a few sets of each kind, TTL'd ones included (their "expired" flags need --now).
        if (name.find("ttl") != std::string::npos || name == "scylla_simple" || name == "gen_nb_rt_static") {
            auto expected = read_corpus_file(expected_json_path(dir), max_json);
            if (!expected) {
                continue;
            }
            auto text = co_await tools::dump_data_json(std::move(ds), 1750000000, s);
            BOOST_CHECK_MESSAGE(text == *expected, name << ": " << first_difference(text, *expected));
            ++dumped;
        }
    }
    BOOST_TEST_MESSAGE(checked << " sstables checked against their schema.cql, " << dumped << " datasets dumped");
    BOOST_CHECK_GT(checked, 0u);
    BOOST_CHECK_GT(dumped, 0u);
}

// A schema that disagrees with the header is an error naming the sstable and the column, before any output.
REEF_TEST_CASE(test_dump_data_schema_mismatch) {
    auto corpus = require_peer_corpus();
    if (!corpus) {
        co_return;
    }
    auto dir = *corpus / "scylla_simple";
    auto d = sstables::descriptor::from_path(load_sstables(dir).at(0).data_path.string());
    struct bad_case {
        const char* cql;
        const char* says;
    };
    std::vector<bad_case> cases{
        {"CREATE TABLE ks.t (pk int, ck int, val text, PRIMARY KEY (pk, ck));", "column 'val' is int in the sstable but text"},
        {"CREATE TABLE ks.t (pk int, ck int, other int, PRIMARY KEY (pk, ck));", "regular column 'val' (int) that the schema ks.t lacks"},
        {"CREATE TABLE ks.t (pk bigint, ck int, val int, PRIMARY KEY (pk, ck));", "the partition key (pk) is"},
        {"CREATE TABLE ks.t (pk int, val int, PRIMARY KEY (pk));", "the sstable has 1 clustering columns, the schema ks.t has 0"},
        {"CREATE TABLE ks.t (pk int, ck int, val int, PRIMARY KEY (pk, ck)) WITH CLUSTERING ORDER BY (ck DESC);",
         "clustering column 'ck' is"},
        {"CREATE TABLE ks.t (pk int, ck int, val int static, PRIMARY KEY (pk, ck));",
         "column 'val' is a regular column in the sstable but a static column"},
    };
    for (auto& c : cases) {
        auto s = parse_create_table(c.cql);
        std::vector<sstables::descriptor> ds{d};
        std::string error;
        try {
            co_await tools::dump_data_json(std::move(ds), 1750000000, s);
        } catch (const std::invalid_argument& e) {
            error = e.what();
        }
        BOOST_CHECK_MESSAGE(error.find(c.says) != std::string::npos, c.cql << " gave: '" << error << "'");
        BOOST_CHECK_MESSAGE(error.find("Statistics.db") != std::string::npos, error);
    }
    // And a schema file that is not there, or not CQL.
    BOOST_CHECK_EXCEPTION(tools::load_schema_file("/nonexistent/schema.cql"), std::invalid_argument,
                          [](auto& e) { return std::string(e.what()).find("/nonexistent/schema.cql") != std::string::npos; });
}
