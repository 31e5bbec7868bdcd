// compression: the protocol's frame body compressors, LZ4 (a 4-byte big-endian uncompressed length, then an LZ4
// block) and Snappy (raw format), over Debian's liblz4 and libsnappy. Decompression never allocates more than the
// limit it is given and reports bad input as cql_error(protocol_error).
#pragma once

#include "schema/bytes.hh"

#include <optional>
#include <string_view>

namespace reef::transport {

enum class compression_algorithm { none, lz4, snappy };

// "lz4" or "snappy" (as STARTUP names them, case-insensitive); std::nullopt for any other name.
std::optional<compression_algorithm> parse_compression(std::string_view name);

bytes compress_body(compression_algorithm algo, bytes_view in);
// Throws cql_error(protocol_error) when `in` does not decompress, or would exceed max_size bytes.
bytes decompress_body(compression_algorithm algo, bytes_view in, size_t max_size);

} // namespace reef::transport
