// Summary.db reading, writing and rebuilding. See summary.hh and FORMAT.md.
#include "sstables/summary.hh"

#include "runtime/input_stream.hh"
#include "sstables/byte_reader.hh"
#include "sstables/index_entry.hh"

#include <cstring>

namespace reef::sstables {

namespace {

uint32_t read_le32(const char* p) {
    uint32_t v;
    std::memcpy(&v, p, 4);
    if constexpr (std::endian::native == std::endian::big) {
        v = __builtin_bswap32(v);
    }
    return v;
}
uint64_t read_le64(const char* p) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    if constexpr (std::endian::native == std::endian::big) {
        v = __builtin_bswap64(v);
    }
    return v;
}
template <typename T>
void append_le(std::string& out, T v) {
    for (size_t i = 0; i < sizeof(T); ++i) {
        out.push_back(char(uint64_t(v) >> (8 * i)));
    }
}
template <typename T>
void append_be(std::string& out, T v) {
    char b[sizeof(T)];
    utils::write_be_unchecked<T>(b, v);
    out.append(b, sizeof(T));
}

} // namespace

summary parse_summary(std::string_view bytes, const std::string& file) {
    byte_reader in(file, byte_reader::to_bytes(bytes));
    summary s;
    auto interval = in.read_i32("the min index interval");
    if (interval <= 0) {
        in.fail_at(0, "expected a positive min index interval, found " + std::to_string(interval));
    }
    s.min_index_interval = uint32_t(interval);
    auto count_at = in.offset();
    auto count = in.read_i32("the summary entry count");
    auto size_at = in.offset();
    auto size = in.read_i64("the summary size (offsets and entries)");
    auto level_at = in.offset();
    auto level = in.read_i32("the sampling level");
    auto full = in.read_i32("the size at full sampling");
    if (level <= 0 || uint32_t(level) > base_sampling_level) {
        in.fail_at(level_at, "expected a sampling level in [1, 128], found " + std::to_string(level));
    }
    s.sampling_level = uint32_t(level);
    s.size_at_full_sampling = uint32_t(std::max(full, 0));
    // Each entry takes a 4-byte offset and at least its 8-byte position.
    if (count < 0 || uint64_t(count) * 12 > in.remaining()) {
        in.fail_at(count_at, "expected an entry count that fits the file, found " + std::to_string(count));
    }
    uint64_t offsets_len = uint64_t(count) * 4;
    if (size < int64_t(offsets_len) || uint64_t(size) > in.remaining()) {
        in.fail_at(size_at, "expected a summary size in [" + std::to_string(offsets_len) + ", " + std::to_string(in.remaining()) +
                                "], found " + std::to_string(size));
    }
    auto region_at = in.offset();
    auto region = byte_reader::to_view(in.read_bytes(uint64_t(size), "the summary offsets and entries"));
    s.entries.reserve(count);
    for (int32_t i = 0; i < count; ++i) {
        uint32_t start = read_le32(region.data() + 4 * i);
        uint32_t stop = i + 1 < count ? read_le32(region.data() + 4 * (i + 1)) : uint32_t(region.size());
        if (start < offsets_len || stop > region.size() || stop < start || stop - start < 8) {
            in.fail_at(region_at + 4 * i, "expected entry " + std::to_string(i) + "'s offset (little-endian) in [" +
                                              std::to_string(offsets_len) + ", " + std::to_string(region.size()) +
                                              "] leaving 8 bytes before the next, found " + std::to_string(start));
        }
        summary_entry e;
        e.key = std::string(region.substr(start, stop - start - 8));
        e.index_position = read_le64(region.data() + stop - 8);
        s.entries.push_back(std::move(e));
    }
    auto first_len = in.read_i32("the first key's length");
    if (first_len < 0) {
        in.fail_at(in.offset() - 4, "expected a non-negative first key length, found " + std::to_string(first_len));
    }
    s.first_key = byte_reader::to_string(in.read_bytes(uint32_t(first_len), "the first key"));
    auto last_len = in.read_i32("the last key's length");
    if (last_len < 0) {
        in.fail_at(in.offset() - 4, "expected a non-negative last key length, found " + std::to_string(last_len));
    }
    s.last_key = byte_reader::to_string(in.read_bytes(uint32_t(last_len), "the last key"));
    if (!in.at_end()) {
        in.fail("expected the end of the file after the last key, found " + std::to_string(in.remaining()) + " more bytes");
    }
    return s;
}

std::string serialize_summary(const summary& s) {
    std::string out;
    append_be<int32_t>(out, int32_t(s.min_index_interval));
    append_be<int32_t>(out, int32_t(s.entries.size()));
    uint64_t size = 4 * s.entries.size();
    for (auto& e : s.entries) {
        size += e.key.size() + 8;
    }
    append_be<int64_t>(out, int64_t(size));
    append_be<int32_t>(out, int32_t(s.sampling_level));
    append_be<int32_t>(out, int32_t(s.size_at_full_sampling));
    uint32_t off = uint32_t(4 * s.entries.size());
    for (auto& e : s.entries) {
        append_le<uint32_t>(out, off);
        off += uint32_t(e.key.size() + 8);
    }
    for (auto& e : s.entries) {
        out += e.key;
        append_le<uint64_t>(out, e.index_position);
    }
    append_be<int32_t>(out, int32_t(s.first_key.size()));
    out += s.first_key;
    append_be<int32_t>(out, int32_t(s.last_key.size()));
    out += s.last_key;
    return out;
}

void summary_builder::add(std::string_view key, uint64_t index_position) {
    if (_count % _interval == 0) {
        _s.entries.push_back(summary_entry{std::string(key), index_position});
    }
    if (_count == 0) {
        _s.first_key = std::string(key);
    }
    _s.last_key = std::string(key);
    ++_count;
}

summary summary_builder::build() && {
    _s.min_index_interval = _interval;
    _s.sampling_level = base_sampling_level;
    _s.size_at_full_sampling = uint32_t((_count + _interval - 1) / _interval);
    return std::move(_s);
}

future<summary> rebuild_summary(std::string index_file, sstable_version v, uint32_t min_index_interval) {
    (void)v;  // every mx version frames entries the same way; only their promoted index differs
    summary_builder b(min_index_interval);
    std::string pending;  // bytes of entries not yet complete
    uint64_t pending_at = 0;
    file_input_stream_options opts;
    opts.buffer_size = 64 * 1024;
    co_await for_each_file_buffer(index_file, opts, [&](const temporary_buffer& buf) {
        pending.append(buf.get(), buf.size());
        size_t pos = 0;
        while (true) {
            auto rest = std::string_view(pending).substr(pos);
            auto len = index_entry_length(rest, index_file, pending_at + pos);
            if (!len || *len > rest.size()) {
                break;
            }
            uint16_t key_len = utils::read_be_unchecked<uint16_t>(rest.data());
            b.add(rest.substr(2, key_len), pending_at + pos);
            pos += *len;
        }
        pending.erase(0, pos);
        pending_at += pos;
    });
    if (!pending.empty()) {
        throw malformed_sstable_exception(index_file, pending_at,
                                          "expected a whole index entry, found the file's last " +
                                              std::to_string(pending.size()) + " bytes cut short");
    }
    co_return std::move(b).build();
}

} // namespace reef::sstables
