// The serialization header of an mx sstable (a part of Statistics.db): the types of the key, clustering and
// regular columns as written, and the encoding stats that timestamps, TTLs and deletion times are deltas from.
#pragma once

#include "schema/types.hh"
#include "sstables/version.hh"

#include <cstdint>
#include <string>
#include <vector>

namespace reef::sstables {

// Cassandra's EncodingStats: the minimums over the sstable. Data.db stores timestamps, deletion times and
// TTLs as unsigned vints relative to them. Statistics.db stores each minimum as an unsigned vint relative to
// an epoch (2015-09-22 00:00:00 UTC); the values here are the minimums themselves, computed with Cassandra's
// arithmetic: 64-bit wrapping for the timestamp, 32-bit wrapping for the deletion time and the TTL (mc..nb
// keep both in a Java int, so they are sign-extended int32 values here).
struct encoding_stats {
    int64_t min_timestamp = 0;
    int64_t min_local_deletion_time = 0;
    int64_t min_ttl = 0;
};

// EncodingStats' epochs: microseconds and seconds of 2015-09-22 00:00:00 UTC.
inline constexpr int64_t encoding_timestamp_epoch = 1442880000LL * 1000000;
inline constexpr int32_t encoding_deletion_time_epoch = 1442880000;

struct serialization_header_column {
    std::string name;  // the column name's bytes as stored (UTF-8)
    data_type type;    // multi-cell for complex columns (non-frozen collections and UDTs)

    bool is_complex() const { return type->is_multi_cell(); }
};

struct serialization_header {
    // The version of the sstable the header was read from (parse_statistics sets it): oa's Data.db stores the
    // partition deletion in its own form and decodes negative expiries differently. The writer ignores it.
    sstable_version version = sstable_version::me;
    encoding_stats stats;
    data_type partition_key_type;
    // As compared: reversed(T) for DESC columns.
    std::vector<data_type> clustering_types;
    // In Cassandra's Columns order, the order Data.db's column indices and subsets refer to: simple columns
    // before complex ones, each group by the name's unsigned bytes. (Writers write them in that order; the
    // parser sorts them in case one did not.)
    std::vector<serialization_header_column> static_columns;
    std::vector<serialization_header_column> regular_columns;
};

} // namespace reef::sstables
