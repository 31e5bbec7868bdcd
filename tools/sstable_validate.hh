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

} // namespace reef::tools
