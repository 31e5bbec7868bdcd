// promoted_index_cursor: where a forward read of one partition may start inside Data.db for a clustering position,
// found by binary search over the promoted index's blocks, with the range tombstone in force at that point.
#pragma once

#include "mutation/position_in_partition.hh"
#include "mutation/tombstone.hh"
#include "schema/schema.hh"
#include "sstables/index_entry.hh"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace reef::sstables {

// A read that jumps into block i starts parsing at the block's first unfiltered; what came before is not parsed,
// so the range tombstone in force there is the previous block's end-open marker, which the reader must put back
// into the stream (as a range_tombstone_change at its read's start) for the stream to stay right. Answers only
// move forward: a cursor serves one forward read of one partition. Blocks are decoded when the search touches
// them and kept (O(log n) per new answer).
class promoted_index_cursor {
public:
    // pi: the partition's promoted index (Index.db names file in errors); partition_length: the partition's bytes
    // in Data.db (to the next partition's start, from the index: the last block need not hold the end-of-partition
    // byte); s: the table's schema (its clustering order); clustering_types: the serialization header's.
    promoted_index_cursor(promoted_index pi, uint64_t partition_length, const schema& s,
                          std::vector<data_type> clustering_types, sstable_version v, std::string file);

    struct entry_point {
        // Relative to the partition's start in Data.db: a block's first unfiltered, or the end-of-partition byte
        // when every block lies before the position.
        uint64_t offset = 0;
        // The range tombstone in force just before offset.
        tombstone open;
        // The block (block_count() for the end of the partition).
        size_t block = 0;
        // The block's bytes from offset on (0 for the end of the partition): what a read that starts there reads
        // at least, unless the slice ends inside it.
        uint64_t width = 0;
    };

    // Where a read of the positions at or after pos starts: the first block, not before the last answer's, whose
    // last position is not before pos. Nothing in the blocks before it is at or after pos.
    entry_point advance_to(const position_in_partition& pos);

    // The partition's deletion, as the promoted index repeats it from the partition's header.
    const deletion_time& partition_deletion() const noexcept { return _pi.partition_deletion; }
    // Bytes of partition header and static row: block 0 starts there.
    uint64_t header_length() const noexcept { return _pi.partition_header_length; }
    // Relative to the partition's start: just past its end-of-partition byte.
    uint64_t partition_end() const noexcept { return _end; }
    size_t block_count() const noexcept { return _pi.block_count(); }
    // Blocks decoded so far (each at most once).
    size_t decoded_blocks() const noexcept { return _decoded; }

private:
    const promoted_index_block& block(size_t i);
    // Throws malformed_sstable_exception (Index.db) unless block i starts inside the partition's body.
    void check_block(size_t i, const promoted_index_block& b) const;

    promoted_index _pi;
    position_in_partition_comparator _cmp;
    std::vector<data_type> _types;
    sstable_version _version;
    std::string _file;
    size_t _block_count = 0;
    // The blocks decoded so far, by index: a read's binary searches touch O(log n) of them, so a read of a partition
    // of thousands of blocks allocates and clears nothing per block (a node map: references stay valid).
    std::map<size_t, promoted_index_block> _blocks;
    size_t _decoded = 0;
    size_t _first = 0;  // blocks before it are behind the read
    uint64_t _end = 0;
};

} // namespace reef::sstables
