// combined_reader: merges the streams of several readers of one table into one stream, reconciling what
// they hold at the same position, and fast-forwards a source past what another source's newer tombstone deletes.
#pragma once

#include "mutation/tombstone.hh"
#include "reader/mutation_reader.hh"

#include <cstdint>
#include <limits>
#include <vector>

namespace reef {

// One input of a combined reader.
//
// The contract (checked where it can be):
// - `reader` is created in forwarding mode (streamed_forwarding::yes; but
//   see `forwarding` below), over the same partition range, clustering
//   slice and read direction as the combined read, and `forwarding` says
//   so. The combined reader drives its clustering windows: it
//   opens the window its own user asked for (or the whole partition), and
//   to skip deleted data it may call fast_forward_to(position_range) again
//   in the middle of a window, with a start at or after everything the
//   source has produced so far and the same end (see mutation_reader.hh).
//   A source that emits a clustered fragment before a window was opened, or
//   a partition_end, is not in forwarding mode: the read fails with
//   std::logic_error naming the source.
// - `max_timestamp` is the greatest write timestamp of anything the source
//   can produce: cells, row markers, and partition, range, row and
//   collection tombstones (an sstable's Statistics has it; a memtable keeps
//   it). A bound that is too high only costs skips; one that is too low
//   loses data. The default never allows a skip.
struct combined_reader_source {
    mutation_reader reader;
    write_time::timestamp_type max_timestamp = std::numeric_limits<write_time::timestamp_type>::max();
    // A reader without forwarding (sstables' full-scan reader, for
    // compaction) gives whole partitions: allowed only when the combined
    // reader does not forward either; what a newer tombstone deletes in it
    // is read and dropped instead of skipped.
    streamed_forwarding forwarding = streamed_forwarding::yes;
};

// What the combined reader skipped; read by tests and benchmarks.
struct combined_reader_stats {
    // A source was fast-forwarded (or its window ended) past the clustering
    // range a newer range tombstone of another source deletes.
    uint64_t range_skips = 0;
    // A source left a partition at its start because another source's
    // partition tombstone is newer than anything it has.
    uint64_t partition_skips = 0;
    // Fragments a source had already produced (buffered) that were dropped
    // unmerged because a newer tombstone of another source deletes them.
    uint64_t covered_fragments_dropped = 0;
};

// A reader of the union of the sources: partitions in ring order, each one
// the merge of the sources' versions by Cassandra's reconciliation
// (mutation/README.md): partition tombstones and static rows merged, rows at
// the same key merged as mutation_partition::apply_row does, and at every
// position the range tombstone in force is the superseding one of those the
// sources have in force (a change is emitted only when it changes).
//
// The skip: when a source A has a tombstone in force (a range tombstone,
// or its partition tombstone) whose timestamp is strictly greater than
// source B's max_timestamp, everything B holds under it is deleted, so B is
// not read there: B skips the partition (partition tombstone) or is
// fast-forwarded to where A's covering tombstones end (found by looking
// ahead in A, a bounded number of fragments at a time). The stream then
// differs from the full merge only by data the output's own tombstones
// delete, which no read returns (mutation_partition::drop_shadowed of
// either is the same). At an equal timestamp nothing is skipped: B's
// tombstone with the same timestamp and a later deletion time would win.
//
// `reversed`: the sources produce reversed streams (native reverse, see
// position_range.hh) and so does the combined reader; windows are given
// in the read's order. `fwd`: whether the combined reader itself offers
// clustering windows to its user. `stats`, if given, must outlive the reader.
mutation_reader make_combined_reader(schema_ptr s, std::vector<combined_reader_source> sources, bool reversed,
                                     streamed_forwarding fwd, combined_reader_stats* stats = nullptr);

} // namespace reef
