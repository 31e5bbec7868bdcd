// Inputs the fuzzers of test/fuzz/ once crashed on (test/fuzz/regressions/<target>/<dataset>/), replayed through
// the same target bodies in this build: each must parse or end in malformed_sstable_exception.
#include "test/fuzz/fuzz_support.hh"
#include "test/lib/peer_corpus.hh"

#include <boost/test/unit_test.hpp>

#include <filesystem>

using namespace reef;
using namespace reef::testing;
namespace fs = std::filesystem;

namespace {

std::optional<fs::path> regressions_dir() {
    for (auto dir = fs::current_path(); !dir.empty(); dir = dir.parent_path()) {
        if (fs::is_directory(dir / "test" / "fuzz" / "regressions")) {
            return dir / "test" / "fuzz" / "regressions";
        }
        if (dir == dir.parent_path()) {
            break;
        }
    }
    return std::nullopt;
}

std::vector<fs::path> sorted_entries(const fs::path& dir) {
    std::vector<fs::path> out;
    if (fs::is_directory(dir)) {
        for (auto& e : fs::directory_iterator(dir)) {
            out.push_back(e.path());
        }
    }
    std::sort(out.begin(), out.end());
    return out;
}

// Replays every input of regressions/<target>/<dataset>/; returns how many ran.
size_t replay(const std::string& target, const std::function<void(const fuzz::dataset*, std::span<const uint8_t>)>& run) {
    auto regressions = regressions_dir();
    BOOST_REQUIRE_MESSAGE(regressions, "test/fuzz/regressions not found above " << fs::current_path());
    auto corpus = require_peer_corpus();
    if (!corpus) {
        return 0;
    }
    size_t n = 0;
    for (auto& dataset_dir : sorted_entries(*regressions / target)) {
        auto name = dataset_dir.filename().string();
        std::optional<fuzz::dataset> ds;
        if (name != "all") {
            ds = fuzz::load_dataset(*corpus / name);
        }
        for (auto& input : sorted_entries(dataset_dir)) {
            auto bytes = read_file(input);
            BOOST_TEST_MESSAGE("replaying " << input);
            try {
                run(ds ? &*ds : nullptr, std::span(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
            } catch (const std::exception& e) {
                BOOST_ERROR(input << ": not a malformed_sstable_exception but: " << e.what());
            }
            ++n;
        }
    }
    return n;
}

} // namespace

BOOST_AUTO_TEST_CASE(test_fuzz_data_regressions) {
    auto n = replay("fuzz_data", [](const fuzz::dataset* ds, std::span<const uint8_t> in) { fuzz::data_input(*ds, in); });
    BOOST_TEST_MESSAGE(n << " inputs");
}

BOOST_AUTO_TEST_CASE(test_fuzz_index_regressions) {
    auto n = replay("fuzz_index", [](const fuzz::dataset* ds, std::span<const uint8_t> in) { fuzz::index_input(*ds, in); });
    BOOST_TEST_MESSAGE(n << " inputs");
}

BOOST_AUTO_TEST_CASE(test_fuzz_statistics_regressions) {
    auto n = replay("fuzz_statistics", [](const fuzz::dataset*, std::span<const uint8_t> in) { fuzz::statistics_input(in); });
    BOOST_TEST_MESSAGE(n << " inputs");
}
