// CompressionInfo.db parsing. See compression_info.hh and FORMAT.md.
#include "sstables/compression_info.hh"

#include "sstables/byte_reader.hh"
#include "utils/big_endian.hh"

#include <array>

namespace reef::sstables {

namespace {

constexpr std::array<std::string_view, 4> class_names{"LZ4Compressor", "SnappyCompressor", "ZstdCompressor",
                                                      "DeflateCompressor"};
constexpr std::string_view package_prefix = "org.apache.cassandra.io.compress.";

// Java's writeUTF: a 2-byte length, then (modified) UTF-8 bytes.
std::string read_utf(byte_reader& in, const char* what) {
    auto len = in.read_be<uint16_t>(what);
    return byte_reader::to_string(in.read_bytes(len, what));
}

void write_utf(std::string& out, std::string_view s) {
    char len[2];
    utils::write_be_unchecked<uint16_t>(len, uint16_t(s.size()));
    out.append(len, 2);
    out.append(s);
}

template <typename T>
void append_be(std::string& out, T v) {
    char b[sizeof(T)];
    utils::write_be_unchecked<T>(b, v);
    out.append(b, sizeof(T));
}

} // namespace

std::optional<compression_algorithm> parse_compressor_class(std::string_view name) noexcept {
    if (name.starts_with(package_prefix)) {
        name.remove_prefix(package_prefix.size());
    }
    for (size_t i = 0; i < class_names.size(); ++i) {
        if (class_names[i] == name) {
            return compression_algorithm(i);
        }
    }
    return std::nullopt;
}

std::string_view compressor_class_name(compression_algorithm a) noexcept { return class_names[size_t(a)]; }

compression_info parse_compression_info(std::string_view bytes, sstable_version v, const std::string& file,
                                        uint64_t compressed_data_size) {
    byte_reader in(file, byte_reader::to_bytes(bytes));
    compression_info ci;
    auto class_offset = in.offset();
    ci.compressor_class = read_utf(in, "the compressor class name");
    auto algo = parse_compressor_class(ci.compressor_class);
    if (!algo) {
        in.fail_at(class_offset, "expected LZ4Compressor, SnappyCompressor, ZstdCompressor or DeflateCompressor, found '" +
                                     ci.compressor_class + "'");
    }
    ci.algorithm = *algo;
    auto options_offset = in.offset();
    auto option_count = in.read_i32("the compressor option count");
    // Each option takes at least 4 bytes (two empty strings).
    if (option_count < 0 || uint64_t(option_count) * 4 > in.remaining()) {
        in.fail_at(options_offset, "expected an option count that fits the file, found " + std::to_string(option_count));
    }
    for (int32_t i = 0; i < option_count; ++i) {
        auto key = read_utf(in, "a compressor option name");
        auto value = read_utf(in, "a compressor option value");
        ci.options.emplace_back(std::move(key), std::move(value));
    }
    auto chunk_offset = in.offset();
    auto chunk_length = in.read_i32("the chunk length");
    if (chunk_length <= 0 || (chunk_length & (chunk_length - 1)) != 0) {
        in.fail_at(chunk_offset, "expected a chunk length that is a positive power of two, found " + std::to_string(chunk_length));
    }
    ci.chunk_length = uint32_t(chunk_length);
    if (has_max_compressed_length(v)) {
        auto mcl_offset = in.offset();
        auto mcl = in.read_i32("the max compressed length");
        if (mcl < 0) {
            in.fail_at(mcl_offset, "expected a non-negative max compressed length, found " + std::to_string(mcl));
        }
        ci.max_compressed_length = uint32_t(mcl);
    }
    auto length_offset = in.offset();
    auto data_length = in.read_i64("the uncompressed data length");
    if (data_length < 0) {
        in.fail_at(length_offset, "expected a non-negative data length, found " + std::to_string(data_length));
    }
    ci.data_length = uint64_t(data_length);
    auto count_offset = in.offset();
    auto chunk_count = in.read_i32("the chunk count");
    uint64_t expected_chunks = (ci.data_length + ci.chunk_length - 1) / ci.chunk_length;
    // ScyllaDB may end with one more chunk, holding nothing (seen in the corpus: scylla_counter_test_mc).
    if (chunk_count < 0 || uint64_t(chunk_count) < expected_chunks || uint64_t(chunk_count) > expected_chunks + 1) {
        in.fail_at(count_offset, "expected " + std::to_string(expected_chunks) + " chunks (or one more, empty) for " +
                                     std::to_string(ci.data_length) + " bytes in chunks of " +
                                     std::to_string(ci.chunk_length) + ", found " + std::to_string(chunk_count));
    }
    if (uint64_t(chunk_count) * 8 > in.remaining()) {
        in.fail("expected " + std::to_string(chunk_count) + " chunk offsets (" + std::to_string(uint64_t(chunk_count) * 8) +
                " bytes), but only " + std::to_string(in.remaining()) + " bytes remain");
    }
    ci.chunk_offsets.reserve(chunk_count);
    for (int32_t i = 0; i < chunk_count; ++i) {
        auto at = in.offset();
        auto off = in.read_be<uint64_t>("a chunk offset");
        // Each chunk holds at least one compressed byte and its 4-byte checksum, before the next chunk or the end.
        uint64_t floor = ci.chunk_offsets.empty() ? 0 : ci.chunk_offsets.back() + 5;
        if (off < floor || off > compressed_data_size || compressed_data_size - off < 5) {
            in.fail_at(at, "expected chunk " + std::to_string(i) + "'s offset at or after " + std::to_string(floor) +
                               " and at least 5 bytes before the end of Data.db (" +
                               std::to_string(compressed_data_size) + " bytes), found " + std::to_string(off));
        }
        ci.chunk_offsets.push_back(off);
    }
    if (!in.at_end()) {
        in.fail("expected the end of the file after the chunk offsets, found " + std::to_string(in.remaining()) + " more bytes");
    }
    return ci;
}

std::string serialize_compression_info(const compression_info& ci, sstable_version v) {
    std::string out;
    write_utf(out, ci.compressor_class);
    append_be<int32_t>(out, int32_t(ci.options.size()));
    for (auto& [k, val] : ci.options) {
        write_utf(out, k);
        write_utf(out, val);
    }
    append_be<int32_t>(out, int32_t(ci.chunk_length));
    if (has_max_compressed_length(v)) {
        append_be<int32_t>(out, int32_t(ci.max_compressed_length));
    }
    append_be<int64_t>(out, int64_t(ci.data_length));
    append_be<int32_t>(out, int32_t(ci.chunk_offsets.size()));
    for (auto off : ci.chunk_offsets) {
        append_be<uint64_t>(out, off);
    }
    return out;
}

} // namespace reef::sstables
