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

} // namespace

mx_parser::mx_parser(const serialization_header& header, std::string file, mx_consumer& consumer,
                     uint64_t start_offset, std::optional<uint64_t> stream_end, start_at start)
    : _header(header), _consumer(consumer), _in(std::move(file), start_offset, stream_end), _start(start) {
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

utils::sync_generator<parse_step> mx_parser::parse() {
    const auto& stats = _header.stats;
    const bool uint_deletion_time = has_uint_deletion_time(_header.version);
    // Everything below is the parser's state; it lives in this frame between buffers.
    uint8_t flags = 0;
    uint8_t ext = 0;
    uint8_t cell_flags = 0;
    uint8_t kind = 0;
    uint16_t u16 = 0;
    int32_t i32 = 0;
    int64_t i64 = 0;
    uint64_t v = 0;
    uint64_t v2 = 0;
    std::span<const std::byte> span;
    bytes key;
    bytes path;
    clustering_values clustering;
    std::vector<column_id> present;
    mx_row row;
    mx_marker marker;
    mx_cell cell;

    bool inside_partition = _start == start_at::inside_partition;
    while (true) {
        if (!inside_partition) {
            // A partition boundary: the stream may end here.
            while (true) {
                auto more = _in.has_more();
                if (more) {
                    if (!*more) {
                        co_return;
                    }
                    break;
                }
                co_yield parse_step{parse_step::kind::need_more_data, 0};
            }
            uint64_t partition_position = _in.offset();
            MX_READ(_in.read_be(u16, "the partition key length"));
            _in.check_length(u16, std::nullopt, "the partition key");
            MX_READ(_in.read_bytes(span, u16, "the partition key"));
            key.assign(reinterpret_cast<const uint8_t*>(span.data()), reinterpret_cast<const uint8_t*>(span.data()) + span.size());
            uint64_t deletion_at = _in.offset();
            tombstone partition_tomb;
            if (uint_deletion_time) {
                // oa: the byte 0x80 alone when live, else the timestamp (sign bit clear) then the time, unsigned.
                MX_READ(_in.read_u8(kind, "the partition deletion's flags"));
                if (kind & oa_live_deletion_flag) {
                    if (kind != oa_live_deletion_flag) {
                        _in.fail(deletion_at, "expected the partition deletion's flags 0x80 (live) or a timestamp "
                                              "with its sign bit clear, found " + hex(kind));
                    }
                } else {
                    MX_READ(_in.read_bytes(span, 11, "the partition deletion"));
                    uint64_t ts = kind;
                    for (size_t i = 0; i < 7; ++i) {
                        ts = (ts << 8) | uint8_t(span[i]);
                    }
                    uint32_t ldt = 0;
                    for (size_t i = 7; i < 11; ++i) {
                        ldt = (ldt << 8) | uint8_t(span[i]);
                    }
                    partition_tomb = *partition_tombstone(deletion_time{int64_t(ts), ldt}, _header.version);
                }
            } else {
                MX_READ(_in.read_be(i32, "the partition deletion's local deletion time"));
                MX_READ(_in.read_be(i64, "the partition deletion's timestamp"));
                auto tomb = partition_tombstone(deletion_time{i64, i32}, _header.version);
                if (!tomb) {
                    _in.fail(deletion_at, "expected a partition deletion time, found timestamp " + std::to_string(i64) +
                                              " with local deletion time " + std::to_string(i32) +
                                              " (only both or neither may say 'not deleted')");
                }
                partition_tomb = *tomb;
            }
            if (_consumer.consume_partition_start(key, partition_tomb, partition_position, _in.offset()) ==
                mx_consumer::proceed::no) {
                co_yield parse_step{parse_step::kind::consumer_full, 0};
            }
        }

        // Started inside a partition: its static row, if any, is behind us.
        bool first_unfiltered = !inside_partition;
        inside_partition = false;
        uint64_t previous_size = 0;
        while (true) {
            uint64_t position = _in.offset();
            MX_READ(_in.read_u8(flags, "the flags of a row, a range tombstone marker or the partition end"));
            if (flags & end_of_partition) {
                if (flags != end_of_partition) {
                    _in.fail(position, "unknown flags " + hex(flags) + " with the end-of-partition flag");
                }
                if (_consumer.consume_partition_end(_in.offset()) == mx_consumer::proceed::no) {
                    co_yield parse_step{parse_step::kind::consumer_full, 0};
                }
                break;
            }
            ext = 0;
            if (flags & extension_flag) {
                MX_READ(_in.read_u8(ext, "the extended flags"));
                if (ext & ~(is_static | has_shadowable_deletion)) {
                    _in.fail(position + 1, "unknown extended flags " + hex(ext));
                }
            }
            bool marker_kind = flags & is_marker;
            bool static_row = ext & is_static;
            size_t clustering_size = _clustering_lengths.size();
            if (marker_kind) {
                if ((flags & ~(is_marker | extension_flag)) || ext) {
                    _in.fail(position, "unknown flags " + hex(flags) + "/" + hex(ext) + " for a range tombstone marker");
                }
                uint64_t kind_at = _in.offset();
                MX_READ(_in.read_u8(kind, "the kind of a range tombstone bound"));
                if (!valid_bound_kind(kind)) {
                    _in.fail(kind_at, "expected the kind of a range tombstone bound or boundary, found " +
                                          std::to_string(kind));
                }
                uint64_t size_at = _in.offset();
                MX_READ(_in.read_be(u16, "the size of a range tombstone bound"));
                if (u16 > clustering_size) {
                    _in.fail(size_at, "a range tombstone bound of " + std::to_string(u16) + " values in a table of " +
                                          std::to_string(clustering_size) + " clustering columns");
                }
                clustering_size = u16;
            } else if (static_row) {
                if (!first_unfiltered || _static_columns.empty()) {
                    _in.fail(position, _static_columns.empty()
                                           ? "a static row in an sstable without static columns"
                                           : "a static row after the partition's first row or marker");
                }
                clustering_size = 0;
            }

            // The clustering values: in blocks of 32, a vint header with two bits per value (empty, null),
            // then the values that are neither.
            clustering.resize(clustering_size);
            for (size_t i = 0; i < clustering_size; ++i) {
                if (i % 32 == 0) {
                    MX_READ(_in.read_unsigned_vint(v2, "a clustering block header"));
                }
                unsigned bits = unsigned(v2 >> ((i % 32) * 2)) & 3;
                if (bits == 3) {
                    _in.fail(_in.offset(), "clustering value " + std::to_string(i) + " is marked both empty and null");
                }
                if (bits == 2) {
                    clustering[i].reset();
                    continue;
                }
                if (!clustering[i]) {
                    clustering[i].emplace();
                }
                if (bits == 1) {
                    clustering[i]->clear();
                    continue;
                }
                if (_clustering_lengths[i]) {
                    v = *_clustering_lengths[i];
                } else {
                    MX_READ(_in.read_unsigned_vint(v, "the length of a clustering value"));
                    _in.check_length(v, std::nullopt, "a clustering value");
                }
                MX_READ(_in.read_bytes(span, size_t(v), "a clustering value"));
                clustering[i]->assign(reinterpret_cast<const uint8_t*>(span.data()),
                                      reinterpret_cast<const uint8_t*>(span.data()) + span.size());
            }

            // The sizes: of the rest of this unfiltered (from after this vint), and of the previous one.
            MX_READ(_in.read_unsigned_vint(v, marker_kind ? "the marker size" : "the row size"));
            _in.check_length(v, std::nullopt, marker_kind ? "a range tombstone marker" : "a row");
            uint64_t end = _in.offset() + v;
            MX_READ(_in.read_unsigned_vint(previous_size, "the previous unfiltered's size"));

            if (marker_kind) {
                marker.kind = mx_bound_kind(kind);
                marker.clustering = &clustering;
                marker.position = position;
                marker.previous_size = previous_size;
                marker.end = end;
                MX_READ(_in.read_unsigned_vint(v, "a range tombstone's timestamp"));
                MX_READ(_in.read_unsigned_vint(v2, "a range tombstone's local deletion time"));
                marker.tomb = tombstone{add_timestamp(v, stats.min_timestamp),
                                        tombstone_deletion_time(add_deletion_time(v2, stats.min_local_deletion_time))};
                marker.boundary_start_tomb = {};
                if (is_boundary(marker.kind)) {
                    MX_READ(_in.read_unsigned_vint(v, "a range tombstone boundary's start timestamp"));
                    MX_READ(_in.read_unsigned_vint(v2, "a range tombstone boundary's start local deletion time"));
                    marker.boundary_start_tomb = tombstone{add_timestamp(v, stats.min_timestamp),
                                                           tombstone_deletion_time(add_deletion_time(v2, stats.min_local_deletion_time))};
                }
                if (_in.offset() != end) {
                    _in.fail(position, "the range tombstone marker's size says it ends at " + std::to_string(end) +
                                           ", its contents end at " + std::to_string(_in.offset()));
                }
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

            // A row: liveness, deletion, the columns present, their cells.
            row.is_static = static_row;
            row.clustering = &clustering;
            row.position = position;
            row.previous_size = previous_size;
            row.end = end;
            row.marker = {};
            row.deletion = {};
            row.shadowable_deletion = ext & has_shadowable_deletion;
            if (flags & has_timestamp) {
                MX_READ(_in.read_unsigned_vint(v, "the row's timestamp"));
                row.marker.timestamp = add_timestamp(v, stats.min_timestamp);
                if (flags & has_ttl) {
                    uint64_t ttl_at = _in.offset();
                    MX_READ(_in.read_unsigned_vint(v, "the row's TTL"));
                    MX_READ(_in.read_unsigned_vint(v2, "the row's expiry"));
                    int32_t ttl = add_int(v, stats.min_ttl);
                    if (ttl < 0) {
                        _in.fail(ttl_at, "invalid row TTL " + std::to_string(ttl));
                    }
                    row.marker.ttl = ttl;
                    row.marker.expiry = decode_expiry(add_deletion_time(v2, stats.min_local_deletion_time), ttl,
                                                     uint_deletion_time);
                }
            } else if (flags & has_ttl) {
                _in.fail(position, "row flags " + hex(flags) + " have a TTL without a timestamp");
            }
            if (flags & has_deletion) {
                MX_READ(_in.read_unsigned_vint(v, "the row deletion's timestamp"));
                MX_READ(_in.read_unsigned_vint(v2, "the row deletion's local deletion time"));
                row.deletion = tombstone{add_timestamp(v, stats.min_timestamp),
                                         tombstone_deletion_time(add_deletion_time(v2, stats.min_local_deletion_time))};
            } else if (row.shadowable_deletion) {
                _in.fail(position, "a shadowable deletion flag on a row without deletion");
            }

            // Which of the header's columns the row has.
            {
                const auto& columns = static_row ? _static_columns : _regular_columns;
                size_t superset = columns.size();
                present.clear();
                if (flags & has_all_columns) {
                    for (size_t c = 0; c < superset; ++c) {
                        present.push_back(column_id(c));
                    }
                } else {
                    uint64_t subset_at = _in.offset();
                    MX_READ(_in.read_unsigned_vint(v, "the row's column subset"));
                    if (v == 0) {
                        for (size_t c = 0; c < superset; ++c) {
                            present.push_back(column_id(c));
                        }
                    } else if (superset < 64) {
                        // A bitmap of the missing columns.
                        if (v >> superset) {
                            _in.fail(subset_at, "the column bitmap " + std::to_string(v) + " names columns beyond the " +
                                                    std::to_string(superset) + " of the header");
                        }
                        for (size_t c = 0; c < superset; ++c) {
                            if (!((v >> c) & 1)) {
                                present.push_back(column_id(c));
                            }
                        }
                    } else {
                        // Large subsets: the missing count, then the indices of the present columns when they
                        // are fewer than half, else of the missing ones, each an increasing vint.
                        if (v > superset) {
                            _in.fail(subset_at, std::to_string(v) + " missing columns of " + std::to_string(superset));
                        }
                        size_t missing = size_t(v);
                        size_t count = superset - missing;
                        bool list_present = count < superset / 2;
                        size_t listed = list_present ? count : missing;
                        size_t next = 0;  // columns before `next` are decided
                        for (size_t k = 0; k < listed; ++k) {
                            uint64_t idx_at = _in.offset();
                            MX_READ(_in.read_unsigned_vint(v, "a column index"));
                            if (v >= superset || v < next) {
                                _in.fail(idx_at, "column index " + std::to_string(v) + " is out of order or beyond the " +
                                                     std::to_string(superset) + " columns of the header");
                            }
                            if (list_present) {
                                present.push_back(column_id(v));
                            } else {
                                for (size_t c = next; c < v; ++c) {
                                    present.push_back(column_id(c));
                                }
                            }
                            next = size_t(v) + 1;
                        }
                        if (!list_present) {
                            for (size_t c = next; c < superset; ++c) {
                                present.push_back(column_id(c));
                            }
                        }
                    }
                }
            }
            if (_in.offset() > end) {
                _in.fail(position, "the row's size says it ends at " + std::to_string(end) + ", its header ends at " +
                                       std::to_string(_in.offset()));
            }

            if (_consumer.consume_row_start(row) == mx_consumer::row_action::skip) {
                uint64_t rest = _in.skip(end - _in.offset());
                if (rest) {
                    co_yield parse_step{parse_step::kind::skip, rest};
                }
            } else {
                const auto& columns = static_row ? _static_columns : _regular_columns;
                for (size_t p = 0; p < present.size(); ++p) {
                    column_id col = present[p];
                    bool complex = columns[col].complex;
                    uint64_t cells = 1;
                    if (complex) {
                        tombstone complex_tomb;
                        if (flags & has_complex_deletion) {
                            MX_READ(_in.read_unsigned_vint(v, "a complex column's deletion timestamp"));
                            MX_READ(_in.read_unsigned_vint(v2, "a complex column's local deletion time"));
                            complex_tomb = tombstone{add_timestamp(v, stats.min_timestamp),
                                                     tombstone_deletion_time(add_deletion_time(v2, stats.min_local_deletion_time))};
                        }
                        MX_READ(_in.read_unsigned_vint(cells, "a complex column's cell count"));
                        // Each cell takes at least its flags byte.
                        _in.check_length(cells, end, "a complex column's cells");
                        _consumer.consume_complex_start(col, complex_tomb);
                    }
                    for (uint64_t k = 0; k < cells; ++k) {
                        uint64_t cell_at = _in.offset();
                        MX_READ(_in.read_u8(cell_flags, "a cell's flags"));
                        if (cell_flags & 0xe0) {
                            _in.fail(cell_at, "unknown cell flags " + hex(cell_flags));
                        }
                        cell.column = col;
                        cell.is_deleted = cell_flags & cell_is_deleted;
                        cell.is_expiring = cell_flags & cell_is_expiring;
                        if (cell_flags & cell_use_row_timestamp) {
                            if (row.marker.empty()) {
                                _in.fail(cell_at, "a cell uses the row's timestamp, but the row has none");
                            }
                            cell.timestamp = row.marker.timestamp;
                        } else {
                            MX_READ(_in.read_unsigned_vint(v, "a cell's timestamp"));
                            cell.timestamp = add_timestamp(v, stats.min_timestamp);
                        }
                        if (cell_flags & cell_use_row_ttl) {
                            if (!row.marker.is_expiring()) {
                                _in.fail(cell_at, "a cell uses the row's TTL, but the row has none");
                            }
                            cell.ttl = row.marker.ttl;
                            cell.local_deletion_time = row.marker.expiry;
                        } else {
                            i64 = no_deletion_time_32;
                            if (cell.is_deleted || cell.is_expiring) {
                                MX_READ(_in.read_unsigned_vint(v, "a cell's local deletion time"));
                                i64 = add_deletion_time(v, stats.min_local_deletion_time);
                            }
                            cell.ttl = 0;
                            if (cell.is_expiring) {
                                MX_READ(_in.read_unsigned_vint(v, "a cell's TTL"));
                                cell.ttl = add_int(v, stats.min_ttl);
                                if (cell.ttl < 0) {
                                    _in.fail(cell_at, "invalid cell TTL " + std::to_string(cell.ttl));
                                }
                            }
                            cell.local_deletion_time = !(cell.is_deleted || cell.is_expiring)
                                                           ? no_deletion_time
                                                           : decode_expiry(i64, cell.ttl, uint_deletion_time);
                        }
                        path.clear();
                        if (complex) {
                            MX_READ(_in.read_unsigned_vint(v, "the length of a cell path"));
                            _in.check_length(v, end, "a cell path");
                            MX_READ(_in.read_bytes(span, size_t(v), "a cell path"));
                            path.assign(reinterpret_cast<const uint8_t*>(span.data()),
                                        reinterpret_cast<const uint8_t*>(span.data()) + span.size());
                        }
                        span = {};
                        if (!(cell_flags & cell_has_empty_value)) {
                            if (columns[col].fixed_length) {
                                v = *columns[col].fixed_length;
                            } else {
                                MX_READ(_in.read_unsigned_vint(v, "the length of a cell value"));
                            }
                            _in.check_length(v, end, "a cell value");
                            MX_READ(_in.read_bytes(span, size_t(v), "a cell value"));
                        }
                        cell.path = path;
                        cell.value = bytes_view(reinterpret_cast<const uint8_t*>(span.data()), span.size());
                        _consumer.consume_cell(cell);
                    }
                    if (complex) {
                        _consumer.consume_complex_end();
                    }
                }
                if (_in.offset() != end) {
                    _in.fail(position, "the row's size says it ends at " + std::to_string(end) +
                                           ", its contents end at " + std::to_string(_in.offset()));
                }
            }
            first_unfiltered = false;
            if (_consumer.consume_row_end(row) == mx_consumer::proceed::no) {
                co_yield parse_step{parse_step::kind::consumer_full, 0};
            }
        }
    }
}

#undef MX_READ

} // namespace reef::sstables
