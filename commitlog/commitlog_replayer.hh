// commitlog_replayer: reads a shard's commitlog segments in id order and hands every valid entry to a callback.
// Promises: a torn tail of the last segment ends it quietly; a corrupt entry elsewhere is skipped, counted and
// logged with its file and offset; a file of another format throws segment_format_error naming it.
#pragma once

#include "commitlog/replay_position.hh"
#include "runtime/future.hh"
#include "schema/bytes.hh"
#include "schema/schema.hh"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace reef::commitlog {

struct replay_entry {
    table_id table;
    replay_position position;
    // The entry's data as add() was given it; valid during the callback only.
    bytes_view data;
};

struct replay_stats {
    uint64_t segments = 0;
    uint64_t replayed = 0;   // entries the callback applied
    uint64_t skipped = 0;    // entries the callback skipped (already in an sstable)
    uint64_t corrupt = 0;    // corrupt entries (and unreadable tails of segments other than the last)
    uint64_t bytes = 0;      // data bytes of the valid entries
    uint64_t torn_tails = 0; // last segments that ended in a torn write
};

class commitlog_replayer {
public:
    // Returns true if it applied the entry, false if it skipped it. An exception stops the replay.
    using callback = std::function<future<bool>(const replay_entry&)>;

    // The segment files of `shard` in `directory`, in segment id order.
    static future<std::vector<std::string>> list_segments(std::string directory, unsigned shard);

    // Replays them all.
    static future<replay_stats> replay(std::string directory, unsigned shard, callback cb);
    // Replays these files (paths of segment files, in this order; the last one's torn tail is quiet).
    static future<replay_stats> replay_files(std::vector<std::string> paths, callback cb);
};

} // namespace reef::commitlog
