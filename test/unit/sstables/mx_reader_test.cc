// The full-scan reader: over every corpus sstable, read through the checked (decompressing or CRC-checked)
// data source, it gives the same mutations as the in-memory parse, a stream the validator accepts; and
// next_partition and partition-range fast-forwarding give what a model of the partition list says.
#include "mutation/fragment_stream_validator.hh"
#include "mutation/mutation.hh"
#include "runtime/file.hh"
#include "sstables/checked_data_source.hh"
#include "sstables/checksum.hh"
#include "sstables/compression_info.hh"
#include "sstables/mx_fragments.hh"
#include "sstables/mx_reader.hh"
#include "test/lib/mutation_model.hh"
#include "test/lib/mx_test_support.hh"
#include "test/lib/reef_test.hh"

#include <boost/test/unit_test.hpp>

#include <random>

using namespace reef;
using namespace reef::sstables;
using namespace reef::testing;

namespace {

#ifdef REEF_DEBUG
constexpr uint64_t max_debug_size = 300000;
#else
constexpr uint64_t max_debug_size = UINT64_MAX;
#endif

// A full-scan reader of the sstable's Data.db through the checked source its components call for.
future<mutation_reader> open_reader(const corpus_sstable& s, schema_ptr schema,
                                    dht::partition_range range = dht::partition_range::full()) {
    auto d = descriptor::from_path(s.data_path.string());
    auto name = s.data_path.string();
    auto f = co_await open_file_dma(name, open_flags::ro);
    auto size = co_await f.size();
    auto ci_path = d.filename(component_type::compression_info);
    auto crc_path = d.filename(component_type::crc);
    data_source src;
    uint64_t length = size;
    if (std::filesystem::exists(ci_path)) {
        auto ci = std::make_shared<compression_info>(parse_compression_info(read_file(ci_path), d.version, ci_path, size));
        length = ci->data_length;
        src = make_compressed_data_source(f, name, ci, size, 0, length);
    } else if (std::filesystem::exists(crc_path)) {
        auto crc = std::make_shared<crc_component>(parse_crc_component(read_file(crc_path), crc_path, size));
        src = make_crc_checked_data_source(f, name, crc, size, 0, length);
    } else {
        src = make_file_data_source(f, 0, length);
    }
    auto header = std::make_shared<const serialization_header>(*s.stats.header);
    co_return make_mx_full_scan_reader(schema, header, std::move(src), name, length, std::move(range),
                                       token_function_for(s.stats.validation->partitioner));
}

// The fragments of the in-memory parse.
std::vector<mutation_fragment> parse_in_memory(const corpus_sstable& s, schema_ptr schema) {
    mx_fragment_consumer c(schema, *s.stats.header, s.data_path.string(), SIZE_MAX,
                           token_function_for(s.stats.validation->partitioner));
    mx_parser p(*s.stats.header, s.data_path.string(), c, 0, s.data.size());
    drive_parser(p, s.data, [] { return size_t(1) << 30; });
    return take_fragments(c.buffer());
}

} // namespace

REEF_TEST_CASE(test_full_scan_reads_every_corpus_sstable) {
    auto corpus = require_peer_corpus();
    if (!corpus) {
        co_return;
    }
    size_t sstables = 0, fragments = 0;
    for (auto& name : corpus_dataset_names()) {
        for (auto& s : load_sstables(*corpus / name)) {
            if (s.data.size() > max_debug_size) {
                continue;
            }
            BOOST_TEST_CONTEXT(s.data_path.string()) {
                auto schema = schema_from_header(*s.stats.header);
                auto reader = co_await open_reader(s, schema);
                auto got = co_await read_all(reader);
                co_await reader.close();
                fragment_stream_validator validator(*schema);
                for (auto& f : got) {
                    validator(f);
                }
                validator.on_end_of_stream();
                auto expected = parse_in_memory(s, schema);
                BOOST_REQUIRE_EQUAL(got.size(), expected.size());
                auto a = mutations_from_fragments(schema, got);
                auto b = mutations_from_fragments(schema, expected);
                BOOST_CHECK_MESSAGE(a == b, describe(a) << "\n!=\n" << describe(b));
                ++sstables;
                fragments += got.size();
            }
        }
    }
    BOOST_TEST_MESSAGE(sstables << " sstables, " << fragments << " fragments");
    BOOST_CHECK_GE(sstables, 40u);
}

// Random next_partition calls and partition-range fast-forwards over many partitions, against the list of
// partitions the in-memory parse gives.
REEF_TEST_CASE(test_full_scan_next_partition_and_ranges) {
    auto corpus = require_peer_corpus();
    if (!corpus) {
        co_return;
    }
    auto seed = std::random_device{}();
    BOOST_TEST_MESSAGE("seed " << seed);
    std::mt19937 rng(seed);
    for (const char* name : {"scylla_simple", "gen_nb_many_partitions", "gen_nb_rt_static", "cassandra_legacy_me_clust"}) {
        auto s = load_sstables(*corpus / name).at(0);
        auto schema = schema_from_header(*s.stats.header);
        auto all = mutations_from_fragments(schema, parse_in_memory(s, schema));
        BOOST_TEST_CONTEXT(name << " seed " << seed) {
            for (int round = 0; round < 4; ++round) {
                // next_partition after a random number of fragments of each partition.
                auto reader = co_await open_reader(s, schema);
                size_t partition = 0;
                while (auto f = co_await reader()) {
                    auto* ps = std::get_if<partition_start>(&*f);
                    BOOST_REQUIRE(ps);
                    BOOST_REQUIRE_LT(partition, all.size());
                    BOOST_REQUIRE(ps->key == all[partition].decorated_key());
                    size_t take = rng() % 4;
                    bool ended = false;
                    for (size_t i = 0; i < take && !ended; ++i) {
                        auto g = co_await reader();
                        BOOST_REQUIRE(g);
                        ended = std::holds_alternative<partition_end>(*g);
                    }
                    if (!ended) {
                        co_await reader.next_partition();
                    }
                    ++partition;
                }
                BOOST_CHECK_EQUAL(partition, all.size());
                co_await reader.close();

                // A few increasing ranges of partitions, by index: each gives exactly its partitions.
                size_t from = rng() % all.size();
                auto range_of = [&](size_t lo, size_t hi) {
                    return dht::partition_range(
                        dht::partition_range::bound{dht::ring_position::for_key(all[lo].decorated_key()), true},
                        dht::partition_range::bound{dht::ring_position::for_key(all[hi].decorated_key()), rng() % 2 == 0});
                };
                size_t to = std::min(all.size() - 1, from + rng() % 5);
                auto r = range_of(from, to);
                bool hi_inclusive = r.end()->inclusive;
                auto reader2 = co_await open_reader(s, schema, r);
                while (true) {
                    auto got = mutations_from_fragments(schema, co_await read_all(reader2));
                    size_t expected_end = hi_inclusive ? to + 1 : to;
                    BOOST_REQUIRE_EQUAL(got.size(), expected_end > from ? expected_end - from : 0);
                    for (size_t i = 0; i < got.size(); ++i) {
                        BOOST_CHECK_MESSAGE(got[i] == all[from + i], to_string(got[i]) << " != " << to_string(all[from + i]));
                    }
                    if (to + 2 >= all.size()) {
                        break;
                    }
                    from = to + 1 + rng() % std::min<size_t>(3, all.size() - to - 2);
                    to = std::min(all.size() - 1, from + rng() % 5);
                    r = range_of(from, to);
                    hi_inclusive = r.end()->inclusive;
                    co_await reader2.fast_forward_to(r);
                    if (rng() % 3 == 0) {
                        break;
                    }
                }
                co_await reader2.close();
            }
        }
    }
}
