// CompressionInfo.db: how a compressed Data.db is cut into chunks: the compressor and its options, the chunk
// length, the uncompressed length and each chunk's offset in the compressed file. Parsing checks every count and
// offset against the file's size, so a corrupt file is reported, never trusted.
#pragma once

#include "sstables/version.hh"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace reef::sstables {

enum class compression_algorithm : uint8_t { lz4, snappy, zstd, deflate };

// "LZ4Compressor" (or its full class name) -> lz4; nothing for an unknown class.
std::optional<compression_algorithm> parse_compressor_class(std::string_view class_name) noexcept;
// The short class name Cassandra writes ("LZ4Compressor").
std::string_view compressor_class_name(compression_algorithm a) noexcept;

struct compression_info {
    std::string compressor_class;  // as stored, e.g. "LZ4Compressor"
    compression_algorithm algorithm;
    std::vector<std::pair<std::string, std::string>> options;
    uint32_t chunk_length = 0;
    // na and later: a chunk whose stored length is at least this is stored uncompressed.
    uint32_t max_compressed_length = 0x7fffffff;
    uint64_t data_length = 0;             // uncompressed Data.db length
    std::vector<uint64_t> chunk_offsets;  // in the compressed Data.db

    uint64_t chunk_count() const noexcept { return chunk_offsets.size(); }
    // Uncompressed bytes chunk i holds (chunk_length except perhaps for the last).
    uint64_t uncompressed_chunk_length(uint64_t i) const noexcept {
        uint64_t start = i * uint64_t(chunk_length);
        return start >= data_length ? 0 : std::min<uint64_t>(chunk_length, data_length - start);
    }
};

// True for versions whose CompressionInfo.db stores max_compressed_length (na and later).
inline bool has_max_compressed_length(sstable_version v) noexcept { return v >= sstable_version::na; }

// Parses CompressionInfo.db; file names it in errors. compressed_data_size is the size of Data.db: chunk offsets
// must increase and leave at least a 4-byte checksum for each chunk within it, and the chunk count must match
// data_length / chunk_length (ScyllaDB may add one empty chunk).
compression_info parse_compression_info(std::string_view bytes, sstable_version v, const std::string& file,
                                        uint64_t compressed_data_size);

// Serializes ci as version v stores it (for tests and the writer).
std::string serialize_compression_info(const compression_info& ci, sstable_version v);

} // namespace reef::sstables
