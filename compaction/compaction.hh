// compaction: one compaction run: its inputs read merged, purged by the max-purgeable rule past gc_grace, written
// as one sstable or a run of them, and swapped in; stoppable, throttled, yielding to the foreground.
#pragma once

#include "compaction/compaction_strategy.hh"
#include "compaction/table_state.hh"
#include "runtime/reactor.hh"

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace reef::compaction {

// A compaction stopped on request (table dropped or truncated, node drained, a major compaction taking over).
class compaction_stopped : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// The shard's compaction throughput limit (compaction_throughput_mb_per_sec): input bytes paced over time, shared
// by the shard's compactions. 0: unlimited.
class throughput_limiter {
public:
    void set_bytes_per_second(uint64_t v) noexcept { _rate = v; }
    uint64_t bytes_per_second() const noexcept { return _rate; }
    // Waits until `bytes` more fit the rate (bursts of up to 100 ms of it pass at once).
    future<> consume(uint64_t bytes);

private:
    uint64_t _rate = 0;
    steady_clock_type::time_point _next{};
};

// What one running compaction shows and how it is stopped.
struct compaction_control {
    uint64_t total_bytes = 0;      // its inputs' Data.db bytes
    uint64_t completed_bytes = 0;  // of them read so far
    std::string stop_reason;       // non-empty: stop at the next step
    throughput_limiter* limiter = nullptr;

    void stop(std::string reason) { stop_reason = std::move(reason); }
    bool stopping() const noexcept { return !stop_reason.empty(); }
};

// Whether compacting `ssts` with this gc_before may purge anything: some input holds a deletion time (of a
// tombstone or an expiring cell) before it, by its statistics (or has none). The row cache is kept otherwise.
bool may_purge(const std::vector<sstables::shared_sstable>& ssts, deletion_time_type gc_before);

// One compaction of `inputs` (of t's set) by `kind`: expired ones are swapped out unread; otherwise they are read
// merged (full scans), through the compacting reader (gc_before = now - gc_grace_seconds, t.max_purgeable per
// partition), written as one new sstable (none when nothing is left) carrying the union of their commitlog
// intervals, and swapped in crash-safely (t.begin_swap, the log's commit, t.replace_sstables, the log's finish).
// Throws compaction_stopped when ctl is stopped (nothing swapped, the partial output removed). max_output_size
// non-zero: the output is a run of sstables split at partition boundaries once one holds that many Data.db bytes
// (uncompressed), in ring order and so with disjoint key bounds. Returns the outputs' Data.db sizes summed.
future<uint64_t> compact_sstables(table_state& t, std::vector<sstables::shared_sstable> inputs, job_kind kind,
                                  deletion_time_type now, compaction_control& ctl, uint64_t max_output_size = 0);

// What the strategies know of an sstable (`id`: its index in the caller's list); gc_before for the droppable
// tombstone ratio. Age is left 0 (sstable_age reads it).
candidate candidate_of(const sstables::shared_sstable& sst, uint64_t id, deletion_time_type gc_before);
// Seconds since its Data.db was written (the file's modification time), as Cassandra ages sstables.
future<int64_t> sstable_age(const sstables::shared_sstable& sst, int64_t now);

} // namespace reef::compaction
