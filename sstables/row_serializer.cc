// Rows and markers as Data.db stores them. See row_serializer.hh and FORMAT.md ("Data.db").
#include "sstables/row_serializer.hh"

#include "utils/big_endian.hh"
#include "utils/vint.hh"

#include <stdexcept>

namespace reef::sstables {

namespace {

constexpr uint8_t is_marker = 0x02;
constexpr uint8_t has_timestamp = 0x04;
constexpr uint8_t has_ttl = 0x08;
constexpr uint8_t has_deletion = 0x10;
constexpr uint8_t has_all_columns = 0x20;
constexpr uint8_t has_complex_deletion = 0x40;
constexpr uint8_t extension_flag = 0x80;
constexpr uint8_t ext_is_static = 0x01;

constexpr uint8_t cell_is_deleted = 0x01;
constexpr uint8_t cell_is_expiring = 0x02;
constexpr uint8_t cell_has_empty_value = 0x04;
constexpr uint8_t cell_use_row_timestamp = 0x08;
constexpr uint8_t cell_use_row_ttl = 0x10;

bool is_boundary(clustering_kind k) {
    return k == clustering_kind::excl_end_incl_start_boundary || k == clustering_kind::incl_end_excl_start_boundary;
}

// An entry of a row worth writing (a collection with neither tombstone nor cells is not a column of the row).
bool present(const cell_or_collection& c) {
    auto* coll = std::get_if<collection_cells>(&c);
    return !coll || coll->tomb || !coll->cells.empty();
}

// Columns.serializeSubset: which of the header's columns a row has.
void write_column_subset(std::string& out, const std::vector<column_id>& columns, size_t superset) {
    if (columns.size() == superset) {
        utils::append_unsigned_vint(out, 0);
        return;
    }
    if (superset < 64) {
        uint64_t missing = superset == 64 ? ~uint64_t(0) : (uint64_t(1) << superset) - 1;
        for (auto c : columns) {
            missing &= ~(uint64_t(1) << c);
        }
        utils::append_unsigned_vint(out, missing);
        return;
    }
    size_t count = columns.size();
    utils::append_unsigned_vint(out, superset - count);
    if (count < superset / 2) {
        for (auto c : columns) {
            utils::append_unsigned_vint(out, c);
        }
    } else {
        size_t next = 0;
        for (auto c : columns) {
            for (; next < c; ++next) {
                utils::append_unsigned_vint(out, next);
            }
            next = c + 1;
        }
        for (; next < superset; ++next) {
            utils::append_unsigned_vint(out, next);
        }
    }
}

} // namespace

serialization_header make_serialization_header(const schema& s, encoding_stats stats) {
    serialization_header h;
    h.stats = stats;
    h.partition_key_type = s.partition_key_type();
    h.clustering_types = s.clustering_types();
    for (auto& c : s.static_columns()) {
        h.static_columns.push_back({c.name, c.type});
    }
    for (auto& c : s.regular_columns()) {
        h.regular_columns.push_back({c.name, c.type});
    }
    return h;
}

row_serializer::row_serializer(const schema& s, encoding_stats stats)
    : _s(s), _stats(stats), _ck_types(s.clustering_types()) {}

void row_serializer::write_timestamp(std::string& out, write_time::timestamp_type ts) const {
    utils::append_unsigned_vint(out, uint64_t(ts) - uint64_t(_stats.min_timestamp));
}

// Java's `int - int` widened to long: a negative difference is a (sign-extended) 9-byte vint.
void row_serializer::write_deletion_time32(std::string& out, int32_t ldt) const {
    int32_t d = int32_t(uint32_t(ldt) - uint32_t(int32_t(_stats.min_local_deletion_time)));
    utils::append_unsigned_vint(out, uint64_t(int64_t(d)));
}

void row_serializer::write_ttl(std::string& out, int32_t ttl) const {
    int32_t d = int32_t(uint32_t(ttl) - uint32_t(int32_t(_stats.min_ttl)));
    utils::append_unsigned_vint(out, uint64_t(int64_t(d)));
}

void row_serializer::write_deletion(std::string& out, tombstone t) const {
    if (!t) {
        write_timestamp(out, write_time::missing_timestamp);
        write_deletion_time32(out, no_deletion_time_32);
        return;
    }
    write_timestamp(out, t.timestamp);
    write_deletion_time32(out, deletion_time_32(t.deletion_time));
}

void row_serializer::write_partition_header(std::string& out, std::string_view key, tombstone t) const {
    if (key.size() > 0xffff) {
        throw std::invalid_argument("a partition key of " + std::to_string(key.size()) + " bytes (at most 65535)");
    }
    char b[12];
    utils::write_be_unchecked<uint16_t>(b, uint16_t(key.size()));
    out.append(b, 2);
    out.append(key);
    utils::write_be_unchecked<int32_t>(b, t ? deletion_time_32(t.deletion_time) : no_deletion_time_32);
    utils::write_be_unchecked<int64_t>(b + 4, t ? t.timestamp : write_time::missing_timestamp);
    out.append(b, 12);
}

void row_serializer::write_cell(std::string& out, const atomic_cell& c, const column_definition& col,
                                const row_marker& rm, const bytes* path) const {
    bool expiring = c.is_expiring();
    bool deleted = !expiring && c.local_deletion_time() != no_deletion_time;
    bool has_value = !c.value().empty();
    bool use_row_timestamp = !rm.empty() && c.timestamp() == rm.timestamp;
    bool use_row_ttl = expiring && rm.is_expiring() && c.ttl() == rm.ttl &&
                       deletion_time_32(c.local_deletion_time()) == deletion_time_32(rm.expiry);
    uint8_t flags = (deleted ? cell_is_deleted : 0) | (expiring ? cell_is_expiring : 0) |
                    (has_value ? 0 : cell_has_empty_value) | (use_row_timestamp ? cell_use_row_timestamp : 0) |
                    (use_row_ttl ? cell_use_row_ttl : 0);
    out.push_back(char(flags));
    if (!use_row_timestamp) {
        write_timestamp(out, c.timestamp());
    }
    if ((deleted || expiring) && !use_row_ttl) {
        write_deletion_time32(out, deletion_time_32(c.local_deletion_time()));
    }
    if (expiring && !use_row_ttl) {
        write_ttl(out, c.ttl());
    }
    if (path) {
        utils::append_unsigned_vint(out, path->size());
        out.append(reinterpret_cast<const char*>(path->data()), path->size());
    }
    if (has_value) {
        // Complex cells are written with their collection's type, which has no fixed length.
        auto fixed = path ? std::nullopt : col.type->value_length_if_fixed();
        if (fixed && c.value().size() != *fixed) {
            throw std::invalid_argument("a value of " + std::to_string(c.value().size()) + " bytes for column " + col.name +
                                        " of fixed-length type " + col.type->class_name() + " (" +
                                        std::to_string(*fixed) + " bytes)");
        }
        if (!fixed) {
            utils::append_unsigned_vint(out, c.value().size());
        }
        out.append(c.value());
    }
}

void row_serializer::write_row_body(std::string& out, bool is_static, const row_marker& rm, tombstone deletion,
                                    const row& cells, uint8_t& flags) const {
    const auto& columns = is_static ? _s.static_columns() : _s.regular_columns();
    std::vector<column_id> ids;
    bool complex_deletion = false;
    for (auto& [id, c] : cells.cells()) {
        if (!present(c)) {
            continue;
        }
        if (id >= columns.size()) {
            throw std::invalid_argument("a cell of column " + std::to_string(id) + " in a table of " +
                                        std::to_string(columns.size()) + (is_static ? " static" : " regular") + " columns");
        }
        ids.push_back(id);
        if (auto* coll = std::get_if<collection_cells>(&c); coll && coll->tomb) {
            complex_deletion = true;
        }
    }
    if (!rm.empty()) {
        flags |= has_timestamp;
        if (rm.is_expiring()) {
            flags |= has_ttl;
        }
    }
    if (deletion) {
        flags |= has_deletion;
    }
    if (complex_deletion) {
        flags |= has_complex_deletion;
    }
    if (ids.size() == columns.size()) {
        flags |= has_all_columns;
    }
    if (!rm.empty()) {
        write_timestamp(out, rm.timestamp);
        if (rm.is_expiring()) {
            write_ttl(out, rm.ttl);
            write_deletion_time32(out, deletion_time_32(rm.expiry));
        }
    }
    if (deletion) {
        write_deletion(out, deletion);
    }
    if (!(flags & has_all_columns)) {
        write_column_subset(out, ids, columns.size());
    }
    for (auto& [id, c] : cells.cells()) {
        if (!present(c)) {
            continue;
        }
        auto& col = columns[id];
        if (auto* cell = std::get_if<atomic_cell>(&c)) {
            if (col.is_complex()) {
                throw std::invalid_argument("a simple cell for complex column " + col.name);
            }
            write_cell(out, *cell, col, rm, nullptr);
            continue;
        }
        auto& coll = std::get<collection_cells>(c);
        if (!col.is_complex()) {
            throw std::invalid_argument("collection cells for simple column " + col.name);
        }
        if (complex_deletion) {
            write_deletion(out, coll.tomb);
        }
        utils::append_unsigned_vint(out, coll.cells.size());
        for (auto& [path, cell] : coll.cells) {
            write_cell(out, cell, col, rm, &path);
        }
    }
}

void row_serializer::write_static_row(std::string& out, const row& cells) const {
    std::string body;
    utils::append_unsigned_vint(body, 0);  // previous size: the static row's own is 0
    uint8_t flags = extension_flag;
    write_row_body(body, true, row_marker{}, tombstone{}, cells, flags);
    out.push_back(char(flags));
    out.push_back(char(ext_is_static));
    utils::append_unsigned_vint(out, body.size());
    out += body;
}

void row_serializer::write_row(std::string& out, const clustering_row& r, uint64_t previous_size) const {
    if (r.key.size() > _ck_types.size()) {
        throw std::invalid_argument("a row key of " + std::to_string(r.key.size()) + " values in a table of " +
                                    std::to_string(_ck_types.size()) + " clustering columns");
    }
    std::string body;
    utils::append_unsigned_vint(body, previous_size);
    uint8_t flags = 0;
    write_row_body(body, false, r.marker, r.row_tombstone, r.cells, flags);
    out.push_back(char(flags));
    if (r.key.size() == _ck_types.size()) {
        write_clustering_values(out, _ck_types, r.key);
    } else {
        // A compact table's row key may be a prefix: the missing values are null (header bit 2i+1).
        auto values = r.key.components();
        for (size_t start = 0; start < _ck_types.size(); start += 32) {
            size_t stop = std::min(_ck_types.size(), start + 32);
            uint64_t header = 0;
            for (size_t i = start; i < stop; ++i) {
                if (i >= values.size()) {
                    header |= uint64_t(2) << ((i - start) * 2);
                } else if (values[i].empty()) {
                    header |= uint64_t(1) << ((i - start) * 2);
                }
            }
            utils::append_unsigned_vint(out, header);
            for (size_t i = start; i < stop && i < values.size(); ++i) {
                if (values[i].empty()) {
                    continue;
                }
                if (!_ck_types[i]->value_length_if_fixed()) {
                    utils::append_unsigned_vint(out, values[i].size());
                }
                out.append(reinterpret_cast<const char*>(values[i].data()), values[i].size());
            }
        }
    }
    utils::append_unsigned_vint(out, body.size());
    out += body;
}

void row_serializer::write_marker(std::string& out, const clustering_bound& b, tombstone end, tombstone start,
                                  uint64_t previous_size) const {
    out.push_back(char(is_marker));
    write_clustering_bound(out, _ck_types, b);
    std::string body;
    utils::append_unsigned_vint(body, previous_size);
    if (is_boundary(b.kind)) {
        write_deletion(body, end);
        write_deletion(body, start);
    } else {
        bool is_start = b.kind == clustering_kind::incl_start_bound || b.kind == clustering_kind::excl_start_bound;
        write_deletion(body, is_start ? start : end);
    }
    utils::append_unsigned_vint(out, body.size());
    out += body;
}

} // namespace reef::sstables
