// partition_reversing_data_source: one partition of Data.db as a byte stream the ordinary mx_parser reads in
// reversed clustering order. Promises: the header and static row first, then the unfiltereds walked backwards by
// their "previous unfiltered size" fields, marker bound kinds swapped, then the end-of-partition byte; it reads
// Data.db in windows moving backwards, so memory is bounded by a window plus the unfiltereds in flight.
#pragma once

#include "mutation/position_in_partition.hh"
#include "mutation/tombstone.hh"
#include "runtime/input_stream.hh"
#include "sstables/index_entry.hh"
#include "sstables/serialization_header.hh"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace reef::sstables {

// Bytes [pos, pos + len) of the uncompressed Data.db (a checked source: make_data_source).
using data_source_factory = std::function<data_source(uint64_t pos, uint64_t len)>;

// Where the backward walk starts: the last unfiltered of the Data.db byte range [start, end) (a promoted index
// block, or the last one: then end is the offset of the end-of-partition byte). open_at_end: the range tombstone in
// force after that unfiltered (the block's end-open marker, as stored), which the stream opens before anything else.
struct reversal_start {
    uint64_t start = 0;
    uint64_t end = 0;
    std::optional<deletion_time> open_at_end;
};

// Where a reversed read of the partition [partition_start, partition_end) with promoted index pi starts when it
// wants nothing at or after the forward position forward_end (the end of the slice's last range): the first block
// whose last position is not before forward_end (everything after it is at or after forward_end), or the last block.
// cmp is the forward comparator; types, version and index_file decode the blocks. Throws
// malformed_sstable_exception when the block lies outside the partition.
reversal_start find_reversal_start(const promoted_index& pi, uint64_t partition_start, uint64_t partition_end,
                                   const position_in_partition& forward_end, const position_in_partition_comparator& cmp,
                                   const std::vector<data_type>& types, sstable_version version,
                                   const std::string& index_file);

struct partition_reversing_options {
    // Bytes read from Data.db per step back (at least; a window always holds whole unfiltereds).
    uint64_t window = 32 * 1024;
    // Window starts are rounded down to a multiple of this (the compression or CRC chunk), so chunks are
    // decompressed and checked about once.
    uint64_t alignment = 4096;
    // Bytes of output per buffer returned (at least one whole unfiltered).
    size_t output_buffer = 16 * 1024;
};

// The partition at Data.db [partition_start, partition_end) (partition_end: the next partition's start, or the
// stream's end), read reversed. start: where the backward walk begins (find_reversal_start); without it, the walk
// begins at the partition's last unfiltered, found by scanning the unfiltereds from the header's end. The
// unfiltereds' bytes are passed on as stored (their previous-size fields included, which the parser does not use),
// except range tombstone markers: kinds swapped (inclusive start <-> inclusive end, exclusive start <-> exclusive
// end, excl_end_incl_start <-> incl_end_excl_start with the boundary's two deletions swapped). A structure the walk
// cannot follow (sizes pointing outside the partition, an unfiltered whose size disagrees with its successor's
// previous size, no end-of-partition byte) throws malformed_sstable_exception naming file and the Data.db offset.
// The walk's first read is start's block alone (from an aligned offset); each step back then reads twice as much as
// the last, from the alignment (at least 4 KiB) up to options.window, so a short walk reads little.
data_source make_partition_reversing_data_source(data_source_factory open, const serialization_header& header,
                                                 std::string file, uint64_t partition_start, uint64_t partition_end,
                                                 std::optional<reversal_start> start = std::nullopt,
                                                 partition_reversing_options options = {});

// The same walk, without the partition's header and static row (a reader that has passed them on already and jumps,
// through the promoted index, to the block holding its slice's next range): the stream is start's block and the
// unfiltereds before it, walked back to the partition's first unfiltered at header_end (partition_start plus the
// promoted index's header length), then the end-of-partition byte, for a parser that starts inside the partition
// (mx_parser::start_at::inside_partition). start.open_at_end is not put in the stream: the reader sets it in force.
data_source make_partition_body_reversing_data_source(data_source_factory open, const serialization_header& header,
                                                      std::string file, uint64_t partition_start, uint64_t partition_end,
                                                      uint64_t header_end, reversal_start start,
                                                      partition_reversing_options options = {});

} // namespace reef::sstables
