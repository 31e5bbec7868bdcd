// mx_consumer: what the Data.db parser (mx_parser.hh) reports, atom by atom: partition starts and ends, rows
// with their liveness, deletion and cells, range tombstone markers, each with its offset in the uncompressed
// stream. Views passed to a callback are valid during that call only.
#pragma once

#include "mutation/row.hh"
#include "mutation/tombstone.hh"
#include "schema/bytes.hh"

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace reef::sstables {

// A clustering value as stored: present (possibly empty), or null (only in the prefixes of compact tables).
using clustering_values = std::vector<std::optional<bytes>>;

// ClusteringPrefix.Kind, with Cassandra's ordinals (the byte stored before a marker's bound).
enum class mx_bound_kind : uint8_t {
    excl_end = 0,
    incl_start = 1,
    excl_end_incl_start = 2,  // a boundary: closes exclusively, opens inclusively at the same prefix
    incl_end_excl_start = 5,  // a boundary: closes inclusively, opens exclusively
    incl_end = 6,
    excl_start = 7,
};
inline bool is_boundary(mx_bound_kind k) noexcept {
    return k == mx_bound_kind::excl_end_incl_start || k == mx_bound_kind::incl_end_excl_start;
}

struct mx_row {
    bool is_static = false;
    const clustering_values* clustering = nullptr;  // empty for the static row
    // Liveness info: the row marker (timestamp, TTL, expiry), empty when the row has none.
    row_marker marker;
    tombstone deletion;
    bool shadowable_deletion = false;
    uint64_t position = 0;       // the offset of the row's flags byte
    uint64_t previous_size = 0;  // the stored size of the previous unfiltered (0 for the first one)
    uint64_t end = 0;            // the offset just past the row
};

struct mx_cell {
    column_id column = 0;  // index in the header's static or regular columns (Cassandra's Columns order)
    bytes_view path;       // complex columns: the cell path (list timeuuid, set element, map key, UDT field)
    write_time::timestamp_type timestamp = write_time::missing_timestamp;
    int32_t ttl = 0;
    // Expiry of an expiring cell, deletion time of a tombstone, no_deletion_time otherwise.
    deletion_time_type local_deletion_time = no_deletion_time;
    bool is_deleted = false;
    bool is_expiring = false;
    bytes_view value;  // counters: the raw counter context
};

struct mx_marker {
    mx_bound_kind kind = mx_bound_kind::incl_start;
    const clustering_values* clustering = nullptr;  // a prefix (possibly empty: before or after all rows)
    // A bound's tombstone; for a boundary, the one it closes.
    tombstone tomb;
    // A boundary's tombstone that starts there.
    tombstone boundary_start_tomb;
    uint64_t position = 0;
    uint64_t previous_size = 0;
    uint64_t end = 0;
};

class mx_consumer {
public:
    // no: stop after this call; the parser yields "consumer full" and continues where it stopped when resumed.
    enum class proceed { yes, no };
    // skip: the row's cells are skipped unread (consume_row_end follows).
    enum class row_action { read, skip };

    virtual ~mx_consumer() = default;
    // position: the offset of the partition's key length; header_end: just past its deletion time.
    virtual proceed consume_partition_start(bytes_view key, tombstone deletion, uint64_t position, uint64_t header_end) = 0;
    // A clustering row's key is read (position: the offset of its flags byte): skip passes over the whole row by
    // its size, unread, with no consume_row_start or consume_row_end for it. Never asked for the static row or a
    // range tombstone marker, which are always reported.
    virtual row_action consume_row_key(const clustering_values&, uint64_t /*position*/) { return row_action::read; }
    // The row's header (clustering, liveness, deletion) is read; its cells follow.
    virtual row_action consume_row_start(const mx_row& row) = 0;
    virtual void consume_cell(const mx_cell& cell) = 0;
    // A complex column: its tombstone (empty if none), then its cells, then consume_complex_end.
    virtual void consume_complex_start(column_id column, tombstone tomb) = 0;
    virtual void consume_complex_end() = 0;
    virtual proceed consume_row_end(const mx_row& row) = 0;
    virtual proceed consume_range_tombstone(const mx_marker& marker) = 0;
    // end: the offset just past the end-of-partition flag.
    virtual proceed consume_partition_end(uint64_t end) = 0;
};

} // namespace reef::sstables
