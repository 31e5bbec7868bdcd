// Data.db as a stream of checked bytes: a compressed Data.db decompressed chunk by chunk, and an uncompressed one
// read chunk by chunk against CRC.db; every chunk's CRC32 is checked (always: Cassandra's crc_check_chance is
// ignored). Positions are in the uncompressed stream; skip() jumps to the chunk that holds the target. Stored
// bytes are read with read-ahead, but never past the chunk that holds the range's last byte.
#pragma once

#include "runtime/file.hh"
#include "runtime/input_stream.hh"
#include "sstables/checksum.hh"
#include "sstables/compression_info.hh"

#include <memory>
#include <string>

namespace reef::sstables {

// Bytes [pos, pos + len) of the uncompressed stream of compressed Data.db f (named file_name in errors) of
// compressed_size bytes; ci must have been parsed against that size. A chunk whose stored length reaches ci.max_compressed_length
// (na and later) is stored uncompressed. A checksum or decompression failure throws malformed_sstable_exception
// naming the file and the chunk's offset.
data_source make_compressed_data_source(file f, std::string file_name, std::shared_ptr<const compression_info> ci,
                                        uint64_t compressed_size, uint64_t pos, uint64_t len);

// Bytes [pos, pos + len) of uncompressed Data.db f of data_size bytes, each chunk checked against CRC.db.
data_source make_crc_checked_data_source(file f, std::string file_name, std::shared_ptr<const crc_component> crc,
                                         uint64_t data_size, uint64_t pos, uint64_t len);

} // namespace reef::sstables
