// The full-scan reader: over every corpus sstable, read through the checked (decompressing or CRC-checked)
// data source, it gives the same mutations as the in-memory parse, a stream the validator accepts, also when
// reads fail and the caller reads on; and next_partition and partition-range fast-forwarding give what a model
// of the partition list says.
#include "mutation/fragment_stream_validator.hh"
#include "mutation/mutation.hh"
#include "runtime/file.hh"
#include "runtime/reactor.hh"
#include "sstables/checked_data_source.hh"
#include "sstables/checksum.hh"
#include "sstables/compression_info.hh"
#include "sstables/mx_fragments.hh"
#include "sstables/mx_reader.hh"
#include "test/lib/mutation_model.hh"
#include "test/lib/mx_test_support.hh"
#include "test/lib/reef_test.hh"

#include <boost/test/unit_test.hpp>

#include <functional>
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
// wrap: what the reader reads through, given the checked source.
future<mutation_reader> open_reader(const corpus_sstable& s, schema_ptr schema,
                                    dht::partition_range range = dht::partition_range::full(),
                                    std::function<data_source(data_source)> wrap = {}) {
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
    if (wrap) {
        src = wrap(std::move(src));
    }
    auto header = std::make_shared<const serialization_header>(*s.stats.header);
    co_return make_mx_full_scan_reader(schema, header, std::move(src), name, length, std::move(range),
                                       token_function_for(s.stats.validation->partitioner));
}

// The fragments of the in-memory parse.
std::vector<mutation_fragment> parse_in_memory(const corpus_sstable& s, schema_ptr schema) {
    mx_fragment_consumer c(schema, *s.stats.header, s.data_path.native(), SIZE_MAX,
                           token_function_for(s.stats.validation->partitioner));
    mx_parser p(*s.stats.header, s.data_path.native(), c, 0, s.data.size());
    drive_parser(p, s.data, [] { return size_t(1) << 30; });
    return take_fragments(c.buffer());
}

// Hands out the inner source's bytes in small random pieces, and fails every other read (before reading
// anything, so that a read tried again goes on where the failed one would have).
struct flaky_read_error : std::runtime_error {
    flaky_read_error() : std::runtime_error("flaky_source: a read fails") {}
};

class flaky_source final : public data_source_impl {
public:
    flaky_source(data_source inner, uint32_t seed) : _inner(std::move(inner)), _rng(seed) {}
    future<temporary_buffer> get() override {
        // Suspends for real: in debug builds a loop of reads that never suspend grows the stack (ARCHITECTURE.md,
        // coroutine rule 5), and these pieces are small.
        co_await yield();
        if (++_calls % 2 == 0) {
            ++failures;
            throw flaky_read_error();
        }
        if (_rest.empty()) {
            _rest = co_await _inner.get();
        }
        size_t n = std::min<size_t>(_rest.size(), 1 + _rng() % 32);
        auto piece = _rest.share(0, n);
        _rest.trim_front(n);
        co_return piece;
    }
    future<> close() override { return _inner.close(); }
    inline static size_t failures = 0;

private:
    data_source _inner;
    temporary_buffer _rest;
    std::mt19937 _rng;
    size_t _calls = 0;
};

} // namespace

// The reader builds rows in the buffer it hands out: a read that fails in the middle of a row leaves only whole
// fragments there, and reading on after the failure gives the stream a reader without failures gives.
REEF_TEST_CASE(test_full_scan_goes_on_after_failed_reads) {
    auto corpus = require_peer_corpus();
    if (!corpus) {
        co_return;
    }
    auto seed = std::random_device{}();
    BOOST_TEST_MESSAGE("seed " << seed);
    for (const char* name : {"scylla_simple", "gen_nb_rt_static", "cassandra_legacy_me_clust"}) {
        auto s = load_sstables(*corpus / name).at(0);
        BOOST_TEST_CONTEXT(name << " seed " << seed) {
            auto schema = schema_from_header(*s.stats.header);
            auto reader = co_await open_reader(s, schema, dht::partition_range::full(), [seed](data_source src) {
                return data_source(std::make_unique<flaky_source>(std::move(src), seed));
            });
            flaky_source::failures = 0;
            std::vector<mutation_fragment> got;
            fragment_stream_validator validator(*schema);
            while (true) {
                std::optional<mutation_fragment> f;
                try {
                    f = co_await reader();
                } catch (const flaky_read_error&) {
                    continue;
                }
                if (!f) {
                    break;
                }
                validator(*f);
                got.push_back(std::move(*f));
            }
            validator.on_end_of_stream();
            co_await reader.close();
            BOOST_CHECK_GT(flaky_source::failures, 0u);
            auto a = mutations_from_fragments(schema, got);
            auto b = mutations_from_fragments(schema, parse_in_memory(s, schema));
            BOOST_CHECK_MESSAGE(a == b, describe(a) << "\n!=\n" << describe(b));
        }
    }
}

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
