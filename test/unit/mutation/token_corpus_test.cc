// Checks Murmur3 tokens against the peer corpus: in every dataset written with
// Murmur3Partitioner, the partitions of Cassandra's dump of each sstable must be
// in strictly increasing (token, key bytes) order by our decorated_key.
#include "mutation/partition_key.hh"
#include "mutation/token.hh"
#include "cql/cql_parser.hh"
#include "test/lib/peer_corpus.hh"

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

using namespace reef;
namespace fs = std::filesystem;

namespace {

// Statistics.db's validation metadata names the partitioner class; the
// legacy Cassandra datasets use ByteOrderedPartitioner, whose order is not ours.
bool written_with_murmur3(const fs::path& dataset) {
    bool any = false;
    for (auto& e : fs::directory_iterator(dataset)) {
        auto name = e.path().filename().string();
        if (name.ends_with("-Statistics.db")) {
            any = true;
            if (testing::read_file(e.path()).find("org.apache.cassandra.dht.Murmur3Partitioner") == std::string::npos) {
                return false;
            }
        }
    }
    return any;
}

// The partition key of one dumped partition, serialized as Cassandra stores it.
partition_key key_of(const schema& s, const testing::json_value& partition) {
    auto* key = partition.get("partition")->get("key");
    BOOST_REQUIRE(key && key->items.size() == s.partition_key().size());
    std::vector<std::string> cols;
    for (size_t i = 0; i < key->items.size(); ++i) {
        auto b = s.partition_key()[i].type->from_string(key->items[i].text);
        cols.emplace_back(b.begin(), b.end());
    }
    std::vector<std::string_view> views(cols.begin(), cols.end());
    return partition_key::from_components(views);
}

} // namespace

BOOST_AUTO_TEST_CASE(murmur3_tokens_order_the_peer_corpus) {
    auto dir = testing::require_peer_corpus();
    if (!dir) {
        return;
    }
    std::vector<fs::path> datasets;
    for (auto& e : fs::directory_iterator(*dir)) {
        if (e.is_directory() && fs::exists(e.path() / "schema.cql")) {
            datasets.push_back(e.path());
        }
    }
    std::sort(datasets.begin(), datasets.end());
    size_t checked_datasets = 0;
    size_t checked_partitions = 0;
    bool saw_composite = false;
    for (auto& ds : datasets) {
        if (!written_with_murmur3(ds)) {
            BOOST_TEST_MESSAGE("not checked (partitioner): " << ds.filename());
            continue;
        }
        auto s = parse_create_table(testing::read_file(ds / "schema.cql"));
        auto text = testing::read_corpus_file(testing::expected_json_path(ds));
        BOOST_TEST_CONTEXT("dataset " << ds.filename()) {
            auto sstables = testing::read_json_documents(*text);
            BOOST_TEST(!sstables.empty());
            for (auto& sstable : sstables) {
                std::optional<dht::decorated_key> prev;
                for (auto& partition : sstable.items) {
                    dht::decorated_key dk(key_of(*s, partition));
                    if (prev) {
                        BOOST_TEST((*prev < dk), "partition " << partition.get("partition")->get("key")->raw
                                                              << " with token " << dk.get_token().to_string()
                                                              << " follows token " << prev->get_token().to_string());
                    }
                    prev = std::move(dk);
                    ++checked_partitions;
                }
            }
        }
        saw_composite |= s->partition_key().size() > 1;
        ++checked_datasets;
    }
    std::cout << "murmur3_tokens_order_the_peer_corpus: " << checked_datasets << " datasets, " << checked_partitions
              << " partitions" << std::endl;
    // A scan that silently found nothing must not pass.
    BOOST_TEST(checked_datasets >= 20u);
    BOOST_TEST(checked_partitions >= 100u);
    BOOST_TEST(saw_composite);
}
