// replay_position: where a commitlog entry starts ({segment id, offset in the segment}), ordered as entries
// were appended on one shard. Promises: a later add() on the shard gets a greater position.
#pragma once

#include <compare>
#include <cstdint>
#include <string>

namespace reef::commitlog {

struct replay_position {
    uint64_t segment_id = 0;
    uint32_t offset = 0;

    auto operator<=>(const replay_position&) const noexcept = default;
    bool operator==(const replay_position&) const noexcept = default;
    std::string to_string() const { return "{" + std::to_string(segment_id) + ", " + std::to_string(offset) + "}"; }
};

// Cassandra's and ScyllaDB's other name for it.
using commitlog_position = replay_position;

} // namespace reef::commitlog
