// `reef sstable write`: sstables from JSON in the structure dump-data prints (Cassandra's sstabledump -t):
// partitions with their key and deletion, static and clustering rows with liveness, deletion and cells (simple,
// complex with cell paths, complex deletions, counters), range tombstone bounds and boundaries. Promises: the
// dump of what it writes is the input's dump (see FORMAT.md's "JSON input" for the few forms that sstabledump
// prints alike and the one they are read back as); bad input is an error naming the JSON path and offset.
#pragma once

#include "mutation/fragment.hh"
#include "runtime/future.hh"
#include "schema/schema.hh"
#include "sstables/mx_fragments.hh"
#include "utils/json_reader.hh"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace reef::tools {

// The fragment stream of one dumped sstable (a JSON array of partitions, as dump-data prints it), for table s.
// Partitions must come in the ring order of `token` (the writer's partitioner; empty: Murmur3), rows and range
// tombstone markers in clustering order, each range tombstone closed by the deletion it opened with. Throws
// std::invalid_argument "$[2].rows[5].cells[1].value (offset 4711): why".
std::vector<mutation_fragment> fragments_from_json(const schema_ptr& s, const utils::json_value& sstable,
                                                   const sstables::mx_fragment_consumer::token_function& token = {});

// The counter context whose first 8 bytes are `value`, the only part of a counter cell that dump-data prints
// (sstabledump reads them as a long): the header count and elements those bytes hold, as few shards as they
// name, ids that begin with the rest of the bytes, clocks and counts 0. nullopt if no valid context begins so.
std::optional<std::string> counter_context_with_prefix(int64_t value);

struct write_json_options {
    std::string output_dir;
    // Statistics.db's partitioner, and the ring order the input must follow.
    std::string partitioner = "org.apache.cassandra.dht.Murmur3Partitioner";
};

// Writes each JSON document of the text (dump-data prints one array per sstable) as a `me` sstable in
// opts.output_dir, numbered after the generations already there, with the table's compression and bloom
// filter options and the data's own encoding stats. Returns one line per sstable (its Data.db path).
future<std::string> write_sstables_from_json(schema_ptr s, std::string json_text, write_json_options opts);

// The next free numeric generation in dir: 1 + the largest numeric generation of any sstable file there.
uint64_t next_generation(const std::string& dir);

} // namespace reef::tools
