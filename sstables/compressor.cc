// Chunk compression and decompression. See compressor.hh and FORMAT.md.
#include "sstables/compressor.hh"

#include "sstables/exceptions.hh"

#include <lz4.h>
#include <snappy-c.h>
#include <zlib.h>
#include <zstd.h>

#include <limits>

namespace reef::sstables {

namespace {

[[noreturn]] void fail(const std::string& file, uint64_t offset, compression_algorithm a, const std::string& what) {
    throw malformed_sstable_exception(file, offset,
                                      "expected a " + std::string(compressor_class_name(a)) + " chunk: " + what);
}

} // namespace

void decompress_chunk(compression_algorithm a, std::string_view in, char* out, size_t expected,
                      const std::string& file, uint64_t chunk_offset) {
    auto want = std::to_string(expected);
    switch (a) {
    case compression_algorithm::lz4: {
        if (in.size() < 4) {
            fail(file, chunk_offset, a, "a 4-byte length prefix, found " + std::to_string(in.size()) + " bytes");
        }
        auto u = [&](int i) { return uint32_t(uint8_t(in[i])); };
        uint32_t declared = u(0) | u(1) << 8 | u(2) << 16 | u(3) << 24;
        if (declared != expected) {
            fail(file, chunk_offset, a, "a length prefix of " + want + ", found " + std::to_string(declared));
        }
        if (in.size() - 4 > size_t(std::numeric_limits<int>::max()) || expected > size_t(std::numeric_limits<int>::max())) {
            fail(file, chunk_offset, a, "a chunk under 2 GiB");
        }
        int n = LZ4_decompress_safe(in.data() + 4, out, int(in.size() - 4), int(expected));
        if (n < 0 || size_t(n) != expected) {
            fail(file, chunk_offset, a, want + " bytes, LZ4 " + (n < 0 ? "found corrupt data" : "gave " + std::to_string(n)));
        }
        return;
    }
    case compression_algorithm::snappy: {
        size_t len = 0;
        if (snappy_uncompressed_length(in.data(), in.size(), &len) != SNAPPY_OK || len != expected) {
            fail(file, chunk_offset, a, want + " bytes, found a header saying " + std::to_string(len));
        }
        size_t out_len = expected;
        if (snappy_uncompress(in.data(), in.size(), out, &out_len) != SNAPPY_OK || out_len != expected) {
            fail(file, chunk_offset, a, want + " bytes, Snappy found corrupt data");
        }
        return;
    }
    case compression_algorithm::zstd: {
        size_t n = ZSTD_decompress(out, expected, in.data(), in.size());
        if (ZSTD_isError(n) || n != expected) {
            fail(file, chunk_offset, a,
                 want + " bytes, zstd " + (ZSTD_isError(n) ? std::string(ZSTD_getErrorName(n)) : "gave " + std::to_string(n)));
        }
        return;
    }
    case compression_algorithm::deflate: {
        z_stream zs{};
        if (inflateInit(&zs) != Z_OK) {
            throw std::bad_alloc();
        }
        zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
        zs.avail_in = uInt(in.size());
        zs.next_out = reinterpret_cast<Bytef*>(out);
        zs.avail_out = uInt(expected);
        int rc = inflate(&zs, Z_FINISH);
        size_t produced = expected - zs.avail_out;
        inflateEnd(&zs);
        if (rc != Z_STREAM_END || produced != expected) {
            fail(file, chunk_offset, a,
                 want + " bytes, zlib " + (rc == Z_STREAM_END ? "gave " + std::to_string(produced) : "found corrupt or short data"));
        }
        return;
    }
    }
    fail(file, chunk_offset, a, "a known compressor");
}

std::string compress_chunk(compression_algorithm a, std::string_view in) {
    std::string out;
    switch (a) {
    case compression_algorithm::lz4: {
        out.resize(4 + size_t(LZ4_compressBound(int(in.size()))));
        uint32_t len = uint32_t(in.size());
        for (int i = 0; i < 4; ++i) {
            out[i] = char(len >> (8 * i));
        }
        int n = LZ4_compress_default(in.data(), out.data() + 4, int(in.size()), int(out.size() - 4));
        out.resize(4 + size_t(n));
        return out;
    }
    case compression_algorithm::snappy: {
        size_t n = snappy_max_compressed_length(in.size());
        out.resize(n);
        snappy_compress(in.data(), in.size(), out.data(), &n);
        out.resize(n);
        return out;
    }
    case compression_algorithm::zstd: {
        out.resize(ZSTD_compressBound(in.size()));
        size_t n = ZSTD_compress(out.data(), out.size(), in.data(), in.size(), 3);
        out.resize(n);
        return out;
    }
    case compression_algorithm::deflate: {
        uLongf n = compressBound(uLong(in.size()));
        out.resize(n);
        compress(reinterpret_cast<Bytef*>(out.data()), &n, reinterpret_cast<const Bytef*>(in.data()), uLong(in.size()));
        out.resize(n);
        return out;
    }
    }
    return out;
}

} // namespace reef::sstables
