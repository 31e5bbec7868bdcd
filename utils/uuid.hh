// Version 1 (time-based) and version 4 (random) UUIDs as 16 big-endian bytes, RFC 4122 layout, as Cassandra's
// TimeUUIDType and UUIDType compare them; time UUIDs from one process are unique and increase with the clock.
#pragma once

#include <array>
#include <cstdint>
#include <string>

namespace reef::utils {

using uuid_bytes = std::array<uint8_t, 16>;

// 100 ns intervals between the Gregorian epoch (1582-10-15) and the Unix epoch.
inline constexpr uint64_t uuid_epoch_offset_100ns = 0x01b21dd213814000ULL;

// A version 1 UUID at `unix_100ns` (100 ns since 1970): the 60-bit timestamp counted from 1582-10-15, a 14-bit
// clock sequence and a 48-bit node, variant 10.
uuid_bytes make_time_uuid_at(uint64_t unix_100ns, uint16_t clock_seq, uint64_t node) noexcept;

// A version 1 UUID for now: the process' clock sequence and node are random (the node with its multicast bit
// set, RFC 4122 4.5: not a real MAC address); a call in the same 100 ns tick as the last, or after the clock went
// back, takes the last timestamp + 1, so the UUIDs of one process never repeat and never go backwards.
// Thread-safe (every shard calls it).
uuid_bytes make_time_uuid();

// A version 4 UUID: 122 random bits.
uuid_bytes make_random_uuid();

// The time UUID's timestamp in 100 ns since 1970 (the inverse of make_time_uuid_at).
uint64_t time_uuid_unix_100ns(const uuid_bytes& u) noexcept;
inline unsigned uuid_version(const uuid_bytes& u) noexcept { return u[6] >> 4; }

// "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", lower case; with_dashes = false: the 32 hex digits alone (the
// table directory suffix).
std::string to_string(const uuid_bytes& u, bool with_dashes = true);

} // namespace reef::utils
