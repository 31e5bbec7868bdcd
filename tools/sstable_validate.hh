// The JSON of `reef sstable validate-checksums`: per sstable, whether Data.db has per-chunk checksums
// (CompressionInfo.db or CRC.db) and a digest, and whether every chunk and the whole file match them; the
// first mismatch is named (file, offset, what was expected).
#pragma once

#include "runtime/future.hh"
#include "sstables/version.hh"

#include <string>
#include <vector>

namespace reef::tools {

future<std::string> validate_checksums_json(std::vector<sstables::descriptor> sstables);

// `reef sstable validate`: per sstable, every component loads, every Data.db chunk checksum and the digest
// match, and the full-scan reader's stream keeps fragment_stream_validator's rules (partitions in strictly
// increasing (token, key) order, rows and markers in clustering order within each). Throws
// malformed_sstable_exception naming the file and the first problem; otherwise returns a one-line summary.
future<std::string> validate_sstables(std::vector<sstables::descriptor> sstables);

} // namespace reef::tools
