// Corruption tests: copies of corpus sstables (in a tmpdir) with one component truncated or with bytes flipped
// are loaded and read whole (components, every Index.db entry and promoted-index block, all of Data.db, the
// digest). Every failure must be a malformed_sstable_exception naming a component of that sstable, never a
// crash (the debug build runs this under ASan/UBSan) or a hang; and what checksums or lengths cover
// (compressed or CRC.db-checked Data.db, truncated Summary/Filter/CompressionInfo/CRC/Data) must be detected.
#include "runtime/file.hh"
#include "sstables/components.hh"
#include "sstables/exceptions.hh"
#include "sstables/index_entry.hh"
#include "test/lib/reef_test.hh"
#include "test/lib/sstable_corpus.hh"
#include "test/lib/tmpdir.hh"

#include <boost/test/unit_test.hpp>
#include <fstream>
#include <random>

using namespace reef;
using namespace reef::sstables;
using reef::testing::corpus_sstable;

namespace {

// Varied and small enough to read whole thousands of times under ASan.
const std::set<std::string> chosen = {
    "cassandra_legacy_mc_simple", "cassandra_legacy_md_clust", "cassandra_legacy_nb_clust", "gen_me_collections",
    "gen_nb_large_partition", "gen_nb_all_types_uncompressed", "scylla_simple", "scylla_write_deleted_row",
    "scylla_counter_test_mc", "na_probe", "nb_snappy", "nb_zstd", "nb_deflate", "oa_lz4", "oa_far_future", "nb_lz4_uncompressed_chunks"};

void write_file(const std::string& path, std::string_view bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), std::streamsize(bytes.size()));
}

// Loads and reads everything of d; throws what the library throws, plus malformed_sstable_exception for
// inconsistencies between components that only a reader of several would see.
future<> read_everything(const descriptor& d, const schema_ptr& table) {
    auto c = co_await load_components(d);
    auto index_name = d.filename(component_type::index);
    auto index_bytes = co_await read_entire_file(index_name);
    auto entries = parse_index_entries(index_bytes, d.version, index_name);
    if (table) {
        for (auto& e : entries) {
            if (e.promoted) {
                e.promoted->all_blocks(table->clustering_types(), d.version, index_name);
            }
        }
    }
    auto f = co_await open_file_dma(d.filename(component_type::data), open_flags::ro);
    std::exception_ptr err;
    try {
        auto src = make_data_source(f, c, 0, c.data_length(), integrity_check::yes);
        uint64_t total = 0;
        std::exception_ptr read_err;
        try {
            while (true) {
                auto b = co_await src.get();
                if (b.empty()) {
                    break;
                }
                total += b.size();
            }
        } catch (...) {
            read_err = std::current_exception();
        }
        co_await src.close();
        if (read_err) {
            std::rethrow_exception(read_err);
        }
        if (total != c.data_length()) {
            throw malformed_sstable_exception(d.filename(component_type::data), total, "expected more data");
        }
        if (c.digest) {
            co_await verify_digest(d.filename(component_type::data), *c.digest);
        }
    } catch (...) {
        err = std::current_exception();
    }
    co_await f.close();
    if (err) {
        std::rethrow_exception(err);
    }
    // What the summary says must be what the index holds.
    if (entries.empty() || c.summary.last_key != entries.back().key.view() ||
        c.summary.first_key != entries.front().key.view()) {
        throw malformed_sstable_exception(index_name, index_bytes.size(), "expected the summary's first and last keys");
    }
}

struct tally {
    size_t cases = 0, refused = 0;
};

} // namespace

REEF_TEST_CASE(test_corrupt_components_are_refused_cleanly) {
    std::mt19937_64 rng(23);
    reef::testing::tmpdir dir;
    std::map<std::string, tally> by_component;
    for (auto& t : reef::testing::all_test_sstables()) {
        if (!chosen.count(t.dataset.filename().string())) {
            continue;
        }
        // Copy this sstable's components.
        auto local = t.desc;
        local.directory = dir.path();
        std::vector<component_type> present;
        for (auto c : {component_type::data, component_type::index, component_type::summary, component_type::filter,
                       component_type::statistics, component_type::compression_info, component_type::crc,
                       component_type::digest, component_type::toc}) {
            if (t.has(c)) {
                present.push_back(c);
                std::filesystem::copy_file(t.path(c), local.filename(c), std::filesystem::copy_options::overwrite_existing);
            }
        }
        co_await read_everything(local, t.table);  // the pristine copy reads
        for (auto c : present) {
            if (c == component_type::statistics) {
                continue;  // not read here
            }
            auto name = local.filename(c);
            auto original = reef::testing::read_file(name);
            bool checksummed_data = c == component_type::data && (t.has(component_type::compression_info) || t.has(component_type::crc));
            for (int round = 0; round < 18; ++round) {
                std::string bad = original;
                bool truncated = round < 6;
                std::string what;
                if (truncated) {
                    size_t cut = round == 0 ? 0 : rng() % original.size();
                    bad.resize(cut);
                    what = "truncated to " + std::to_string(cut);
                } else {
                    int flips = 1 + int(rng() % 3);
                    what = "flipped at";
                    for (int i = 0; i < flips; ++i) {
                        size_t at = rng() % bad.size();
                        bad[at] = char(bad[at] ^ char(1 + rng() % 255));
                        what += " " + std::to_string(at);
                    }
                }
                write_file(name, bad);
                BOOST_TEST_CONTEXT(t.name() << " " << component_name(c) << " " << what) {
                    bool refused = false;
                    try {
                        co_await read_everything(local, t.table);
                    } catch (const malformed_sstable_exception& e) {
                        refused = true;
                        BOOST_CHECK_MESSAGE(std::string_view(e.file()).starts_with(dir.path()), e.what());
                    } catch (const std::exception& e) {
                        BOOST_ERROR("not a malformed_sstable_exception: " << e.what());
                        refused = true;
                    }
                    auto& tl = by_component[std::string(component_name(c))];
                    ++tl.cases;
                    tl.refused += refused;
                    // What checksums or lengths cover is always detected. (A truncated Data.db that neither
                    // CompressionInfo.db nor CRC.db describes reads as a shorter stream; the data parser sees that.)
                    bool must = checksummed_data ||
                                (truncated && (c == component_type::summary || c == component_type::filter ||
                                               c == component_type::compression_info || c == component_type::crc ||
                                               c == component_type::index || c == component_type::digest));
                    if (must) {
                        BOOST_CHECK_MESSAGE(refused, "corruption went unnoticed");
                    }
                }
            }
            write_file(name, original);
        }
    }
    for (auto& [c, tl] : by_component) {
        BOOST_TEST_MESSAGE(c << ": " << tl.cases << " corrupt copies, " << tl.refused << " refused");
    }
}
