// The Data.db side of the mx writer: a partition header, rows (static and clustering) and range tombstone
// markers serialized as Cassandra's UnfilteredSerializer writes them, with timestamps, TTLs and deletion times
// as deltas from the serialization header's encoding stats (Java's wrapping arithmetic, so any stats are valid).
#pragma once

#include "mutation/fragment.hh"
#include "schema/schema.hh"
#include "sstables/clustering_bound.hh"
#include "sstables/serialization_header.hh"

#include <cstdint>
#include <string>
#include <vector>

namespace reef::sstables {

// The encoding stats Cassandra's offline writer uses when it knows nothing better: the epochs themselves.
inline encoding_stats epoch_encoding_stats() {
    return encoding_stats{encoding_timestamp_epoch, encoding_deletion_time_epoch, 0};
}

// The serialization header a writer of s records (columns in s's order, which is Cassandra's Columns order).
serialization_header make_serialization_header(const schema& s, encoding_stats stats);

// A tombstone's 32-bit deletion time as mc..nb store it (the low 32 bits; INT32_MAX for "none").
inline int32_t deletion_time_32(deletion_time_type t) noexcept {
    return t == no_deletion_time ? no_deletion_time_32 : int32_t(uint32_t(uint64_t(t)));
}

class row_serializer {
public:
    row_serializer(const schema& s, encoding_stats stats);

    // key length, key, partition deletion (not delta-encoded).
    void write_partition_header(std::string& out, std::string_view key, tombstone t) const;
    // A static row (Cassandra writes one, possibly empty, in every partition of a table with static columns).
    void write_static_row(std::string& out, const row& cells) const;
    // previous_size: the previous unfiltered's whole size (for the first, the distance from the partition start).
    void write_row(std::string& out, const clustering_row& r, uint64_t previous_size) const;
    // A bound (end, start) or a boundary (both: end is the closed deletion, start the opened one).
    void write_marker(std::string& out, const clustering_bound& b, tombstone end, tombstone start,
                      uint64_t previous_size) const;
    static void write_end_of_partition(std::string& out) { out.push_back(char(0x01)); }

    const std::vector<data_type>& clustering_types() const noexcept { return _ck_types; }

private:
    void write_timestamp(std::string& out, write_time::timestamp_type ts) const;
    void write_deletion_time32(std::string& out, int32_t ldt) const;
    void write_ttl(std::string& out, int32_t ttl) const;
    void write_deletion(std::string& out, tombstone t) const;
    void write_cell(std::string& out, const atomic_cell& c, const column_definition& col, const row_marker& rm,
                    const bytes* path) const;
    void write_row_body(std::string& out, bool is_static, const row_marker& rm, tombstone deletion, const row& cells,
                        uint8_t& flags) const;

    const schema& _s;
    encoding_stats _stats;
    std::vector<data_type> _ck_types;
};

} // namespace reef::sstables
