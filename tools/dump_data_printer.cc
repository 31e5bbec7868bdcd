// dump-data's JSON pieces. See dump_data_printer.hh. The call sequence below follows Cassandra's JsonTransformer
// (including its setCompact toggles), which is what makes the bytes match.
#include "tools/dump_data_printer.hh"

#include "schema/bytes.hh"
#include "schema/types.hh"

#include <stdexcept>

namespace reef::tools {

using namespace sstables;

void dump_data_printer::partition_header(bytes_view key, const tombstone& deletion, std::optional<uint64_t> position) {
    _j.start_object();
    _j.field_name("table kind");
    _j.string("REGULAR");
    _j.field_name("partition");
    _j.start_object();
    _j.field_name("key");
    _j.set_compact_objects(true);
    _j.set_compact_arrays(true);
    _j.start_array();
    auto& kt = *_h.partition_key_type;
    if (kt.is_composite()) {
        auto parts = split_composite(key);
        for (size_t i = 0; i < parts.size() && i < kt.field_types().size(); ++i) {
            _j.string(kt.field_types()[i]->to_string(parts[i]));
        }
    } else {
        _j.string(kt.to_string(key));
    }
    _j.end_array();
    _j.set_compact_objects(false);
    _j.set_compact_arrays(false);
    if (position) {
        _j.field_name("position");
        _j.number((long long)*position);
    }
    if (deletion) {
        this->deletion(deletion);
    }
    _j.end_object();
    _j.field_name("rows");
    _j.start_array();
}

void dump_data_printer::partition_end() {
    _j.end_array();
    _j.end_object();
}

void dump_data_printer::deletion(const tombstone& t) {
    _j.field_name("deletion_info");
    _j.set_compact_objects(true);
    _j.start_object();
    _j.field_name("marked_deleted");
    _j.string(std::to_string(t.timestamp));
    _j.field_name("local_delete_time");
    _j.string(std::to_string(t.deletion_time));
    _j.end_object();
    _j.set_compact_objects(false);
}

void dump_data_printer::clustering(const clustering_values& ck) {
    if (ck.empty()) {
        return;
    }
    _j.field_name("clustering");
    _j.set_compact_objects(true);
    _j.start_array();
    _j.set_compact_arrays(true);
    for (size_t i = 0; i < _h.clustering_types.size(); ++i) {
        if (i >= ck.size()) {
            _j.string("*");
        } else if (!ck[i]) {
            _j.raw_value("null");
        } else {
            _j.raw_value(_h.clustering_types[i]->without_reversal()->to_json_string(*ck[i]));
        }
    }
    _j.end_array();
    _j.set_compact_objects(false);
    _j.set_compact_arrays(false);
}

void dump_data_printer::bound(bool start, bool inclusive, const clustering_values& ck, const tombstone& t) {
    _j.field_name(start ? "start" : "end");
    _j.start_object();
    _j.field_name("type");
    _j.string(inclusive ? "inclusive" : "exclusive");
    clustering(ck);
    deletion(t);
    _j.end_object();
}

void dump_data_printer::range_tombstone(mx_bound_kind kind, const clustering_values& ck, const tombstone& tomb,
                                        const tombstone& boundary_start_tomb) {
    _j.start_object();
    _j.field_name("type");
    _j.string(is_boundary(kind) ? "range_tombstone_boundary" : "range_tombstone_bound");
    switch (kind) {
    case mx_bound_kind::incl_start: bound(true, true, ck, tomb); break;
    case mx_bound_kind::excl_start: bound(true, false, ck, tomb); break;
    case mx_bound_kind::incl_end: bound(false, true, ck, tomb); break;
    case mx_bound_kind::excl_end: bound(false, false, ck, tomb); break;
    // Open bound first, then the close one.
    case mx_bound_kind::excl_end_incl_start:
        bound(true, true, ck, boundary_start_tomb);
        bound(false, false, ck, tomb);
        break;
    case mx_bound_kind::incl_end_excl_start:
        bound(true, false, ck, boundary_start_tomb);
        bound(false, true, ck, tomb);
        break;
    }
    _j.end_object();
    _j.set_compact_objects(false);
}

void dump_data_printer::row(bool is_static, const clustering_values& ck, const row_marker& marker,
                            const tombstone& row_deletion, const std::vector<dump_cell>& cells,
                            std::optional<uint64_t> position) {
    _j.start_object();
    _j.field_name("type");
    _j.string(is_static ? "static_block" : "row");
    if (position) {
        _j.field_name("position");
        _j.number((long long)*position);
    }
    if (!is_static) {
        clustering(ck);
    }
    if (!marker.empty()) {
        _j.set_compact_objects(false);
        _j.field_name("liveness_info");
        _j.set_compact_objects(true);
        _j.start_object();
        _j.field_name("tstamp");
        _j.string(std::to_string(marker.timestamp));
        if (marker.is_expiring()) {
            _j.field_name("ttl");
            _j.number(marker.ttl);
            _j.field_name("expires_at");
            _j.string(std::to_string(marker.expiry));
            _j.field_name("expired");
            _j.boolean(marker.expiry < _now);
        }
        _j.end_object();
        _j.set_compact_objects(false);
    }
    if (row_deletion) {
        deletion(row_deletion);
    }
    _j.field_name("cells");
    _j.start_array();
    for (auto& c : cells) {
        auto& col = (is_static ? _h.static_columns : _h.regular_columns).at(c.column);
        if (c.complex_deletion) {
            _j.set_compact_objects(true);
            _j.start_object();
            _j.field_name("name");
            _j.string(maybe_quote_identifier(col.name));
            deletion(c.tomb);
            _j.set_compact_objects(true);
            _j.end_object();
            _j.set_compact_objects(false);
            continue;
        }
        cell(marker, col, c);
    }
    _j.end_array();
    _j.end_object();
}

void dump_data_printer::cell(const row_marker& marker, const serialization_header_column& col, const dump_cell& c) {
    _j.start_object();
    _j.set_compact_objects(true);
    _j.field_name("name");
    _j.string(maybe_quote_identifier(col.name));
    auto& t = *col.type;
    data_type value_type = col.type;
    if (t.is_multi_cell() && t.is_user_type()) {
        auto& u = static_cast<const user_type_impl&>(t);
        size_t field = c.path.size() >= 2 ? size_t(read_be<uint16_t>(c.path.data())) : 0;
        _j.field_name("path");
        _j.set_compact_arrays(true);
        _j.start_array();
        _j.string(field < u.field_names().size() ? u.field_names()[field] : std::to_string(field));
        _j.end_array();
        _j.set_compact_arrays(false);
        value_type = field < u.field_types().size() ? u.field_types()[field] : blob_type();
    } else if (t.is_multi_cell()) {
        _j.field_name("path");
        _j.set_compact_arrays(true);
        _j.start_array();
        _j.string(t.name_comparator()->to_string(c.path));
        _j.end_array();
        _j.set_compact_arrays(false);
        value_type = t.kind() == type_kind::map ? t.value_type() : t.kind() == type_kind::list ? t.element_type() : empty_type();
    }
    if (c.deleted) {
        _j.field_name("deletion_info");
        _j.set_compact_objects(true);
        _j.start_object();
        _j.field_name("local_delete_time");
        _j.string(std::to_string(c.ldt));
        _j.end_object();
        _j.set_compact_objects(false);
    } else {
        _j.field_name("value");
        if (value_type->is_counter()) {
            // JsonTransformer prints a counter context's first 8 bytes as a long.
            _j.raw_value(c.value.size() >= 8 ? std::to_string(read_be<int64_t>(c.value.data())) : "0");
        } else {
            _j.raw_value(value_type->to_json_string(c.value));
        }
    }
    if (marker.empty() || c.timestamp != marker.timestamp) {
        _j.field_name("tstamp");
        _j.string(std::to_string(c.timestamp));
    }
    if (c.expiring && (marker.empty() || c.ttl != marker.ttl)) {
        _j.field_name("ttl");
        _j.number(c.ttl);
        _j.field_name("expires_at");
        _j.string(std::to_string(c.ldt));
        _j.field_name("expired");
        _j.boolean(!(_now < c.ldt));
    }
    _j.end_object();
    _j.set_compact_objects(false);
}

namespace {

bytes to_bytes(std::string_view s) {
    auto* p = reinterpret_cast<const uint8_t*>(s.data());
    return bytes(p, p + s.size());
}

dump_cell cell_of(column_id id, const atomic_cell& c, bytes path = {}) {
    dump_cell d;
    d.column = id;
    d.path = std::move(path);
    d.timestamp = c.timestamp();
    d.ttl = c.ttl();
    d.ldt = c.local_deletion_time();
    d.deleted = c.is_dead_marker();
    d.expiring = c.is_expiring();
    d.value = to_bytes(c.value());
    return d;
}

std::vector<dump_cell> cells_of(const row& r) {
    std::vector<dump_cell> out;
    for (auto& [id, c] : r.cells()) {
        if (auto* a = std::get_if<atomic_cell>(&c)) {
            out.push_back(cell_of(id, *a));
            continue;
        }
        auto& coll = std::get<collection_cells>(c);
        if (coll.tomb) {
            dump_cell d;
            d.complex_deletion = true;
            d.column = id;
            d.tomb = coll.tomb;
            out.push_back(std::move(d));
        }
        for (auto& [path, cell] : coll.cells) {
            out.push_back(cell_of(id, cell, path));
        }
    }
    return out;
}

clustering_values values_of(const clustering_key_prefix& k, size_t pad_to) {
    clustering_values v;
    for (auto c : k.components()) {
        v.emplace_back(bytes(c.begin(), c.end()));
    }
    // A compact table's row key stops at its first null value.
    while (v.size() < pad_to) {
        v.emplace_back(std::nullopt);
    }
    return v;
}

} // namespace

std::string print_fragments_json(const serialization_header& h, const std::vector<mutation_fragment>& fragments,
                                 int64_t now, bool reversed) {
    jackson_printer j;
    dump_data_printer p(h, j, now);
    tombstone active;
    j.start_array();
    for (auto& f : fragments) {
        if (auto* ps = std::get_if<partition_start>(&f)) {
            auto key = ps->key.key().view();
            p.partition_header(bytes_view(reinterpret_cast<const uint8_t*>(key.data()), key.size()),
                               ps->partition_tombstone, std::nullopt);
            active = {};
        } else if (auto* sr = std::get_if<static_row>(&f)) {
            if (!sr->cells.empty()) {
                p.row(true, {}, row_marker{}, tombstone{}, cells_of(sr->cells), std::nullopt);
            }
        } else if (auto* cr = std::get_if<clustering_row>(&f)) {
            p.row(false, values_of(cr->key, h.clustering_types.size()), cr->marker, cr->row_tombstone,
                  cells_of(cr->cells), std::nullopt);
        } else if (auto* rtc = std::get_if<range_tombstone_change>(&f)) {
            // In forward terms: the tombstone in force just before and just after the change's position.
            auto pos = reversed ? rtc->position.reversed() : rtc->position;
            tombstone before = reversed ? rtc->tomb : active;
            tombstone after = reversed ? active : rtc->tomb;
            active = rtc->tomb;
            if (before == after) {
                continue;
            }
            bool at_start = pos.weight() != bound_weight::after_all_prefixed;  // before its prefix's keys
            clustering_values ck;
            for (auto c : pos.key().components()) {
                ck.emplace_back(bytes(c.begin(), c.end()));
            }
            if (!before) {
                p.range_tombstone(at_start ? mx_bound_kind::incl_start : mx_bound_kind::excl_start, ck, after, {});
            } else if (!after) {
                p.range_tombstone(at_start ? mx_bound_kind::excl_end : mx_bound_kind::incl_end, ck, before, {});
            } else {
                p.range_tombstone(at_start ? mx_bound_kind::excl_end_incl_start : mx_bound_kind::incl_end_excl_start,
                                  ck, before, after);
            }
        } else {
            p.partition_end();
        }
    }
    j.end_array();
    j.out() += '\n';
    return std::move(j.out());
}

} // namespace reef::tools
