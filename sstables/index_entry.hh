// Index.db entries (mc..oa, Cassandra's RowIndexEntry): a partition key, its position in Data.db and, for a
// partition large enough, its promoted index (the partition header length and deletion, and the clustering
// blocks with an offsets array). The parser works on a byte span holding whole entries (an index page), keeps
// the promoted index's blocks as bytes and decodes a block only when asked, so a reader can binary-search them.
#pragma once

#include "mutation/partition_key.hh"
#include "sstables/clustering_bound.hh"
#include "sstables/deletion_time.hh"
#include "sstables/version.hh"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace reef::sstables {

// One promoted-index block: the clustering range it covers and where it is, relative to the partition's start
// in Data.db; end_open_marker is the range tombstone still open at the block's end.
struct promoted_index_block {
    clustering_bound first;
    clustering_bound last;
    uint64_t offset = 0;
    uint64_t width = 0;
    std::optional<deletion_time> end_open_marker;
};

struct promoted_index {
    uint64_t partition_header_length = 0;
    deletion_time partition_deletion;
    // The serialized blocks; offsets[i] is where block i starts in it.
    std::string blocks;
    std::vector<uint32_t> offsets;
    // Index.db offset of `blocks` (for errors).
    uint64_t blocks_file_offset = 0;

    size_t block_count() const noexcept { return offsets.size(); }
    // Decodes block i with the clustering types (from the serialization header); file names Index.db in errors.
    promoted_index_block block(size_t i, const std::vector<data_type>& clustering_types, sstable_version v,
                               const std::string& file) const;
    std::vector<promoted_index_block> all_blocks(const std::vector<data_type>& clustering_types, sstable_version v,
                                                 const std::string& file) const;
    // Where a read of the partition from pos on starts: the first block whose last position is not before pos
    // (block_count() when pos is after every block). Decodes O(log n) blocks.
    size_t first_block_not_before(const position_in_partition& pos, const position_in_partition_comparator& cmp,
                                  const std::vector<data_type>& clustering_types, sstable_version v,
                                  const std::string& file) const;
};

struct index_entry {
    partition_key key;
    uint64_t data_position = 0;
    std::optional<promoted_index> promoted;
    // Where the entry starts in Index.db.
    uint64_t index_position = 0;
};

// The whole length of the entry at the start of bytes, if bytes hold at least its fixed part; nullopt when more
// bytes are needed to tell. Throws malformed_sstable_exception (file, base_offset) when the lengths are absurd.
std::optional<uint64_t> index_entry_length(std::string_view bytes, const std::string& file, uint64_t base_offset);

// Appends an entry as version v stores it: with a promoted index when blocks is not empty (the blocks'
// clustering prefixes encoded with clustering_types).
void write_index_entry(std::string& out, std::string_view key, uint64_t data_position, uint64_t partition_header_length,
                       const deletion_time& partition_deletion, const std::vector<promoted_index_block>& blocks,
                       const std::vector<data_type>& clustering_types, sstable_version v);

// Parses one entry from in (which must hold all of it).
index_entry read_index_entry(byte_reader& in, sstable_version v);

// The promoted index of an entry from the bytes that follow its Data.db position (the promoted index's size, then
// its body; what partition_index_page keeps of it), which lie at Index.db offset base_offset; nullopt for size 0.
std::optional<promoted_index> parse_promoted_index(std::string_view stored, sstable_version v, const std::string& file,
                                                   uint64_t base_offset);

// Parses every entry of bytes, which hold whole entries starting at Index.db offset base_offset.
std::vector<index_entry> parse_index_entries(std::string_view bytes, sstable_version v, const std::string& file,
                                             uint64_t base_offset = 0);

} // namespace reef::sstables
