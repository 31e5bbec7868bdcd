// make_memtable_reader: the fragment stream of a memtable's partitions in a partition range, sliced by
// clustering ranges, forward or reversed, streamed from the memtable's maps a buffer at a time (no copies of whole partitions).
#pragma once

#include "db/memtable.hh"
#include "reader/mutation_reader.hh"
#include "reader/position_range.hh"
#include "reader/read_options.hh"

#include <memory>

namespace reef {

// Reads the partitions of opts.range in (token, key) order: partition_start
// (with the partition tombstone), the static row when it has cells,
// the clustering rows and range_tombstone_changes inside opts.slice, and
// partition_end. A partition whose rows all fall outside the slice still
// gives partition_start and partition_end, as in Cassandra and ScyllaDB.
//
// The slice is in the read's order (reversed: each range reversed(), in
// reversed order; see reverse_ranges). With read_order::reversed, rows
// come in descending clustering order with reversed() change positions, as
// to_fragments(m, true) gives them. The stream is exactly what to_fragments
// of each partition through a mutation_fragment_filter over the slice gives.
// next_partition(), fast_forward_to(partition_range) and, with
// opts.forwarding == yes, fast_forward_to(position_range) behave as in
// make_fragment_vector_reader; a forwarding window (in the read's order)
// shows what lies in both the window and the slice. A window may also open
// in the middle of the last one (at or after everything produced): the
// tombstone in force at its start is emitted there.
//
// opts.bypass and opts.stats do not apply to a memtable.
// `s` is the memtable's schema; the reader keeps `mt` alive. `buffer_size`
// (fragments, 0 = the reader default) exists for tests that interleave
// writes with reads at many points.
//
// Concurrent writes (apply() between two fill_buffer calls): the reader
// holds a position, not a copy. Each fill_buffer shows the memtable as it
// is then, from the reader's position on: a write ahead of the position
// (a later partition, a row or range tombstone further on in the read's
// order, a merge into a row not yet read) is seen; a write behind it
// (into rows or ranges already passed, the partition tombstone or static
// row of the partition being read) is not. So a read returns at least
// everything that was there when it started (merged with whatever later
// writes reached it first, never less) and nothing that was not there
// when it ended; a mutation applied during the read may be seen in part.
// The stream stays valid throughout: when the range tombstone in force at
// the position changed, the reader emits a change at the position.
mutation_reader make_memtable_reader(std::shared_ptr<const memtable> mt, schema_ptr s, read_options opts,
                                     size_t buffer_size = 0);

} // namespace reef
