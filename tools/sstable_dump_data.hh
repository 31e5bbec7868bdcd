// `reef sstable dump-data`: Data.db as Cassandra's sstabledump prints it with -t (JsonTransformer: raw
// timestamps, the serialization header's types, positions in the uncompressed stream), byte for byte.
#pragma once

#include "runtime/future.hh"
#include "schema/schema.hh"
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
// With a schema (`--schema`), each sstable's serialization header is first checked against it
// (check_schema_against_header): the dump's names and types are the header's, as sstabledump's are, and
// sstabledump's JSON names no key columns, so the schema changes nothing else in the output.
future<std::string> dump_data_json(std::vector<sstables::descriptor> sstables, int64_t now,
                                   schema_ptr schema = nullptr);
// The same with the wall clock.
future<std::string> dump_data_json(std::vector<sstables::descriptor> sstables);

} // namespace reef::tools
