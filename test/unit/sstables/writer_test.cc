// The sstable writer: random mutations through a memtable are written (LZ4 and uncompressed, several column
// index sizes, so promoted indexes of many blocks), then read back with our own components and reader and
// compared with the model; every corpus sstable read and written again reads back the same; the commit
// protocol leaves either nothing or a whole sstable, and leftovers of a partial write are removed.
#include "db/memtable.hh"
#include "db/memtable_reader.hh"
#include "mutation/mutation.hh"
#include "runtime/file.hh"
#include "runtime/reactor.hh"
#include "sstables/bloom_calculations.hh"
#include "sstables/components.hh"
#include "sstables/index_entry.hh"
#include "sstables/metadata_collector.hh"
#include "sstables/mx_fragments.hh"
#include "sstables/mx_reader.hh"
#include "sstables/row_serializer.hh"
#include "sstables/sstable.hh"
#include "sstables/statistics.hh"
#include "sstables/writer.hh"
#include "test/lib/mutation_model.hh"
#include "test/lib/mx_test_support.hh"
#include "test/lib/random_mutation.hh"
#include "test/lib/writable_mutation.hh"
#include "test/lib/reef_test.hh"
#include "test/lib/simple_keys.hh"
#include "test/lib/tmpdir.hh"

#include <boost/test/unit_test.hpp>

#include <chrono>
#include <csignal>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace reef;
using namespace reef::sstables;
using namespace reef::testing;

namespace {

descriptor desc_in(const std::string& dir, int generation, sstable_version v = sstable_version::me) {
    return descriptor{dir, v, std::to_string(generation), "big"};
}

struct read_back_result {
    std::vector<mutation_fragment> fragments;
    statistics stats;
    std::vector<index_entry> index;
    sstable_components components;
};

// Reads sstable d with our readers: every component loaded (and checked), Data.db through its checked source.
future<read_back_result> read_back(descriptor d, schema_ptr s,
                                   std::function<dht::token(bytes_view)> token = {}) {
    read_back_result r;
    r.components = co_await load_components(d);
    r.stats = co_await load_statistics(d);
    auto index_path = d.filename(component_type::index);
    r.index = parse_index_entries(co_await read_entire_file(index_path), d.version, index_path);
    if (r.components.digest) {
        co_await verify_digest(d.filename(component_type::data), *r.components.digest);
    }
    auto f = co_await open_file_dma(d.filename(component_type::data), open_flags::ro);
    auto src = make_data_source(f, r.components, 0, r.components.data_length(), integrity_check::yes);
    auto header = std::make_shared<const serialization_header>(*r.stats.header);
    auto reader = make_mx_full_scan_reader(s, header, std::move(src), d.filename(component_type::data),
                                           r.components.data_length(), dht::partition_range::full(), std::move(token));
    std::exception_ptr err;
    try {
        r.fragments = co_await read_validated(reader, false);
    } catch (...) {
        err = std::current_exception();
    }
    co_await reader.close();
    co_await f.close();
    if (err) {
        std::rethrow_exception(err);
    }
    co_return r;
}

// What every written sstable must satisfy beside its contents: one index entry per partition at its Data.db
// position, promoted indexes whose blocks tile the partition, a summary and a filter that know every key.
void check_components(const read_back_result& r, const schema& s, const writer_options& o, size_t partitions,
                      size_t& promoted_blocks) {
    BOOST_REQUIRE_EQUAL(r.index.size(), partitions);
    auto types = s.clustering_types();
    for (size_t i = 0; i < r.index.size(); ++i) {
        auto& e = r.index[i];
        BOOST_CHECK(r.components.filter.is_present(e.key.view()));
        uint64_t end = i + 1 < r.index.size() ? r.index[i + 1].data_position : r.components.data_length();
        BOOST_REQUIRE_LT(e.data_position, end);
        if (e.promoted) {
            auto blocks = e.promoted->all_blocks(types, sstable_version::me, "Index.db");
            BOOST_REQUIRE_GE(blocks.size(), 2u);
            BOOST_CHECK_EQUAL(blocks.front().offset, e.promoted->partition_header_length);
            for (size_t b = 0; b + 1 < blocks.size(); ++b) {
                BOOST_CHECK_EQUAL(blocks[b].offset + blocks[b].width, blocks[b + 1].offset);
                BOOST_CHECK_GE(blocks[b].width, o.column_index_size);
            }
            BOOST_CHECK_LE(e.data_position + blocks.back().offset + blocks.back().width, end);
            promoted_blocks += blocks.size();
        }
    }
    auto& sum = r.components.summary;
    BOOST_CHECK(!r.components.summary_rebuilt);
    BOOST_CHECK_EQUAL(sum.entries.size(), (partitions + o.min_index_interval - 1) / o.min_index_interval);
    for (size_t i = 0; i < sum.entries.size(); ++i) {
        BOOST_CHECK_EQUAL(sum.entries[i].key, std::string(r.index[i * o.min_index_interval].key.view()));
        BOOST_CHECK_EQUAL(sum.entries[i].index_position, r.index[i * o.min_index_interval].index_position);
    }
    if (partitions) {
        BOOST_CHECK_EQUAL(sum.first_key, std::string(r.index.front().key.view()));
        BOOST_CHECK_EQUAL(sum.last_key, std::string(r.index.back().key.view()));
    }
}

} // namespace

BOOST_AUTO_TEST_CASE(test_bloom_spec_is_cassandras) {
    // BloomCalculations' answers: 0.01 -> 10 bits per key with 5 hashes (K relaxed from 7), 0.1 -> 5 and 3.
    auto a = compute_bloom_spec(100, 0.01);
    BOOST_CHECK_EQUAL(a.buckets_per_element, 10u);
    BOOST_CHECK_EQUAL(a.hash_count, 5u);
    auto b = compute_bloom_spec(100, 0.1);
    BOOST_CHECK_EQUAL(b.buckets_per_element, 5u);
    BOOST_CHECK_EQUAL(b.hash_count, 3u);
    BOOST_CHECK_THROW(compute_bloom_spec(1, 0), std::invalid_argument);
    BOOST_CHECK_THROW(compute_bloom_spec(1, 1e-9), std::invalid_argument);
    // 1000 keys * 10 + 20 bits, in 64-bit words.
    BOOST_CHECK_EQUAL(make_bloom_filter(1000, 0.01).bit_count(), 10048u);
}

// Cassandra's MurmurHash.hash2_64 (its values printed by Cassandra 5.0.9's own class), the key hash of the
// compaction part's HyperLogLog; bytes >= 0x80 in the tail are sign-extended as Java does.
BOOST_AUTO_TEST_CASE(test_murmur_hash2_64_is_cassandras) {
    BOOST_CHECK_EQUAL(murmur_hash2_64("key-04000", 0), 323882273682366135LL);
    BOOST_CHECK_EQUAL(murmur_hash2_64(std::string("\x80\x00\x00\x01", 4), 0), 8268808642808769110LL);
    BOOST_CHECK_EQUAL(murmur_hash2_64(std::string("\xff\xfe\x01\x02\x03\x90\x07\x08\xaa\xbb\xcc", 11), 0),
                      5028001153296350490LL);
    BOOST_CHECK_EQUAL(murmur_hash2_64("", 0), 0);
}

REEF_TEST_CASE(test_random_mutations_write_and_read_back) {
    uint64_t seed = pick_seed();
    BOOST_TEST_MESSAGE("seed " << seed << " (set REEF_SEED to repeat)");
#ifdef REEF_DEBUG
    constexpr int cases = 16;
#else
    constexpr int cases = 60;
#endif
    size_t promoted_blocks = 0, partitions_written = 0;
    tmpdir dir;
    int generation = 0;
    for (auto s : random_test_schemas()) {
        mutation_generator g(s, seed);
        for (int i = 0; i < cases; ++i) {
            auto context = "seed " + std::to_string(seed) + " table " + s->table() + " case " + std::to_string(i);
            BOOST_TEST_CONTEXT(context) {
                auto mt = std::make_shared<memtable>(s);
                mutation_model model;
                int partitions = g.rnd(0, 3) == 0 ? g.rnd(100, 400) : g.rnd(0, 12);
                int rows = partitions > 50 ? 4 : (g.rnd(0, 2) == 0 ? 200 : 12);
                for (int p = 0; p < partitions; ++p) {
                    auto m = with_typed_values(s, g.make(pkey(g.rnd(0, 100000)), rows));
                    mt->apply(m);
                    apply_to_model(model, m);
                }
                writer_options o;
                switch (i % 4) {
                case 0: break;
                case 1: o.compression.reset(); o.crc_chunk_size = 1 << g.rnd(9, 16); break;
                case 2: o.chunk_length = 1 << g.rnd(10, 14); break;
                case 3: o.compression.reset(); break;
                }
                // Tiny column index sizes make promoted indexes of many blocks.
                o.column_index_size = std::array<uint64_t, 4>{1, 64, 1024, 64 * 1024}[size_t(g.rnd(0, 3))];
                o.min_index_interval = g.rnd(0, 1) ? 4 : 128;
                if (g.rnd(0, 1)) {
                    encoding_stats_collector c;
                    for (auto& [k, m] : model) {
                        for (auto& f : to_fragments(m)) {
                            c.update(f);
                        }
                    }
                    o.stats = c.get();
                }
                auto d = desc_in(dir.path(), ++generation);
                auto reader = make_memtable_reader(mt, s, read_options{});
                auto written = co_await write_sstable(reader, s, d, o);
                co_await reader.close();
                BOOST_CHECK_EQUAL(written.partitions, model.size());
                auto r = co_await read_back(d, s);
                auto expected = expected_read(model, dht::partition_range::full(), {position_range::full()}, false);
                auto a = canonical_mutations(s, r.fragments, false);
                auto b = canonical_mutations(s, expected, false);
                BOOST_REQUIRE_MESSAGE(a == b, describe(a) << "\n!=\n" << describe(b));
                BOOST_CHECK_EQUAL(bool(r.components.compression), bool(o.compression));
                BOOST_CHECK_EQUAL(bool(r.components.crc), !o.compression);
                check_components(r, *s, o, model.size(), promoted_blocks);
                BOOST_CHECK_EQUAL(r.stats.header->stats.min_timestamp, o.stats.min_timestamp);
                partitions_written += model.size();
                // Nothing of the commit protocol is left behind.
                BOOST_CHECK(!std::filesystem::exists(d.filename(component_type::toc) + ".tmp"));
            }
            co_await yield();
        }
    }
    BOOST_TEST_MESSAGE(partitions_written << " partitions, " << promoted_blocks << " promoted index blocks");
    BOOST_CHECK_GT(promoted_blocks, 0u);
}

namespace {

#ifdef REEF_DEBUG
constexpr uint64_t max_corpus_size = 100000;  // ASan: keep the case under ~20 s
#else
constexpr uint64_t max_corpus_size = UINT64_MAX;
#endif

// The fragments of a corpus sstable, parsed in memory.
std::vector<mutation_fragment> parse_corpus(const testing::corpus_sstable& c, schema_ptr schema) {
    mx_fragment_consumer consumer(schema, *c.stats.header, c.data_path.native(), SIZE_MAX,
                                  token_function_for(c.stats.validation->partitioner));
    mx_parser p(*c.stats.header, c.data_path.native(), consumer, 0, c.data.size());
    drive_parser(p, c.data, [] { return size_t(1) << 30; });
    return take_fragments(consumer.buffer());
}

} // namespace

// Every corpus sstable, read and written again (LZ4 and uncompressed, with its own encoding stats and
// partitioner), reads back the same, and its index, summary and filter agree with its Data.db. Cassandra 3.11's
// own uncompressed `me` files (gen_me_*_uncompressed) come out byte for byte: Data, Index, Summary, Filter, CRC
// and Digest.
REEF_TEST_CASE(test_corpus_sstables_write_and_read_back) {
    auto corpus = require_peer_corpus();
    if (!corpus) {
        co_return;
    }
    tmpdir dir;
    int generation = 0;
    size_t sstables = 0, identical = 0;
    for (auto& name : corpus_dataset_names()) {
        for (auto& c : load_sstables(*corpus / name)) {
            if (c.data.size() > max_corpus_size) {
                continue;
            }
            BOOST_TEST_CONTEXT(c.data_path.string()) {
                auto schema = schema_from_header(*c.stats.header);
                auto fragments = parse_corpus(c, schema);
                auto token = token_function_for(c.stats.validation->partitioner);
                auto expected = mutations_from_fragments(schema, fragments);
                auto original = descriptor::from_path(c.data_path.string());
                for (bool compressed : {false, true}) {
                    writer_options o;
                    if (!compressed) {
                        o.compression.reset();
                    }
                    o.stats = c.stats.header->stats;
                    o.partitioner = c.stats.validation->partitioner;
                    // The generator's column_index_size for its large partition (CATALOG.md, make_inputs.py).
                    if (name.find("large_partition") != std::string::npos && name.starts_with("gen_")) {
                        o.column_index_size = 1024;
                    }
                    bool compare = !compressed && name.starts_with("gen_me_") &&
                                   !std::filesystem::exists(original.filename(component_type::compression_info));
                    if (compare) {
                        // Cassandra's offline writer sizes its filter for 0 keys (one word).
                        o.estimated_partitions = 0;
                    }
                    // ScyllaDB's writer golden files (its sstable_3_x_test's write_* cases, version mc): the same
                    // content gives the same Data, Index, Digest and Filter.
                    bool golden = !compressed && name.starts_with("scylla_write_");
                    auto d = desc_in(dir.path(), ++generation, golden ? original.version : sstable_version::me);
                    auto reader = make_fragment_vector_reader(schema, fragments);
                    co_await write_sstable(reader, schema, d, o);
                    co_await reader.close();
                    auto r = co_await read_back(d, schema, token);
                    auto got = mutations_from_fragments(schema, r.fragments);
                    BOOST_REQUIRE_MESSAGE(got == expected, describe(got) << "\n!=\n" << describe(expected));
                    size_t blocks = 0;
                    check_components(r, *schema, o, expected.size(), blocks);
                    if (compare) {
                        BOOST_CHECK(read_file(d.filename(component_type::data)) == read_file(c.data_path));
                        BOOST_CHECK(read_file(d.filename(component_type::index)) == read_file(original.filename(component_type::index)));
                        for (auto comp : {component_type::summary, component_type::filter, component_type::digest, component_type::crc}) {
                            BOOST_CHECK_MESSAGE(read_file(d.filename(comp)) == read_file(original.filename(comp)), component_name(comp));
                        }
                        ++identical;
                    }
                    if (golden) {
                        for (auto comp : {component_type::data, component_type::index, component_type::digest, component_type::filter}) {
                            BOOST_CHECK_MESSAGE(read_file(d.filename(comp)) == read_file(original.filename(comp)), component_name(comp));
                        }
                        ++identical;
                    }
                }
                ++sstables;
            }
            co_await yield();
        }
    }
    BOOST_TEST_MESSAGE(sstables << " corpus sstables rewritten, " << identical << " compared byte for byte");
    BOOST_CHECK_GE(sstables, 40u);
}

// Cassandra 3.11.19's me sstables of tables with non-default options (test/resource/sstables): me_no_filter
// (bloom_filter_fp_chance = 1: no Filter.db and a TOC that lists none) and me_index_interval_4 (min_index_interval
// = 4: a summary entry every 4 partitions). Written again with the options their Statistics.db and Summary.db
// record, every component but Statistics.db comes out byte for byte Cassandra's (the TOC as the same lines), and
// the sstable reads back the same. Without a filter the sstable takes every key as present.
REEF_TEST_CASE(test_resource_me_sstables_are_cassandras) {
    auto resources = resource_sstables_dir();
    BOOST_REQUIRE_MESSAGE(resources, "test/resource/sstables is missing");
    auto toc_lines = [](const std::filesystem::path& p) {
        std::set<std::string> lines;
        std::ifstream in(p);
        for (std::string line; std::getline(in, line);) {
            lines.insert(line);
        }
        return lines;
    };
    int generation = 0;
    tmpdir dir;
    for (std::string name : {"me_no_filter", "me_index_interval_4"}) {
        BOOST_TEST_CONTEXT(name) {
            auto sets = load_sstables(*resources / name);
            BOOST_REQUIRE_EQUAL(sets.size(), 1u);
            auto& c = sets[0];
            auto schema = schema_from_header(*c.stats.header);
            auto fragments = parse_corpus(c, schema);
            auto expected = mutations_from_fragments(schema, fragments);
            auto original = descriptor::from_path(c.data_path.string());
            auto source = co_await load_components(original);
            writer_options o;
            o.compression.reset();
            o.stats = c.stats.header->stats;
            o.partitioner = c.stats.validation->partitioner;
            o.bloom_filter_fp_chance = c.stats.validation->bloom_filter_fp_chance;
            o.min_index_interval = source.summary.min_index_interval;
            o.estimated_partitions = 0;  // Cassandra's offline writer sizes its filter for 0 keys (one word)
            auto d = desc_in(dir.path(), ++generation);
            auto reader = make_fragment_vector_reader(schema, fragments);
            co_await write_sstable(reader, schema, d, o);
            co_await reader.close();

            BOOST_CHECK(toc_lines(d.filename(component_type::toc)) == toc_lines(original.filename(component_type::toc)));
            for (auto comp : {component_type::data, component_type::index, component_type::summary,
                              component_type::filter, component_type::crc, component_type::digest}) {
                auto theirs = original.filename(comp);
                BOOST_CHECK_EQUAL(std::filesystem::exists(d.filename(comp)), std::filesystem::exists(theirs));
                if (std::filesystem::exists(theirs)) {
                    BOOST_CHECK_MESSAGE(read_file(d.filename(comp)) == read_file(theirs), component_name(comp));
                }
            }
            auto r = co_await read_back(d, schema, token_function_for(o.partitioner));
            BOOST_CHECK_EQUAL(r.stats.validation->bloom_filter_fp_chance, o.bloom_filter_fp_chance);
            BOOST_REQUIRE(mutations_from_fragments(schema, r.fragments) == expected);
            size_t blocks = 0;
            check_components(r, *schema, o, expected.size(), blocks);
            if (!std::filesystem::exists(original.filename(component_type::filter))) {
                BOOST_CHECK(r.components.filter.is_present(std::string_view("not a key of this sstable")));
            }
        }
    }
    BOOST_CHECK_EQUAL(generation, 2);
}

// Statistics.db as Cassandra writes it: for every sstable Cassandra 3.11.19 (me) and 5.0.9 (nb) wrote in the
// corpus (gen_*), our writer, given the same fragments, version, encoding stats and partitioner, writes the same
// Statistics.db bytes, but for two parts our writer cannot share: the cardinality estimator (Cassandra's is
// sparse while small, ours dense; both read back the same) and the compression ratio (our LZ4 blocks are not
// lz4-java's), which are taken from Cassandra's file before the comparison. Each field is compared first, so a
// failure names it.
REEF_TEST_CASE(test_statistics_match_cassandras) {
    auto corpus = require_peer_corpus();
    if (!corpus) {
        co_return;
    }
    tmpdir dir;
    int generation = 0;
    size_t compared = 0;
    for (auto& name : corpus_dataset_names()) {
        if (!name.starts_with("gen_")) {
            continue;
        }
        for (auto& c : load_sstables(*corpus / name)) {
            if (c.data.size() > max_corpus_size) {
                continue;
            }
            BOOST_TEST_CONTEXT(c.data_path.string()) {
                auto schema = schema_from_header(*c.stats.header);
                auto fragments = parse_corpus(c, schema);
                auto original = descriptor::from_path(c.data_path.string());
                auto components = co_await load_components(original);
                writer_options o;
                if (components.compression) {
                    o.compression = components.compression->algorithm;
                    o.chunk_length = components.compression->chunk_length;
                } else {
                    o.compression.reset();
                }
                o.stats = c.stats.header->stats;
                o.partitioner = c.stats.validation->partitioner;
                o.bloom_filter_fp_chance = c.stats.validation->bloom_filter_fp_chance;
                auto d = desc_in(dir.path(), ++generation, original.version);
                auto reader = make_fragment_vector_reader(schema, fragments);
                co_await write_sstable(reader, schema, d, o);
                co_await reader.close();
                auto stats_path = d.filename(component_type::statistics);
                auto ours = parse_statistics(read_bytes(stats_path), d.version, stats_path);
                auto& a = *ours.stats;
                auto& b = *c.stats.stats;
                auto hist = [](const estimated_histogram& h) {
                    std::string s;
                    for (auto& [o, n] : h.buckets) {
                        s += std::to_string(o) + ":" + std::to_string(n) + " ";
                    }
                    return s;
                };
                auto values = [](const std::vector<std::vector<std::byte>>& v) {
                    std::string s;
                    for (auto& x : v) {
                        s += hex_of(bytes_view(reinterpret_cast<const uint8_t*>(x.data()), x.size())) + " ";
                    }
                    return s;
                };
                auto bins = [](const tombstone_histogram& h) {
                    std::string s = std::to_string(h.max_bin_size) + ": ";
                    for (auto& [p, n] : h.bins) {
                        s += std::to_string(p) + "x" + std::to_string(n) + " ";
                    }
                    return s;
                };
                BOOST_CHECK_EQUAL(hist(a.estimated_partition_size), hist(b.estimated_partition_size));
                BOOST_CHECK_EQUAL(hist(a.estimated_cells_count), hist(b.estimated_cells_count));
                BOOST_CHECK_EQUAL(bins(a.estimated_tombstone_drop_time), bins(b.estimated_tombstone_drop_time));
                BOOST_CHECK_EQUAL(values(a.min_clustering_values), values(b.min_clustering_values));
                BOOST_CHECK_EQUAL(values(a.max_clustering_values), values(b.max_clustering_values));
                BOOST_CHECK_EQUAL(a.min_timestamp, b.min_timestamp);
                BOOST_CHECK_EQUAL(a.max_timestamp, b.max_timestamp);
                BOOST_CHECK_EQUAL(a.min_local_deletion_time, b.min_local_deletion_time);
                BOOST_CHECK_EQUAL(a.max_local_deletion_time, b.max_local_deletion_time);
                BOOST_CHECK_EQUAL(a.min_ttl, b.min_ttl);
                BOOST_CHECK_EQUAL(a.max_ttl, b.max_ttl);
                BOOST_CHECK_EQUAL(a.total_columns_set, b.total_columns_set);
                BOOST_CHECK_EQUAL(a.total_rows, b.total_rows);
                // The whole file, with Cassandra's estimator and ratio.
                ours.stats->compression_ratio = c.stats.stats->compression_ratio;
                auto bytes = serialize_statistics(*ours.validation, *c.stats.compaction, *ours.stats, *ours.header,
                                                  d.version);
                auto theirs = read_file(c.data_path.parent_path() / (c.data_path.filename().string().substr(
                                            0, c.data_path.filename().string().size() - 7) + "Statistics.db"));
                BOOST_CHECK_MESSAGE(bytes == theirs, "Statistics.db differs (" << bytes.size() << " vs "
                                                                               << theirs.size() << " bytes)");
                ++compared;
            }
            co_await yield();
        }
    }
    BOOST_TEST_MESSAGE(compared << " Statistics.db compared with Cassandra's");
#ifndef REEF_DEBUG
    BOOST_CHECK_GE(compared, 25u);
#endif
}

namespace {

// build/<mode>/reef next to this test binary (build/<mode>/test/sstables/writer_test).
std::optional<std::string> reef_binary() {
    std::error_code ec;
    auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (ec) {
        return std::nullopt;
    }
    auto p = exe.parent_path().parent_path().parent_path() / "reef";
    return std::filesystem::exists(p) ? std::optional<std::string>(p.string()) : std::nullopt;
}

std::vector<std::string> files_in(const std::string& dir) {
    std::vector<std::string> out;
    for (auto& e : std::filesystem::directory_iterator(dir)) {
        out.push_back(e.path().filename().string());
    }
    std::sort(out.begin(), out.end());
    return out;
}

} // namespace

// remove_partial_sstables removes every generation that has a TOC.txt.tmp and no TOC.txt, and only those.
REEF_TEST_CASE(test_remove_partial_sstables) {
    tmpdir dir;
    auto touch = [&](const std::string& name) { std::ofstream(dir.path() + "/" + name) << "x"; };
    for (auto c : {"Data.db", "Index.db", "TOC.txt.tmp"}) {
        touch(std::string("me-1-big-") + c);  // partial
    }
    for (auto c : {"Data.db", "Index.db", "TOC.txt"}) {
        touch(std::string("me-2-big-") + c);  // whole
    }
    touch("me-3-big-TOC.txt.tmp");  // partial, nothing else written yet
    touch("me-4-big-Data.db");      // no TOC at all: an sstable written by someone else, left alone
    touch("me-5-big-TOC.txt");
    touch("me-5-big-TOC.txt.tmp");  // a stray temporary beside a committed TOC
    auto removed = co_await remove_partial_sstables(dir.path());
    std::vector<std::string> gens;
    for (auto& d : removed) {
        gens.push_back(d.generation);
    }
    std::sort(gens.begin(), gens.end());
    BOOST_CHECK((gens == std::vector<std::string>{"1", "3"}));
    auto left = files_in(dir.path());
    BOOST_CHECK((left == std::vector<std::string>{"me-2-big-Data.db", "me-2-big-Index.db", "me-2-big-TOC.txt",
                                                  "me-4-big-Data.db", "me-5-big-TOC.txt"}));
    // A second pass finds nothing.
    BOOST_CHECK((co_await remove_partial_sstables(dir.path())).empty());
}

namespace {

std::function<bool(const descriptor&)> odd_generations() {
    return [](const descriptor& d) { return std::stoull(d.generation) % 2 == 1; };
}

} // namespace

// With an `owned` filter (a shard of a shared table directory), the other generations' partial writes stay.
REEF_TEST_CASE(test_remove_partial_sstables_owned_only) {
    tmpdir dir;
    for (auto gen : {"1", "2", "3"}) {
        std::ofstream(dir.path() + "/me-" + gen + "-big-Data.db") << "x";
        std::ofstream(dir.path() + "/me-" + gen + "-big-TOC.txt.tmp") << "x";
    }
    auto removed = co_await remove_partial_sstables(dir.path(), odd_generations());
    BOOST_CHECK_EQUAL(removed.size(), 2u);
    auto left = files_in(dir.path());
    BOOST_CHECK((left == std::vector<std::string>{"me-2-big-Data.db", "me-2-big-TOC.txt.tmp"}));
}

// A writer process killed (SIGKILL) at a random moment leaves, once remove_partial_sstables has run, either no
// file of its generation or a whole sstable that reads back equal to its source.
REEF_TEST_CASE(test_killed_writer_leaves_nothing_or_a_whole_sstable) {
    auto corpus = require_peer_corpus();
    auto reef = reef_binary();
    if (!corpus || !reef) {
        BOOST_TEST_MESSAGE("skipped: needs the peer corpus and build/<mode>/reef");
        co_return;
    }
    auto source = *corpus / "scylla_write_many_deleted_partitions" / "mc-1-big-Data.db";
    auto src = load_sstables(source.parent_path()).at(0);
    auto schema = schema_from_header(*src.stats.header);
    auto expected = mutations_from_fragments(schema, parse_corpus(src, schema));
    uint64_t seed = pick_seed();
    BOOST_TEST_MESSAGE("seed " << seed << " (set REEF_SEED to repeat)");
    std::mt19937_64 rng(seed);
    size_t whole = 0, none = 0, partial = 0;
    for (int round = 0; round < 16; ++round) {
        tmpdir dir;
        std::string out = dir.path();
        std::string src_path = source.string();
        std::vector<char*> argv{reef->data(), const_cast<char*>("sstable"), const_cast<char*>("rewrite"),
                                const_cast<char*>("--out"), out.data(), src_path.data(), nullptr};
        pid_t pid = ::fork();
        BOOST_REQUIRE_GE(pid, 0);
        if (pid == 0) {
            int null = ::open("/dev/null", O_WRONLY);
            ::dup2(null, 1);
            ::dup2(null, 2);
            ::execv(argv[0], argv.data());
            ::_exit(127);
        }
        // A full rewrite takes ~300 ms here (dev); kill anywhere in it, or after it.
        auto delay = std::chrono::microseconds(std::uniform_int_distribution<int>(0, 450000)(rng));
        std::this_thread::sleep_for(delay);
        ::kill(pid, SIGKILL);
        int status = 0;
        ::waitpid(pid, &status, 0);
        BOOST_TEST_CONTEXT("seed " << seed << " round " << round << " killed after " << delay.count() << " us") {
            partial += (co_await remove_partial_sstables(out)).size();
            auto left = files_in(out);
            auto d = descriptor{out, sstable_version::me, "1", "big"};
            if (left.empty()) {
                ++none;
                continue;
            }
            BOOST_REQUIRE(std::filesystem::exists(d.filename(component_type::toc)));
            auto r = co_await read_back(d, schema);
            auto got = mutations_from_fragments(schema, r.fragments);
            BOOST_REQUIRE(got == expected);
            ++whole;
        }
    }
    BOOST_TEST_MESSAGE(whole << " whole sstables, " << none << " runs that left nothing (" << partial
                             << " of them had left a partial sstable, removed)");
}
