// Cells as Cassandra's UpdateParameters makes them, collection writes as Lists/Sets/Maps/UserTypes do, conditions as
// ColumnCondition checks them and the [applied] row as ModificationStatement.buildCasResultSet builds it.

#include "cql/modification_writes.hh"

#include "cql/cql_error.hh"
#include "utils/uuid.hh"

#include <fmt/core.h>

#include <algorithm>
#include <atomic>
#include <chrono>

namespace reef::cql {

namespace {

std::string str(bytes_view b) { return std::string(reinterpret_cast<const char*>(b.data()), b.size()); }
bytes to_b(std::string_view s) { return bytes(s.begin(), s.end()); }

atomic_cell live_cell(const write_params& p, bytes_view v) {
    if (p.ttl > 0) {
        return atomic_cell::make_expiring(p.ts, str(v), p.ttl, p.now + p.ttl);
    }
    return atomic_cell::make_live(p.ts, str(v));
}

atomic_cell dead_cell(const write_params& p) { return atomic_cell::make_dead(p.ts, p.now); }

bytes uuid_bytes(const utils::uuid_bytes& u) { return bytes(u.begin(), u.end()); }

// Paths of prepended list elements: time UUIDs counting down from 2010-01-01 mirrored around now, so that each
// prepend sorts before everything written before it (Lists.PrecisionTime).
std::vector<bytes> prepend_paths(size_t n) {
    constexpr int64_t reference_ms = 1262304000000LL;
    // Shared by the shards (a list's prepends may come through any of them): every prepend goes below the last.
    static std::atomic<int64_t> last{std::numeric_limits<int64_t>::max()};
    int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count();
    int64_t base, prev = last.load();
    do {
        base = std::min((2 * reference_ms - now_ms) * 10000, prev - 1);
    } while (!last.compare_exchange_weak(prev, base - int64_t(n)));
    std::vector<bytes> out;
    for (size_t i = 0; i < n; ++i) {
        out.push_back(uuid_bytes(utils::make_time_uuid_at(uint64_t(base - int64_t(n) + int64_t(i)), 0x1234, 0x010203040506)));
    }
    return out;
}

std::vector<bytes> append_paths(size_t n) {
    std::vector<bytes> out;
    for (size_t i = 0; i < n; ++i) {
        out.push_back(uuid_bytes(utils::make_time_uuid()));
    }
    return out;
}

void sort_cells(const data_type& t, collection_cells& c) {
    auto cmp = t->name_comparator();
    std::stable_sort(c.cells.begin(), c.cells.end(),
                     [&](auto& a, auto& b) { return cmp->compare(a.first, b.first) < 0; });
}

class row_writer {
public:
    row_writer(partition_plan& plan) : _plan(plan), _s(*plan.m.schema()) {}

    void put(bool is_static, const clustering_key_prefix& ck, column_id id, cell_or_collection c) {
        if (is_static) {
            _plan.m.partition().apply_static(_s, id, c);
        } else {
            apply_cell(_plan.m.partition().clustered_row(ck).cells, id, c, _s.regular_columns());
        }
    }

    void put_collection(const prepared_operation& op, const clustering_key_prefix& ck, collection_cells c) {
        sort_cells(op.column->type, c);
        put(op.is_static, ck, op.id, std::move(c));
    }

    // The element cells of a whole collection or UDT value (frozen serialization).
    std::vector<std::pair<bytes, atomic_cell>> element_cells(const data_type& t, bytes_view v, const write_params& p,
                                                             bool prepend = false) {
        std::vector<std::pair<bytes, atomic_cell>> cells;
        switch (t->kind()) {
        case type_kind::list: {
            auto elements = split_collection(v);
            auto paths = prepend ? prepend_paths(elements.size()) : append_paths(elements.size());
            for (size_t i = 0; i < elements.size(); ++i) {
                cells.emplace_back(paths[i], live_cell(p, elements[i]));
            }
            break;
        }
        case type_kind::set:
            for (auto e : split_collection(v)) {
                cells.emplace_back(bytes(e.begin(), e.end()), live_cell(p, {}));
            }
            break;
        case type_kind::map:
            for (auto [k, val] : split_map(v)) {
                cells.emplace_back(bytes(k.begin(), k.end()), live_cell(p, val));
            }
            break;
        case type_kind::user: {
            auto fields = split_tuple(v);
            for (size_t i = 0; i < fields.size(); ++i) {
                if (fields[i]) {
                    cells.emplace_back(serialize_be<int16_t>(int16_t(i)), live_cell(p, *fields[i]));
                }
            }
            break;
        }
        default: throw std::logic_error("element_cells: not a multi-cell type");
        }
        return cells;
    }

    void apply(const bound_operation& b, const clustering_key_prefix& ck, const write_params& p) {
        auto& op = *b.op;
        auto& t = op.column->type;
        auto defer = [&] {
            auto value = b.value;
            if (op.negate && value.is_value()) {
                value.data = serialize_be<int64_t>(int64_t(0 - uint64_t(read_be<int64_t>(value.data.data()))));
            }
            _plan.deferred.push_back(deferred_write{op.kind, op.is_static, ck, op.id, b.key, std::move(value), p});
        };
        switch (op.kind) {
        case op_kind::assign:
            if (b.value.is_unset()) {
                return;
            }
            if (!t->is_multi_cell()) {
                put(op.is_static, ck, op.id, b.value.is_null() ? dead_cell(p) : live_cell(p, b.value.data));
                return;
            } else {
                // A whole collection replaces the previous one: deleted just before this write.
                collection_cells c;
                c.tomb = tombstone{p.ts - 1, p.now};
                if (b.value.is_value()) {
                    c.cells = element_cells(t, b.value.data, p);
                }
                put_collection(op, ck, std::move(c));
            }
            return;
        case op_kind::list_append:
        case op_kind::list_prepend:
        case op_kind::set_add:
        case op_kind::map_put: {
            if (!b.value.is_value()) {
                if (b.value.is_null() && op.kind != op_kind::set_add && op.kind != op_kind::map_put) {
                    throw invalid_request(fmt::format("Invalid null value for list {}",
                                                      op.kind == op_kind::list_append ? "append" : "prepend"));
                }
                return;
            }
            collection_cells c;
            c.cells = element_cells(t, b.value.data, p, op.kind == op_kind::list_prepend);
            put_collection(op, ck, std::move(c));
            return;
        }
        case op_kind::set_remove:
        case op_kind::map_remove: {
            if (!b.value.is_value()) {
                return;
            }
            collection_cells c;
            for (auto e : split_collection(b.value.data)) {
                c.cells.emplace_back(bytes(e.begin(), e.end()), dead_cell(p));
            }
            put_collection(op, ck, std::move(c));
            return;
        }
        case op_kind::map_set_key: {
            if (b.key.is_unset() || b.value.is_unset()) {
                return;
            }
            if (b.key.is_null()) {
                throw invalid_request("Invalid null map key");
            }
            collection_cells c;
            c.cells.emplace_back(b.key.data, b.value.is_null() ? dead_cell(p) : live_cell(p, b.value.data));
            put_collection(op, ck, std::move(c));
            return;
        }
        case op_kind::udt_set_field: {
            if (b.value.is_unset()) {
                return;
            }
            collection_cells c;
            c.cells.emplace_back(serialize_be<int16_t>(int16_t(op.field)),
                                 b.value.is_null() ? dead_cell(p) : live_cell(p, b.value.data));
            put_collection(op, ck, std::move(c));
            return;
        }
        case op_kind::del_column:
            if (t->is_multi_cell()) {
                collection_cells c;
                c.tomb = tombstone{p.ts, p.now};
                put_collection(op, ck, std::move(c));
            } else {
                put(op.is_static, ck, op.id, dead_cell(p));
            }
            return;
        case op_kind::del_key: {
            if (b.key.is_unset()) {
                return;
            }
            if (b.key.is_null()) {
                throw invalid_request(fmt::format("Invalid null {} for deletion from {}",
                                                  t->kind() == type_kind::set ? "set element" : "map key",
                                                  op.column->name));
            }
            collection_cells c;
            c.cells.emplace_back(b.key.data, dead_cell(p));
            put_collection(op, ck, std::move(c));
            return;
        }
        case op_kind::del_field: {
            collection_cells c;
            c.cells.emplace_back(serialize_be<int16_t>(int16_t(op.field)), dead_cell(p));
            put_collection(op, ck, std::move(c));
            return;
        }
        case op_kind::list_remove:
        case op_kind::list_set_index:
        case op_kind::del_list_index:
        case op_kind::counter_add: defer(); return;
        }
    }

private:
    partition_plan& _plan;
    const schema& _s;
};

// The live cells of a column in the current row.
const cell_or_collection* find_cell(const row* r, column_id id) { return r ? r->find(id) : nullptr; }

std::vector<std::pair<bytes_view, bytes_view>> live_elements(const cell_or_collection* c, int64_t now) {
    std::vector<std::pair<bytes_view, bytes_view>> out;
    if (!c || !std::holds_alternative<collection_cells>(*c)) {
        return out;
    }
    for (auto& [path, cell] : std::get<collection_cells>(*c).cells) {
        if (cell.is_live(now)) {
            auto v = cell.value();
            out.emplace_back(bytes_view(path), bytes_view(reinterpret_cast<const uint8_t*>(v.data()), v.size()));
        }
    }
    return out;
}

// A column's current value in its frozen serialization (null when it has none).
std::optional<bytes> column_value(const column_definition& c, const row* r, column_id id, int64_t now) {
    auto* cell = find_cell(r, id);
    if (!cell) {
        return std::nullopt;
    }
    if (auto* a = std::get_if<atomic_cell>(cell)) {
        if (!a->is_live(now)) {
            return std::nullopt;
        }
        if (c.type->is_counter()) {
            return counter_query_value(a->value());
        }
        return to_b(a->value());
    }
    auto elements = live_elements(cell, now);
    if (elements.empty()) {
        return std::nullopt;
    }
    switch (c.type->kind()) {
    case type_kind::list: {
        std::vector<bytes> vs;
        for (auto& [p, v] : elements) {
            vs.emplace_back(v.begin(), v.end());
        }
        return serialize_collection(vs);
    }
    case type_kind::set: {
        std::vector<bytes> vs;
        for (auto& [p, v] : elements) {
            vs.emplace_back(p.begin(), p.end());
        }
        return serialize_collection(vs);
    }
    case type_kind::map: {
        std::vector<std::pair<bytes, bytes>> vs;
        for (auto& [p, v] : elements) {
            vs.emplace_back(bytes(p.begin(), p.end()), bytes(v.begin(), v.end()));
        }
        return serialize_map(vs);
    }
    case type_kind::user: {
        std::vector<std::optional<bytes>> fields(c.type->field_types().size());
        for (auto& [p, v] : elements) {
            size_t i = size_t(read_be<int16_t>(p.data()));
            if (i < fields.size()) {
                fields[i] = bytes(v.begin(), v.end());
            }
        }
        return serialize_tuple(fields);
    }
    default: return std::nullopt;
    }
}

bool row_has_live_cell(const row& r, int64_t now) {
    for (auto& [id, c] : r.cells()) {
        if (auto* a = std::get_if<atomic_cell>(&c)) {
            if (a->is_live(now)) {
                return true;
            }
        } else if (!live_elements(&c, now).empty()) {
            return true;
        }
    }
    return false;
}

const deletable_row* find_row(const mutation* cur, const clustering_key_prefix& ck) {
    if (!cur) {
        return nullptr;
    }
    auto& rows = cur->partition().rows();
    auto it = rows.find(ck);
    return it == rows.end() ? nullptr : &it->second;
}

const row* cells_of(const mutation* cur, bool is_static, const clustering_key_prefix& ck) {
    if (!cur) {
        return nullptr;
    }
    if (is_static) {
        return &cur->partition().static_row();
    }
    auto* r = find_row(cur, ck);
    return r ? &r->cells : nullptr;
}

bool row_exists(const mutation* cur, const std::optional<clustering_key_prefix>& ck, int64_t now) {
    if (!cur) {
        return false;
    }
    if (ck) {
        auto* r = find_row(cur, *ck);
        return r && (r->marker.is_live(now) || row_has_live_cell(r->cells, now));
    }
    if (row_has_live_cell(cur->partition().static_row(), now)) {
        return true;
    }
    for (auto& [k, r] : cur->partition().rows()) {
        if (r.marker.is_live(now) || row_has_live_cell(r.cells, now)) {
            return true;
        }
    }
    return false;
}

// The compared part of a column's value: an element, a field, or the whole value.
std::optional<bytes> condition_subject(const bound_condition& c, const std::optional<bytes>& whole) {
    if (!whole) {
        return std::nullopt;
    }
    if (c.field) {
        auto fields = split_tuple(*whole);
        if (*c.field >= fields.size() || !fields[*c.field]) {
            return std::nullopt;
        }
        return bytes(fields[*c.field]->begin(), fields[*c.field]->end());
    }
    if (c.key) {
        auto& t = c.column->type;
        if (t->kind() == type_kind::list) {
            int32_t idx = read_be<int32_t>(c.key->data.data());
            auto elements = split_collection(*whole);
            if (idx < 0 || size_t(idx) >= elements.size()) {
                return std::nullopt;
            }
            return bytes(elements[size_t(idx)].begin(), elements[size_t(idx)].end());
        }
        for (auto [k, v] : split_map(*whole)) {
            if (t->key_type()->compare(k, c.key->data) == 0) {
                return bytes(v.begin(), v.end());
            }
        }
        return std::nullopt;
    }
    return whole;
}

bool condition_holds(const bound_condition& c, const std::optional<bytes>& current) {
    auto equal = [&](const raw_value& v) {
        if (v.is_null()) {
            return !current;
        }
        return current && c.value_type->compare(*current, v.data) == 0;
    };
    if (c.op == "=") {
        return equal(c.values.front());
    }
    if (c.op == "!=") {
        return !equal(c.values.front());
    }
    if (c.op == "IN") {
        return std::any_of(c.values.begin(), c.values.end(), equal);
    }
    auto& v = c.values.front();
    if (v.is_null()) {
        throw invalid_request(fmt::format("Invalid comparison with null for operator \"{}\"", c.op));
    }
    if (!current) {
        return false;
    }
    int cmp = c.value_type->compare(*current, v.data);
    if (c.op == "<") {
        return cmp < 0;
    }
    if (c.op == "<=") {
        return cmp <= 0;
    }
    if (c.op == ">") {
        return cmp > 0;
    }
    return cmp >= 0;
}

column_spec spec(const schema& s, const column_definition& c) { return {s.keyspace(), s.table(), c.name, c.type}; }

// SELECT *'s order: partition key, clustering, static columns by name, regular columns by name.
std::vector<const column_definition*> all_columns(const schema& s) {
    std::vector<const column_definition*> out;
    for (auto& c : s.partition_key()) {
        out.push_back(&c);
    }
    for (auto& c : s.clustering_key()) {
        out.push_back(&c);
    }
    auto by_name = [](const std::vector<column_definition>& cols) {
        std::vector<const column_definition*> v;
        for (auto& c : cols) {
            v.push_back(&c);
        }
        std::sort(v.begin(), v.end(), [](auto* a, auto* b) { return a->name < b->name; });
        return v;
    };
    for (auto* c : by_name(s.static_columns())) {
        out.push_back(c);
    }
    for (auto* c : by_name(s.regular_columns())) {
        out.push_back(c);
    }
    return out;
}

column_id id_in_kind(const schema& s, const column_definition& c) {
    auto& cols = c.is_static() ? s.static_columns() : s.regular_columns();
    for (size_t i = 0; i < cols.size(); ++i) {
        if (cols[i].name == c.name) {
            return column_id(i);
        }
    }
    return 0;
}

std::optional<bytes> current_of(const partition_plan& plan, const cas_target& t, const mutation* cur,
                                const column_definition& c, int64_t now) {
    switch (c.kind) {
    case column_kind::partition_key: return plan.key_values.at(c.position);
    case column_kind::clustering_key:
        if (t.row && c.position < t.row->size()) {
            auto v = t.row->component(c.position);
            return bytes(v.begin(), v.end());
        }
        return std::nullopt;
    default: {
        static const clustering_key_prefix none{};
        auto* r = cells_of(cur, c.is_static(), t.row ? *t.row : none);
        return column_value(c, r, id_in_kind(*t.schema, c), now);
    }
    }
}

int64_t now_seconds() {
    return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

} // namespace

clustering_ranges partition_plan::read_slice() const {
    std::vector<clustering_key_prefix> keys;
    bool full = false;
    for (auto& d : deferred) {
        if (d.is_static) {
            full = true;
        }
        keys.push_back(d.row);
    }
    for (auto& t : cas) {
        if (!t.row) {
            full = true;
        } else {
            keys.push_back(*t.row);
        }
        for (auto& c : t.conditions) {
            full |= c.is_static;
        }
    }
    if (full || keys.empty()) {
        return {position_range::full()};
    }
    clustering_comparator cmp(*m.schema());
    std::sort(keys.begin(), keys.end(), [&](auto& a, auto& b) { return cmp(a, b) < 0; });
    keys.erase(std::unique(keys.begin(), keys.end(), [&](auto& a, auto& b) { return cmp(a, b) == 0; }), keys.end());
    clustering_ranges out;
    for (auto& k : keys) {
        out.push_back(position_range::for_prefix(k));
    }
    return out;
}

void write_statement(partition_plan& plan, const modification_impl& st, const std::vector<clustering_key_prefix>& rows,
                     const std::optional<clustering_ranges>& ranges, const std::vector<bound_operation>& ops,
                     const write_params& p) {
    auto& part = plan.m.partition();
    tombstone tomb{p.ts, p.now};
    bool no_clustering = plan.m.schema()->clustering_key().empty();
    if (st.type == statement_type::insert) {
        row_marker marker{p.ts, p.ttl > 0 ? p.ttl : no_ttl, p.ttl > 0 ? p.now + p.ttl : no_deletion_time};
        for (auto& ck : rows) {
            apply_row_marker(part.clustered_row(ck).marker, marker);
        }
    }
    if (st.type == statement_type::del && ops.empty()) {
        if (ranges) {
            for (auto& r : *ranges) {
                part.apply_range_tombstone(r.start, r.end, tomb);
            }
        } else if (rows.empty() || no_clustering) {
            part.apply(tomb);
        } else {
            for (auto& ck : rows) {
                part.clustered_row(ck).tomb.apply(tomb);
            }
        }
        return;
    }
    row_writer w(plan);
    static const clustering_key_prefix static_key{};
    for (auto& b : ops) {
        if (b.op->is_static) {
            w.apply(b, static_key, p);
            continue;
        }
        for (auto& ck : rows) {
            w.apply(b, ck, p);
        }
    }
}

cas_outcome check_conditions(const partition_plan& plan, const mutation* cur) {
    cas_outcome out;
    int64_t now = now_seconds();
    for (auto& t : plan.cas) {
        auto& s = *t.schema;
        bool exists = row_exists(cur, t.row, now);
        bool ok = true;
        std::vector<const column_definition*> shown;
        if (t.if_not_exists) {
            ok = !exists;
            if (!ok) {
                shown = all_columns(s);
            }
        } else if (t.if_exists) {
            ok = exists;
        } else {
            static const clustering_key_prefix none{};
            for (auto& c : t.conditions) {
                auto* r = cells_of(cur, c.is_static, t.row ? *t.row : none);
                auto whole = column_value(*c.column, r, c.id, now);
                ok &= condition_holds(c, condition_subject(c, whole));
            }
            if (!ok && (exists || row_exists(cur, std::nullopt, now))) {
                for (auto& c : t.conditions) {
                    if (std::find(shown.begin(), shown.end(), c.column) == shown.end()) {
                        shown.push_back(c.column);
                    }
                }
                std::sort(shown.begin(), shown.end(), [](auto* a, auto* b) {
                    if (a->is_static() != b->is_static()) {
                        return a->is_static();
                    }
                    return a->name < b->name;
                });
            }
        }
        if (ok || !out.applied) {
            out.applied &= ok;
            continue;
        }
        out.applied = false;
        for (auto* c : shown) {
            out.columns.push_back(spec(s, *c));
        }
        if (!shown.empty()) {
            std::vector<std::optional<bytes>> row;
            for (auto* c : shown) {
                row.push_back(current_of(plan, t, cur, *c, now));
            }
            out.rows.push_back(std::move(row));
        }
    }
    return out;
}

void resolve_reads(partition_plan& plan, const mutation* cur, const counter_id& node) {
    row_writer w(plan);
    auto& s = *plan.m.schema();
    // Counter increments of one cell add up before they become this node's shard.
    std::vector<std::pair<const deferred_write*, int64_t>> counters;
    for (auto& d : plan.deferred) {
        auto& cols = d.is_static ? s.static_columns() : s.regular_columns();
        auto& col = cols.at(d.id);
        auto* r = cells_of(cur, d.is_static, d.row);
        auto write = [&](cell_or_collection c) { w.put(d.is_static, d.row, d.id, std::move(c)); };
        switch (d.kind) {
        case op_kind::counter_add: {
            if (d.value.is_unset()) {
                break;
            }
            if (d.value.is_null()) {
                throw invalid_request(fmt::format("Invalid null value for counter increment"));
            }
            int64_t delta = read_be<int64_t>(d.value.data.data());
            auto it = std::find_if(counters.begin(), counters.end(), [&](auto& e) {
                return e.first->is_static == d.is_static && e.first->id == d.id && e.first->row == d.row;
            });
            if (it == counters.end()) {
                counters.emplace_back(&d, delta);
            } else {
                it->second += delta;
            }
            break;
        }
        case op_kind::list_set_index:
        case op_kind::del_list_index: {
            bool set = d.kind == op_kind::list_set_index;
            if (d.key.is_unset() || (set && d.value.is_unset())) {
                break;
            }
            if (d.key.is_null()) {
                throw invalid_request("Invalid null value for list index");
            }
            int32_t idx = read_be<int32_t>(d.key.data.data());
            auto elements = live_elements(find_cell(r, d.id), d.params.now);
            if (elements.empty()) {
                throw invalid_request(set ? "Attempted to set an element on a list which is null"
                                          : "Attempted to delete an element from a list which is null");
            }
            if (idx < 0 || size_t(idx) >= elements.size()) {
                throw invalid_request(fmt::format("List index {} out of bound, list has size {}", idx, elements.size()));
            }
            collection_cells c;
            auto path = bytes(elements[size_t(idx)].first.begin(), elements[size_t(idx)].first.end());
            c.cells.emplace_back(path, set && d.value.is_value() ? live_cell(d.params, d.value.data) : dead_cell(d.params));
            write(std::move(c));
            break;
        }
        case op_kind::list_remove: {
            if (!d.value.is_value()) {
                break;
            }
            auto remove = split_collection(d.value.data);
            collection_cells c;
            for (auto& [path, v] : live_elements(find_cell(r, d.id), d.params.now)) {
                bool match = std::any_of(remove.begin(), remove.end(), [&](auto& x) {
                    return col.type->element_type()->compare(x, v) == 0;
                });
                if (match) {
                    c.cells.emplace_back(bytes(path.begin(), path.end()), dead_cell(d.params));
                }
            }
            if (!c.cells.empty()) {
                write(std::move(c));
            }
            break;
        }
        default: throw std::logic_error("resolve_reads: not a deferred operation");
        }
    }
    for (auto& [d, delta] : counters) {
        int64_t clock = 0, count = 0;
        auto* r = cells_of(cur, d->is_static, d->row);
        if (auto* cell = find_cell(r, d->id)) {
            if (auto* a = std::get_if<atomic_cell>(cell); a && a->is_live(d->params.now)) {
                auto ctx = counter_context::parse(a->value());
                for (auto& shard : ctx.shards()) {
                    if (shard.id == node) {
                        clock = shard.clock;
                        count = shard.count;
                    }
                }
            }
        }
        counter_context_builder b;
        b.add_global(node, clock + 1, int64_t(uint64_t(count) + uint64_t(delta)));
        w.put(d->is_static, d->row, d->id, atomic_cell::make_live(d->params.ts, b.serialize()));
    }
}

result_set cas_result_set(const schema_ptr& s, const cas_outcome& o) {
    result_metadata md;
    md.columns.push_back(column_spec{s->keyspace(), s->table(), "[applied]", boolean_type()});
    if (!o.applied) {
        for (auto& c : o.columns) {
            md.columns.push_back(c);
        }
    }
    result_set rs(std::move(md));
    if (o.applied || o.rows.empty()) {
        std::vector<std::optional<bytes>> row{bytes{uint8_t(o.applied)}};
        row.resize(rs.column_count());
        rs.add_row(row);
        return rs;
    }
    for (auto& r : o.rows) {
        std::vector<std::optional<bytes>> row{bytes{0}};
        row.insert(row.end(), r.begin(), r.end());
        rs.add_row(row);
    }
    return rs;
}

} // namespace reef::cql
