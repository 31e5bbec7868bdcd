// system_schema and system.local: the mutations of schema changes and the catalog read back (the tables' own
// schemas are in system_table_schemas.cc).
#include "db/schema_tables.hh"

#include "compaction/compaction_options.hh"
#include "schema/value_format.hh"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <set>
#include <stdexcept>
#include <tuple>

namespace reef::schema_tables {

namespace {

bytes text(std::string_view s) { return to_bytes(s); }
bytes boolean(bool v) { return bytes{uint8_t(v ? 1 : 0)}; }
bytes int32(int32_t v) { return serialize_be<int32_t>(v); }
bytes float64(double v) {
    uint64_t u;
    std::memcpy(&u, &v, 8);
    return serialize_be<uint64_t>(u);
}
bytes uuid(const table_id& id) { return bytes(id.begin(), id.end()); }
bytes text_map(const std::map<std::string, std::string>& m) {
    std::vector<std::pair<bytes, bytes>> entries;
    for (auto& [k, v] : m) {
        entries.emplace_back(text(k), text(v));
    }
    return serialize_map(entries);
}
bytes text_list(const std::vector<std::string>& v) {
    std::vector<bytes> elements;
    for (auto& s : v) {
        elements.push_back(text(s));
    }
    return serialize_collection(elements);
}

column_id regular_id(const schema& s, std::string_view name) {
    auto& cols = s.regular_columns();
    for (size_t i = 0; i < cols.size(); ++i) {
        if (cols[i].name == name) {
            return column_id(i);
        }
    }
    throw std::logic_error(s.keyspace() + "." + s.table() + " has no column " + std::string(name));
}

// One row written as an INSERT writes it: a marker and live cells, all at ts.
class row_writer {
public:
    row_writer(const schema& s, int64_t ts) : _s(s), _ts(ts) { _row.marker.timestamp = ts; }
    row_writer& set(std::string_view name, bytes value) {
        _row.cells.apply(regular_id(_s, name), atomic_cell::make_live(_ts, std::string(value.begin(), value.end())));
        return *this;
    }
    void write_to(mutation& m, const std::vector<bytes>& key) {
        m.partition().apply_row(_s, clustering_key_prefix(key), _row);
    }
private:
    const schema& _s;
    int64_t _ts;
    deletable_row _row;
};

mutation partition_of(const schema_ptr& s, std::string_view key) {
    return mutation(s, dht::decorated_key(partition_key::from_single_value(key)));
}

deletion_time_type deletion_time_of(int64_t ts) { return deletion_time_type(ts / 1'000'000); }

void delete_row(mutation& m, const std::vector<bytes>& key, int64_t ts) {
    deletable_row r;
    r.tomb = tombstone{ts, deletion_time_of(ts)};
    m.partition().apply_row(*m.schema(), clustering_key_prefix(key), r);
}

// Deletes every row whose key starts with `prefix`.
void delete_prefix(mutation& m, const std::vector<bytes>& prefix, int64_t ts) {
    m.partition().apply_range_tombstone(position_in_partition::before_key(clustering_key_prefix(prefix)),
                                        position_in_partition::after_key(clustering_key_prefix(prefix)),
                                        tombstone{ts, deletion_time_of(ts)});
}

const char* kind_name(column_kind k) {
    switch (k) {
    case column_kind::partition_key: return "partition_key";
    case column_kind::clustering_key: return "clustering";
    case column_kind::static_column: return "static";
    case column_kind::regular_column: return "regular";
    }
    return "regular";
}

void write_column(mutation& m, const schema& s, const column_definition& c, int64_t ts) {
    auto& cs = *m.schema();
    int32_t position = c.is_primary_key() ? int32_t(c.position) : -1;
    std::string order = c.kind != column_kind::clustering_key ? "none" : c.order == clustering_order::desc ? "desc" : "asc";
    row_writer(cs, ts)
        .set("clustering_order", text(order))
        .set("column_name_bytes", text(c.name))
        .set("kind", text(kind_name(c.kind)))
        .set("position", int32(position))
        .set("type", text(c.type->cql_name()))
        .write_to(m, {text(s.table()), text(c.name)});
}

std::map<std::string, std::string> default_compression() {
    return {{"chunk_length_in_kb", "16"}, {"class", "org.apache.cassandra.io.compress.LZ4Compressor"}};
}

// Cassandra's CompressionParams.asMap: full class names, chunk_length_in_kb, enabled=false alone.
std::map<std::string, std::string> stored_compression(const table_options& o) {
    if (o.compression.empty()) {
        return default_compression();
    }
    auto m = o.compression;
    if (auto it = m.find("class"); it != m.end() && it->second.find('.') == std::string::npos) {
        it->second = "org.apache.cassandra.io.compress." + it->second;
    }
    return m;
}

// table_options::other keeps values as CQL literals: 'it''s' is the string it's.
std::string unquoted(const std::string& literal) {
    if (literal.size() < 2 || literal.front() != '\'' || literal.back() != '\'') {
        return literal;
    }
    std::string out;
    for (size_t i = 1; i + 1 < literal.size(); ++i) {
        out += literal[i];
        if (literal[i] == '\'' && literal[i + 1] == '\'') {
            ++i;
        }
    }
    return out;
}

std::string quoted(const std::string& value) {
    std::string out = "'";
    for (char c : value) {
        out += c;
        if (c == '\'') {
            out += c;
        }
    }
    return out + "'";
}

// The table options system_schema.tables keeps in table_options::other, with Cassandra's defaults (as literals).
enum class option_kind { text, number, integer, boolean, map };
struct stored_option {
    std::string_view name;
    option_kind kind;
    std::string_view default_literal;
};
constexpr stored_option stored_options[] = {
    {"additional_write_policy", option_kind::text, "'99p'"},
    {"allow_auto_snapshot", option_kind::boolean, "true"},
    {"bloom_filter_fp_chance", option_kind::number, "0.01"},
    {"caching", option_kind::map, "{'keys': 'ALL', 'rows_per_partition': 'NONE'}"},
    {"cdc", option_kind::boolean, "false"},
    {"comment", option_kind::text, "''"},
    {"compaction", option_kind::map,
     "{'class': 'org.apache.cassandra.db.compaction.SizeTieredCompactionStrategy', 'max_threshold': '32', "
     "'min_threshold': '4'}"},
    {"crc_check_chance", option_kind::number, "1.0"},
    {"incremental_backups", option_kind::boolean, "true"},
    {"max_index_interval", option_kind::integer, "2048"},
    {"memtable", option_kind::text, "'default'"},
    {"memtable_flush_period_in_ms", option_kind::integer, "0"},
    {"min_index_interval", option_kind::integer, "128"},
    {"read_repair", option_kind::text, "'BLOCKING'"},
    {"speculative_retry", option_kind::text, "'99p'"},
};

const stored_option* find_stored_option(std::string_view name) {
    for (auto& o : stored_options) {
        if (o.name == name) {
            return &o;
        }
    }
    return nullptr;
}

// {'k': 'v', ...} (as table_options::other keeps maps) into a map; anything else gives an empty map.
std::map<std::string, std::string> map_of_literal(std::string_view lit) {
    try {
        return compaction::parse_map_literal(lit);
    } catch (const compaction::invalid_compaction_options&) {
        return {};
    }
}

std::string literal_of_map(const std::map<std::string, std::string>& m) {
    std::string s = "{";
    for (auto& [k, v] : m) {
        s += (s.size() > 1 ? ", " : "") + quoted(k) + ": " + quoted(v);
    }
    return s + "}";
}

std::string number_literal(double v) {
    auto s = fmt::format("{}", v);
    return s.find_first_of(".en") == std::string::npos ? s + ".0" : s;
}

// Cassandra's CompactionParams: the full class name, and the threshold defaults of the strategies that take them.
std::map<std::string, std::string> normalized_compaction(std::map<std::string, std::string> m) {
    auto& cls = m["class"];
    if (cls.empty()) {
        cls = "SizeTieredCompactionStrategy";
    }
    if (cls.find('.') == std::string::npos) {
        cls = "org.apache.cassandra.db.compaction." + cls;
    }
    if (cls.ends_with(".SizeTieredCompactionStrategy") || cls.ends_with(".TimeWindowCompactionStrategy")) {
        m.emplace("max_threshold", "32");
        m.emplace("min_threshold", "4");
    }
    return m;
}

std::string option_literal(const stored_option& opt, const table_options& o) {
    auto it = o.other.find(std::string(opt.name));
    if (it == o.other.end()) {
        return std::string(opt.default_literal);
    }
    auto& v = it->second;
    switch (opt.kind) {
    case option_kind::text:
        return v.starts_with('\'') ? v : quoted(v);
    case option_kind::number:
        try {
            return number_literal(std::stod(v));
        } catch (const std::exception&) {
            return std::string(opt.default_literal);
        }
    case option_kind::integer:
    case option_kind::boolean: {
        std::string lower;
        for (char c : v) {
            lower += char(std::tolower(uint8_t(c)));
        }
        return lower;
    }
    case option_kind::map: {
        auto m = map_of_literal(v);
        return literal_of_map(opt.name == "compaction" ? normalized_compaction(std::move(m)) : m);
    }
    }
    return v;
}

// The literal as the column's bytes.
bytes option_bytes(const stored_option& opt, const std::string& literal) {
    switch (opt.kind) {
    case option_kind::text:
        return text(unquoted(literal));
    case option_kind::number:
        return float64(std::stod(literal));
    case option_kind::integer:
        return int32(int32_t(std::stol(literal)));
    case option_kind::boolean:
        return boolean(literal == "true");
    case option_kind::map:
        return text_map(map_of_literal(literal));
    }
    return {};
}

// The column's bytes as a literal.
std::string option_literal_of_bytes(const stored_option& opt, bytes_view v) {
    switch (opt.kind) {
    case option_kind::text:
        return quoted(std::string(to_string_view(v)));
    case option_kind::number: {
        auto u = read_be<uint64_t>(v.data());
        double d;
        std::memcpy(&d, &u, 8);
        return number_literal(d);
    }
    case option_kind::integer:
        return std::to_string(read_be<int32_t>(v.data()));
    case option_kind::boolean:
        return v.size() && v[0] ? "true" : "false";
    case option_kind::map: {
        std::map<std::string, std::string> m;
        for (auto& [k, val] : split_map(v)) {
            m[std::string(to_string_view(k))] = std::string(to_string_view(val));
        }
        return literal_of_map(m);
    }
    }
    return "";
}

} // namespace

std::string table_option_literal(const table_options& o, std::string_view name) {
    if (name == "compression") {
        return literal_of_map(stored_compression(o));
    }
    if (name == "gc_grace_seconds") {
        return std::to_string(o.gc_grace_seconds);
    }
    if (name == "default_time_to_live") {
        return std::to_string(o.default_time_to_live);
    }
    if (name == "extensions") {
        return "{}";
    }
    auto* opt = find_stored_option(name);
    if (!opt) {
        throw std::invalid_argument("no table option " + std::string(name));
    }
    return option_literal(*opt, o);
}

std::vector<mutation> virtual_schema_mutations(int64_t ts) {
    std::string ks(system_virtual_schema_keyspace);
    auto k = partition_of(virtual_keyspaces(), ks);
    deletable_row marker;
    marker.marker.timestamp = ts;
    k.partition().apply_row(*virtual_keyspaces(), clustering_key_prefix(), marker);
    auto t = partition_of(virtual_tables(), ks);
    auto c = partition_of(virtual_columns(), ks);
    for (auto& s : {virtual_keyspaces(), virtual_tables(), virtual_columns()}) {
        row_writer(*virtual_tables(), ts).set("comment", text("")).write_to(t, {text(s->table())});
        for (auto* col : s->columns_in_declaration_order()) {
            write_column(c, *s, *col, ts);
        }
    }
    std::vector<mutation> out;
    out.push_back(std::move(k));
    out.push_back(std::move(t));
    out.push_back(std::move(c));
    return out;
}

keyspace_definition normalized(keyspace_definition ks) {
    if (auto it = ks.replication.find("class"); it != ks.replication.end() && it->second.find('.') == std::string::npos) {
        it->second = "org.apache.cassandra.locator." + it->second;
    }
    return ks;
}

std::vector<mutation> create_keyspace_mutations(const keyspace_definition& ks, int64_t ts) {
    auto m = partition_of(keyspaces(), ks.name);
    row_writer(*keyspaces(), ts)
        .set("durable_writes", boolean(ks.durable_writes))
        .set("replication", text_map(normalized(ks).replication))
        .write_to(m, {});
    std::vector<mutation> out;
    out.push_back(std::move(m));
    return out;
}

std::vector<mutation> drop_keyspace_mutations(const std::string& ks, int64_t ts) {
    std::vector<mutation> out;
    for (auto& s : {keyspaces(), tables(), columns(), dropped_columns(), types()}) {
        auto m = partition_of(s, ks);
        m.partition().apply(tombstone{ts, deletion_time_of(ts)});
        out.push_back(std::move(m));
    }
    return out;
}

std::vector<mutation> table_mutations(const schema& s, int64_t ts, const schema* old) {
    auto& o = s.options();
    auto t = partition_of(tables(), s.keyspace());
    std::set<std::string> flags{"compound"};
    if (o.compact_storage) {
        flags = s.clustering_key().empty() ? std::set<std::string>{} : std::set<std::string>{"dense"};
    }
    if (std::any_of(s.regular_columns().begin(), s.regular_columns().end(),
                    [](auto& c) { return c.type->is_counter(); })) {
        flags.insert("counter");
    }
    std::vector<bytes> flag_values;
    for (auto& f : flags) {
        flag_values.push_back(text(f));
    }
    row_writer row(*tables(), ts);
    for (auto& opt : stored_options) {
        row.set(opt.name, option_bytes(opt, option_literal(opt, o)));
    }
    row.set("compression", text_map(stored_compression(o)))
        .set("dclocal_read_repair_chance", float64(0.0))
        .set("default_time_to_live", int32(o.default_time_to_live))
        .set("extensions", serialize_map({}))
        .set("flags", serialize_collection(flag_values))
        .set("gc_grace_seconds", int32(o.gc_grace_seconds))
        .set("id", uuid(s.id()))
        .set("read_repair_chance", float64(0.0))
        .write_to(t, {text(s.table())});
    auto c = partition_of(columns(), s.keyspace());
    for (auto* col : s.columns_in_declaration_order()) {
        write_column(c, s, *col, ts);
    }
    std::vector<mutation> out;
    out.push_back(std::move(t));
    if (old) {
        auto d = partition_of(dropped_columns(), s.keyspace());
        for (auto* col : old->columns_in_declaration_order()) {
            if (s.find_column(col->name)) {
                continue;
            }
            delete_row(c, {text(s.table()), text(col->name)}, ts);
            if (col->is_primary_key()) {
                // A primary key column is never dropped: it was renamed.
                continue;
            }
            row_writer(*dropped_columns(), ts)
                .set("dropped_time", serialize_be<int64_t>(ts / 1000))
                .set("kind", text(kind_name(col->kind)))
                .set("type", text(col->type->cql_name()))
                .write_to(d, {text(s.table()), text(col->name)});
        }
        out.push_back(std::move(d));
    }
    out.push_back(std::move(c));
    return out;
}

std::vector<mutation> drop_table_mutations(const std::string& ks, const std::string& table, int64_t ts) {
    std::vector<mutation> out;
    auto t = partition_of(tables(), ks);
    delete_row(t, {text(table)}, ts);
    out.push_back(std::move(t));
    for (auto& s : {columns(), dropped_columns()}) {
        auto m = partition_of(s, ks);
        delete_prefix(m, {text(table)}, ts);
        out.push_back(std::move(m));
    }
    return out;
}

std::vector<mutation> type_mutations(const user_type_impl& t, int64_t ts) {
    auto m = partition_of(types(), t.keyspace());
    std::vector<std::string> field_types;
    for (auto& f : t.declared_field_types()) {
        field_types.push_back(f->cql_name());
    }
    row_writer(*types(), ts)
        .set("field_names", text_list(t.field_names()))
        .set("field_types", text_list(field_types))
        .write_to(m, {text(t.type_name())});
    std::vector<mutation> out;
    out.push_back(std::move(m));
    return out;
}

std::vector<mutation> drop_type_mutations(const std::string& ks, const std::string& name, int64_t ts) {
    auto m = partition_of(types(), ks);
    delete_row(m, {text(name)}, ts);
    std::vector<mutation> out;
    out.push_back(std::move(m));
    return out;
}

std::vector<live_row> live_rows(const mutation& m) {
    // What a query sees: now is "far in the future" for nothing expires in schema tables (no TTLs are written).
    mutation_partition p = m.partition();
    p.drop_shadowed();
    auto now = std::numeric_limits<deletion_time_type>::max() - 1;
    auto& s = *m.schema();
    std::vector<live_row> out;
    for (auto& [key, r] : p.rows()) {
        live_row lr;
        for (auto c : key.components()) {
            lr.key.emplace_back(c.begin(), c.end());
        }
        bool live = r.marker.is_live(now);
        for (auto& [id, c] : r.cells.cells()) {
            auto& name = s.regular_columns().at(id).name;
            if (auto* cell = std::get_if<atomic_cell>(&c)) {
                if (cell->is_live(now)) {
                    lr.cells[name] = to_bytes(cell->value());
                    live = true;
                }
            } else {
                auto& elems = lr.collections[name];
                for (auto& [path, cell] : std::get<collection_cells>(c).cells) {
                    if (cell.is_live(now)) {
                        elems.emplace_back(path, to_bytes(cell.value()));
                        live = true;
                    }
                }
            }
        }
        if (live) {
            out.push_back(std::move(lr));
        }
    }
    return out;
}

namespace {

std::string as_text(bytes_view v) { return std::string(to_string_view(v)); }

const bytes& need(const live_row& r, const std::string& table, const std::string& column) {
    auto it = r.cells.find(column);
    if (it == r.cells.end()) {
        std::string key;
        for (auto& k : r.key) {
            key += (key.empty() ? "" : ", ") + as_text(k);
        }
        throw std::runtime_error("system_schema." + table + " row (" + key + "): no " + column);
    }
    return it->second;
}

std::string partition_text(const mutation& m) { return std::string(m.decorated_key().key().view()); }

std::vector<std::string> text_list_of(bytes_view v) {
    std::vector<std::string> out;
    for (auto e : split_collection(v)) {
        out.push_back(as_text(e));
    }
    return out;
}

// Merges the mutations of one partition key (a table read across shards gives each once; this tolerates more).
std::map<std::string, mutation> by_keyspace(const std::vector<mutation>& ms) {
    std::map<std::string, mutation> out;
    for (auto& m : ms) {
        auto ks = partition_text(m);
        if (is_system_keyspace(ks)) {
            continue;
        }
        if (auto it = out.find(ks); it != out.end()) {
            it->second.apply(m);
        } else {
            out.emplace(ks, m);
        }
    }
    return out;
}

column_kind kind_of(const std::string& k, const std::string& where) {
    if (k == "partition_key") return column_kind::partition_key;
    if (k == "clustering") return column_kind::clustering_key;
    if (k == "static") return column_kind::static_column;
    if (k == "regular") return column_kind::regular_column;
    throw std::runtime_error(where + ": unknown column kind '" + k + "'");
}

} // namespace

catalog read_catalog(const std::vector<mutation>& ks_ms, const std::vector<mutation>& table_ms,
                     const std::vector<mutation>& column_ms, const std::vector<mutation>& type_ms) {
    catalog cat;
    for (auto& [name, m] : by_keyspace(ks_ms)) {
        for (auto& r : live_rows(m)) {
            keyspace_definition ks;
            ks.name = name;
            ks.durable_writes = need(r, "keyspaces", "durable_writes").at(0) != 0;
            for (auto& [k, v] : split_map(need(r, "keyspaces", "replication"))) {
                ks.replication[as_text(k)] = as_text(v);
            }
            cat.keyspaces[name] = std::move(ks);
        }
    }
    // Types may name other types of their keyspace: resolve them in passes until none is left or no pass helps.
    std::vector<std::pair<std::string, live_row>> pending;
    for (auto& [ks, m] : by_keyspace(type_ms)) {
        for (auto& r : live_rows(m)) {
            pending.emplace_back(ks, std::move(r));
        }
    }
    auto resolver = [&cat](const std::string& ks) {
        return [&cat, ks](std::string_view k, std::string_view name) -> data_type {
            auto it = cat.types.find({k.empty() ? ks : std::string(k), std::string(name)});
            if (it == cat.types.end()) {
                throw type_parse_error("unknown user type " + std::string(name));
            }
            return it->second;
        };
    };
    while (!pending.empty()) {
        size_t before = pending.size();
        std::string last_error;
        for (auto it = pending.begin(); it != pending.end();) {
            auto& [ks, r] = *it;
            auto name = as_text(r.key.at(0));
            try {
                auto names = text_list_of(need(r, "types", "field_names"));
                std::vector<data_type> ftypes;
                for (auto& t : text_list_of(need(r, "types", "field_types"))) {
                    ftypes.push_back(parse_cql_type(t, resolver(ks)));
                }
                cat.types[{ks, name}] = user_type(ks, name, std::move(names), std::move(ftypes), true);
                it = pending.erase(it);
            } catch (const type_parse_error& e) {
                last_error = "system_schema.types row (" + ks + ", " + name + "): " + e.what();
                ++it;
            }
        }
        if (pending.size() == before) {
            throw std::runtime_error(last_error);
        }
    }
    auto columns_by_ks = by_keyspace(column_ms);
    for (auto& [ks, m] : by_keyspace(table_ms)) {
        std::map<std::string, std::vector<live_row>> cols_of;
        if (auto it = columns_by_ks.find(ks); it != columns_by_ks.end()) {
            for (auto& r : live_rows(it->second)) {
                cols_of[as_text(r.key.at(0))].push_back(std::move(r));
            }
        }
        for (auto& r : live_rows(m)) {
            auto table = as_text(r.key.at(0));
            auto where = "system_schema.columns of " + ks + "." + table;
            schema_builder b(ks, table);
            auto id_bytes = need(r, "tables", "id");
            if (id_bytes.size() != 16) {
                throw std::runtime_error("system_schema.tables row (" + ks + ", " + table + "): id is not a uuid");
            }
            table_id id;
            std::copy(id_bytes.begin(), id_bytes.end(), id.begin());
            b.with_id(id);
            auto& cols = cols_of[table];
            if (cols.empty()) {
                throw std::runtime_error(where + ": no columns");
            }
            // Key columns by position, then the others in the table's (name) order.
            std::vector<std::tuple<column_kind, int32_t, std::string, data_type, clustering_order>> defs;
            for (auto& c : cols) {
                auto name = as_text(c.key.at(1));
                auto kind = kind_of(as_text(need(c, "columns", "kind")), where);
                auto pos = read_be<int32_t>(need(c, "columns", "position").data());
                data_type type;
                try {
                    type = parse_cql_type(as_text(need(c, "columns", "type")), resolver(ks));
                } catch (const std::exception& e) {
                    throw std::runtime_error(where + ", column " + name + ": " + e.what());
                }
                auto order = as_text(need(c, "columns", "clustering_order")) == "desc" ? clustering_order::desc
                                                                                    : clustering_order::asc;
                defs.emplace_back(kind, pos, name, type, order);
            }
            std::stable_sort(defs.begin(), defs.end(), [](auto& a, auto& b) {
                return std::pair(std::get<0>(a), std::get<1>(a)) < std::pair(std::get<0>(b), std::get<1>(b));
            });
            for (auto& [kind, pos, name, type, order] : defs) {
                b.with_column(name, type, kind, order);
            }
            table_options o;
            o.gc_grace_seconds = read_be<int32_t>(need(r, "tables", "gc_grace_seconds").data());
            o.default_time_to_live = read_be<int32_t>(need(r, "tables", "default_time_to_live").data());
            std::map<std::string, std::string> compression;
            for (auto& [k, v] : split_map(need(r, "tables", "compression"))) {
                compression[as_text(k)] = as_text(v);
            }
            if (compression != default_compression()) {
                o.compression = std::move(compression);
            }
            bool compound = false;
            for (auto& f : text_list_of(need(r, "tables", "flags"))) {
                compound |= f == "compound";
            }
            o.compact_storage = !compound;
            // The options kept as literals, when they are not Cassandra's defaults.
            for (auto& opt : stored_options) {
                if (auto it = r.cells.find(std::string(opt.name)); it != r.cells.end()) {
                    auto lit = option_literal_of_bytes(opt, it->second);
                    if (lit != opt.default_literal) {
                        o.other[std::string(opt.name)] = lit;
                    }
                }
            }
            b.with_options(std::move(o));
            cat.tables.push_back(b.build());
        }
    }
    return cat;
}

mutation local_mutation(const local_info& info, int64_t ts) {
    auto m = partition_of(local(), "local");
    row_writer(*local(), ts)
        .set("bootstrapped", text("COMPLETED"))
        .set("broadcast_address", inet_type()->from_string(info.listen_address))
        .set("broadcast_port", int32(info.listen_port))
        .set("cluster_name", text(info.cluster_name))
        .set("cql_version", text("3.4.7"))
        .set("data_center", text(info.data_center))
        .set("gossip_generation", int32(info.gossip_generation))
        .set("host_id", uuid(info.host_id))
        .set("listen_address", inet_type()->from_string(info.listen_address))
        .set("listen_port", int32(info.listen_port))
        .set("native_protocol_version", text("4"))
        .set("partitioner", text("org.apache.cassandra.dht.Murmur3Partitioner"))
        .set("rack", text(info.rack))
        .set("release_version", text(info.release_version))
        .set("rpc_address", inet_type()->from_string(info.rpc_address))
        .set("rpc_port", int32(info.rpc_port))
        .set("schema_version", uuid(info.schema_version))
        .write_to(m, {});
    // tokens: a non-frozen set<text>, its elements as cell paths; the old set is replaced (a collection tombstone
    // just before ts, as an INSERT of a whole collection writes).
    collection_cells tokens;
    tokens.tomb = tombstone{ts - 1, deletion_time_of(ts)};
    auto sorted = info.tokens;
    std::sort(sorted.begin(), sorted.end());
    for (auto& t : sorted) {
        tokens.cells.emplace_back(text(t), atomic_cell::make_live(ts, ""));
    }
    deletable_row r;
    auto cmp = set_type(text_type(), true)->name_comparator();
    r.cells.apply(regular_id(*local(), "tokens"), std::move(tokens),
                  [cmp](bytes_view a, bytes_view b) { return cmp->compare(a, b); });
    m.partition().apply_row(*local(), clustering_key_prefix(), r);
    return m;
}

std::optional<persisted_identity> read_local_identity(const std::vector<mutation>& ms) {
    for (auto& m : ms) {
        if (partition_text(m) != "local") {
            continue;
        }
        for (auto& r : live_rows(m)) {
            auto it = r.cells.find("host_id");
            if (it == r.cells.end() || it->second.size() != 16) {
                continue;
            }
            persisted_identity id;
            std::copy(it->second.begin(), it->second.end(), id.host_id.begin());
            if (auto t = r.collections.find("tokens"); t != r.collections.end()) {
                for (auto& [path, value] : t->second) {
                    id.tokens.push_back(as_text(path));
                }
            }
            return id;
        }
    }
    return std::nullopt;
}

std::optional<local_info> read_local_info(const std::vector<mutation>& ms) {
    auto id = read_local_identity(ms);
    if (!id) {
        return std::nullopt;
    }
    local_info info;
    info.host_id = id->host_id;
    info.tokens = id->tokens;
    for (auto& m : ms) {
        if (partition_text(m) != "local") {
            continue;
        }
        for (auto& r : live_rows(m)) {
            auto cell = [&r](const char* name) -> const bytes* {
                auto it = r.cells.find(name);
                return it == r.cells.end() ? nullptr : &it->second;
            };
            auto set_text = [&](const char* name, std::string& out) {
                if (auto* v = cell(name)) {
                    out = as_text(*v);
                }
            };
            auto set_inet = [&](const char* name, std::string& out) {
                if (auto* v = cell(name)) {
                    out = inet_type()->to_string(*v);
                }
            };
            set_text("cluster_name", info.cluster_name);
            set_text("release_version", info.release_version);
            set_text("data_center", info.data_center);
            set_text("rack", info.rack);
            set_inet("listen_address", info.listen_address);
            set_inet("rpc_address", info.rpc_address);
            if (auto* v = cell("schema_version"); v && v->size() == 16) {
                std::copy(v->begin(), v->end(), info.schema_version.begin());
            }
            if (auto* v = cell("gossip_generation"); v && v->size() == 4) {
                info.gossip_generation = int32_t(uint32_t((*v)[0]) << 24 | uint32_t((*v)[1]) << 16 |
                                                 uint32_t((*v)[2]) << 8 | uint32_t((*v)[3]));
            }
            return info;
        }
    }
    return info;
}

namespace {

void put_be(bytes& out, uint64_t v, int n) {
    for (int shift = 8 * (n - 1); shift >= 0; shift -= 8) {
        out.push_back(uint8_t(v >> shift));
    }
}

uint64_t get_be(bytes_view in, size_t pos, int n) {
    uint64_t v = 0;
    for (int i = 0; i < n; ++i) {
        v = (v << 8) | in[pos + i];
    }
    return v;
}

} // namespace

bytes encode_truncation_record(const truncation_record& r) {
    bytes out;
    for (size_t i = 0; i < r.positions.size(); ++i) {
        put_be(out, r.positions[i].segment_id, 8);
        put_be(out, r.positions[i].offset, 4);
        if (i == 0) {
            put_be(out, uint64_t(r.truncated_at_millis), 8);
        }
    }
    return out;
}

truncation_record decode_truncation_record(const table_id& table, bytes_view blob) {
    if (blob.size() < 20 || (blob.size() - 20) % 12 != 0) {
        throw std::runtime_error("system.local truncated_at[" + utils::to_string(table) + "]: " +
                                 std::to_string(blob.size()) + " bytes, expected 20 + 12 per shard past the first");
    }
    truncation_record r;
    r.positions.push_back({get_be(blob, 0, 8), uint32_t(get_be(blob, 8, 4))});
    r.truncated_at_millis = int64_t(get_be(blob, 12, 8));
    for (size_t pos = 20; pos < blob.size(); pos += 12) {
        r.positions.push_back({get_be(blob, pos, 8), uint32_t(get_be(blob, pos + 8, 4))});
    }
    return r;
}

mutation truncation_record_mutation(const table_id& table, const truncation_record& r, int64_t ts) {
    auto m = partition_of(local(), "local");
    collection_cells cells;
    auto blob = encode_truncation_record(r);
    cells.cells.emplace_back(uuid(table), atomic_cell::make_live(ts, std::string(blob.begin(), blob.end())));
    deletable_row row;
    auto cmp = map_type(uuid_type(), blob_type(), true)->name_comparator();
    row.cells.apply(regular_id(*local(), "truncated_at"), std::move(cells),
                    [cmp](bytes_view a, bytes_view b) { return cmp->compare(a, b); });
    m.partition().apply_row(*local(), clustering_key_prefix(), row);
    return m;
}

std::map<table_id, truncation_record> read_truncation_records(const std::vector<mutation>& ms) {
    std::map<table_id, truncation_record> out;
    for (auto& m : ms) {
        if (partition_text(m) != "local") {
            continue;
        }
        for (auto& r : live_rows(m)) {
            auto it = r.collections.find("truncated_at");
            if (it == r.collections.end()) {
                continue;
            }
            for (auto& [key, value] : it->second) {
                if (key.size() != 16) {
                    throw std::runtime_error("system.local truncated_at: a key of " + std::to_string(key.size()) +
                                             " bytes, not a uuid");
                }
                table_id id;
                std::copy(key.begin(), key.end(), id.begin());
                out[id] = decode_truncation_record(id, value);
            }
        }
    }
    return out;
}

} // namespace reef::schema_tables
