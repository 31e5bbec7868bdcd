// Index.db entries and promoted indexes. See index_entry.hh and FORMAT.md.
#include "sstables/index_entry.hh"

#include "utils/vint.hh"

namespace reef::sstables {

namespace {

// Cassandra delta-encodes a block's width from the default 64 KiB column index size.
constexpr int64_t width_base = 64 * 1024;

} // namespace

promoted_index_block promoted_index::block(size_t i, const std::vector<data_type>& types, sstable_version v,
                                           const std::string& file) const {
    uint32_t start = offsets.at(i);
    // parse guaranteed offsets are increasing and inside blocks; a block ends where the next starts.
    uint32_t stop = i + 1 < offsets.size() ? offsets[i + 1] : uint32_t(blocks.size());
    byte_reader in(file, byte_reader::to_bytes(std::string_view(blocks).substr(start, stop - start)), blocks_file_offset + start);
    promoted_index_block b;
    b.first = read_clustering_bound(in, types);
    b.last = read_clustering_bound(in, types);
    b.offset = in.read_unsigned_vint("a promoted index block offset");
    auto width_at = in.offset();
    int64_t width = in.read_signed_vint("a promoted index block width");
    if (width < -width_base) {
        in.fail_at(width_at, "expected a block width (minus 65536) of at least -65536, found " + std::to_string(width));
    }
    // In unsigned arithmetic: width + 65536 overflows int64 for widths near its maximum (a fuzzer's find).
    b.width = uint64_t(width) + uint64_t(width_base);
    auto marker_at = in.offset();
    auto has_marker = in.read_u8("an end-open marker flag");
    if (has_marker > 1) {
        in.fail_at(marker_at, "expected an end-open marker flag 0 or 1, found " + std::to_string(has_marker));
    }
    if (has_marker) {
        b.end_open_marker = read_deletion_time(in, v);
    }
    if (!in.at_end()) {
        in.fail("expected the next block (offsets array), found " + std::to_string(in.remaining()) + " more bytes in block " +
                std::to_string(i));
    }
    return b;
}

std::vector<promoted_index_block> promoted_index::all_blocks(const std::vector<data_type>& types, sstable_version v,
                                                             const std::string& file) const {
    std::vector<promoted_index_block> out;
    out.reserve(offsets.size());
    for (size_t i = 0; i < offsets.size(); ++i) {
        out.push_back(block(i, types, v, file));
    }
    return out;
}

size_t promoted_index::first_block_not_before(const position_in_partition& pos, const position_in_partition_comparator& cmp,
                                              const std::vector<data_type>& types, sstable_version v,
                                              const std::string& file) const {
    size_t lo = 0, hi = offsets.size();
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cmp(block(mid, types, v, file).last.position(), pos) < 0) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

std::optional<uint64_t> index_entry_length(std::string_view bytes, const std::string& file, uint64_t base_offset) {
    if (bytes.size() < 2) {
        return std::nullopt;
    }
    uint64_t key_len = utils::read_be_unchecked<uint16_t>(bytes.data());
    uint64_t pos = 2 + key_len;
    for (int i = 0; i < 2; ++i) {
        if (pos >= bytes.size()) {
            return std::nullopt;
        }
        auto d = utils::try_decode_unsigned_vint(std::span<const char>(bytes.substr(pos)));
        if (!d) {
            return std::nullopt;
        }
        pos += d->length;
        if (i == 1) {
            // The promoted index size: an int in Cassandra.
            if (d->value > 0x7fffffff) {
                throw malformed_sstable_exception(file, base_offset + pos - d->length,
                                                  "expected a promoted index size below 2^31, found " +
                                                      std::to_string(d->value));
            }
            pos += d->value;
        }
    }
    return pos;
}

// A promoted index as an entry stores it: its size (unsigned vint), then, when not 0, its body.
static std::optional<promoted_index> read_promoted_index(byte_reader& in, sstable_version v) {
    auto body = in.read_vint_length_bytes("a promoted index");
    if (body.empty()) {
        return std::nullopt;
    }
    byte_reader pi(in.file(), body, in.offset() - body.size());
    promoted_index p;
    p.partition_header_length = pi.read_unsigned_vint("a partition header length");
    p.partition_deletion = read_deletion_time(pi, v);
    auto count_at = pi.offset();
    // Each block takes at least 5 bytes (two one-byte clusterings of a table without clustering columns, offset,
    // width, flag) and 4 in the offsets array.
    uint64_t count = pi.read_unsigned_vint("a promoted index block count");
    if (count == 0 || count > pi.remaining() / 9) {
        pi.fail_at(count_at, "expected a promoted index block count between 1 and " + std::to_string(pi.remaining() / 9) +
                                 " (what the entry's size leaves room for), found " + std::to_string(count));
    }
    uint64_t blocks_len = pi.remaining() - count * 4;
    p.blocks_file_offset = pi.offset();
    p.blocks = byte_reader::to_string(pi.read_bytes(blocks_len, "promoted index blocks"));
    p.offsets.reserve(count);
    for (uint64_t i = 0; i < count; ++i) {
        auto at = pi.offset();
        uint32_t off = pi.read_be<uint32_t>("a promoted index block offset");
        uint64_t floor = p.offsets.empty() ? 0 : uint64_t(p.offsets.back()) + 1;
        if ((i == 0 && off != 0) || off < floor || off >= blocks_len) {
            pi.fail_at(at, "expected block " + std::to_string(i) + "'s offset " + (i == 0 ? std::string("0") :
                               "in [" + std::to_string(floor) + ", " + std::to_string(blocks_len) + ")") +
                               ", found " + std::to_string(off));
        }
        p.offsets.push_back(off);
    }
    return p;
}

index_entry read_index_entry(byte_reader& in, sstable_version v) {
    index_entry e;
    e.index_position = in.offset();
    auto key_len = in.read_be<uint16_t>("a partition key length");
    e.key = partition_key(byte_reader::to_string(in.read_bytes(key_len, "a partition key")));
    e.data_position = in.read_unsigned_vint("a Data.db position");
    e.promoted = read_promoted_index(in, v);
    return e;
}

std::optional<promoted_index> parse_promoted_index(std::string_view stored, sstable_version v, const std::string& file,
                                                   uint64_t base_offset) {
    byte_reader in(file, byte_reader::to_bytes(stored), base_offset);
    auto p = read_promoted_index(in, v);
    if (!in.at_end()) {
        in.fail("expected the end of the index entry after its promoted index, found " + std::to_string(in.remaining()) +
                " more bytes");
    }
    return p;
}

void write_index_entry(std::string& out, std::string_view key, uint64_t data_position, uint64_t partition_header_length,
                       const deletion_time& partition_deletion, const std::vector<promoted_index_block>& blocks,
                       const std::vector<data_type>& types, sstable_version v) {
    char len[2];
    utils::write_be_unchecked<uint16_t>(len, uint16_t(key.size()));
    out.append(len, 2);
    out.append(key);
    utils::append_unsigned_vint(out, data_position);
    if (blocks.empty()) {
        utils::append_unsigned_vint(out, 0);
        return;
    }
    std::string body;
    utils::append_unsigned_vint(body, partition_header_length);
    write_deletion_time(body, partition_deletion, v);
    utils::append_unsigned_vint(body, blocks.size());
    std::string serialized;
    std::vector<uint32_t> offsets;
    for (auto& b : blocks) {
        offsets.push_back(uint32_t(serialized.size()));
        write_clustering_bound(serialized, types, b.first);
        write_clustering_bound(serialized, types, b.last);
        utils::append_unsigned_vint(serialized, b.offset);
        utils::append_signed_vint(serialized, int64_t(b.width) - width_base);
        serialized.push_back(char(b.end_open_marker ? 1 : 0));
        if (b.end_open_marker) {
            write_deletion_time(serialized, *b.end_open_marker, v);
        }
    }
    body += serialized;
    for (auto o : offsets) {
        char b[4];
        utils::write_be_unchecked<uint32_t>(b, o);
        body.append(b, 4);
    }
    utils::append_unsigned_vint(out, body.size());
    out += body;
}

std::vector<index_entry> parse_index_entries(std::string_view bytes, sstable_version v, const std::string& file,
                                             uint64_t base_offset) {
    byte_reader in(file, byte_reader::to_bytes(bytes), base_offset);
    std::vector<index_entry> out;
    while (!in.at_end()) {
        out.push_back(read_index_entry(in, v));
    }
    return out;
}

} // namespace reef::sstables
