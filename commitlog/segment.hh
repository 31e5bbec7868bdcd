// segment: one open commitlog segment file being appended to: entries buffered into write cycles (one aligned
// dma_write each, padded to the block, FORMAT.md), acknowledged in order, and the tables it holds data of.
// Promises: a block holding acknowledged entries is never written again; waiters learn a failed write's error.
#pragma once

#include "commitlog/commitlog_config.hh"
#include "commitlog/replay_position.hh"
#include "commitlog/segment_format.hh"
#include "runtime/condition_variable.hh"
#include "runtime/file.hh"
#include "runtime/future.hh"
#include "runtime/gate.hh"
#include "schema/bytes.hh"
#include "schema/schema.hh"

#include <cstdint>
#include <exception>
#include <map>
#include <string>

namespace reef::commitlog {

struct commitlog_stats;

class segment {
public:
    // Creates the file (O_EXCL); its header goes out with the first cycle. Written through the page cache in
    // periodic mode unless direct_in_periodic, with O_DIRECT in batch mode.
    static future<std::shared_ptr<segment>> create(std::string path, unsigned shard, uint64_t id, uint64_t size_limit,
                                                   sync_mode mode, bool direct_in_periodic, commitlog_stats& stats);
    // Reuses a recycled file (FORMAT.md, "Recycled segments"): its first block becomes the new header (and zeros),
    // synced, then the file is renamed to `path` and the directory synced, so that a crash leaves either a
    // recycled file or a segment whose header names its new id. Entries start at the second block.
    static future<std::shared_ptr<segment>> reuse(std::string recycled_path, std::string path, unsigned shard,
                                                  uint64_t id, uint64_t size_limit, sync_mode mode,
                                                  bool direct_in_periodic, commitlog_stats& stats);

    uint64_t id() const noexcept { return _id; }
    const std::string& path() const noexcept { return _path; }
    // Whether an entry of n bytes (framing included) fits before the size limit, leaving room for the end marker.
    bool fits(size_t n) const noexcept {
        return !_closing && next_offset() + n + marker_size <= _size_limit;
    }
    // Buffers one entry at the next offset and marks the table dirty; returns its position. Check fits() first.
    replay_position append(const table_id& table, bytes_view data);
    // Waits until the entry at `pos` is acknowledged (its cycle written, and synced in batch mode); starts a
    // cycle when none runs. Rethrows the error of a failed write.
    future<> wait_acknowledged(replay_position pos);
    // fdatasync of what was written and not synced yet (the periodic sync).
    future<> sync();
    // Writes what is pending and the end marker, syncs, closes the file. Appends are refused from the start.
    future<> close();
    bool closed() const noexcept { return _closed; }

    // The tables with data here: the offset of each one's last entry.
    const std::map<table_id, uint32_t>& dirty() const noexcept { return _dirty; }
    // Forgets `table` if its last entry here is at or before `up_to`.
    void mark_clean(const table_id& table, replay_position up_to);
    // The position of the last entry here (for request_flush).
    replay_position last_position() const noexcept { return {_id, _last_offset}; }

private:
    static constexpr size_t marker_size = entry_overhead + table_id_size;  // entry_size(0)
    segment(std::string path, file f, uint64_t id, uint64_t size_limit, sync_mode mode, commitlog_stats& stats);
    uint64_t next_offset() const noexcept { return _pending_start + _pending.size(); }
    future<> run_cycles();

    std::string _path;
    file _file;
    uint64_t _id;
    uint64_t _size_limit;
    sync_mode _mode;
    commitlog_stats& _stats;
    size_t _block;
    // The bytes appended since the running cycle took its share; they go to the file at _pending_start (a block
    // boundary).
    bytes _pending;
    uint64_t _pending_start = 0;
    // Entries that end at or before _acknowledged are acknowledged.
    uint64_t _acknowledged = 0;
    uint64_t _synced = 0;
    uint32_t _last_offset = 0;
    size_t _pending_entries = 0;
    size_t _pending_data = 0;
    bool _cycle_running = false;
    bool _closing = false;
    bool _closed = false;
    std::exception_ptr _error;
    condition_variable _cycle_done;
    gate _syncs;
    std::map<table_id, uint32_t> _dirty;
};

} // namespace reef::commitlog
