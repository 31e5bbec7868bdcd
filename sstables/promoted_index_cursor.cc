// The promoted index cursor. See promoted_index_cursor.hh and FORMAT.md ("Index.db").
#include "sstables/promoted_index_cursor.hh"

#include "sstables/exceptions.hh"
#include "sstables/deletion_time.hh"

namespace reef::sstables {

promoted_index_cursor::promoted_index_cursor(promoted_index pi, uint64_t partition_length, const schema& s,
                                             std::vector<data_type> clustering_types, sstable_version v, std::string file)
    : _pi(std::move(pi)), _cmp(s), _types(std::move(clustering_types)), _version(v), _file(std::move(file)),
      _block_count(_pi.block_count()), _end(partition_length) {
    // parse_promoted_index guarantees at least one block. The last one ends at the partition's end, or just before
    // its end-of-partition byte when its last unfiltered filled it (Cassandra's ColumnIndex closes a full block
    // before the end of the partition is written).
    auto& last = block(_block_count - 1);
    if (last.offset < _pi.partition_header_length || last.width > _end || last.offset > _end - last.width ||
        last.offset + last.width + 1 < _end) {
        throw malformed_sstable_exception(_file, _pi.blocks_file_offset + _pi.offsets.back(),
                                          "expected the last promoted index block to start after the partition header (" +
                                              std::to_string(_pi.partition_header_length) + " bytes) and end at the "
                                              "partition's end (" + std::to_string(_end) + " bytes) or its last byte, "
                                              "found offset " + std::to_string(last.offset) + " and width " +
                                              std::to_string(last.width));
    }
}

const promoted_index_block& promoted_index_cursor::block(size_t i) {
    auto it = _blocks.find(i);
    if (it == _blocks.end()) {
        auto b = _pi.block(i, _types, _version, _file);
        if (i + 1 < _block_count) {
            check_block(i, b);
        }
        it = _blocks.emplace(i, std::move(b)).first;
        ++_decoded;
    }
    return it->second;
}

void promoted_index_cursor::check_block(size_t i, const promoted_index_block& b) const {
    if (b.offset < _pi.partition_header_length || b.offset >= _end) {
        throw malformed_sstable_exception(_file, _pi.blocks_file_offset + _pi.offsets[i],
                                          "expected promoted index block " + std::to_string(i) + " to start in [" +
                                              std::to_string(_pi.partition_header_length) + ", " + std::to_string(_end) +
                                              ") of its partition, found " + std::to_string(b.offset));
    }
}

promoted_index_cursor::entry_point promoted_index_cursor::advance_to(const position_in_partition& pos) {
    size_t lo = _first, hi = _block_count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (_cmp(block(mid).last.position(), pos) < 0) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    _first = lo;
    entry_point ep;
    ep.block = lo;
    if (lo > 0) {
        auto& prev = block(lo - 1);
        if (prev.end_open_marker) {
            ep.open = prev.end_open_marker->to_tombstone();
        }
    }
    ep.offset = lo < _block_count ? block(lo).offset : _end - 1;
    ep.width = lo < _block_count ? block(lo).width : 0;
    return ep;
}

} // namespace reef::sstables
