// `reef sstable dump-data`: Data.db as Cassandra's sstabledump prints it with -t (JsonTransformer: raw
// timestamps, the serialization header's types, positions in the uncompressed stream), byte for byte.
#pragma once

#include "runtime/future.hh"
#include "sstables/serialization_header.hh"
#include "sstables/version.hh"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace reef::tools {

// One sstable's dump (a JSON array and a newline) from its uncompressed Data.db bytes. now: the clock, in
// seconds, that the "expired" flags compare with.
std::string dump_data_json(const sstables::serialization_header& h, std::span<const std::byte> data,
                           const std::string& file, int64_t now);

// The verb: each sstable's dump in turn, Data.db streamed through its checked source, with the clock at now
// (seconds since the epoch), as `sstabledump` run at that instant (the peer's `dump --now`) prints it.
future<std::string> dump_data_json(std::vector<sstables::descriptor> sstables, int64_t now);
// The same with the wall clock.
future<std::string> dump_data_json(std::vector<sstables::descriptor> sstables);

} // namespace reef::tools
