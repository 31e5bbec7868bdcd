// atomic_cell: one value of a regular column (or of one collection element) with
// its write time, TTL and deletion, and Cassandra's reconciliation of two versions.
#pragma once

#include "mutation/tombstone.hh"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace reef {

// Cassandra's NO_TTL.
inline constexpr int32_t no_ttl = 0;

// A live cell, an expiring cell (live until its expiry), or a dead cell
// (a cell tombstone). Values are serialized bytes; reconciliation compares
// them as unsigned bytes, whatever the column's type, as Cassandra does.
class atomic_cell {
public:
    static atomic_cell make_live(write_time::timestamp_type ts, std::string value) {
        return atomic_cell(ts, std::move(value), no_ttl, no_deletion_time);
    }
    // Expires at `expiry` (seconds), having been written with `ttl` seconds.
    static atomic_cell make_expiring(write_time::timestamp_type ts, std::string value, int32_t ttl, deletion_time_type expiry) {
        return atomic_cell(ts, std::move(value), ttl, expiry);
    }
    static atomic_cell make_dead(write_time::timestamp_type ts, deletion_time_type deletion_time) {
        return atomic_cell(ts, {}, no_ttl, deletion_time);
    }

    write_time::timestamp_type timestamp() const noexcept { return _timestamp; }
    std::string_view value() const noexcept { return _value; }
    int32_t ttl() const noexcept { return _ttl; }
    // Expiry time of an expiring cell, deletion time of a dead one,
    // no_deletion_time for a live one.
    deletion_time_type local_deletion_time() const noexcept { return _local_deletion_time; }

    bool is_expiring() const noexcept { return _ttl != no_ttl; }
    bool is_dead_marker() const noexcept { return _ttl == no_ttl && _local_deletion_time != no_deletion_time; }
    // Live at `now` (seconds): never deleted, or expiring later than now.
    bool is_live(deletion_time_type now) const noexcept {
        return _local_deletion_time == no_deletion_time || (is_expiring() && now < _local_deletion_time);
    }

    // An expiring cell past its expiry is a tombstone from the time it was
    // written: deletion time = expiry - ttl (Cassandra's AbstractCell.purge).
    // Other cells come back unchanged.
    atomic_cell expired_to_dead(deletion_time_type now) const;

    bool operator==(const atomic_cell&) const = default;

private:
    atomic_cell(write_time::timestamp_type ts, std::string value, int32_t ttl, deletion_time_type ldt)
        : _timestamp(ts), _value(std::move(value)), _ttl(ttl), _local_deletion_time(ldt) {}

    write_time::timestamp_type _timestamp;
    std::string _value;
    int32_t _ttl;
    deletion_time_type _local_deletion_time;
};

// Which of two versions of the same cell wins (Cassandra's Cells.reconcile
// for regular cells); see mutation/README.md for the rules and their source.
// Returns true if `a` wins. Commutative: exactly one of (a, b), (b, a) wins
// unless the cells are equal.
bool reconcile_wins(const atomic_cell& a, const atomic_cell& b) noexcept;

// The winner of the two, copied.
inline const atomic_cell& reconcile(const atomic_cell& a, const atomic_cell& b) noexcept {
    return reconcile_wins(a, b) ? a : b;
}

} // namespace reef
