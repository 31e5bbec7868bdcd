// commitlog: one shard's write-ahead log: add(table, bytes) appends an entry to the active segment and
// completes once it is written (periodic mode) or written and fdatasync'ed (batch mode, group commit).
// Promises: positions increase in add order and entries are acknowledged in that order; segments no table
// pins are recycled or deleted; over the total space, writes wait for the owner to flush and discard (commitlog/FORMAT.md).
#pragma once

#include "commitlog/commitlog_config.hh"
#include "commitlog/replay_position.hh"
#include "runtime/condition_variable.hh"
#include "runtime/future.hh"
#include "runtime/gate.hh"
#include "runtime/timer.hh"
#include "schema/bytes.hh"
#include "schema/schema.hh"

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace reef::commitlog {

class segment;

struct commitlog_stats {
    uint64_t entries = 0;          // acknowledged adds
    uint64_t bytes = 0;            // their data bytes (without framing)
    uint64_t writes = 0;           // write cycles (one dma_write each)
    uint64_t bytes_written = 0;    // bytes those writes covered, padding included
    uint64_t syncs = 0;            // fdatasyncs
    uint64_t segments_created = 0;
    uint64_t segments_deleted = 0;
    uint64_t segments_recycled = 0; // new segments made from recycled files
    uint64_t flush_requests = 0;   // request_flush calls
    uint64_t space_waits = 0;      // segment switches that waited for space
};

class commitlog {
public:
    // Opens the shard's log in cfg.commitlog_directory (created if missing): the next segment id is above every
    // segment of the shard already there (which are left for the replayer) and above the wall clock in
    // microseconds; the shard's recycled files left by a crash are reused (up to max_recycled_segments; the
    // others deleted). Throws std::invalid_argument naming a bad setting.
    static future<std::unique_ptr<commitlog>> create(commitlog_config cfg, unsigned shard);

    commitlog(const commitlog&) = delete;
    ~commitlog();

    // Appends (table, data) and returns its position once acknowledged (see the modes in FORMAT.md). Throws
    // std::invalid_argument when the entry is larger than half a segment, and the I/O error when the write fails.
    future<replay_position> add(const table_id& table, bytes_view data);
    // The same; on_position(pos) runs as the entry gets its position, before add() suspends again, so that a
    // caller knows which of its own phases the position belongs to (db/table.hh: a memtable's writes).
    future<replay_position> add(const table_id& table, bytes_view data,
                                std::function<void(replay_position)> on_position);

    // `table` flushed everything it wrote up to `up_to` (the last position of the flushed memtable): it no longer
    // pins the segments before, and deletes those no table pins any more.
    future<> discard_completed_segments(const table_id& table, replay_position up_to);

    // Writes and syncs what is pending, closes the active segment and stops the periodic sync. The segments a
    // table still pins stay on disk (for replay); the others, and the recycled files, are deleted. Later adds throw; adds waiting for space fail. Must complete before the commitlog is
    // destroyed (background writes and syncs refer to it).
    future<> close();

    // A position at or above every entry added so far and below every entry added later (a truncation's
    // position, db/README.md): the active segment's last entry, or the start of the next segment.
    replay_position last_position() const noexcept;

    const commitlog_stats& stats() const noexcept { return _stats; }
    const commitlog_config& config() const noexcept { return _cfg; }
    unsigned shard() const noexcept { return _shard; }
    // The segments this log holds (written, not yet deleted), oldest first.
    std::vector<std::string> segment_paths() const;
    // The recycled files waiting for reuse, oldest first.
    const std::deque<std::string>& recycled_paths() const noexcept { return _recycled; }
    // The tables that pin each segment, oldest first (for tests and the node's status).
    std::vector<std::vector<table_id>> dirty_tables() const;

private:
    commitlog(commitlog_config cfg, unsigned shard, uint64_t first_id);

    future<> switch_segment();
    future<> do_switch_segment();
    future<> delete_clean_segments();
    // A closed segment no table pins: recycled if the reserve has room within the total space, else deleted.
    future<> retire(std::shared_ptr<segment> s);
    future<std::shared_ptr<segment>> new_segment(uint64_t id);
    future<> periodic_sync();

    commitlog_config _cfg;
    unsigned _shard;
    uint64_t _next_id;
    uint64_t _segment_size;
    // Every segment not deleted yet, oldest first; the active one (if any) last.
    std::deque<std::shared_ptr<segment>> _segments;
    std::shared_ptr<segment> _active;
    std::deque<std::string> _recycled;
    bool _switching = false;
    bool _closed = false;
    bool _syncing = false;
    uint64_t _last_flush_request = 0;
    condition_variable _switched;
    condition_variable _space_freed;
    gate _gate;
    timer _sync_timer;
    commitlog_stats _stats;
};

} // namespace reef::commitlog
