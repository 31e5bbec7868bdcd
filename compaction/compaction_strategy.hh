// compaction_strategy: size-tiered and time-window compaction as pure functions of a table's sstables (what each
// strategy compacts next, how much work is pending); Cassandra's algorithms, checked against its sources.
#pragma once

#include "compaction/compaction_options.hh"

#include <cstdint>
#include <optional>
#include <set>
#include <vector>

namespace reef::compaction {

// What a strategy knows of one sstable (compaction_manager builds these from Statistics.db and the file sizes).
struct candidate {
    uint64_t id = 0;  // the caller's handle
    uint64_t size = 0;  // Data.db bytes on disk
    int64_t min_timestamp = 0;  // write timestamps, in the table's timestamp unit
    int64_t max_timestamp = 0;
    // Seconds; INT32_MAX when it holds data that never expires (Cassandra's "no deletion").
    int32_t max_local_deletion_time = INT32_MAX;
    // Tombstones and expired cells droppable at gc_before, over its cells (Statistics.db's tombstone histogram).
    double droppable_tombstone_ratio = 0;
    // Seconds since it was written (its files' modification time).
    int64_t age_seconds = 0;
    // Its partitions' token range [first, last].
    int64_t first_token = INT64_MIN;
    int64_t last_token = INT64_MAX;
};

struct strategy_input {
    // The sstables the strategy may choose from (none of them in a running compaction).
    std::vector<candidate> sstables;
    // The others of the table's set (being compacted): they count for overlaps, never chosen.
    std::vector<candidate> compacting;
    // Now and now - gc_grace_seconds, in seconds.
    int64_t now = 0;
    int64_t gc_before = 0;
    // The least write timestamp its memtables (and commitlog not flushed) may hold; INT64_MAX: none.
    int64_t memtable_min_timestamp = INT64_MAX;
};

enum class job_kind {
    regular,    // several sstables merged into one
    tombstone,  // one sstable rewritten for its droppable tombstones
    expired,    // sstables whose data all expired past gc_grace: removed without being read
};

struct compaction_job {
    job_kind kind = job_kind::regular;
    std::vector<uint64_t> ids;
};

// STCS's buckets (Cassandra's SizeTieredCompactionStrategy.getBuckets): sstables by size, smallest first; each
// joins the first bucket whose average size avg has bucket_low * avg < size < bucket_high * avg, or, when both it
// and avg are under min_sstable_size, any such small bucket; else it starts a bucket. The bucket's average then
// takes it in. Buckets in the order they were started, each smallest first.
std::vector<std::vector<candidate>> size_tiered_buckets(std::vector<candidate> sstables, const compaction_options& o);

// The bucket to compact (Cassandra's mostInterestingBucket without read hotness, which Reef does not track; as
// ScyllaDB): among buckets of at least min_threshold, each trimmed to its max_threshold smallest, the one with the
// most sstables, then the smallest total size. Empty: none qualifies.
std::vector<candidate> most_interesting_bucket(const std::vector<std::vector<candidate>>& buckets, int min_threshold,
                                               int max_threshold);

// Cassandra's CompactionController.getFullyExpiredSSTables: the sstables whose data all expired before gc_before
// (max_local_deletion_time < gc_before) and whose newest write is older than the oldest write of every other
// sstable overlapping its token range that is not itself expired, and of the memtables: nothing they could shadow
// survives them.
std::vector<uint64_t> fully_expired(const strategy_input& in);

// Cassandra's worthDroppingTombstones: old enough (tombstone_compaction_interval), its droppable ratio above
// tombstone_threshold, and either unchecked_tombstone_compaction or, counting only its keys outside every other
// sstable's token range (where the tombstones can go), still above the threshold: ratio x non-overlapping share.
bool worth_dropping_tombstones(const candidate& c, const strategy_input& in, const compaction_options& o);
// The share of c's token range that no other sstable's range (chosen or being compacted) covers, in [0, 1].
double non_overlapping_share(const candidate& c, const strategy_input& in);

// TWCS: the start (seconds) of the window holding a timestamp (in the table's timestamp unit).
int64_t window_start(const compaction_options& o, int64_t timestamp);

// The next compaction of the table, if any: the fully expired sstables first (both strategies, as Cassandra),
// then the strategy's bucket, then the sstable most worth a tombstone compaction. Disabled (enabled = false):
// none. Time-window: sstables grouped by the window of their max_timestamp; the newest window is compacted
// size-tiered (min_threshold), every older window with two or more sstables into one (max_threshold smallest);
// the newest such window goes first.
std::optional<compaction_job> next_job(const compaction_options& o, const strategy_input& in);

// Pending compactions (Cassandra's estimatedRemainingTasks): per qualifying bucket or window,
// ceil(sstables / max_threshold).
int64_t pending_tasks(const compaction_options& o, const strategy_input& in);
// The bytes those pending compactions would read (the compaction manager's backlog).
uint64_t pending_bytes(const compaction_options& o, const strategy_input& in);

// A compaction's weight: the size class of the bytes it reads, floor(log4(bytes)). A table runs at most one
// background compaction of each weight at a time, so a tier of small sstables is compacted while a large one is.
int compaction_weight(uint64_t input_bytes) noexcept;
// How many of a job's inputs (their sizes, ascending) to compact so that its weight is none of `taken`: all, or
// fewer, leaving the largest out, down to min_inputs (a job of fewer is all or nothing); 0 when none will do. Size-tiered puts every sstable under
// min_sstable_size in one bucket, which grows with each flush while a compaction of it runs: its smallest
// min_threshold can go meanwhile.
size_t inputs_with_free_weight(const std::vector<uint64_t>& sizes, const std::set<int>& taken, size_t min_inputs);

} // namespace reef::compaction
