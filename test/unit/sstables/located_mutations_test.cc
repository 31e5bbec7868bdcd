// located_mutation_parser: a located partition parsed from its bytes is the mutation the located reader gives for it
// (random partitions of both random schemas, and every sstable of the peer corpus written under its schema.cql), and
// bytes that do not hold exactly the located partition are a malformed_sstable_exception naming Data.db and the offset.
#include "db/memtable.hh"
#include "db/memtable_reader.hh"
#include "sstables/exceptions.hh"
#include "sstables/located_mutations.hh"
#include "sstables/partition_batch.hh"
#include "sstables/shared_sstable_readers.hh"
#include "sstables/sstable.hh"
#include "sstables/writer.hh"
#include "test/lib/memtable_sstable.hh"
#include "test/lib/mutation_model.hh"
#include "test/lib/random_mutation.hh"
#include "test/lib/read_and_close.hh"
#include "test/lib/reef_test.hh"
#include "test/lib/simple_keys.hh"
#include "test/lib/sstable_corpus.hh"
#include "test/lib/tmpdir.hh"
#include "test/lib/writable_mutation.hh"

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

using namespace reef;
using namespace reef::sstables;
using namespace reef::testing;

namespace {

clustering_ranges full_slice() {
    return clustering_ranges{position_range::full()};
}

// got == want, printing both on a failure.
void check_same(const mutation& got, const mutation& want) {
    BOOST_CHECK_MESSAGE(got == want, "token " << got.decorated_key().get_token().to_string() << ":\n got "
                                              << to_string(got) << "\nwant " << to_string(want));
}

// The batch's hashes, computed by locate_partitions (named: no braced list inside a co_await, coroutine rule 2).
const std::span<const bloom_filter::hash_type> no_hashes;

located_partition copy_of(const located_partition& p) {
    return located_partition{p.key, p.entry, p.range, p.bytes.share()};
}

// Every partition of sst, in ring order: its keys.
future<std::vector<dht::decorated_key>> keys_in(const shared_sstable& sst, const schema_ptr& s) {
    auto fs = co_await read_and_close(make_sstable_full_scan_reader(sst, s));
    std::vector<dht::decorated_key> keys;
    for (auto& f : fs) {
        if (auto* ps = std::get_if<partition_start>(&f)) {
            keys.push_back(ps->key);
        }
    }
    co_return keys;
}

#ifdef REEF_DEBUG
// ASan: the corpus case in a few seconds (the full scan of the larger sstables takes most of it).
constexpr size_t max_corpus_keys = 200;
constexpr uint64_t max_corpus_data = 256 * 1024;
#else
constexpr size_t max_corpus_keys = SIZE_MAX;
constexpr uint64_t max_corpus_data = UINT64_MAX;
#endif

// At most n of keys (ascending), spread evenly over them.
std::vector<dht::decorated_key> spread(std::vector<dht::decorated_key> keys, size_t n) {
    if (keys.size() <= n) {
        return keys;
    }
    std::vector<dht::decorated_key> out;
    for (size_t i = 0; i < n; ++i) {
        out.push_back(keys[i * keys.size() / n]);
    }
    return out;
}

// Each of keys that sst holds, located with its bytes, parsed, and compared with the located reader's mutation for
// it. Returns how many were compared.
future<size_t> check_parses_as_reader(const shared_sstable& sst, const schema_ptr& s,
                                      const std::vector<dht::decorated_key>& keys) {
    partition_batch_options opts;
    opts.max_prefetched_partition = uint64_t(1) << 30;
    auto located = co_await locate_partitions(*sst, keys, no_hashes, reader_permit(), opts);
    BOOST_REQUIRE(located_mutation_parser::serves(*sst, *s, full_slice()));
    located_mutation_parser parser(*sst, s);
    size_t compared = 0;
    for (auto& p : located.partitions) {
        BOOST_REQUIRE(!p.bytes.empty());
        std::optional<mutation> got;
        parser.parse_into(p, got);
        BOOST_REQUIRE(got);
        std::vector<located_partition> one;
        one.push_back(copy_of(p));
        auto r = make_located_sstable_reader(sst, s, reader_permit(), read_options{}, std::move(one));
        auto fs = co_await read_and_close(std::move(r));
        auto want = mutation_from_fragments(s, fs);
        check_same(*got, want);
        ++compared;
    }
    co_return compared;
}

// An sstable of `partitions` random partitions of s (keys 0, 2, 4, ...), and its model.
future<std::pair<descriptor, mutation_model>> write_random(const tmpdir& dir, const schema_ptr& s, uint64_t seed,
                                                           int partitions, int rows) {
    mutation_generator g(s, seed);
    auto mt = std::make_shared<memtable>(s);
    mutation_model model;
    for (int p = 0; p < partitions; ++p) {
        auto m = with_typed_values(s, g.make(pkey(2 * p), g.rnd(0, rows)));
        apply_to_model(model, m);
        mt->apply(m);
    }
    auto d = co_await write_memtable_sstable(dir, s, mt, uint32_t(g.rnd(1, 4)));
    co_return std::pair{d, std::move(model)};
}

// write_random's sstable, opened, with its descriptor and model.
struct random_sstable {
    descriptor desc;
    mutation_model model;
    shared_sstable sst;
};

future<random_sstable> open_random(const tmpdir& dir, cache::cache_tracker& tracker, const schema_ptr& s,
                                   uint64_t seed, int partitions, int rows) {
    auto [d, model] = co_await write_random(dir, s, seed, partitions, rows);
    auto sst = co_await open_sstable(d, tracker);
    co_return random_sstable{d, std::move(model), std::move(sst)};
}

} // namespace

// Random partitions (tombstones, statics, range tombstones, collections, expiring and dead cells), looked up with
// absent keys between them: every located partition parses to what the located reader gives, and to the model's
// partition (parsed twice into one slot: merged with itself, unchanged).
REEF_TEST_CASE(located_partitions_parse_as_the_located_reader_reads_them) {
    auto seed = pick_seed();
    BOOST_TEST_MESSAGE("seed " << seed);
    cache::cache_tracker tracker(size_t(64) << 20);
    for (auto& s : random_test_schemas()) {
        for (uint64_t c = 0; c < 8; ++c) {
            BOOST_TEST_CONTEXT("schema " << s->table() << ", seed " << seed << ", case " << c) {
                tmpdir dir;
                auto [d, model] = co_await write_random(dir, s, seed + c, 1 + int(c * 7), c % 2 ? 12 : 3);
                auto sst = co_await open_sstable(d, tracker);
                std::vector<dht::decorated_key> keys;
                for (int k = -1; k <= 2 * int(model.size()); ++k) {
                    keys.push_back(pkey(k));
                }
                std::sort(keys.begin(), keys.end());
                keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
                auto compared = co_await check_parses_as_reader(sst, s, keys);
                BOOST_CHECK_EQUAL(compared, model.size());
                // And against the model: the parsed partitions, shadowed data dropped, are the written ones.
                partition_batch_options opts;
                opts.max_prefetched_partition = uint64_t(1) << 30;
                auto located = co_await locate_partitions(*sst, keys, no_hashes, reader_permit(), opts);
                located_mutation_parser parser(*sst, s);
                for (auto& p : located.partitions) {
                    std::optional<mutation> got;
                    parser.parse_into(p, got);
                    BOOST_REQUIRE(got);
                    // Into a slot that holds the partition already (as from another sstable): merged, no change.
                    parser.parse_into(p, got);
                    got->partition().drop_shadowed();
                    auto want = model.at(p.key);
                    want.partition().drop_shadowed();
                    check_same(*got, want);
                }
                co_await sst->close();
            }
        }
    }
}

// Every sstable Cassandra or ScyllaDB wrote in the peer corpus whose header is its schema.cql's columns: each partition
// parses to what the located reader gives.
REEF_TEST_CASE(peer_corpus_partitions_parse_as_the_located_reader_reads_them) {
    auto corpus = require_peer_corpus();
    if (!corpus) {
        co_return;
    }
    cache::cache_tracker tracker(size_t(64) << 20);
    size_t sstables = 0, partitions = 0;
    for (auto& c : sstables_in(*corpus)) {
        if (!c.table) {
            continue;
        }
        BOOST_TEST_CONTEXT(c.name()) {
            auto sst = co_await open_sstable(c.desc, tracker);
            if (located_mutation_parser::serves(*sst, *c.table, full_slice()) &&
                sst->components().data_length() <= max_corpus_data) {
                auto keys = co_await keys_in(sst, c.table);
                keys = spread(std::move(keys), max_corpus_keys);
                partitions += co_await check_parses_as_reader(sst, c.table, keys);
                ++sstables;
            }
            co_await sst->close();
        }
    }
    BOOST_TEST_MESSAGE(sstables << " corpus sstables, " << partitions << " partitions compared");
    BOOST_CHECK_GT(sstables, 10u);
    BOOST_CHECK_GT(partitions, 100u);
}

// Only the full slice of an sstable written under the read's schema.
REEF_TEST_CASE(serves_only_full_slices_of_matching_headers) {
    tmpdir dir;
    cache::cache_tracker tracker(size_t(64) << 20);
    auto s = random_test_schema();
    auto [d, model, sst] = co_await open_random(dir, tracker, s, 5, 3, 2);
    BOOST_CHECK(located_mutation_parser::serves(*sst, *s, full_slice()));
    mutation_generator g(s, 1);
    auto partial = clustering_ranges{position_range::for_prefix(g.clustering_key())};
    BOOST_CHECK(!located_mutation_parser::serves(*sst, *s, partial));
    BOOST_CHECK(!located_mutation_parser::serves(*sst, *s, clustering_ranges{}));
    BOOST_CHECK(!located_mutation_parser::serves(*sst, *random_test_wide_schema(), full_slice()));
    co_await sst->close();
}

// Bytes that are not exactly the located partition: another partition's key, a second partition after it, a partition
// cut short. Each names Data.db and an offset; none is taken for data.
REEF_TEST_CASE(bytes_that_are_not_the_located_partition_are_malformed) {
    tmpdir dir;
    cache::cache_tracker tracker(size_t(64) << 20);
    auto s = random_test_schema();
    auto [d, model, sst] = co_await open_random(dir, tracker, s, 9, 4, 3);
    auto keys = keys_of(model);
    partition_batch_options opts;
    opts.max_prefetched_partition = uint64_t(1) << 30;
    auto located = co_await locate_partitions(*sst, keys, no_hashes, reader_permit(), opts);
    BOOST_REQUIRE_EQUAL(located.partitions.size(), 4u);
    auto data = d.filename(component_type::data);
    auto expect_malformed = [&](const located_partition& p, const std::string& what) {
        located_mutation_parser parser(*sst, s);
        std::string error;
        try {
            std::optional<mutation> got;
            parser.parse_into(p, got);
        } catch (const malformed_sstable_exception& e) {
            error = e.what();
        }
        BOOST_CHECK_MESSAGE(error.find(data) != std::string::npos && error.find("at offset") != std::string::npos &&
                                error.find(what) != std::string::npos,
                            "error: '" << error << "', expected one naming " << data << " and '" << what << "'");
    };
    auto& first = located.partitions[0];
    auto& second = located.partitions[1];

    auto other_key = copy_of(first);
    other_key.key = second.key;
    expect_malformed(other_key, "not the one the index places here");

    // The first partition's range stretched over the second (the next in Data.db): the bytes of both.
    BOOST_REQUIRE_EQUAL(first.range.end, second.range.start);
    auto both_bytes = temporary_buffer::copy_of(std::string(first.bytes.get(), first.bytes.size()) +
                                                std::string(second.bytes.get(), second.bytes.size()));
    located_partition both{first.key, first.entry, {first.range.start, second.range.end}, std::move(both_bytes)};
    expect_malformed(both, "a partition starts where the located one should end");

    for (uint64_t cut : {uint64_t(1), first.bytes.size() / 2, first.bytes.size() - 1}) {
        BOOST_TEST_CONTEXT("cut to " << cut << " bytes") {
            auto p = copy_of(first);
            p.bytes.trim(cut);
            p.range.end = p.range.start + cut;
            expect_malformed(p, "");
        }
    }
    co_await sst->close();
}
