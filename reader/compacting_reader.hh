// compacting_reader: wraps a reader and compacts each partition as it streams, for a query result at `now`
// (only live data, no tombstones) or for compaction (mutation_partition::purge's result), without buffering partitions.
#pragma once

#include "mutation/tombstone.hh"
#include "reader/mutation_reader.hh"

#include <functional>
#include <limits>
#include <optional>

namespace reef {

enum class compaction_mode {
    // What a read at `now` returns (ScyllaDB's compact_for_query): partition,
    // range, row and collection tombstones delete what they cover, expired
    // cells and markers are dead, and only live data comes out: live cells
    // and collection elements, live markers, rows with a live marker or a
    // live cell, the static row's live cells. No tombstone of any kind is
    // emitted (partition_start carries none, no range_tombstone_change). A
    // partition with nothing live is not emitted at all; one with only a
    // live static row is: Cassandra's SelectStatement.processPartition
    // returns it as one row with null clustering and regular columns when
    // the query selects whole partitions, and drops it when the query
    // restricts clustering or regular columns
    // (StatementRestrictions.returnStaticContentOnPartitionWithNoRows);
    // that choice is the CQL layer's, which knows the restrictions.
    query,
    // What compaction writes (ScyllaDB's compact_for_compaction, Reef's
    // mutation_partition::purge): data a tombstone deletes is dropped, as
    // are tombstones a covering one makes redundant; tombstones, expired
    // cells and expired markers go when purgeable (written before
    // max_purgeable, deletion or expiry time before gc_before); an expired
    // cell that stays becomes a cell tombstone. A partition left with
    // nothing (no tombstone, no row, no range tombstone, no static cell) is
    // not emitted.
    compaction,
};

// Wraps `source` (forward or reversed: the compaction of a fragment
// depends only on the tombstones in force where it sits, which the stream
// carries in either direction). gc_before (compaction mode only) defaults
// to now - the schema's gc_grace_seconds. next_partition and
// partition-range fast-forwarding pass through. With fwd = yes the source
// must be in clustering-window forwarding mode too: windows pass through,
// and every partition's start is emitted, empty or not (the consumer needs
// it to open the windows where the partition's data may be); without it,
// fast_forward_to(position_range) throws std::logic_error.
mutation_reader make_compacting_reader(
    mutation_reader source, deletion_time_type now, compaction_mode mode,
    std::optional<deletion_time_type> gc_before = std::nullopt,
    write_time::timestamp_type max_purgeable = std::numeric_limits<write_time::timestamp_type>::max(),
    streamed_forwarding fwd = streamed_forwarding::no);

// For compaction: the oldest timestamp of data outside the compaction that
// may hold a partition (Cassandra's CompactionController.getPurgeEvaluator,
// from the overlapping sstables' bloom filters and min timestamps, and the
// memtables); nothing written at or after it may be purged there.
using max_purgeable_fn = std::function<write_time::timestamp_type(const dht::decorated_key&)>;

// The same, with max_purgeable asked once per partition, at its start.
mutation_reader make_compacting_reader(mutation_reader source, deletion_time_type now, compaction_mode mode,
                                       deletion_time_type gc_before, max_purgeable_fn max_purgeable,
                                       streamed_forwarding fwd = streamed_forwarding::no);

} // namespace reef
