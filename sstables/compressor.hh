// The four chunk compressors of Cassandra's sstables, in Cassandra's framing: LZ4 (a 4-byte little-endian
// uncompressed length, then an LZ4 block), Snappy (raw Snappy), Zstd (one zstd frame), Deflate (zlib stream).
#pragma once

#include "sstables/compression_info.hh"

#include <cstdint>
#include <string>
#include <string_view>

namespace reef::sstables {

// Decompresses one chunk's stored bytes (its checksum excluded) into out, which must come out exactly
// expected_length bytes long. A chunk that does not is malformed: the error names file and the chunk's offset.
void decompress_chunk(compression_algorithm a, std::string_view compressed, char* out, size_t expected_length,
                      const std::string& file, uint64_t chunk_offset);

// Compresses one chunk as Cassandra's compressor of that name writes it.
std::string compress_chunk(compression_algorithm a, std::string_view uncompressed);

} // namespace reef::sstables
