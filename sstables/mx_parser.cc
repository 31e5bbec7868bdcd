// The Data.db parser coroutine. See mx_parser.hh, and FORMAT.md ("Data.db") for the layout it reads.
#include "sstables/mx_parser.hh"

#include "sstables/deletion_time.hh"

#include <limits>

namespace reef::sstables {

namespace {

// Unfiltered flags (UnfilteredSerializer).
constexpr uint8_t end_of_partition = 0x01;
constexpr uint8_t is_marker = 0x02;
constexpr uint8_t has_timestamp = 0x04;
constexpr uint8_t has_ttl = 0x08;
constexpr uint8_t has_deletion = 0x10;
constexpr uint8_t has_all_columns = 0x20;
constexpr uint8_t has_complex_deletion = 0x40;
constexpr uint8_t extension_flag = 0x80;
// Extended flags.
constexpr uint8_t is_static = 0x01;
constexpr uint8_t has_shadowable_deletion = 0x02;
// Cell flags (Cell.Serializer).
constexpr uint8_t cell_is_deleted = 0x01;
constexpr uint8_t cell_is_expiring = 0x02;
constexpr uint8_t cell_has_empty_value = 0x04;
constexpr uint8_t cell_use_row_timestamp = 0x08;
constexpr uint8_t cell_use_row_ttl = 0x10;

// LivenessInfo.EXPIRED_LIVENESS_TTL: a TTL that marks liveness as already expired.
constexpr int32_t expired_liveness_ttl = std::numeric_limits<int32_t>::max();

// Deltas against the encoding stats, with Cassandra's arithmetic: a 64-bit wrap for timestamps, a 32-bit one
// for TTLs; a local deletion time is the delta read as a signed 32-bit int plus the 32-bit minimum, in 64 bits
// (Cassandra 5.0's SerializationHeader.readLocalDeletionTime), so an overflowed minimum gives an impossible
// (negative) time rather than a plausible wrapped one.
int64_t add_timestamp(uint64_t delta, int64_t min) { return int64_t(delta + uint64_t(min)); }
int32_t add_int(uint64_t delta, int64_t min) { return int32_t(uint32_t(delta) + uint32_t(min)); }
int64_t add_deletion_time(uint64_t delta, int64_t min) { return int64_t(int32_t(uint32_t(delta))) + min; }

// The expiry of an expiring cell or liveness, or a dead cell's deletion time, as Cassandra 5.0 decodes it
// (Cell.decodeLocalDeletionTime): in mc..nb files one that overflowed into negative numbers, or one before its own
// TTL, is impossible and reads as invalid_deletion_time (never expires on its own); oa files (messaging version
// 13 and up) read a negative one as its 32 bits unsigned (the time after 2038 it stands for).
deletion_time_type decode_expiry(int64_t ldt, int32_t ttl, bool uint_deletion_time) {
    if (ldt >= ttl) {
        return ldt;
    }
    if (ldt < 0) {
        return uint_deletion_time ? deletion_time_type(uint32_t(ldt)) : invalid_deletion_time;
    }
    return ttl == expired_liveness_ttl ? deletion_time_type(ldt) : invalid_deletion_time;
}

bool valid_bound_kind(uint8_t k) { return k <= 7 && k != 3 && k != 4; }

std::string hex(unsigned v) {
    static const char digits[] = "0123456789abcdef";
    return std::string("0x") + digits[(v >> 4) & 15] + digits[v & 15];
}

// The steps of parse() that never suspend. Checks are inline; the messages of their failures are built out of line
// (cold), so that the hot loops carry only the test and a call.

[[noreturn, gnu::cold, gnu::noinline]] void fail_at(const parser_input& in, uint64_t at, const std::string& what) {
    in.fail(at, what);
}

[[noreturn, gnu::cold, gnu::noinline]] void fail_ends_at(const parser_input& in, uint64_t position, uint64_t end,
                                                         const char* whose, const char* what_ends) {
    in.fail(position, std::string(whose) + " size says it ends at " + std::to_string(end) + ", its " + what_ends +
                          " at " + std::to_string(in.offset()));
}

inline void assign(bytes& out, std::span<const std::byte> s) {
    out.assign(reinterpret_cast<const uint8_t*>(s.data()), reinterpret_cast<const uint8_t*>(s.data()) + s.size());
}

inline bytes_view as_bytes_view(std::span<const std::byte> s) {
    return bytes_view(reinterpret_cast<const uint8_t*>(s.data()), s.size());
}

// --- Data.db "partition": the deletion. ---

// oa's first byte: 0x80 alone is live; otherwise the timestamp's top byte, its sign bit clear. True when live.
bool oa_deletion_is_live(const parser_input& in, uint64_t at, uint8_t first) {
    if (!(first & oa_live_deletion_flag)) {
        return false;
    }
    if (first != oa_live_deletion_flag) {
        fail_at(in, at, "expected the partition deletion's flags 0x80 (live) or a timestamp with its sign bit "
                           "clear, found " + hex(first));
    }
    return true;
}

// oa's partition deletion from its first byte and the 11 that follow: the rest of the timestamp, then the local
// deletion time as an unsigned u32.
tombstone oa_partition_deletion(uint8_t first, std::span<const std::byte> rest, sstable_version v) {
    uint64_t ts = first;
    for (size_t i = 0; i < 7; ++i) {
        ts = (ts << 8) | uint8_t(rest[i]);
    }
    uint32_t ldt = 0;
    for (size_t i = 7; i < 11; ++i) {
        ldt = (ldt << 8) | uint8_t(rest[i]);
    }
    return *partition_tombstone(deletion_time{int64_t(ts), ldt}, v);
}

// mc..nb's partition deletion: only both sentinels together say "not deleted".
tombstone mc_partition_deletion(const parser_input& in, uint64_t at, int64_t timestamp, int32_t ldt, sstable_version v) {
    auto tomb = partition_tombstone(deletion_time{timestamp, ldt}, v);
    if (!tomb) {
        in.fail(at, "expected a partition deletion time, found timestamp " + std::to_string(timestamp) +
                        " with local deletion time " + std::to_string(ldt) +
                        " (only both or neither may say 'not deleted')");
    }
    return *tomb;
}

// --- Data.db "Unfiltered": the flags. ---

inline void check_partition_end_flags(const parser_input& in, uint64_t at, uint8_t flags) {
    if (flags != end_of_partition) {
        fail_at(in, at, "unknown flags " + hex(flags) + " with the end-of-partition flag");
    }
}

inline void check_extended_flags(const parser_input& in, uint64_t at, uint8_t ext) {
    if (ext & ~(is_static | has_shadowable_deletion)) {
        fail_at(in, at, "unknown extended flags " + hex(ext));
    }
}

inline void check_marker_flags(const parser_input& in, uint64_t at, uint8_t flags, uint8_t ext) {
    if ((flags & ~(is_marker | extension_flag)) || ext) {
        fail_at(in, at, "unknown flags " + hex(flags) + "/" + hex(ext) + " for a range tombstone marker");
    }
}

// --- Data.db "marker": kind and size. ---

inline void check_bound_kind(const parser_input& in, uint64_t at, uint8_t kind) {
    if (!valid_bound_kind(kind)) {
        fail_at(in, at, "expected the kind of a range tombstone bound or boundary, found " + std::to_string(kind));
    }
}

inline void check_bound_size(const parser_input& in, uint64_t at, uint16_t size, size_t clustering_columns) {
    if (size > clustering_columns) {
        fail_at(in, at, "a range tombstone bound of " + std::to_string(size) + " values in a table of " +
                               std::to_string(clustering_columns) + " clustering columns");
    }
}

inline void check_static_row(const parser_input& in, uint64_t at, bool first_unfiltered, bool has_static_columns) {
    if (!first_unfiltered || !has_static_columns) {
        fail_at(in, at, !has_static_columns ? "a static row in an sstable without static columns"
                                               : "a static row after the partition's first row or marker");
    }
}

// --- Data.db "Clustering values". ---

// Value i's two bits in its block's header: true when its bytes follow (value is then engaged); an empty or a
// null value is set here.
inline bool clustering_value_follows(const parser_input& in, uint64_t block_header, size_t i,
                                     std::optional<bytes>& value) {
    unsigned bits = unsigned(block_header >> ((i % 32) * 2)) & 3;
    if (bits == 3) {
        fail_at(in, in.offset(), "clustering value " + std::to_string(i) + " is marked both empty and null");
    }
    if (bits == 2) {
        value.reset();
        return false;
    }
    if (!value) {
        value.emplace();
    }
    if (bits == 1) {
        value->clear();
        return false;
    }
    return true;
}

// --- Data.db "Deltas". ---

inline tombstone delta_tombstone(uint64_t timestamp_delta, uint64_t ldt_delta, const encoding_stats& stats) {
    return tombstone{add_timestamp(timestamp_delta, stats.min_timestamp),
                     tombstone_deletion_time(add_deletion_time(ldt_delta, stats.min_local_deletion_time))};
}

// A TTL, refused when negative (what: "row", "cell").
[[gnu::always_inline]] inline int32_t checked_ttl(const parser_input& in, uint64_t at, uint64_t ttl_delta, const encoding_stats& stats,
                           const char* what) {
    int32_t ttl = add_int(ttl_delta, stats.min_ttl);
    if (ttl < 0) {
        fail_at(in, at, std::string("invalid ") + what + " TTL " + std::to_string(ttl));
    }
    return ttl;
}

// --- Data.db "row": its start, liveness and deletion. ---

inline void start_row(mx_row& row, bool is_static_row, const clustering_values& clustering, uint64_t position,
                      uint64_t previous_size, uint64_t end, uint8_t ext) {
    row.is_static = is_static_row;
    row.clustering = &clustering;
    row.position = position;
    row.previous_size = previous_size;
    row.end = end;
    row.marker = {};
    row.deletion = {};
    row.shadowable_deletion = ext & has_shadowable_deletion;
}

inline void start_marker(mx_marker& marker, uint8_t kind, const clustering_values& clustering, uint64_t position,
                         uint64_t previous_size, uint64_t end) {
    marker.kind = mx_bound_kind(kind);
    marker.clustering = &clustering;
    marker.position = position;
    marker.previous_size = previous_size;
    marker.end = end;
    marker.boundary_start_tomb = {};
}

inline void check_ttl_has_timestamp(const parser_input& in, uint64_t position, uint8_t flags) {
    if (flags & has_ttl) {
        fail_at(in, position, "row flags " + hex(flags) + " have a TTL without a timestamp");
    }
}

inline void check_shadowable_has_deletion(const parser_input& in, uint64_t position, const mx_row& row) {
    if (row.shadowable_deletion) {
        fail_at(in, position, "a shadowable deletion flag on a row without deletion");
    }
}

// The unfiltered's size against where its header (or its contents) ended.
inline void check_header_end(const parser_input& in, uint64_t position, uint64_t end) {
    if (in.offset() > end) {
        fail_ends_at(in, position, end, "the row's", "header ends");
    }
}
inline void check_contents_end(const parser_input& in, uint64_t position, uint64_t end, const char* whose) {
    if (in.offset() != end) {
        fail_ends_at(in, position, end, whose, "contents end");
    }
}

// --- Data.db "Column subset". ---

// The header indices of a row's columns: inline for the common row, so that a short read allocates none.
using present_columns = utils::small_vector<column_id, 16>;

inline void all_columns(present_columns& present, size_t superset) {
    for (size_t c = 0; c < superset; ++c) {
        present.push_back(column_id(c));
    }
}

// 0 (all columns), or, with fewer than 64 header columns, a bitmap of the missing ones.
[[gnu::always_inline]] inline void small_subset_columns(const parser_input& in, uint64_t at, uint64_t subset, size_t superset,
                                 present_columns& present) {
    if (subset == 0) {
        all_columns(present, superset);
        return;
    }
    if (subset >> superset) {
        fail_at(in, at, "the column bitmap " + std::to_string(subset) + " names columns beyond the " +
                               std::to_string(superset) + " of the header");
    }
    for (size_t c = 0; c < superset; ++c) {
        if (!((subset >> c) & 1)) {
            present.push_back(column_id(c));
        }
    }
}

// With 64 or more header columns: the missing count, then the indices of the present columns when they are fewer
// than half, else of the missing ones, each an increasing vint. Fed the indices one by one.
class large_subset {
public:
    void start(const parser_input& in, uint64_t at, uint64_t missing, size_t superset) {
        if (missing > superset) {
            fail_at(in, at, std::to_string(missing) + " missing columns of " + std::to_string(superset));
        }
        _superset = superset;
        size_t count = superset - size_t(missing);
        _list_present = count < superset / 2;
        _listed = _list_present ? count : size_t(missing);
        _next = 0;
    }
    size_t listed() const noexcept { return _listed; }
    void add(const parser_input& in, uint64_t at, uint64_t index, present_columns& present) {
        if (index >= _superset || index < _next) {
            fail_at(in, at, "column index " + std::to_string(index) + " is out of order or beyond the " +
                                   std::to_string(_superset) + " columns of the header");
        }
        if (_list_present) {
            present.push_back(column_id(index));
        } else {
            for (size_t c = _next; c < index; ++c) {
                present.push_back(column_id(c));
            }
        }
        _next = size_t(index) + 1;
    }
    void finish(present_columns& present) {
        if (!_list_present) {
            for (size_t c = _next; c < _superset; ++c) {
                present.push_back(column_id(c));
            }
        }
    }

private:
    size_t _superset = 0;
    size_t _listed = 0;
    size_t _next = 0;  // columns before it are decided
    bool _list_present = false;
};

// --- Data.db "Cell". ---

inline void start_cell(const parser_input& in, uint64_t at, uint8_t cell_flags, column_id column, mx_cell& cell) {
    if (cell_flags & 0xe0) {
        fail_at(in, at, "unknown cell flags " + hex(cell_flags));
    }
    cell.column = column;
    cell.is_deleted = cell_flags & cell_is_deleted;
    cell.is_expiring = cell_flags & cell_is_expiring;
}

inline void use_row_timestamp(const parser_input& in, uint64_t at, const mx_row& row, mx_cell& cell) {
    if (row.marker.empty()) {
        fail_at(in, at, "a cell uses the row's timestamp, but the row has none");
    }
    cell.timestamp = row.marker.timestamp;
}

inline void use_row_ttl(const parser_input& in, uint64_t at, const mx_row& row, mx_cell& cell) {
    if (!row.marker.is_expiring()) {
        fail_at(in, at, "a cell uses the row's TTL, but the row has none");
    }
    cell.ttl = row.marker.ttl;
    cell.local_deletion_time = row.marker.expiry;
}

} // namespace

mx_parser::mx_parser(const serialization_header& header, std::string_view file, mx_consumer& consumer,
                     uint64_t start_offset, std::optional<uint64_t> stream_end, start_at start)
    : _header(header), _consumer(consumer), _in(file, start_offset, stream_end), _start(start) {
    for (auto& t : header.clustering_types) {
        _clustering_lengths.push_back(t->value_length_if_fixed());
    }
    for (auto& c : header.static_columns) {
        // Complex cells' values are written with their collection's type, which has no fixed length.
        _static_columns.push_back({c.is_complex(), c.is_complex() ? std::nullopt : c.type->value_length_if_fixed()});
    }
    for (auto& c : header.regular_columns) {
        _regular_columns.push_back({c.is_complex(), c.is_complex() ? std::nullopt : c.type->value_length_if_fixed()});
    }
    _gen = parse();
}

parse_step mx_parser::run() {
    if (_error) {
        std::rethrow_exception(_error);
    }
    try {
        auto step = _gen.resume();
        return step ? *step : parse_step{parse_step::kind::done, 0};
    } catch (...) {
        _error = std::current_exception();
        throw;
    }
}

// Each read step either completes or keeps what the buffer had; then the coroutine waits for more.
#define MX_READ(step)                                                     \
    while (!(step)) {                                                     \
        co_yield parse_step{parse_step::kind::need_more_data, 0};        \
    }

// A delta-encoded deletion (FORMAT.md, Data.db "Deltas"): timestamp vint, local deletion time vint, into `out`.
#define MX_READ_DELETION(out, timestamp_what, ldt_what)                  \
    MX_READ(_in.read_unsigned_vint(timestamp_delta, timestamp_what));    \
    MX_READ(_in.read_unsigned_vint(ldt_delta, ldt_what));                \
    out = delta_tombstone(timestamp_delta, ldt_delta, stats)

// The sections below carry the names of FORMAT.md's "Data.db" section, in its order.
utils::sync_generator<parse_step> mx_parser::parse() {
    const auto& stats = _header.stats;
    const auto version = _header.version;
    const bool uint_deletion_time = has_uint_deletion_time(version);
    // Everything below is the parser's state; it lives in this frame between buffers.
    uint8_t flags = 0;            // the unfiltered's flags
    uint8_t ext = 0;              // its extended flags
    uint8_t cell_flags = 0;
    uint8_t bound_kind = 0;       // a marker's ClusteringPrefix.Kind
    uint8_t deletion_first = 0;   // oa's partition deletion: 0x80 (live) or the timestamp's top byte
    uint16_t key_length = 0;
    uint16_t bound_size = 0;      // a marker's clustering prefix length
    int32_t mc_ldt = 0;           // mc..nb's partition deletion, as stored
    int64_t mc_timestamp = 0;
    uint64_t block_header = 0;    // the clustering block's empty/null bits
    uint64_t length = 0;          // of a clustering value, a cell path or a cell value
    uint64_t unfiltered_size = 0;
    uint64_t previous_size = 0;
    uint64_t timestamp_delta = 0;
    uint64_t ldt_delta = 0;
    uint64_t ttl_delta = 0;
    uint64_t subset = 0;          // the column subset vint
    uint64_t column_index = 0;    // one index of a large subset
    uint64_t cell_count = 0;
    std::span<const std::byte> span;
    bytes key;
    bytes path;
    clustering_values clustering;
    present_columns present;
    large_subset large;
    mx_row row;
    mx_marker marker;
    mx_cell cell;

    bool inside_partition = _start == start_at::inside_partition;
    while (true) {
        if (!inside_partition) {
            // A partition boundary: the stream may end here.
            std::optional<bool> more;
            while (!(more = _in.has_more())) {
                co_yield parse_step{parse_step::kind::need_more_data, 0};
            }
            if (!*more) {
                co_return;
            }

            // ---- "partition": key_length, key, deletion ----
            uint64_t partition_position = _in.offset();
            MX_READ(_in.read_be(key_length, "the partition key length"));
            _in.check_length(key_length, std::nullopt, "the partition key");
            MX_READ(_in.read_bytes(span, key_length, "the partition key"));
            assign(key, span);
            uint64_t deletion_at = _in.offset();
            tombstone partition_tomb;
            if (uint_deletion_time) {
                MX_READ(_in.read_u8(deletion_first, "the partition deletion's flags"));
                if (!oa_deletion_is_live(_in, deletion_at, deletion_first)) {
                    MX_READ(_in.read_bytes(span, 11, "the partition deletion"));
                    partition_tomb = oa_partition_deletion(deletion_first, span, version);
                }
            } else {
                MX_READ(_in.read_be(mc_ldt, "the partition deletion's local deletion time"));
                MX_READ(_in.read_be(mc_timestamp, "the partition deletion's timestamp"));
                partition_tomb = mc_partition_deletion(_in, deletion_at, mc_timestamp, mc_ldt, version);
            }
            if (_consumer.consume_partition_start(key, partition_tomb, partition_position, _in.offset()) ==
                mx_consumer::proceed::no) {
                co_yield parse_step{parse_step::kind::consumer_full, 0};
            }
        }

        // Started inside a partition: its static row, if any, is behind us.
        bool first_unfiltered = !inside_partition;
        inside_partition = false;
        while (true) {
            // ---- "Unfiltered": the flags, the extended flags ----
            uint64_t position = _in.offset();
            MX_READ(_in.read_u8(flags, "the flags of a row, a range tombstone marker or the partition end"));
            if (flags & end_of_partition) {
                check_partition_end_flags(_in, position, flags);
                if (_consumer.consume_partition_end(_in.offset()) == mx_consumer::proceed::no) {
                    co_yield parse_step{parse_step::kind::consumer_full, 0};
                }
                break;
            }
            ext = 0;
            if (flags & extension_flag) {
                MX_READ(_in.read_u8(ext, "the extended flags"));
                check_extended_flags(_in, position + 1, ext);
            }
            bool range_marker = flags & is_marker;
            bool static_row = ext & is_static;
            size_t clustering_size = _clustering_lengths.size();
            if (range_marker) {
                // ---- "marker": kind, size ("Marker kinds") ----
                check_marker_flags(_in, position, flags, ext);
                uint64_t kind_at = _in.offset();
                MX_READ(_in.read_u8(bound_kind, "the kind of a range tombstone bound"));
                check_bound_kind(_in, kind_at, bound_kind);
                uint64_t size_at = _in.offset();
                MX_READ(_in.read_be(bound_size, "the size of a range tombstone bound"));
                check_bound_size(_in, size_at, bound_size, clustering_size);
                clustering_size = bound_size;
            } else if (static_row) {
                check_static_row(_in, position, first_unfiltered, !_static_columns.empty());
                clustering_size = 0;
            }

            // ---- "Clustering values": blocks of 32, a header of empty/null bits, the other values ----
            clustering.resize(clustering_size);
            for (size_t i = 0; i < clustering_size; ++i) {
                if (i % 32 == 0) {
                    MX_READ(_in.read_unsigned_vint(block_header, "a clustering block header"));
                }
                if (!clustering_value_follows(_in, block_header, i, clustering[i])) {
                    continue;
                }
                if (_clustering_lengths[i]) {
                    length = *_clustering_lengths[i];
                } else {
                    MX_READ(_in.read_unsigned_vint(length, "the length of a clustering value"));
                    _in.check_length(length, std::nullopt, "a clustering value");
                }
                MX_READ(_in.read_bytes(span, size_t(length), "a clustering value"));
                assign(*clustering[i], span);
            }

            // ---- row_size / marker_size (from after this vint), previous_size ----
            MX_READ(_in.read_unsigned_vint(unfiltered_size, range_marker ? "the marker size" : "the row size"));
            _in.check_length(unfiltered_size, std::nullopt, range_marker ? "a range tombstone marker" : "a row");
            uint64_t end = _in.offset() + unfiltered_size;
            MX_READ(_in.read_unsigned_vint(previous_size, "the previous unfiltered's size"));

            if (range_marker) {
                // ---- "marker": its deletion (a bound), or end and start deletions (a boundary) ----
                start_marker(marker, bound_kind, clustering, position, previous_size, end);
                MX_READ_DELETION(marker.tomb, "a range tombstone's timestamp", "a range tombstone's local deletion time");
                if (is_boundary(marker.kind)) {
                    MX_READ_DELETION(marker.boundary_start_tomb, "a range tombstone boundary's start timestamp",
                                     "a range tombstone boundary's start local deletion time");
                }
                check_contents_end(_in, position, end, "the range tombstone marker's");
                first_unfiltered = false;
                if (_consumer.consume_range_tombstone(marker) == mx_consumer::proceed::no) {
                    co_yield parse_step{parse_step::kind::consumer_full, 0};
                }
                continue;
            }

            // A clustering row the consumer does not want (before the slice, say) is skipped by its size, unread:
            // neither its cells nor its liveness are decoded, and the consumer hears nothing more of it.
            if (!static_row && _consumer.consume_row_key(clustering, position) == mx_consumer::row_action::skip) {
                first_unfiltered = false;
                uint64_t rest = _in.skip(end - _in.offset());
                if (rest) {
                    co_yield parse_step{parse_step::kind::skip, rest};
                }
                continue;
            }

            // ---- "row": [timestamp [ttl, expiry]] [deletion] ----
            start_row(row, static_row, clustering, position, previous_size, end, ext);
            if (flags & has_timestamp) {
                MX_READ(_in.read_unsigned_vint(timestamp_delta, "the row's timestamp"));
                row.marker.timestamp = add_timestamp(timestamp_delta, stats.min_timestamp);
                if (flags & has_ttl) {
                    uint64_t ttl_at = _in.offset();
                    MX_READ(_in.read_unsigned_vint(ttl_delta, "the row's TTL"));
                    MX_READ(_in.read_unsigned_vint(ldt_delta, "the row's expiry"));
                    row.marker.ttl = checked_ttl(_in, ttl_at, ttl_delta, stats, "row");
                    row.marker.expiry = decode_expiry(add_deletion_time(ldt_delta, stats.min_local_deletion_time),
                                                      row.marker.ttl, uint_deletion_time);
                }
            } else {
                check_ttl_has_timestamp(_in, position, flags);
            }
            if (flags & has_deletion) {
                MX_READ_DELETION(row.deletion, "the row deletion's timestamp", "the row deletion's local deletion time");
            } else {
                check_shadowable_has_deletion(_in, position, row);
            }

            // ---- "Column subset": which of the header's columns the row has ----
            const auto& columns = static_row ? _static_columns : _regular_columns;
            present.clear();
            if (flags & has_all_columns) {
                all_columns(present, columns.size());
            } else {
                uint64_t subset_at = _in.offset();
                MX_READ(_in.read_unsigned_vint(subset, "the row's column subset"));
                if (subset == 0 || columns.size() < 64) {
                    small_subset_columns(_in, subset_at, subset, columns.size(), present);
                } else {
                    large.start(_in, subset_at, subset, columns.size());
                    for (size_t k = 0; k < large.listed(); ++k) {
                        uint64_t index_at = _in.offset();
                        MX_READ(_in.read_unsigned_vint(column_index, "a column index"));
                        large.add(_in, index_at, column_index, present);
                    }
                    large.finish(present);
                }
            }
            check_header_end(_in, position, end);

            if (_consumer.consume_row_start(row) == mx_consumer::row_action::skip) {
                uint64_t rest = _in.skip(end - _in.offset());
                if (rest) {
                    co_yield parse_step{parse_step::kind::skip, rest};
                }
            } else {
                // ---- "Cells" of each present column (a complex one: [deletion], cell count, cells) ----
                for (size_t p = 0; p < present.size(); ++p) {
                    column_id col = present[p];
                    bool complex = columns[col].complex;
                    cell_count = 1;
                    if (complex) {
                        tombstone complex_tomb;
                        if (flags & has_complex_deletion) {
                            MX_READ_DELETION(complex_tomb, "a complex column's deletion timestamp",
                                             "a complex column's local deletion time");
                        }
                        MX_READ(_in.read_unsigned_vint(cell_count, "a complex column's cell count"));
                        // Each cell takes at least its flags byte.
                        _in.check_length(cell_count, end, "a complex column's cells");
                        _consumer.consume_complex_start(col, complex_tomb);
                    }
                    for (uint64_t k = 0; k < cell_count; ++k) {
                        // ---- "Cell": flags, [timestamp], [local deletion time] [ttl], [path], [value] ----
                        uint64_t cell_at = _in.offset();
                        MX_READ(_in.read_u8(cell_flags, "a cell's flags"));
                        start_cell(_in, cell_at, cell_flags, col, cell);
                        if (cell_flags & cell_use_row_timestamp) {
                            use_row_timestamp(_in, cell_at, row, cell);
                        } else {
                            MX_READ(_in.read_unsigned_vint(timestamp_delta, "a cell's timestamp"));
                            cell.timestamp = add_timestamp(timestamp_delta, stats.min_timestamp);
                        }
                        if (cell_flags & cell_use_row_ttl) {
                            use_row_ttl(_in, cell_at, row, cell);
                        } else {
                            cell.ttl = 0;
                            cell.local_deletion_time = no_deletion_time;
                            if (cell.is_deleted || cell.is_expiring) {
                                MX_READ(_in.read_unsigned_vint(ldt_delta, "a cell's local deletion time"));
                                if (cell.is_expiring) {
                                    MX_READ(_in.read_unsigned_vint(ttl_delta, "a cell's TTL"));
                                    cell.ttl = checked_ttl(_in, cell_at, ttl_delta, stats, "cell");
                                }
                                // "Impossible times".
                                cell.local_deletion_time = decode_expiry(
                                    add_deletion_time(ldt_delta, stats.min_local_deletion_time), cell.ttl, uint_deletion_time);
                            }
                        }
                        path.clear();
                        if (complex) {
                            MX_READ(_in.read_unsigned_vint(length, "the length of a cell path"));
                            _in.check_length(length, end, "a cell path");
                            MX_READ(_in.read_bytes(span, size_t(length), "a cell path"));
                            assign(path, span);
                        }
                        span = {};
                        if (!(cell_flags & cell_has_empty_value)) {
                            if (columns[col].fixed_length) {
                                length = *columns[col].fixed_length;
                            } else {
                                MX_READ(_in.read_unsigned_vint(length, "the length of a cell value"));
                            }
                            _in.check_length(length, end, "a cell value");
                            MX_READ(_in.read_bytes(span, size_t(length), "a cell value"));
                        }
                        cell.path = path;
                        cell.value = as_bytes_view(span);
                        _consumer.consume_cell(cell);
                    }
                    if (complex) {
                        _consumer.consume_complex_end();
                    }
                }
                check_contents_end(_in, position, end, "the row's");
            }
            first_unfiltered = false;
            if (_consumer.consume_row_end(row) == mx_consumer::proceed::no) {
                co_yield parse_step{parse_step::kind::consumer_full, 0};
            }
        }
    }
}

#undef MX_READ_DELETION
#undef MX_READ

} // namespace reef::sstables
