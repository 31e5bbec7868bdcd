// dump-data against the oracle: for every corpus dataset, the dump of its sstables (in file name order, with the
// oracle's clock, 1750000000) is expected.json byte for byte; and the verb reads real files the same way.
#include "test/lib/mx_test_support.hh"
#include "test/lib/reef_test.hh"
#include "tools/sstable_dump_data.hh"

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
