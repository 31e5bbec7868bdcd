// deletion_time: Cassandra's DeletionTime as the index and data files store it (a partition's or a range's
// deletion), in the two encodings of the mx family: mc..nb's fixed 12 bytes and oa's live-flag form.
#pragma once

#include "mutation/tombstone.hh"
#include "sstables/byte_reader.hh"
#include "sstables/version.hh"

#include <cstdint>
#include <optional>
#include <string>
#include <fmt/format.h>

namespace reef::sstables {

// Cassandra 5.0's INVALID_DELETION_TIME: what an impossible deletion time or expiry reads as (never purged, never
// expiring on its own).
inline constexpr deletion_time_type invalid_deletion_time = 4294967294LL;

// A tombstone's deletion time as read from any stored form (index DeletionTime, Data.db delta), as Cassandra 5.0 reads
// it: seconds 0..4294967294 (unsigned 32-bit, up to 2106) stay; anything else (negative, 0xFFFFFFFF) is impossible
// and reads as invalid_deletion_time. Inline: the parser calls it for every row and marker deletion.
constexpr deletion_time_type tombstone_deletion_time(int64_t ldt) noexcept {
    return ldt < 0 || ldt > invalid_deletion_time ? invalid_deletion_time : deletion_time_type(ldt);
}

struct deletion_time {
    // Live (nothing deleted) is Cassandra's (Long.MIN_VALUE, Integer.MAX_VALUE).
    int64_t marked_for_delete_at = write_time::missing_timestamp;
    // Seconds; mc..nb store a signed 32-bit value (Integer.MAX_VALUE when live), oa an unsigned one.
    int64_t local_deletion_time = no_deletion_time_32;

    bool live() const noexcept { return marked_for_delete_at == write_time::missing_timestamp; }
    // The tombstone this deletion is: empty when live, else with its deletion time normalized
    // (tombstone_deletion_time). Range tombstones (a promoted index block's end-open marker) read this way.
    tombstone to_tombstone() const noexcept {
        return live() ? tombstone{} : tombstone{marked_for_delete_at, tombstone_deletion_time(local_deletion_time)};
    }
    bool operator==(const deletion_time&) const = default;
};

// oa writes (and its readers accept) the single byte 0x80 for a live deletion time.
inline constexpr uint8_t oa_live_deletion_flag = 0x80;

// True for versions that store the oa form (Cassandra's hasUIntDeletionTime).
inline bool has_uint_deletion_time(sstable_version v) noexcept { return v >= sstable_version::oa; }

// The partition deletion of a partition header (Data.db's, or the promoted index's copy), as Data.db's parser reads
// it. oa: to_tombstone(). mc..nb: live only as (Long.MIN_VALUE, Integer.MAX_VALUE) together, else the time's 32 bits
// read unsigned, whole (not normalized); nothing when only one of the two says "live" (a corrupt header).
inline std::optional<tombstone> partition_tombstone(const deletion_time& d, sstable_version v) noexcept {
    if (has_uint_deletion_time(v)) {
        return d.to_tombstone();
    }
    bool no_timestamp = d.marked_for_delete_at == write_time::missing_timestamp;
    bool no_time = d.local_deletion_time == no_deletion_time_32;
    if (no_timestamp || no_time) {
        return no_timestamp && no_time ? std::optional(tombstone{}) : std::nullopt;
    }
    return tombstone{d.marked_for_delete_at, deletion_time_type(uint32_t(int32_t(d.local_deletion_time)))};
}

// Reads one deletion time in the form version v stores.
inline deletion_time read_deletion_time(byte_reader& in, sstable_version v) {
    deletion_time d;
    if (!has_uint_deletion_time(v)) {
        int32_t ldt = in.read_i32("deletion time: local deletion time");
        d.marked_for_delete_at = in.read_i64("deletion time: marked-for-delete-at");
        d.local_deletion_time = ldt;
        return d;
    }
    auto start = in.offset();
    uint8_t first = in.peek_u8("deletion time");
    if (first & oa_live_deletion_flag) {
        in.read_u8("deletion time flags");
        if (first != oa_live_deletion_flag) {
            in.fail_at(start, "expected deletion time flags 0x80 (live) or a timestamp with its sign bit clear, found " +
                                  fmt::format("{:#04x}", first));
        }
        return d;
    }
    d.marked_for_delete_at = in.read_i64("deletion time: marked-for-delete-at");
    d.local_deletion_time = in.read_be<uint32_t>("deletion time: local deletion time");
    return d;
}

// Appends d in the form version v stores.
inline void write_deletion_time(std::string& out, const deletion_time& d, sstable_version v) {
    char b[12];
    if (!has_uint_deletion_time(v)) {
        utils::write_be_unchecked<int32_t>(b, int32_t(d.local_deletion_time));
        utils::write_be_unchecked<int64_t>(b + 4, d.marked_for_delete_at);
        out.append(b, 12);
        return;
    }
    if (d.live()) {
        out.push_back(char(oa_live_deletion_flag));
        return;
    }
    utils::write_be_unchecked<int64_t>(b, d.marked_for_delete_at);
    utils::write_be_unchecked<uint32_t>(b + 8, uint32_t(d.local_deletion_time));
    out.append(b, 12);
}

// Bytes a deletion time takes in version v.
inline size_t serialized_size(const deletion_time& d, sstable_version v) noexcept {
    return has_uint_deletion_time(v) && d.live() ? 1 : 12;
}

} // namespace reef::sstables
