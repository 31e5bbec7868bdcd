// make_reversed_sstable_reader: the partition-range reader of an mx sstable in reversed clustering order. Each
// partition of the range is read through a partition_reversing_data_source (the walk starts in the promoted index
// block that holds the slice's end, and jumps to the block holding each next range's end) and parsed by the ordinary
// parser; the slice applies in the read's order.
#pragma once

#include "sstables/sstable_reader.hh"

namespace reef::sstables {

// Partitions of opts.range in token order, each in descending clustering order as to_fragments(m, true) gives it,
// clipped to opts.slice (in the read's order: reverse_ranges of the forward ranges) through mutation_fragment_filter.
// A partition stops being read (and its Data.db bytes stop being fetched) once the slice is behind the walk, so
// a read of the last rows of a large partition reads about their blocks, not the partition. With opts.forwarding ==
// yes, each partition is read window by window (fast_forward_to(position_range), windows in the read's order), as
// the memtable reader's forwarding mode gives it. Between the slice's ranges (and windows), the walk jumps through
// the promoted index to the block holding the next range's end when that block ends before the walk's next fragment,
// with the block's end-open marker in force: the blocks between are neither read nor parsed
// (sstable_reader_stats::reversed_jumps counts the jumps). Rows outside the slice in the blocks walked are passed
// over by their size, their keys alone read (counted as rows_skipped; rows built as rows_read). permit, opts.bypass:
// as make_sstable_reader's (deadline checked before each fill, index page and Data.db window read). opts.order must
// be read_order::reversed (else std::invalid_argument).
mutation_reader make_reversed_sstable_reader(schema_ptr s, sstable_read_handles h, reader_permit permit,
                                             read_options opts);

} // namespace reef::sstables
