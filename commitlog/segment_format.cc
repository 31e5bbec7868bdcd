// Segment names, headers, entry framing and the segment scan (commitlog/FORMAT.md). See segment_format.hh.
#include "commitlog/segment_format.hh"

#include "utils/big_endian.hh"
#include "utils/crc32.hh"

#include <fmt/core.h>

#include <algorithm>
#include <charconv>
#include <cstring>

namespace reef::commitlog {

namespace {

constexpr char magic[8] = {'R', 'E', 'E', 'F', 'C', 'L', 'O', 'G'};

uint32_t header_crc(uint64_t segment_id, uint32_t length) noexcept {
    uint8_t b[12];
    utils::write_be_unchecked(b, segment_id);
    utils::write_be_unchecked(b + 8, length);
    return utils::crc32(std::span<const uint8_t>(b, 12));
}

template <typename T>
bool parse_number(std::string_view s, T& out) {
    if (s.empty()) {
        return false;
    }
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return ec == std::errc() && p == s.data() + s.size();
}

} // namespace

std::string segment_file_name(unsigned shard, uint64_t segment_id) {
    return fmt::format("CommitLog-{}-{}-{}.log", format_version, shard, segment_id);
}

std::string recycled_file_name(unsigned shard, uint64_t old_segment_id) {
    return "Recycled" + segment_file_name(shard, old_segment_id);
}

std::optional<segment_file_id> parse_recycled_file_name(std::string_view name) {
    constexpr std::string_view prefix = "Recycled";
    if (!name.starts_with(prefix)) {
        return std::nullopt;
    }
    return parse_segment_file_name(name.substr(prefix.size()));
}

std::optional<segment_file_id> parse_segment_file_name(std::string_view name) {
    constexpr std::string_view prefix = "CommitLog-", suffix = ".log";
    if (!name.starts_with(prefix) || !name.ends_with(suffix)) {
        return std::nullopt;
    }
    name = name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
    auto d1 = name.find('-');
    if (d1 == name.npos) {
        return std::nullopt;
    }
    auto d2 = name.find('-', d1 + 1);
    if (d2 == name.npos) {
        return std::nullopt;
    }
    segment_file_id id{};
    if (!parse_number(name.substr(0, d1), id.version) || !parse_number(name.substr(d1 + 1, d2 - d1 - 1), id.shard) ||
        !parse_number(name.substr(d2 + 1), id.segment_id)) {
        return std::nullopt;
    }
    return id;
}

bytes make_segment_header(unsigned shard, uint64_t segment_id) {
    bytes h(segment_header_size, 0);
    std::memcpy(h.data(), magic, 8);
    utils::write_be_unchecked(h.data() + 8, format_version);
    utils::write_be_unchecked(h.data() + 12, uint32_t(shard));
    utils::write_be_unchecked(h.data() + 16, segment_id);
    utils::write_be_unchecked(h.data() + 28, utils::crc32(std::span<const uint8_t>(h.data(), 28)));
    return h;
}

size_t entry_size(size_t data_size) noexcept { return entry_overhead + table_id_size + data_size; }

void write_entry(uint8_t* out, uint64_t segment_id, const table_id& table, bytes_view data) noexcept {
    uint32_t length = uint32_t(table_id_size + data.size());
    utils::write_be_unchecked(out, length);
    utils::write_be_unchecked(out + 4, header_crc(segment_id, length));
    uint8_t* payload = out + 8;
    std::memcpy(payload, table.data(), table_id_size);
    if (!data.empty()) {
        std::memcpy(payload + table_id_size, data.data(), data.size());
    }
    utils::write_be_unchecked(payload + length, utils::crc32(std::span<const uint8_t>(payload, length)));
}

segment_scan_stats scan_segment(const std::string& path, uint64_t expected_id, bytes_view file, size_t block, bool last,
                                const std::function<void(const segment_entry&)>& on_entry,
                                const std::function<void(size_t offset, const std::string& what)>& on_corrupt) {
    segment_scan_stats stats;
    if (file.size() < segment_header_size ||
        std::all_of(file.begin(), file.begin() + segment_header_size, [](uint8_t b) { return b == 0; })) {
        return stats;  // created, never written: a crash before the first write
    }
    if (std::memcmp(file.data(), magic, 8) != 0) {
        throw segment_format_error(fmt::format("commitlog segment {}: bad magic (not a Reef commitlog segment)", path));
    }
    auto version = utils::read_be_unchecked<uint32_t>(file.data() + 8);
    if (version != format_version) {
        throw segment_format_error(
            fmt::format("commitlog segment {}: format version {} (this build reads version {})", path, version, format_version));
    }
    auto crc = utils::read_be_unchecked<uint32_t>(file.data() + 28);
    if (crc != utils::crc32(std::span<const uint8_t>(file.data(), 28))) {
        throw segment_format_error(fmt::format("commitlog segment {}: header CRC mismatch", path));
    }
    auto id = utils::read_be_unchecked<uint64_t>(file.data() + 16);
    if (id != expected_id) {
        throw segment_format_error(
            fmt::format("commitlog segment {}: header says segment id {}, the file name {}", path, id, expected_id));
    }

    // The entry at `at`, if its framing and both CRCs hold.
    auto valid_at = [&](size_t at) -> std::optional<segment_entry> {
        if (file.size() - at < entry_overhead + table_id_size) {
            return std::nullopt;
        }
        auto length = utils::read_be_unchecked<uint32_t>(file.data() + at);
        if (length < table_id_size || length > file.size() - at - entry_overhead) {
            return std::nullopt;
        }
        if (utils::read_be_unchecked<uint32_t>(file.data() + at + 4) != header_crc(id, length)) {
            return std::nullopt;
        }
        const uint8_t* payload = file.data() + at + 8;
        if (utils::read_be_unchecked<uint32_t>(payload + length) != utils::crc32(std::span<const uint8_t>(payload, length))) {
            return std::nullopt;
        }
        segment_entry e;
        std::memcpy(e.table.data(), payload, table_id_size);
        e.position = replay_position{id, uint32_t(at)};
        e.data = bytes_view(payload + table_id_size, length - table_id_size);
        return e;
    };

    size_t at = segment_header_size;
    while (at < file.size()) {
        if (auto e = valid_at(at)) {
            if (e->table == end_marker_table_id) {
                stats.ended = true;
                break;
            }
            on_entry(*e);
            ++stats.entries;
            stats.bytes += e->data.size();
            at += entry_overhead + table_id_size + e->data.size();
            continue;
        }
        // Scan for the next valid entry; over zeros (padding, a preallocated file's unwritten end) in bulk: an
        // entry starts at most 3 bytes (its length's leading zeros) before the next non-zero byte.
        size_t next = at + 1;
        std::optional<segment_entry> found;
        for (; next < file.size(); ++next) {
            if (file[next] == 0 && file[next - 1] == 0) {
                auto nz = std::find_if(file.begin() + next, file.end(), [](uint8_t b) { return b != 0; });
                size_t first = size_t(nz - file.begin());
                if (first == file.size()) {
                    next = first;
                    break;
                }
                next = std::max(next, first - std::min<size_t>(first, 3));
            }
            if ((found = valid_at(next))) {
                break;
            }
        }
        bool zeros = std::all_of(file.begin() + at, file.begin() + next, [](uint8_t b) { return b == 0; });
        bool padding = zeros && (next % block == 0 || next == file.size());
        if (!found) {
            if (!zeros && !last) {
                ++stats.corrupt;
                on_corrupt(at, fmt::format("{} bytes that hold no entry at the end of a segment that is not the last",
                                           file.size() - at));
            } else if (!zeros) {
                stats.torn_tail = true;
            }
            break;
        }
        if (!padding) {
            ++stats.corrupt;
            on_corrupt(at, fmt::format("corrupt entry: {} bytes skipped to the next valid entry", next - at));
        }
        at = next;
    }
    return stats;
}

} // namespace reef::commitlog
