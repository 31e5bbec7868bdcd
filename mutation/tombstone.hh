// Write timestamps, deletion times and tombstones, with Cassandra's rules for
// which of two deletions wins (DeletionTime.supersedes).
#pragma once

#include <compare>
#include <cstdint>
#include <limits>

namespace reef {

// Write times live in their own namespace, ScyllaDB's api:: namespace under a name that leaves api/ free, so that
// reef::timestamp_type() can name the CQL type.
namespace write_time {
// Microseconds since the epoch, as given by the writer (USING TIMESTAMP).
using timestamp_type = int64_t;
// "No timestamp": older than any real write (Cassandra's Long.MIN_VALUE).
inline constexpr timestamp_type missing_timestamp = std::numeric_limits<int64_t>::min();
} // namespace write_time

// Seconds since the epoch on the node's clock: when something was deleted, or
// when an expiring cell expires. Cassandra's sstables store 32 bits; we keep
// 64 so that nothing wraps in 2038.
using deletion_time_type = int64_t;
// "Not deleted, never expires" (Cassandra's NO_DELETION_TIME).
inline constexpr deletion_time_type no_deletion_time = std::numeric_limits<int64_t>::max();
// The 32-bit NO_DELETION_TIME that mc..nb sstables store.
inline constexpr int32_t no_deletion_time_32 = std::numeric_limits<int32_t>::max();

// A deletion: everything written at or before `timestamp` that it covers is
// deleted. An empty tombstone (the default) deletes nothing.
struct tombstone {
    write_time::timestamp_type timestamp = write_time::missing_timestamp;
    deletion_time_type deletion_time = no_deletion_time;

    constexpr bool empty() const noexcept { return timestamp == write_time::missing_timestamp; }
    explicit constexpr operator bool() const noexcept { return !empty(); }

    // True if this deletion wins over o: a later timestamp, or on a tie the
    // later deletion time (Cassandra's DeletionTime.supersedes).
    constexpr bool supersedes(const tombstone& o) const noexcept {
        return timestamp > o.timestamp || (timestamp == o.timestamp && deletion_time > o.deletion_time);
    }
    // Keeps the winner of the two.
    constexpr void apply(const tombstone& o) noexcept {
        if (o.supersedes(*this)) {
            *this = o;
        }
    }
    // Whether data written at ts is deleted by this tombstone.
    constexpr bool deletes(write_time::timestamp_type ts) const noexcept { return !empty() && ts <= timestamp; }

    // The order of supersedes(): a < b when b wins over a.
    constexpr auto operator<=>(const tombstone&) const noexcept = default;
    constexpr bool operator==(const tombstone&) const noexcept = default;
};

} // namespace reef
