#include "transport/compression.hh"

#include "cql/cql_error.hh"
#include "utils/big_endian.hh"

#include <fmt/format.h>
#include <lz4.h>
#include <snappy.h>

#include <algorithm>
#include <cctype>
#include <stdexcept>

namespace reef::transport {

std::optional<compression_algorithm> parse_compression(std::string_view name) {
    std::string n(name);
    std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    if (n == "lz4") {
        return compression_algorithm::lz4;
    }
    if (n == "snappy") {
        return compression_algorithm::snappy;
    }
    return std::nullopt;
}

namespace {

[[noreturn]] void bad_body(std::string_view algo, const std::string& why) {
    throw cql::cql_error(cql::error_code::protocol_error, fmt::format("Invalid {} compressed body: {}", algo, why));
}

bytes lz4_compress(bytes_view in) {
    if (in.size() > size_t(LZ4_MAX_INPUT_SIZE)) {
        throw std::length_error("lz4: a body of " + std::to_string(in.size()) + " bytes is too large to compress");
    }
    int bound = LZ4_compressBound(int(in.size()));
    bytes out(4 + size_t(bound));
    utils::write_be_unchecked<uint32_t>(out.data(), uint32_t(in.size()));
    int n = LZ4_compress_default(reinterpret_cast<const char*>(in.data()), reinterpret_cast<char*>(out.data() + 4),
                                 int(in.size()), bound);
    if (n <= 0 && !in.empty()) {
        throw std::runtime_error("lz4: compression failed");
    }
    out.resize(4 + size_t(n));
    return out;
}

bytes lz4_decompress(bytes_view in, size_t max_size) {
    if (in.size() < 4) {
        bad_body("lz4", fmt::format("{} bytes, shorter than the 4-byte uncompressed length", in.size()));
    }
    uint32_t n = utils::read_be_unchecked<uint32_t>(in.data());
    if (n > max_size || n > uint32_t(INT32_MAX)) {
        bad_body("lz4", fmt::format("uncompressed length {} exceeds the maximum of {}", n, max_size));
    }
    bytes out(n);
    if (n == 0) {
        return out;
    }
    int r = LZ4_decompress_safe(reinterpret_cast<const char*>(in.data() + 4), reinterpret_cast<char*>(out.data()),
                                int(in.size() - 4), int(n));
    if (r < 0 || uint32_t(r) != n) {
        bad_body("lz4", fmt::format("the block does not decompress to the {} bytes its length says", n));
    }
    return out;
}

bytes snappy_compress(bytes_view in) {
    bytes out(snappy::MaxCompressedLength(in.size()));
    size_t n = 0;
    snappy::RawCompress(reinterpret_cast<const char*>(in.data()), in.size(), reinterpret_cast<char*>(out.data()), &n);
    out.resize(n);
    return out;
}

bytes snappy_decompress(bytes_view in, size_t max_size) {
    auto src = reinterpret_cast<const char*>(in.data());
    size_t n = 0;
    if (!snappy::GetUncompressedLength(src, in.size(), &n)) {
        bad_body("snappy", "no valid uncompressed length at offset 0");
    }
    if (n > max_size) {
        bad_body("snappy", fmt::format("uncompressed length {} exceeds the maximum of {}", n, max_size));
    }
    if (!snappy::IsValidCompressedBuffer(src, in.size())) {
        bad_body("snappy", "the compressed data is corrupt");
    }
    bytes out(n);
    if (!snappy::RawUncompress(src, in.size(), reinterpret_cast<char*>(out.data()))) {
        bad_body("snappy", "the compressed data is corrupt");
    }
    return out;
}

} // namespace

bytes compress_body(compression_algorithm algo, bytes_view in) {
    switch (algo) {
    case compression_algorithm::lz4: return lz4_compress(in);
    case compression_algorithm::snappy: return snappy_compress(in);
    case compression_algorithm::none: break;
    }
    return bytes(in.begin(), in.end());
}

bytes decompress_body(compression_algorithm algo, bytes_view in, size_t max_size) {
    switch (algo) {
    case compression_algorithm::lz4: return lz4_decompress(in, max_size);
    case compression_algorithm::snappy: return snappy_decompress(in, max_size);
    case compression_algorithm::none: break;
    }
    return bytes(in.begin(), in.end());
}

} // namespace reef::transport
