// Tests of Data.db reading: every corpus sstable's Data.db, compressed (LZ4, Snappy, Zstd, Deflate, chunks stored
// uncompressed) or checked against CRC.db, reads whole with every chunk's checksum checked; each Index.db entry
// points at its partition key in the stream; streams started anywhere and skip() give the same bytes; and
// Digest.crc32 matches the file.
#include "runtime/file.hh"
#include "runtime/reactor.hh"
#include "sstables/checked_data_source.hh"
#include "sstables/checksum.hh"
#include "sstables/compression_info.hh"
#include "sstables/compressor.hh"
#include "sstables/exceptions.hh"
#include "sstables/index_entry.hh"
#include "test/lib/reef_test.hh"
#include "test/lib/sstable_corpus.hh"
#include "test/lib/tmpdir.hh"
#include "utils/crc32.hh"

#include <boost/test/unit_test.hpp>
#include <fstream>
#include <random>

using namespace reef;
using namespace reef::sstables;
using reef::testing::corpus_sstable;

namespace {

struct opened_data {
    file f;
    uint64_t size = 0;
    std::shared_ptr<const compression_info> ci;
    std::shared_ptr<const crc_component> crc;
    uint64_t length() const { return ci ? ci->data_length : size; }
};

future<opened_data> open_data(const corpus_sstable& t) {
    opened_data d;
    auto data_name = t.path(component_type::data);
    d.f = co_await open_file_dma(data_name, open_flags::ro);
    d.size = co_await d.f.size();
    if (t.has(component_type::compression_info)) {
        auto name = t.path(component_type::compression_info);
        d.ci = std::make_shared<compression_info>(
            parse_compression_info(reef::testing::read_file(name), t.desc.version, name, d.size));
    } else if (t.has(component_type::crc)) {
        auto name = t.path(component_type::crc);
        d.crc = std::make_shared<crc_component>(parse_crc_component(reef::testing::read_file(name), name, d.size));
    }
    co_return d;
}

data_source make_source(const corpus_sstable& t, const opened_data& d, uint64_t pos, uint64_t len) {
    auto name = t.path(component_type::data);
    if (d.ci) {
        return make_compressed_data_source(d.f, name, d.ci, d.size, pos, len);
    }
    if (d.crc) {
        return make_crc_checked_data_source(d.f, name, d.crc, d.size, pos, len);
    }
    return make_file_data_source(d.f, pos, len);
}

future<std::string> read_all(data_source src) {
    std::string out;
    while (true) {
        auto b = co_await src.get();
        if (b.empty()) {
            break;
        }
        out.append(b.get(), b.size());
    }
    co_await src.close();
    co_return out;
}

} // namespace

REEF_TEST_CASE(test_corpus_data_reads_whole_and_matches_index) {
    std::map<std::string, size_t> by_compressor;
    size_t uncompressed_chunks = 0;
    for (auto& t : reef::testing::all_test_sstables()) {
        BOOST_TEST_CONTEXT(t.name()) {
            auto d = co_await open_data(t);
            auto content = co_await read_all(make_source(t, d, 0, d.length()));
            BOOST_REQUIRE_EQUAL(content.size(), d.length());
            by_compressor[d.ci ? d.ci->compressor_class : d.crc ? "CRC.db" : "none"]++;
            if (d.ci) {
                for (size_t i = 0; i < d.ci->chunk_count(); ++i) {
                    uint64_t stop = i + 1 < d.ci->chunk_count() ? d.ci->chunk_offsets[i + 1] : d.size;
                    uncompressed_chunks += stop - d.ci->chunk_offsets[i] - 4 >= d.ci->max_compressed_length;
                }
            } else {
                BOOST_CHECK(content == reef::testing::read_file(t.path(component_type::data)));
            }
            // Each partition starts with its key (2-byte length, bytes).
            auto index_name = t.path(component_type::index);
            auto entries = parse_index_entries(reef::testing::read_file(index_name), t.desc.version, index_name);
            for (auto& e : entries) {
                BOOST_REQUIRE_LE(e.data_position + 2 + e.key.size(), content.size());
                BOOST_CHECK_EQUAL(utils::read_be_unchecked<uint16_t>(content.data() + e.data_position), e.key.size());
                BOOST_CHECK(content.substr(e.data_position + 2, e.key.size()) == e.key.view());
            }
            // Digest.crc32: the CRC32 of the stored file.
            if (t.has(component_type::digest)) {
                auto name = t.path(component_type::digest);
                auto digest = parse_digest(reef::testing::read_file(name), name);
                auto data_name = t.path(component_type::data);
                co_await verify_digest(data_name, digest);
                bool threw = false;
                try {
                    co_await verify_digest(data_name, digest ^ 1);
                } catch (const malformed_sstable_exception& e) {
                    threw = true;
                    BOOST_CHECK_EQUAL(e.file(), data_name);
                }
                BOOST_CHECK(threw);
            }
            co_await d.f.close();
        }
    }
    for (auto& [k, n] : by_compressor) {
        BOOST_TEST_MESSAGE(k << ": " << n << " sstables");
    }
    BOOST_TEST_MESSAGE("chunks stored uncompressed: " << uncompressed_chunks);
    if (reef::testing::resource_sstables_dir()) {
        for (auto c : {"LZ4Compressor", "SnappyCompressor", "ZstdCompressor", "DeflateCompressor", "CRC.db"}) {
            BOOST_CHECK_MESSAGE(by_compressor[c] > 0, "no sstable read with " << c);
        }
        BOOST_CHECK_GT(uncompressed_chunks, 0u);
    }
}

REEF_TEST_CASE(test_reads_from_anywhere_and_skips) {
    std::mt19937_64 rng(5);
    for (auto& t : reef::testing::all_test_sstables()) {
        BOOST_TEST_CONTEXT(t.name()) {
            auto d = co_await open_data(t);
            if (!d.ci && !d.crc) {
                co_await d.f.close();
                continue;
            }
            auto content = co_await read_all(make_source(t, d, 0, d.length()));
            for (int round = 0; round < 6; ++round) {
                uint64_t pos = rng() % (content.size() + 1);
                uint64_t len = rng() % (content.size() - pos + 10);
                auto part = co_await read_all(make_source(t, d, pos, len));
                BOOST_CHECK(part == content.substr(pos, len));
                // A stream that skips around: get, then skip a random amount, and so on.
                auto src = make_source(t, d, 0, content.size());
                uint64_t at = 0;
                auto buf = co_await src.get();
                while (!buf.empty()) {
                    BOOST_REQUIRE(std::string_view(buf.get(), buf.size()) == std::string_view(content).substr(at, buf.size()));
                    at += buf.size();
                    uint64_t n = rng() % 3 == 0 ? 0 : rng() % (content.size() / 3 + 1);
                    buf = co_await src.skip(n);
                    at = std::min<uint64_t>(at + n, content.size());
                }
                BOOST_CHECK_EQUAL(at, content.size());
                co_await src.close();
            }
            co_await d.f.close();
        }
    }
}

BOOST_AUTO_TEST_CASE(test_codecs_round_trip_and_refuse_garbage) {
    std::mt19937_64 rng(9);
    for (auto a : {compression_algorithm::lz4, compression_algorithm::snappy, compression_algorithm::zstd,
                   compression_algorithm::deflate}) {
        BOOST_TEST_CONTEXT(compressor_class_name(a)) {
            for (size_t size : {size_t(1), size_t(100), size_t(4096), size_t(65536)}) {
                std::string in(size, '\0');
                for (auto& c : in) {
                    c = char('a' + rng() % 5);
                }
                auto z = compress_chunk(a, in);
                std::string out(size, '\0');
                decompress_chunk(a, z, out.data(), size, "Data.db", 0);
                BOOST_CHECK(out == in);
                // Wrong expected length, truncation and flipped bytes are refused (or, for a flip that still
                // decodes, give different bytes), never read out of bounds.
                BOOST_CHECK_THROW(decompress_chunk(a, z, out.data(), size - 1, "Data.db", 7), malformed_sstable_exception);
                for (size_t cut = 0; cut < z.size(); cut += 1 + z.size() / 16) {
                    std::string o(size, '\0');
                    BOOST_CHECK_THROW(decompress_chunk(a, std::string_view(z).substr(0, cut), o.data(), size, "Data.db", 7),
                                      malformed_sstable_exception);
                }
                for (int flip = 0; flip < 20; ++flip) {
                    auto bad = z;
                    bad[rng() % bad.size()] ^= char(1 + rng() % 255);
                    std::string o(size, '\0');
                    try {
                        decompress_chunk(a, bad, o.data(), size, "Data.db", 7);
                    } catch (const malformed_sstable_exception& e) {
                        BOOST_CHECK_EQUAL(e.offset(), 7u);
                    }
                }
            }
        }
    }
}

// Reads go through a read-ahead stream: a whole scan takes about one read per 64 KiB of stored bytes, not one
// per chunk, and a range reads no more stored bytes than its chunks (plus the disk alignment at each end).
REEF_TEST_CASE(test_reads_are_batched_and_bounded) {
    std::mt19937_64 rng(3);
    size_t checked = 0;
    for (auto& t : reef::testing::all_test_sstables()) {
        if (!t.has(component_type::compression_info) && !t.has(component_type::crc)) {
            continue;
        }
        BOOST_TEST_CONTEXT(t.name()) {
            auto d = co_await open_data(t);
            uint64_t chunk = d.ci ? d.ci->chunk_length : d.crc->chunk_size;
            uint64_t chunks = (d.length() + chunk - 1) / chunk;
            uint64_t align = d.f.disk_read_dma_alignment();
            auto before = engine().io();
            co_await read_all(make_source(t, d, 0, d.length()));
            auto after = engine().io();
            uint64_t reads = after.reads - before.reads;
            BOOST_CHECK_LE(reads, d.size / (64 * 1024) + 2);
            if (chunks > 8 && chunk < 64 * 1024) {
                BOOST_CHECK_LT(reads, chunks);
            }
            BOOST_CHECK_LE(after.bytes_read - before.bytes_read, d.size + 2 * align);
            // A range: only the stored bytes of its chunks.
            for (int i = 0; i < 4; ++i) {
                uint64_t pos = rng() % d.length();
                uint64_t len = 1 + rng() % std::min<uint64_t>(d.length() - pos, 3 * chunk);
                uint64_t first = pos / chunk, last = (pos + len - 1) / chunk;
                uint64_t stored_begin, stored_end;
                if (d.ci) {
                    stored_begin = d.ci->chunk_offsets[first];
                    stored_end = last + 1 < d.ci->chunk_count() ? d.ci->chunk_offsets[last + 1] : d.size;
                } else {
                    stored_begin = first * chunk;
                    stored_end = std::min((last + 1) * chunk, d.size);
                }
                auto b = engine().io();
                co_await read_all(make_source(t, d, pos, len));
                auto a = engine().io();
                BOOST_CHECK_LE(a.bytes_read - b.bytes_read, stored_end - stored_begin + 2 * align);
            }
            co_await d.f.close();
            ++checked;
        }
    }
    BOOST_TEST_MESSAGE("sstables checked: " << checked);
}

// A Data.db of 100,000 tiny chunks (written here with our compressor and CompressionInfo writer) reads back whole
// and through skips: with read-ahead keeping the data ready, chunk after chunk completes without suspending,
// which must not deepen the stack (debug builds, where symmetric transfer is not a tail call) nor starve the loop.
REEF_TEST_CASE(test_many_small_chunks) {
    reef::testing::tmpdir dir;
    std::mt19937_64 rng(8);
    compression_info ci;
    ci.compressor_class = "LZ4Compressor";
    ci.algorithm = compression_algorithm::lz4;
    ci.chunk_length = 64;
    std::string content(100'000 * 64 - 17, '\0');
    for (auto& c : content) {
        c = char('a' + rng() % 4);
    }
    ci.data_length = content.size();
    std::string stored;
    for (uint64_t off = 0; off < content.size(); off += ci.chunk_length) {
        ci.chunk_offsets.push_back(stored.size());
        auto z = compress_chunk(ci.algorithm, std::string_view(content).substr(off, ci.chunk_length));
        stored += z;
        char crc[4];
        utils::write_be_unchecked<uint32_t>(crc, utils::crc32(std::span<const char>(z)));
        stored.append(crc, 4);
    }
    auto path = dir.path() + "/nb-1-big-Data.db";
    {
        std::ofstream out(path, std::ios::binary);
        out.write(stored.data(), std::streamsize(stored.size()));
    }
    auto bytes = serialize_compression_info(ci, sstable_version::nb);
    auto parsed = std::make_shared<compression_info>(parse_compression_info(bytes, sstable_version::nb, "ci", stored.size()));
    BOOST_REQUIRE_EQUAL(parsed->chunk_count(), ci.chunk_count());
    auto f = co_await open_file_dma(path, open_flags::ro);
    auto whole = co_await read_all(make_compressed_data_source(f, path, parsed, stored.size(), 0, content.size()));
    BOOST_CHECK(whole == content);
    auto src = make_compressed_data_source(f, path, parsed, stored.size(), 0, content.size());
    uint64_t at = 0;
    auto buf = co_await src.get();
    while (!buf.empty()) {
        BOOST_REQUIRE(std::string_view(buf.get(), buf.size()) == std::string_view(content).substr(at, buf.size()));
        at += buf.size();
        uint64_t n = rng() % 200;
        buf = co_await src.skip(n);
        at = std::min<uint64_t>(at + n, content.size());
    }
    co_await src.close();
    co_await f.close();
}
