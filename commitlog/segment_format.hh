// segment_format: the bytes of a commitlog segment (commitlog/FORMAT.md): file names, the header, entry
// framing, and the scan of a segment's bytes into entries. Promises: the scan never reads outside the bytes
// given and tells valid entries, padding, corrupt entries and a torn tail apart.
#pragma once

#include "commitlog/replay_position.hh"
#include "schema/bytes.hh"
#include "schema/schema.hh"

#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace reef::commitlog {

inline constexpr uint32_t format_version = 1;
inline constexpr size_t segment_header_size = 32;
// length + header crc before the payload, payload crc after it.
inline constexpr size_t entry_overhead = 12;
inline constexpr size_t table_id_size = 16;

// What a segment file's header or name says is wrong: names the file.
class segment_format_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// The table id of the end marker (FORMAT.md, "Recycled segments"): an entry of no table, sixteen zero bytes (a
// time UUID's version nibble is 1), closing a segment's data: what follows it is an older life's.
inline constexpr table_id end_marker_table_id{};

// "CommitLog-1-<shard>-<id>.log".
std::string segment_file_name(unsigned shard, uint64_t segment_id);
// "RecycledCommitLog-1-<shard>-<id>.log": a segment whose data is all flushed, kept for reuse under a new id. Not a
// segment (replay ignores it).
std::string recycled_file_name(unsigned shard, uint64_t old_segment_id);

struct segment_file_id {
    uint32_t version;
    unsigned shard;
    uint64_t segment_id;
};
// The parts of a commitlog segment's file name; nullopt for a name of another form (other files are not ours).
std::optional<segment_file_id> parse_segment_file_name(std::string_view name);
// The same for a recycled file's name.
std::optional<segment_file_id> parse_recycled_file_name(std::string_view name);

// The 32-byte header.
bytes make_segment_header(unsigned shard, uint64_t segment_id);

// Writes one entry's framing and payload (table id, then data) at out (entry_size(data.size()) bytes).
size_t entry_size(size_t data_size) noexcept;
void write_entry(uint8_t* out, uint64_t segment_id, const table_id& table, bytes_view data) noexcept;

struct segment_entry {
    table_id table;
    replay_position position;
    bytes_view data;
};

struct segment_scan_stats {
    uint64_t entries = 0;
    uint64_t corrupt = 0;
    uint64_t bytes = 0;
    bool torn_tail = false;
    bool ended = false;  // the end marker was found: the segment was closed, and its data ends there
};

// Walks a whole segment's bytes: checks the header (throws segment_format_error naming `path` on a wrong magic,
// version, header CRC or id; an empty or all-zero header is an empty segment), then calls on_entry for each
// valid entry in order, up to the end marker (not given to on_entry; what follows it is a recycled file's older
// data). Corrupt entries go to on_corrupt(offset, what) and are counted. `last` says whether this is the shard's
// last segment, where a torn tail is expected and quiet; elsewhere it counts as corrupt.
// `block` is the write alignment padding runs up to (FORMAT.md).
segment_scan_stats scan_segment(const std::string& path, uint64_t expected_id, bytes_view file, size_t block, bool last,
                                const std::function<void(const segment_entry&)>& on_entry,
                                const std::function<void(size_t offset, const std::string& what)>& on_corrupt);

} // namespace reef::commitlog
