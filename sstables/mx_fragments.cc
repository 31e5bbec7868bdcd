// Parser atoms to fragments. See mx_fragments.hh.
#include "sstables/mx_fragments.hh"

#include "schema/types.hh"
#include "sstables/exceptions.hh"

#include <array>
#include <stdexcept>

namespace reef::sstables {

schema_ptr schema_from_header(const serialization_header& h, std::string keyspace, std::string table) {
    schema_builder b(std::move(keyspace), std::move(table));
    if (h.partition_key_type->is_composite()) {
        auto& parts = h.partition_key_type->field_types();
        for (size_t i = 0; i < parts.size(); ++i) {
            b.with_column("partition_key_" + std::to_string(i), parts[i], column_kind::partition_key);
        }
    } else {
        b.with_column("partition_key", h.partition_key_type, column_kind::partition_key);
    }
    for (size_t i = 0; i < h.clustering_types.size(); ++i) {
        auto& t = h.clustering_types[i];
        b.with_column("clustering_" + std::to_string(i), t->without_reversal(), column_kind::clustering_key,
                      t->is_reversed() ? clustering_order::desc : clustering_order::asc);
    }
    for (auto& c : h.static_columns) {
        b.with_column(c.name, c.type, column_kind::static_column);
    }
    for (auto& c : h.regular_columns) {
        b.with_column(c.name, c.type, column_kind::regular_column);
    }
    return b.build();
}

int row_position_comparator::operator()(const clustering_values& row, const position_in_partition& pos) const {
    if (pos.region() != partition_region::clustered) {
        return pos.region() < partition_region::clustered ? 1 : -1;
    }
    size_t la = 0;
    while (la < row.size() && row[la]) {
        ++la;
    }
    size_t lb = pos.key().size();
    for (size_t i = 0; i < std::min(la, lb); ++i) {
        if (int c = _types.at(i)->compare(*row[i], pos.key().component(i))) {
            return (c < 0) != _reversed ? -1 : 1;
        }
    }
    // Equal over the common values: a row weighs as "equal"; a shorter prefix goes as the comparator places it.
    int wb = int(pos.weight());
    if (la == lb) {
        return 0 < wb ? -1 : 0 > wb ? 1 : 0;
    }
    auto shorter_first = [this](int w) { return _reversed ? w < 0 : w <= 0; };
    if (la < lb) {
        return shorter_first(0) ? -1 : 1;
    }
    return shorter_first(wb) ? 1 : -1;
}

mx_fragment_consumer::mx_fragment_consumer(schema_ptr s, const serialization_header& h, std::string_view file,
                                           size_t max_buffered, token_function token)
    : _schema(std::move(s)), _file(file), _max_buffered(max_buffered), _token(std::move(token)) {
    auto same = [](const std::vector<column_definition>& a, const std::vector<serialization_header_column>& b) {
        if (a.size() != b.size()) {
            return false;
        }
        for (size_t i = 0; i < a.size(); ++i) {
            if (a[i].name != b[i].name || a[i].is_complex() != b[i].is_complex()) {
                return false;
            }
        }
        return true;
    };
    if (!same(_schema->static_columns(), h.static_columns) || !same(_schema->regular_columns(), h.regular_columns) ||
        _schema->clustering_key().size() != h.clustering_types.size()) {
        throw std::invalid_argument(std::string(_file) + ": the schema's columns are not the serialization header's");
    }
}

clustering_key_prefix mx_fragment_consumer::key_of(const clustering_values& v, uint64_t position) const {
    clustering_key_prefix k;
    assign_key(k, v, position);
    return k;
}

void mx_fragment_consumer::assign_key(clustering_key_prefix& key, const clustering_values& v, uint64_t position) const {
    // A row's key is a prefix only in compact tables, where the missing values are null.
    size_t n = 0;
    while (n < v.size() && v[n]) {
        ++n;
    }
    for (size_t i = n; i < v.size(); ++i) {
        if (v[i]) {
            throw malformed_sstable_exception(_file, position,
                                              "a clustering value follows a null one (column " + std::to_string(i) + ")");
        }
    }
    // Views of the parser's values, copied once into the key (no allocation for a key that fits inline).
    std::array<bytes_view, 8> small;
    std::vector<bytes_view> large;
    std::span<bytes_view> views;
    if (n <= small.size()) {
        views = std::span<bytes_view>(small.data(), n);
    } else {
        large.resize(n);
        views = large;
    }
    for (size_t i = 0; i < n; ++i) {
        views[i] = *v[i];
    }
    key.assign_views(views);
}

const column_definition& mx_fragment_consumer::column(column_id id) const {
    return (_static ? _schema->static_columns() : _schema->regular_columns()).at(id);
}

mx_consumer::proceed mx_fragment_consumer::consume_partition_start(bytes_view key, tombstone deletion, uint64_t,
                                                                   uint64_t) {
    auto t = _token ? _token(key) : dht::murmur3_token(key);
    partition_key k(std::string_view(reinterpret_cast<const char*>(key.data()), key.size()));
    return push(partition_start{dht::decorated_key(t, std::move(k)), deletion});
}

mx_consumer::row_action mx_fragment_consumer::consume_row_start(const mx_row& r) {
    _static = r.is_static;
    _row_position = r.position;
    // A row the parser abandoned (it restarted elsewhere) may have left a collection open.
    _collection.reset();
    if (_in_place && !r.is_static && !_dropping) {
        _out->emplace_back(std::in_place_type<clustering_row>);
        _cur = std::get_if<clustering_row>(&_out->back());
    } else {
        _row = clustering_row{};
        _cur = &_row;
    }
    if (!r.is_static) {
        assign_key(_cur->key, *r.clustering, r.position);
    }
    _cur->marker = r.marker;
    // A shadowable deletion (deprecated since Cassandra 4.0) is kept as a plain row tombstone.
    _cur->row_tombstone = r.deletion;
    return row_action::read;
}

void mx_fragment_consumer::consume_cell(const mx_cell& c) {
    std::string value(reinterpret_cast<const char*>(c.value.data()), c.value.size());
    atomic_cell cell = c.is_deleted    ? atomic_cell::make_dead(c.timestamp, c.local_deletion_time)
                       : c.is_expiring ? atomic_cell::make_expiring(c.timestamp, std::move(value), c.ttl, c.local_deletion_time)
                                       : atomic_cell::make_live(c.timestamp, std::move(value));
    if (_collection) {
        _collection->second.cells.emplace_back(bytes(c.path.begin(), c.path.end()), std::move(cell));
        return;
    }
    if (column(c.column).is_complex()) {
        throw malformed_sstable_exception(_file, _row_position, "a simple cell for complex column " + column(c.column).name);
    }
    _cur->cells.apply(c.column, std::move(cell));
}

void mx_fragment_consumer::consume_complex_start(column_id col, tombstone tomb) {
    _collection.emplace(col, collection_cells{tomb, {}});
}

void mx_fragment_consumer::consume_complex_end() {
    auto [col, cells] = std::move(*_collection);
    _collection.reset();
    if (!cells.tomb && cells.cells.empty()) {
        return;
    }
    auto comparator = column(col).type->name_comparator();
    auto compare = [comparator](bytes_view a, bytes_view b) { return comparator->compare(a, b); };
    // A path the comparator cannot read (a 4-byte timeuuid) is corrupt data, not a type error of the caller.
    for (auto& [path, cell] : cells.cells) {
        try {
            comparator->validate(path);
        } catch (const marshal_exception& e) {
            throw malformed_sstable_exception(_file, _row_position,
                                              "a cell path of column " + column(col).name + ": " + e.what());
        }
    }
    for (size_t i = 1; i < cells.cells.size(); ++i) {
        if (compare(cells.cells[i - 1].first, cells.cells[i].first) >= 0) {
            throw malformed_sstable_exception(_file, _row_position,
                                              "the cells of column " + column(col).name + " are not in path order");
        }
    }
    _cur->cells.apply(col, std::move(cells), compare);
}

mx_consumer::proceed mx_fragment_consumer::consume_row_end(const mx_row&) {
    // Rows with nothing in them (Cassandra's empty static row, rows of dropped columns) are not fragments.
    bool empty = _cur->cells.empty() && _cur->marker.empty() && !_cur->row_tombstone;
    if (_cur != &_row) {
        // Built in place: already in the buffer.
        _cur = &_row;
        if (empty) {
            _out->pop_back();
        }
        return full();
    }
    if (empty) {
        return full();
    }
    if (_static) {
        return push(static_row{std::move(_row.cells)});
    }
    return push(std::move(_row));
}

mx_consumer::proceed mx_fragment_consumer::consume_range_tombstone(const mx_marker& m) {
    auto key = key_of(*m.clustering, m.position);
    bound_kind k = bound_kind::incl_start;
    tombstone t;
    switch (m.kind) {
    case mx_bound_kind::incl_start: k = bound_kind::incl_start; t = m.tomb; break;
    case mx_bound_kind::excl_start: k = bound_kind::excl_start; t = m.tomb; break;
    case mx_bound_kind::incl_end: k = bound_kind::incl_end; break;
    case mx_bound_kind::excl_end: k = bound_kind::excl_end; break;
    // A boundary's end and start sit at the same position: one change to the new tombstone.
    case mx_bound_kind::excl_end_incl_start: k = bound_kind::incl_start; t = m.boundary_start_tomb; break;
    case mx_bound_kind::incl_end_excl_start: k = bound_kind::excl_start; t = m.boundary_start_tomb; break;
    }
    if ((k == bound_kind::incl_start || k == bound_kind::excl_start) && !t) {
        throw malformed_sstable_exception(_file, m.position, "a range tombstone starts without a deletion");
    }
    return push(range_tombstone_change{position_in_partition::for_bound(std::move(key), k), t});
}

mx_consumer::proceed mx_fragment_consumer::consume_partition_end(uint64_t) { return push(partition_end{}); }

} // namespace reef::sstables
