// The reversed byte stream of one partition. See partition_reversing_data_source.hh, and FORMAT.md ("Data.db",
// "Reading a partition backwards") for the fields it walks.
#include "sstables/partition_reversing_data_source.hh"

#include "runtime/with_closeable.hh"
#include "sstables/byte_reader.hh"
#include "sstables/deletion_time.hh"
#include "sstables/exceptions.hh"
#include "utils/vint.hh"

#include <algorithm>
#include <cstring>

namespace reef::sstables {

namespace {

// Unfiltered flags (UnfilteredSerializer), as mx_parser.cc names them.
constexpr uint8_t end_of_partition = 0x01;
constexpr uint8_t is_marker = 0x02;
constexpr uint8_t extension_flag = 0x80;
constexpr uint8_t is_static = 0x01;

// ClusteringPrefix.Kind ordinals of a marker and their mirror images: a bound read backwards is the other end of
// its range (same inclusiveness); a boundary closes what it opened and the other way round.
uint8_t swapped_kind(uint8_t k) {
    switch (k) {
    case 0: return 7;  // excl_end <-> excl_start
    case 7: return 0;
    case 1: return 6;  // incl_start <-> incl_end
    case 6: return 1;
    case 2: return 5;  // excl_end_incl_start <-> incl_end_excl_start
    case 5: return 2;
    default: return k;
    }
}

// What the walk needs of an unfiltered's header.
struct unfiltered_header {
    uint64_t size = 0;           // the whole unfiltered, flags included
    uint64_t previous_size = 0;  // the stored size of the one before it
    bool marker = false;
    uint8_t kind = 0;
    size_t deletions_at = 0;     // a marker's deletions: bytes from the unfiltered's start
};

} // namespace

reversal_start find_reversal_start(const promoted_index& pi, uint64_t partition_start, uint64_t partition_end,
                                   const position_in_partition& forward_end, const position_in_partition_comparator& cmp,
                                   const std::vector<data_type>& types, sstable_version version,
                                   const std::string& index_file) {
    size_t count = pi.block_count();
    size_t b = pi.first_block_not_before(forward_end, cmp, types, version, index_file);
    if (b >= count) {
        b = count - 1;
    }
    auto block = pi.block(b, types, version, index_file);
    bool last = b + 1 == count;
    uint64_t start = partition_start + block.offset;
    uint64_t end = last ? partition_end - 1 : start + block.width;
    if (partition_end <= partition_start || block.offset > partition_end - partition_start || start >= end ||
        end >= partition_end) {
        throw malformed_sstable_exception(index_file, pi.blocks_file_offset + pi.offsets[b],
                                          "promoted index block " + std::to_string(b) + " at Data.db [" +
                                              std::to_string(start) + ", " + std::to_string(start + block.width) +
                                              ") does not lie inside its partition [" + std::to_string(partition_start) +
                                              ", " + std::to_string(partition_end) + ")");
    }
    reversal_start r{start, end, std::nullopt};
    if (!last && block.end_open_marker && !block.end_open_marker->live()) {
        r.open_at_end = block.end_open_marker;
    }
    return r;
}

namespace {

class partition_reversing_source final : public data_source_impl {
public:
    partition_reversing_source(data_source_factory open, const serialization_header& header, std::string file,
                               uint64_t partition_start, uint64_t partition_end, std::optional<reversal_start> start,
                               partition_reversing_options o, std::optional<uint64_t> body_header_end = std::nullopt)
        : _open(std::move(open)), _file(std::move(file)), _stats(header.stats),
          _uint_deletion_time(has_uint_deletion_time(header.version)), _p(partition_start),
          _q(partition_end), _start(start), _o(o), _body_header_end(body_header_end) {
        for (auto& t : header.clustering_types) {
            _clustering_lengths.push_back(t->value_length_if_fixed());
        }
        _o.window = std::max<uint64_t>(_o.window, 1);
        _o.alignment = std::max<uint64_t>(_o.alignment, 1);
        _step = std::min(_o.window, std::max<uint64_t>(_o.alignment, 4096));
    }

    future<temporary_buffer> get() override {
        std::string out;
        if (_state == state::init) {
            co_await init(out);
        }
        while (_state == state::walking && out.size() < _o.output_buffer) {
            // Only a window that must be read is awaited (coroutine rule 5: in debug builds, awaits that complete at
            // once grow the stack).
            if (_win.empty() || _cur < _win_start || _cur_end > win_end()) {
                co_await load(_cur, _cur_end);
            }
            emit_one(out);
        }
        if (_state == state::end_byte) {
            out.push_back(char(end_of_partition));
            _state = state::done;
            // The walk's window is no longer needed.
            _win = temporary_buffer();
        }
        co_return temporary_buffer::copy_of(out);
    }

private:
    enum class state { init, walking, end_byte, done };

    [[noreturn]] void fail(uint64_t at, const std::string& what) const {
        throw malformed_sstable_exception(_file, at, what + " (reading the partition at " + std::to_string(_p) +
                                                         " backwards)");
    }

    uint64_t win_end() const noexcept { return _win_start + _win.size(); }
    std::span<const std::byte> bytes(uint64_t a, uint64_t b) const {
        return std::as_bytes(std::span<const char>(_win.get() + (a - _win_start), b - a));
    }

    // Bytes [lo, hi) of Data.db, all of them.
    future<temporary_buffer> read_range(uint64_t lo, uint64_t hi) {
        temporary_buffer out(hi - lo);
        size_t got = 0;
        co_await with_closeable(_open(lo, hi - lo), [&out, &got, lo, hi](data_source& src) -> future<> {
            while (got < hi - lo) {
                auto b = co_await src.get();
                if (b.empty()) {
                    break;
                }
                size_t n = std::min<size_t>(b.size(), hi - lo - got);
                std::memcpy(out.get_write() + got, b.get(), n);
                got += n;
            }
        });
        if (got < hi - lo) {
            fail(lo + got, "Data.db ends before the partition's end at " + std::to_string(_q));
        }
        co_return out;
    }

    // Makes the window hold [a, b). Moving backwards (b inside the window), the bytes [window start, b) are kept and
    // only what lies before them is read: at least a window's worth, from an aligned offset, never before the
    // partition's start.
    future<> load(uint64_t a, uint64_t b) {
        if (!_win.empty() && a >= _win_start && b <= win_end()) {
            co_return;
        }
        bool keep = !_win.empty() && b > _win_start && b <= win_end() && a < _win_start;
        uint64_t read_hi = keep ? _win_start : b;
        uint64_t lo = std::min(a, read_hi > _step ? read_hi - _step : 0);
        lo = std::max(lo / _o.alignment * _o.alignment, _p);
        _step = std::min(_step * 2, _o.window);
        auto fresh = co_await read_range(lo, read_hi);
        if (keep) {
            temporary_buffer joined(b - lo);
            std::memcpy(joined.get_write(), fresh.get(), fresh.size());
            std::memcpy(joined.get_write() + fresh.size(), _win.get(), b - _win_start);
            fresh = std::move(joined);
        }
        _win = std::move(fresh);
        _win_start = lo;
    }

    // Makes the window hold [_p, hi) (hi clamped to the partition's end), reading forward.
    future<> load_forward(uint64_t hi) {
        hi = std::min(hi, _q);
        if (hi <= win_end()) {
            co_return;
        }
        auto more = co_await read_range(win_end(), hi);
        temporary_buffer joined(hi - _win_start);
        std::memcpy(joined.get_write(), _win.get(), _win.size());
        std::memcpy(joined.get_write() + _win.size(), more.get(), more.size());
        _win = std::move(joined);
    }

    // The partition header and static row (passed on as they are; not for a body-only walk), then where the walk
    // starts.
    future<> init(std::string& out) {
        if (_q <= _p) {
            fail(_p, "an empty partition byte range (ends at " + std::to_string(_q) + ")");
        }
        if (_body_header_end) {
            _header_end = *_body_header_end;
            if (_header_end <= _p || _header_end >= _q) {
                fail(_header_end, "the partition's first unfiltered at " + std::to_string(_header_end) +
                                      " is outside the partition (ends at " + std::to_string(_q) + ")");
            }
        } else {
            co_await init_header(out);
        }
        co_await init_walk(out);
    }

    // The partition header and static row, passed on as they are; sets _header_end.
    future<> init_header(std::string& out) {
        // A chunk's worth (one page uncompressed): the header and static row are usually in it.
        _win = co_await read_range(_p, std::min(_q, _p + std::max<uint64_t>(64, std::min(_o.window, _o.alignment))));
        _win_start = _p;
        co_await load_forward(_p + 2);
        uint64_t key_length = 0;
        {
            byte_reader in(_file, bytes(_p, win_end()), _p);
            key_length = in.read_be<uint16_t>("the partition key length");
        }
        // The key, then the deletion: int32 and int64 (mc..nb); oa: 0x80 alone when live, else int64 and uint32.
        // (A corrupt key length may point past the partition: refused before the window is read there.)
        uint64_t pos = _p + 2 + key_length + 12;
        if (_p + 2 + key_length + 1 > _q) {
            fail(_p, "the partition key's length " + std::to_string(key_length) + " runs past the partition's end at " +
                         std::to_string(_q));
        }
        if (_uint_deletion_time) {
            co_await load_forward(_p + 2 + key_length + 1);
            byte_reader in(_file, bytes(_p + 2 + key_length, win_end()), _p + 2 + key_length);
            if (in.read_u8("the partition deletion's flags") & oa_live_deletion_flag) {
                pos = _p + 2 + key_length + 1;
            }
        }
        if (pos >= _q) {
            fail(_p, "the partition header (key and deletion) runs past the partition's end at " + std::to_string(_q));
        }
        co_await load_forward(pos + 2);
        {
            byte_reader in(_file, bytes(pos, win_end()), pos);
            uint8_t flags = in.read_u8("the flags of the partition's first unfiltered");
            bool static_row = (flags & extension_flag) && !(flags & end_of_partition) && !(flags & is_marker) &&
                              (in.read_u8("the extended flags") & is_static);
            if (static_row) {
                co_await load_forward(pos + 2 + utils::max_vint_size);
                byte_reader sizes(_file, bytes(pos + 2, win_end()), pos + 2);
                uint64_t size = sizes.read_unsigned_vint("the static row's size");
                if (size > _q - sizes.offset()) {
                    fail(pos + 2, "the static row's size " + std::to_string(size) + " runs past the partition's end");
                }
                pos = sizes.offset() + size;
                co_await load_forward(pos);
            }
        }
        _header_end = pos;
        if (_header_end >= _q) {
            fail(_header_end, "the partition has no end-of-partition flag before " + std::to_string(_q));
        }
        auto head = bytes(_p, _header_end);
        out.append(reinterpret_cast<const char*>(head.data()), head.size());
    }

    // Finds the walk's first unfiltered: the last of the start block (or of the partition).
    future<> init_walk(std::string& out) {
        uint64_t scan_lo = _header_end;
        uint64_t scan_hi = _q - 1;
        if (_start) {
            if (_start->start < _header_end || _start->start >= _start->end || _start->end > _q - 1) {
                fail(_start->start, "the walk's start block [" + std::to_string(_start->start) + ", " +
                                        std::to_string(_start->end) + ") is not among the partition's unfiltereds [" +
                                        std::to_string(_header_end) + ", " + std::to_string(_q - 1) + ")");
            }
            scan_lo = _start->start;
            scan_hi = _start->end;
        }
        // The block to scan, with the end-of-partition byte when it is the last one.
        uint64_t load_hi = scan_hi == _q - 1 ? _q : scan_hi;
        if (_win.empty() || !(scan_lo >= _win_start && load_hi <= win_end())) {
            // The block alone, from an aligned offset: the walk may end inside it.
            uint64_t lo = std::max(scan_lo / _o.alignment * _o.alignment, _p);
            _win = co_await read_range(lo, load_hi);
            _win_start = lo;
        }
        if (scan_hi == _q - 1 && uint8_t(_win[_q - 1 - _win_start]) != end_of_partition) {
            fail(_q - 1, "expected the end-of-partition flag before the next partition, found " +
                             std::to_string(unsigned(uint8_t(_win[_q - 1 - _win_start]))));
        }
        // The last unfiltered of the block: its predecessors are found backwards, but not it.
        uint64_t last = scan_hi;
        for (uint64_t at = scan_lo; at < scan_hi;) {
            auto h = parse(at, scan_hi);
            last = at;
            at += h.size;
            if (at > scan_hi) {
                fail(last, "an unfiltered of " + std::to_string(h.size) + " bytes runs past " + std::to_string(scan_hi));
            }
        }
        if (last == scan_hi) {
            _state = state::end_byte;  // no rows or markers
            co_return;
        }
        _cur = last;
        _cur_end = scan_hi;
        _state = state::walking;
        if (_start && _start->open_at_end && !_body_header_end) {
            append_open_marker(out, *_start->open_at_end);
        }
    }

    // Parses the header of the unfiltered at `at` (which must end by `limit`, inside the window).
    unfiltered_header parse(uint64_t at, uint64_t limit) const {
        byte_reader in(_file, bytes(at, limit), at);
        unfiltered_header h;
        uint8_t flags = in.read_u8("the flags of a row or range tombstone marker");
        if (flags & end_of_partition) {
            fail(at, "an end-of-partition flag among the partition's rows");
        }
        uint8_t ext = flags & extension_flag ? in.read_u8("the extended flags") : 0;
        if (ext & is_static) {
            fail(at, "a static row after the partition's first row or marker");
        }
        size_t values = _clustering_lengths.size();
        h.marker = flags & is_marker;
        if (h.marker) {
            h.kind = in.read_u8("the kind of a range tombstone bound");
            if (h.kind > 7 || h.kind == 3 || h.kind == 4) {
                fail(at + 1, "expected the kind of a range tombstone bound or boundary, found " + std::to_string(h.kind));
            }
            uint16_t n = in.read_be<uint16_t>("the size of a range tombstone bound");
            if (n > values) {
                fail(at + 2, "a range tombstone bound of " + std::to_string(n) + " values in a table of " +
                                 std::to_string(values) + " clustering columns");
            }
            values = n;
        }
        uint64_t header = 0;
        for (size_t i = 0; i < values; ++i) {
            if (i % 32 == 0) {
                header = in.read_unsigned_vint("a clustering block header");
            }
            unsigned bits = unsigned(header >> ((i % 32) * 2)) & 3;
            if (bits == 3) {
                in.fail("clustering value " + std::to_string(i) + " is marked both empty and null");
            }
            if (bits) {
                continue;
            }
            uint64_t len = _clustering_lengths[i] ? *_clustering_lengths[i]
                                                  : in.read_unsigned_vint("the length of a clustering value");
            if (len > in.remaining()) {
                in.fail("a clustering value of " + std::to_string(len) + " bytes runs past the unfiltered");
            }
            in.skip(size_t(len), "a clustering value");
        }
        uint64_t size = in.read_unsigned_vint(h.marker ? "the marker size" : "the row size");
        if (size > limit - in.offset()) {
            fail(at, "the unfiltered's size " + std::to_string(size) + " runs past " + std::to_string(limit));
        }
        h.size = in.offset() - at + size;
        h.previous_size = in.read_unsigned_vint("the previous unfiltered's size");
        h.deletions_at = in.offset() - at;
        return h;
    }

    // Passes the unfiltered [_cur, _cur_end) (in the window) on, then steps to the one before it.
    void emit_one(std::string& out) {
        auto h = parse(_cur, _cur_end);
        if (_cur + h.size != _cur_end) {
            fail(_cur, "the unfiltered's size says it ends at " + std::to_string(_cur + h.size) +
                           ", the next one starts at " + std::to_string(_cur_end));
        }
        auto b = bytes(_cur, _cur_end);
        size_t first = out.size();
        out.append(reinterpret_cast<const char*>(b.data()), b.size());
        if (h.marker) {
            out[first + 1] = char(swapped_kind(h.kind));
            if (h.kind == 2 || h.kind == 5) {
                swap_boundary_deletions(out, first, h);
            }
        }
        if (_cur == _header_end) {
            _state = state::end_byte;
            return;
        }
        if (h.previous_size == 0 || h.previous_size > _cur - _header_end) {
            fail(_cur, "the previous unfiltered's size " + std::to_string(h.previous_size) +
                           " does not lead back to an unfiltered at or after the partition's first one at " +
                           std::to_string(_header_end));
        }
        _cur_end = _cur;
        _cur -= h.previous_size;
    }

    // A boundary stores the deletion it closes, then the one it opens: read backwards they trade places.
    void swap_boundary_deletions(std::string& out, size_t first, const unfiltered_header& h) const {
        size_t at = first + h.deletions_at;
        size_t end = first + h.size;
        auto vint_length = [&](size_t p) -> size_t {
            if (p >= end) {
                fail(_cur + (p - first), "a range tombstone boundary ends inside its deletions");
            }
            size_t n = utils::vint_length_from_first_byte(std::byte(out[p]));
            if (n > end - p) {
                fail(_cur + (p - first), "a range tombstone boundary ends inside its deletions");
            }
            return n;
        };
        size_t closes = vint_length(at);
        closes += vint_length(at + closes);
        size_t opens = vint_length(at + closes);
        opens += vint_length(at + closes + opens);
        if (at + closes + opens != end) {
            fail(_cur, "a range tombstone boundary's deletions end at " + std::to_string(_cur + h.deletions_at + closes + opens) +
                           ", its size says " + std::to_string(_cur + h.size));
        }
        std::string closing = out.substr(at, closes);
        std::memmove(out.data() + at, out.data() + at + closes, opens);
        std::memcpy(out.data() + at + opens, closing.data(), closes);
    }

    // A marker that opens d before every row (an inclusive start with no clustering values: read reversed, the
    // partition's far end), for a walk that starts inside a range tombstone.
    void append_open_marker(std::string& out, const deletion_time& d) const {
        std::string body;
        utils::append_unsigned_vint(body, 0);  // previous size: the parser does not use it
        utils::append_unsigned_vint(body, uint64_t(d.marked_for_delete_at) - uint64_t(_stats.min_timestamp));
        // As the writer encodes a 32-bit delta: sign-extended.
        int32_t ldt_delta = int32_t(uint32_t(d.local_deletion_time) - uint32_t(_stats.min_local_deletion_time));
        utils::append_unsigned_vint(body, uint64_t(int64_t(ldt_delta)));
        out.push_back(char(is_marker));
        out.push_back(char(1));  // incl_start
        out.push_back(0);        // no clustering values (u16)
        out.push_back(0);
        utils::append_unsigned_vint(out, body.size());
        out += body;
    }

    data_source_factory _open;
    std::string _file;
    encoding_stats _stats;
    bool _uint_deletion_time;  // oa's partition deletion form
    std::vector<std::optional<uint32_t>> _clustering_lengths;
    uint64_t _p;
    uint64_t _q;
    std::optional<reversal_start> _start;
    partition_reversing_options _o;
    // A body-only walk: where the partition's first unfiltered is (the header is not read).
    std::optional<uint64_t> _body_header_end;
    // Bytes the next step back reads (doubling up to the window).
    uint64_t _step = 0;
    state _state = state::init;
    // Data.db [_win_start, _win_start + _win.size()).
    temporary_buffer _win;
    uint64_t _win_start = 0;
    uint64_t _header_end = 0;
    // The next unfiltered to pass on.
    uint64_t _cur = 0;
    uint64_t _cur_end = 0;
};

} // namespace

data_source make_partition_reversing_data_source(data_source_factory open, const serialization_header& header,
                                                 std::string file, uint64_t partition_start, uint64_t partition_end,
                                                 std::optional<reversal_start> start, partition_reversing_options options) {
    return data_source(std::make_unique<partition_reversing_source>(std::move(open), header, std::move(file),
                                                                    partition_start, partition_end, start, options));
}

data_source make_partition_body_reversing_data_source(data_source_factory open, const serialization_header& header,
                                                      std::string file, uint64_t partition_start, uint64_t partition_end,
                                                      uint64_t header_end, reversal_start start,
                                                      partition_reversing_options options) {
    return data_source(std::make_unique<partition_reversing_source>(std::move(open), header, std::move(file),
                                                                    partition_start, partition_end, start, options,
                                                                    header_end));
}

} // namespace reef::sstables
