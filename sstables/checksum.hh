// CRC.db (per-chunk CRC32s of an uncompressed Data.db) and Digest.crc32 (the CRC32 of the whole Data.db file as
// stored, so of the compressed bytes for a compressed sstable, in decimal text), and verifying the digest.
#pragma once

#include "runtime/future.hh"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace reef::sstables {

struct crc_component {
    uint32_t chunk_size = 0;
    std::vector<uint32_t> checksums;  // one per chunk of Data.db, the last chunk possibly shorter
};

// Parses CRC.db; data_size is Data.db's size, which must be covered by exactly one checksum per chunk.
crc_component parse_crc_component(std::string_view bytes, const std::string& file, uint64_t data_size);
std::string serialize_crc_component(const crc_component& c);

// Parses Digest.crc32's text: an unsigned 32-bit decimal number (surrounding white space allowed).
uint32_t parse_digest(std::string_view text, const std::string& file);

// Reads all of data_file and checks its CRC32 against expected; throws malformed_sstable_exception naming the
// file (offset: its size) on a mismatch.
future<> verify_digest(std::string data_file, uint32_t expected);
// The CRC32 of a whole file, read in large sequential reads.
future<uint32_t> file_crc32(std::string path);

} // namespace reef::sstables
