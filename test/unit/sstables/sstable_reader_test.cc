// The partition-range sstable reader: random memtables written to sstables (tiny summary intervals, so many index
// pages; LZ4, CRC-checked and plain Data.db), then random partition ranges, singular and absent keys and clustering
// slices read from the sstable and from the memtable reader, compared; a singular read reads only its partition's
// Data.db bytes (plus chunk and page rounding), and a second identical read reads no Index.db page from disk.
#include "cache/cached_file.hh"
#include "db/memtable.hh"
#include "db/memtable_reader.hh"
#include "index/index_reader.hh"
#include "runtime/file.hh"
#include "runtime/reactor.hh"
#include "sstables/components.hh"
#include "sstables/index_pages.hh"
#include "sstables/sstable.hh"
#include "sstables/sstable_reader.hh"
#include "sstables/statistics.hh"
#include "sstables/writer.hh"
#include "test/lib/mutation_model.hh"
#include "test/lib/mx_test_support.hh"
#include "test/lib/random_mutation.hh"
#include "test/lib/read_and_close.hh"
#include "test/lib/reef_test.hh"
#include "test/lib/simple_keys.hh"
#include "test/lib/tmpdir.hh"
#include "test/lib/writable_mutation.hh"

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <unistd.h>

using namespace reef;
using namespace reef::sstables;
using namespace reef::testing;

namespace {

std::string tokens_of(const std::vector<mutation>& ms) {
    std::string out;
    for (auto& m : ms) {
        out += m.decorated_key().get_token().to_string() + " ";
    }
    return out;
}

} // namespace

// Random sstables under `under`, read by random ranges and slices, against the memtable they were written from.
// in_memory: `under` is tmpfs, where no read may wait (each is done at once, and comes back as a ready future).
future<> check_matches_memtable_reader(std::string under, bool in_memory) {
    uint64_t seed = pick_seed();
    BOOST_TEST_MESSAGE("seed " << seed << " (set REEF_SEED to repeat), sstables under " << under);
#ifdef REEF_DEBUG
    constexpr int cases = 4;
#else
    constexpr int cases = 12;
#endif
    tmpdir dir(under);
    auto blocked = engine().io().reads_blocked;
    int generation = 0;
    size_t reads = 0, singular = 0, filtered = 0;
    for (auto s : random_test_schemas()) {
        mutation_generator g(s, seed);
        for (int i = 0; i < cases; ++i) {
            auto context = "seed " + std::to_string(seed) + " table " + s->table() + " case " + std::to_string(i);
            BOOST_TEST_CONTEXT(context) {
                auto mt = std::make_shared<memtable>(s);
                int partitions = g.rnd(0, 4) == 0 ? g.rnd(0, 3) : g.rnd(20, 150);
                int rows = g.rnd(0, 2) == 0 ? 40 : 6;
                for (int p = 0; p < partitions; ++p) {
                    mt->apply(with_typed_values(s, g.make(pkey(g.rnd(0, 100000)), rows)));
                }
                writer_options o;
                switch (i % 3) {
                case 0: o.chunk_length = 1 << g.rnd(10, 14); break;
                case 1: o.compression.reset(); o.crc_chunk_size = 1 << g.rnd(9, 16); break;
                case 2: o.compression.reset(); break;
                }
                o.min_index_interval = g.rnd(1, 8);
                o.column_index_size = g.rnd(0, 1) ? 64 : 64 * 1024;
                descriptor d{dir.path(), sstable_version::me, std::to_string(++generation), "big"};
                {
                    auto w = make_memtable_reader(mt, s, read_options{});
                    co_await write_sstable(w, s, d, o);
                    co_await w.close();
                }
                std::vector<dht::decorated_key> keys;
                {
                    auto all = make_memtable_reader(mt, s, read_options{});
                    auto fragments = co_await read_and_close(std::move(all));
                    for (auto& f : fragments) {
                        if (auto* ps = std::get_if<partition_start>(&f)) {
                            keys.push_back(ps->key);
                        }
                    }
                }
                cache::cache_tracker tracker(size_t(64) << 20);
                auto sst = co_await sstables::open_sstable(d, tracker);
                for (int q = 0; q < 25; ++q) {
                    auto pr = random_partition_range(g, keys);
                    if (g.rnd(0, 5) == 0) {
                        // A key the sstable does not hold (most likely).
                        pr = dht::partition_range::singular(pkey(g.rnd(100001, 200000)));
                    }
                    auto slice = g.rnd(0, 2) == 0 ? clustering_ranges{position_range::full()} : g.make_ranges();
                    auto expected_reader = make_memtable_reader(mt, s, {.range = pr, .slice = slice});
                    auto expected = co_await read_and_close(std::move(expected_reader));
                    auto got_reader = make_sstable_reader(s, sst->read_handles(), reader_permit(), {.range = pr, .slice = slice});
                    auto got = co_await read_and_close(std::move(got_reader));
                    auto a = canonical_mutations(s, got, false);
                    auto b = canonical_mutations(s, expected, false);
                    BOOST_REQUIRE_MESSAGE(a == b, tokens_of(a) << "\n!=\n" << tokens_of(b));
                    ++reads;
                    if (pr.is_singular()) {
                        ++singular;
                        auto& key = pr.start()->position.key()->key();
                        if (!sst->components().filter.is_present(key.bytes())) {
                            ++filtered;
                            BOOST_CHECK(expected.empty());
                        }
                    }
                }
                // I/O of singular reads of present keys, the second one with the index warm.
                cache::read_caches<index::partition_index_page> caches(sst->cached_index(), sst->index_cache(),
                                                                       bypass_cache::no);
                index::index_reader ir(sst->summary(), caches, make_index_page_parser(d.version, d.filename(component_type::index)));
                uint64_t chunk = o.compression ? o.chunk_length : o.crc_chunk_size;
                for (int q = 0; q < 5 && !keys.empty(); ++q) {
                    auto pr = dht::partition_range::singular(keys[size_t(g.rnd(0, int(keys.size()) - 1))]);
                    auto dr = co_await ir.range(pr);
                    BOOST_REQUIRE_LT(dr.start, dr.end);
                    clustering_ranges everything{position_range::full()};
                    auto first_reader = make_sstable_reader(s, sst->read_handles(), reader_permit(), {.range = pr, .slice = everything});
                    auto first = co_await read_and_close(std::move(first_reader));
                    auto bytes = engine().io().bytes_read;
                    auto misses = sst->cached_index().stats().page_misses;
                    auto second_reader = make_sstable_reader(s, sst->read_handles(), reader_permit(), {.range = pr, .slice = everything});
                    auto second = co_await read_and_close(std::move(second_reader));
                    auto data_bytes = engine().io().bytes_read - bytes;
                    BOOST_CHECK_EQUAL(sst->cached_index().stats().page_misses, misses);
                    // The partition's bytes, rounded out to a chunk when compressed (stored chunks are at most as
                    // long plus a little) and to 4 KiB pages on each side; uncompressed reads skip CRC.db
                    // (integrity_check::no) and read no more than the partition's pages.
                    uint64_t slack = o.compression ? 2 * chunk + 64 : 0;
                    BOOST_CHECK_LE(data_bytes, dr.end - dr.start + slack + 2 * 4096);
                    BOOST_CHECK(canonical_mutations(s, first, false) == canonical_mutations(s, second, false));
                    BOOST_CHECK(!first.empty());
                }
                co_await caches.close();
                co_await sst->close();
            }
            co_await yield();
        }
    }
    BOOST_TEST_MESSAGE(reads << " reads, " << singular << " singular, " << filtered << " ruled out by the filter");
    if (in_memory) {
        BOOST_CHECK_EQUAL(engine().io().reads_blocked, blocked);
    }
}

REEF_TEST_CASE(sstable_reader_matches_memtable_reader) {
    co_await check_matches_memtable_reader("/var/tmp", false);
}

// The same on tmpfs, where every read is done at once (file.cc's memory_backed): the read path then runs the ready
// futures its functions return, without a coroutine frame, where on a disk it waits for the I/O.
REEF_TEST_CASE(sstable_reader_matches_memtable_reader_in_memory) {
    if (::access("/dev/shm", W_OK) != 0) {
        BOOST_TEST_MESSAGE("no writable /dev/shm: skipped");
        co_return;
    }
    co_await check_matches_memtable_reader("/dev/shm", true);
}

// Every partition of every corpus sstable read alone (a singular range, through the summary, Index.db and only its
// byte range of Data.db) is the partition the in-memory parse of the whole Data.db gives (an even sample of the
// keys in debug builds).
REEF_TEST_CASE(sstable_reader_reads_every_corpus_key) {
    auto corpus = require_peer_corpus();
    if (!corpus) {
        co_return;
    }
    size_t sstables = 0, partitions = 0;
    cache::cache_tracker tracker(size_t(64) << 20);
    for (auto& name : corpus_dataset_names()) {
        for (auto& cs : load_sstables(*corpus / name)) {
#ifdef REEF_DEBUG
            if (cs.data.size() > 300000) {
                continue;
            }
#endif
            auto context = cs.data_path.string();
            BOOST_TEST_CONTEXT(context) {
                auto schema = schema_from_header(*cs.stats.header);
                auto token = token_function_for(cs.stats.validation->partitioner);
                mx_fragment_consumer c(schema, *cs.stats.header, cs.data_path.native(), SIZE_MAX, token);
                mx_parser p(*cs.stats.header, cs.data_path.native(), c, 0, cs.data.size());
                drive_parser(p, cs.data, [] { return size_t(1) << 30; });
                auto whole = take_fragments(c.buffer());
                auto all = mutations_from_fragments(schema, whole);
                auto sst = co_await sstables::open_sstable(descriptor::from_path(cs.data_path.string()), tracker);
                clustering_ranges everything{position_range::full()};
#ifdef REEF_DEBUG
                // Debug (ASan) builds read an even sample of about 40 keys of each sstable up to 300 kB; dev reads every key.
                size_t stride = std::max<size_t>(1, all.size() / 40);
#else
                size_t stride = 1;
#endif
                for (size_t k = 0; k < all.size(); k += stride) {
                    auto& m = all[k];
                    auto pr = dht::partition_range::singular(m.decorated_key());
                    auto r = make_sstable_reader(schema, sst->read_handles(), reader_permit(), {.range = pr, .slice = everything});
                    auto got = co_await read_and_close(std::move(r));
                    auto ms = mutations_from_fragments(schema, got);
                    BOOST_REQUIRE_EQUAL(ms.size(), 1u);
                    BOOST_REQUIRE_MESSAGE(ms[0] == m, to_string(ms[0]) << "\n!=\n" << to_string(m));
                    ++partitions;
                    co_await yield();
                }
                co_await sst->close();
                ++sstables;
            }
        }
    }
    BOOST_TEST_MESSAGE(sstables << " sstables, " << partitions << " partitions read one by one");
    BOOST_CHECK_GE(sstables, 40u);
}

namespace {

bytes be_int(uint32_t v) {
    return bytes{uint8_t(v >> 24), uint8_t(v >> 16), uint8_t(v >> 8), uint8_t(v)};
}

// One partition (pk 1) of `rows` rows (ck 0..rows-1) with a 100-byte value each.
mutation long_partition(const schema_ptr& s, uint32_t rows) {
    mutation m(s, pkey(1));
    std::string value(100, 'v');
    for (uint32_t j = 0; j < rows; ++j) {
        deletable_row r;
        write_time::timestamp_type ts = write_time::timestamp_type(1000 + j);
        r.marker = row_marker{ts};
        value[j % 100] = char(j);
        r.cells.apply(0, atomic_cell::make_live(ts, value));
        m.partition().apply_row(*s, clustering_key_prefix(std::vector<bytes>{be_int(j)}), r);
    }
    return m;
}

clustering_ranges one_row(uint32_t ck) {
    return clustering_ranges{position_range::for_prefix(clustering_key_prefix(std::vector<bytes>{be_int(ck)}))};
}

} // namespace

// integrity_check::no: a read of one row of a long partition of an uncompressed sstable (with CRC.db, which reads
// do not check) reads a few KiB of Data.db around that row (the promoted index's block), not CRC.db's 64 KiB
// chunks nor the partition.
REEF_TEST_CASE(sstable_reader_one_row_reads_little_of_uncompressed_data) {
    uint64_t seed = pick_seed();
    BOOST_TEST_MESSAGE("seed " << seed << " (set REEF_SEED to repeat)");
    std::mt19937_64 rng(seed);
    tmpdir dir;
    auto s = schema_builder("ks", "long")
                 .with_column("pk", int32_type(), column_kind::partition_key)
                 .with_column("ck", int32_type(), column_kind::clustering_key)
                 .with_column("v", blob_type(), column_kind::regular_column)
                 .build();
    constexpr uint32_t rows = 4000;
    auto mt = std::make_shared<memtable>(s);
    mt->apply(long_partition(s, rows));
    writer_options o;
    o.compression.reset();
    o.column_index_size = 1024;
    descriptor d{dir.path(), sstable_version::me, "1", "big"};
    {
        auto w = make_memtable_reader(mt, s, read_options{});
        co_await write_sstable(w, s, d, o);
        co_await w.close();
    }
    cache::cache_tracker tracker(size_t(64) << 20);
    auto sst = co_await sstables::open_sstable(d, tracker);
    BOOST_REQUIRE(sst->components().crc);
    BOOST_REQUIRE_GT(sst->components().data_length(), 256u * 1024);
    auto pr = dht::partition_range::singular(pkey(1));
    for (int q = 0; q < 10; ++q) {
        auto slice = one_row(uint32_t(rng() % rows));
        auto expected_reader = make_memtable_reader(mt, s, {.range = pr, .slice = slice});
        auto expected = co_await read_and_close(std::move(expected_reader));
        auto before = sst->data_file().io_counters().bytes;
        auto got_reader = make_sstable_reader(s, sst->read_handles(), reader_permit(), {.range = pr, .slice = slice});
        auto got = co_await read_and_close(std::move(got_reader));
        auto bytes = sst->data_file().io_counters().bytes - before;
        BOOST_REQUIRE(canonical_mutations(s, got, false) == canonical_mutations(s, expected, false));
        BOOST_REQUIRE_EQUAL(std::count_if(got.begin(), got.end(),
                                          [](auto& f) { return std::holds_alternative<clustering_row>(f); }),
                            1);
        // The partition's header, the row's block and the partition's end: a 4 KiB read each, maybe a second
        // one twice as long where a block crosses a page.
        BOOST_TEST_MESSAGE("one row read " << bytes << " bytes of Data.db");
        BOOST_CHECK_LE(bytes, 3u * 4096 + 2 * 8192);
    }
    co_await sst->close();
}
