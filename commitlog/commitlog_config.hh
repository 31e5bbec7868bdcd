// commitlog_config: a shard's commitlog settings, named as the node's yaml keys name them.
// Promises: the defaults are Cassandra's (periodic sync every 10 s, 32 MiB segments, 8 GiB in all).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "commitlog/replay_position.hh"
#include "schema/schema.hh"

namespace reef::commitlog {

enum class sync_mode { periodic, batch };

// "periodic" or "batch" (the yaml's commitlog_sync); throws std::invalid_argument naming the value.
sync_mode parse_sync_mode(std::string_view s);

struct commitlog_config {
    std::string commitlog_directory;
    sync_mode commitlog_sync = sync_mode::periodic;
    uint64_t commitlog_sync_period_in_ms = 10000;
    uint64_t commitlog_segment_size_in_mb = 32;
    uint64_t commitlog_total_space_in_mb = 8192;

    // Fully discarded segments kept (renamed) for reuse as new segments instead of being deleted, as ScyllaDB
    // keeps a reserve: writing over blocks already written needs no extent conversion at fdatasync (FORMAT.md,
    // "Recycled segments"). Within commitlog_total_space_in_mb; 0: every discarded segment is deleted.
    uint64_t max_recycled_segments = 4;

    // Tests and benchmarks: a segment size in bytes, overriding commitlog_segment_size_in_mb when not 0.
    uint64_t segment_size_in_bytes = 0;
    // The same for commitlog_total_space_in_mb.
    uint64_t total_space_in_bytes = 0;
    // Benchmarks: periodic mode's writes with O_DIRECT, as batch mode's, instead of through the page cache (the
    // baseline of perf-commitlog's busy-disk run).
    bool periodic_direct_writes = false;
    // Called when the log is over commitlog_total_space_in_mb: flush these tables (their data up to
    // `position` at least) and then call discard_completed_segments. May be empty (no owner to ask: writes
    // then wait until someone discards).
    std::function<void(std::vector<table_id> tables, replay_position position)> request_flush;

    uint64_t segment_size() const noexcept {
        return segment_size_in_bytes ? segment_size_in_bytes : commitlog_segment_size_in_mb << 20;
    }
    uint64_t total_space() const noexcept {
        return total_space_in_bytes ? total_space_in_bytes : commitlog_total_space_in_mb << 20;
    }
};

} // namespace reef::commitlog
