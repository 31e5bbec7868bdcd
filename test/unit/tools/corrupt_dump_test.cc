// Every component file of every corpus sstable (all datasets, Data.db and Statistics.db included), truncated and
// with bytes flipped at sampled positions, then read through the whole path a user's read takes: dump-data
// (Statistics.db and its header, load_components with TOC, Summary, Filter, CompressionInfo or CRC and Digest,
// Data.db through its checked source into the mx parser) and every Index.db entry with its promoted-index
// blocks. Each copy must read or be refused with a malformed_sstable_exception naming a file of that copy;
// never a crash (the debug build runs this under ASan and UBSan), a hang, or another exception.
#include "runtime/file.hh"
#include "sstables/exceptions.hh"
#include "sstables/index_entry.hh"
#include "sstables/statistics.hh"
#include "test/lib/mx_test_support.hh"
#include "test/lib/reef_test.hh"
#include "test/lib/tmpdir.hh"
#include "tools/sstable_dump_data.hh"

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <fstream>
#include <random>

using namespace reef;
using namespace reef::sstables;
using namespace reef::testing;
namespace fs = std::filesystem;

namespace {

void write_file(const fs::path& path, std::string_view bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), std::streamsize(bytes.size()));
}

// dump-data of every sstable of dir, then each Index.db's entries and promoted-index blocks (with the clustering
// types of that sstable's own header).
future<> read_all(std::vector<descriptor> ds) {
    auto json = co_await tools::dump_data_json(ds, 1750000000);
    (void)json;
    for (auto& d : ds) {
        auto stats_name = d.filename(component_type::statistics);
        auto stats = parse_statistics(read_bytes(stats_name), d.version, stats_name);
        auto index_name = d.filename(component_type::index);
        auto index_bytes = read_file(index_name);
        for (auto& e : parse_index_entries(index_bytes, d.version, index_name)) {
            if (e.promoted && stats.header) {
                e.promoted->all_blocks(stats.header->clustering_types, d.version, index_name);
            }
        }
    }
}

// Positions to damage: the start, the end, and a few at random (more for small files, which read quickly).
std::vector<size_t> positions(size_t size, std::mt19937_64& rng, size_t samples) {
    std::vector<size_t> out;
    if (size == 0) {
        return out;
    }
    out.push_back(0);
    out.push_back(size - 1);
    for (size_t i = 0; i < samples; ++i) {
        out.push_back(rng() % size);
    }
    return out;
}

#ifdef REEF_DEBUG
constexpr uint64_t max_data_bytes = 64 << 10;
#else
constexpr uint64_t max_data_bytes = 3 << 20;
#endif

} // namespace

BOOST_DATA_TEST_CASE(test_every_corrupt_component_is_refused_cleanly, boost::unit_test::data::make(corpus_dataset_names()),
                     name) {
    auto corpus = require_peer_corpus();
    if (!corpus) {
        return;
    }
    run_in_runtime(test_runtime_config(), [&]() -> future<> {
        tmpdir dir;
        std::vector<fs::path> files;
        uint64_t data_bytes = 0;
        for (auto& e : fs::directory_iterator(*corpus / name)) {
            auto n = e.path().filename().string();
            if (n.find("-big-") == std::string::npos) {
                continue;   // expected.json, schema.cql
            }
            fs::copy_file(e.path(), fs::path(dir.path()) / n);
            files.push_back(fs::path(dir.path()) / n);
            if (n.ends_with("-Data.db")) {
                data_bytes += fs::file_size(e.path());
            }
        }
        std::sort(files.begin(), files.end());
        if (data_bytes > max_data_bytes) {
            BOOST_TEST_MESSAGE(name << ": " << data_bytes << " bytes of Data.db, too many to read hundreds of "
                                    "times in this build; the dev build does");
            co_return;
        }
        std::vector<descriptor> ds;
        for (auto& f : files) {
            if (f.filename().string().ends_with("-Data.db")) {
                ds.push_back(descriptor::from_path(f.string()));
            }
        }
        co_await read_all(ds);   // the pristine copy reads
        std::mt19937_64 rng(std::hash<std::string>()(name));
        size_t cases = 0, refused = 0;
        for (auto& f : files) {
            auto original = read_file(f);
            size_t samples = original.size() < 4096 ? 6 : 3;
            for (bool truncate : {true, false}) {
                for (size_t at : positions(original.size(), rng, samples)) {
                    std::string bad = original;
                    std::string what;
                    if (truncate) {
                        bad.resize(at);
                        what = "truncated to " + std::to_string(at);
                    } else {
                        bad[at] = char(bad[at] ^ char(1 + rng() % 255));
                        what = "flipped at " + std::to_string(at);
                    }
                    write_file(f, bad);
                    ++cases;
                    std::string failure;
                    try {
                        co_await read_all(ds);
                    } catch (const malformed_sstable_exception& e) {
                        ++refused;
                        if (!std::string_view(e.file()).starts_with(dir.path())) {
                            failure = std::string("the error names no file of this copy: ") + e.what();
                        }
                    } catch (const std::exception& e) {
                        failure = std::string("not a malformed_sstable_exception: ") + e.what();
                    }
                    BOOST_CHECK_MESSAGE(failure.empty(), name << " " << f.filename().string() << " " << what << ": " << failure);
                }
            }
            write_file(f, original);
        }
        BOOST_TEST_MESSAGE(name << ": " << cases << " corrupt copies, " << refused << " refused");
    });
}
