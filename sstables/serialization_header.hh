// The serialization header of an mx sstable (a part of Statistics.db): the types of the key, clustering and
// regular columns as written, and the encoding stats that timestamps, TTLs and deletion times are deltas from.
#pragma once

#include "schema/types.hh"

#include <cstdint>
#include <string>
#include <vector>

namespace reef::sstables {

// Cassandra's EncodingStats: the minimums over the sstable. Data.db stores
// timestamps, deletion times and TTLs as unsigned vints relative to them.
struct encoding_stats {
    int64_t min_timestamp = 0;
    int64_t min_local_deletion_time = 0;
    int64_t min_ttl = 0;
};

struct serialization_header_column {
    std::string name;  // the column name's bytes as stored (UTF-8)
    data_type type;    // may be reversed() for clustering, multi-cell for complex columns
};

struct serialization_header {
    encoding_stats stats;
    data_type partition_key_type;
    std::vector<data_type> clustering_types;
    std::vector<serialization_header_column> static_columns;
    std::vector<serialization_header_column> regular_columns;
};

} // namespace reef::sstables
