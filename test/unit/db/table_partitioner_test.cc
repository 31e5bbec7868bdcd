// A table whose directory holds sstables of another partitioner (the peer corpus' legacy ByteOrderedPartitioner
// sets): full scans and single-partition reads through db::table, with and without the row cache, give the partitions
// Data.db holds, in that partitioner's order (parsed here with the partitioner Statistics.db names, no index used).
#include "db/table.hh"
#include "sstables/mx_fragments.hh"
#include "sstables/mx_parser.hh"
#include "test/lib/mutation_model.hh"
#include "test/lib/mx_test_support.hh"
#include "test/lib/peer_corpus.hh"
#include "test/lib/read_and_close.hh"
#include "test/lib/reef_test.hh"
#include "test/lib/tmpdir.hh"

#include <boost/test/unit_test.hpp>

#include <filesystem>

using namespace reef;
using namespace reef::testing;
namespace fs = std::filesystem;

namespace {

// What the sstable holds: its whole Data.db parsed with its own partitioner's tokens.
std::vector<mutation> expected_mutations(const schema_ptr& s, const corpus_sstable& cs) {
    auto token = token_function_for(cs.stats.validation->partitioner);
    sstables::mx_fragment_consumer c(s, *cs.stats.header, cs.data_path.native(), SIZE_MAX, token);
    sstables::mx_parser p(*cs.stats.header, cs.data_path.native(), c, 0, cs.data.size());
    drive_parser(p, cs.data, [] { return size_t(1) << 30; });
    return canonical_mutations(s, take_fragments(c.buffer()), false);
}

// Copies the sstable's files (same names) into dir.
void copy_sstable(const fs::path& data_path, const fs::path& dir) {
    auto name = data_path.filename().string();
    auto prefix = name.substr(0, name.size() - std::string("Data.db").size());
    fs::create_directories(dir);
    for (auto& e : fs::directory_iterator(data_path.parent_path())) {
        if (e.path().filename().string().starts_with(prefix)) {
            fs::copy_file(e.path(), dir / e.path().filename());
        }
    }
}

future<std::vector<mutation>> read_table(table& t, const dht::partition_range& pr) {
    // Named, not built inside the co_await: coroutine rule 2.
    auto reader = t.make_reader(reader_permit(), {.range = pr});
    auto got = co_await read_and_close(std::move(reader));
    co_return canonical_mutations(t.schema(), got, false);
}

} // namespace

REEF_TEST_CASE(table_reads_byte_ordered_sstables) {
    auto corpus = require_peer_corpus();
    if (!corpus) {
        co_return;
    }
    size_t checked = 0;
    for (auto& name : corpus_dataset_names()) {
        for (auto& cs : load_sstables(*corpus / name)) {
            if (cs.stats.validation->partitioner.find("ByteOrderedPartitioner") == std::string::npos) {
                continue;
            }
            auto s = sstables::schema_from_header(*cs.stats.header);
            auto expected = expected_mutations(s, cs);
            BOOST_REQUIRE(!expected.empty());
            for (bool enable_cache : {true, false}) {
                BOOST_TEST_CONTEXT(cs.data_path.string() << " cache " << enable_cache) {
                    tmpdir dir;
                    table_config cfg;
                    cfg.directory = dir.path() + "/ks/t";
                    cfg.enable_cache = enable_cache;
                    copy_sstable(cs.data_path, cfg.directory);
                    table t(s, cfg);
                    co_await t.start();
                    BOOST_REQUIRE_EQUAL(t.sstable_count(), 1u);
                    auto all = co_await read_table(t, dht::partition_range::full());
                    BOOST_REQUIRE_MESSAGE(all == expected, describe(all) << "!=\n" << describe(expected));
                    // Each partition alone: the index is searched with the sstable's tokens.
                    for (auto& m : expected) {
                        auto one = co_await read_table(t, dht::partition_range::singular(m.decorated_key()));
                        BOOST_REQUIRE_EQUAL(one.size(), 1u);
                        BOOST_REQUIRE_MESSAGE(one.front() == m, describe(one) << "!= the partition of the full scan");
                    }
                    co_await t.stop();
                    ++checked;
                }
            }
        }
    }
    BOOST_TEST_MESSAGE(checked << " byte-ordered sstable reads checked");
    BOOST_REQUIRE_GT(checked, 0u);
}
