// Building and checking schemas, and writing them back as CQL.

#include "schema/schema.hh"
#include "schema/value_format.hh"

#include <fmt/format.h>

#include <algorithm>
#include <random>
#include <set>
#include <stdexcept>

namespace reef {

bool table_options::compression_enabled() const {
    auto it = compression.find("enabled");
    if (it != compression.end() && (it->second == "false" || it->second == "False")) {
        return false;
    }
    auto cls = compression.find("class");
    // An empty class (sstable_compression = '') also turned compression off in old versions.
    return cls == compression.end() || !cls->second.empty();
}

const column_definition* schema::find_column(std::string_view name) const {
    for (auto* group : {&_partition_key, &_clustering_key, &_static_columns, &_regular_columns}) {
        for (auto& c : *group) {
            if (c.name == name) {
                return &c;
            }
        }
    }
    return nullptr;
}

std::vector<const column_definition*> schema::columns_in_declaration_order() const {
    std::vector<const column_definition*> out;
    for (auto& n : _declared) {
        out.push_back(find_column(n));
    }
    return out;
}

data_type schema::partition_key_type() const {
    if (_partition_key.size() == 1) {
        return _partition_key[0].type;
    }
    std::vector<data_type> types;
    for (auto& c : _partition_key) {
        types.push_back(c.type);
    }
    return composite_type(std::move(types));
}

std::vector<data_type> schema::clustering_types() const {
    std::vector<data_type> types;
    for (auto& c : _clustering_key) {
        types.push_back(c.clustering_type());
    }
    return types;
}

std::shared_ptr<const clustering_columns> schema::clustering_compare() const {
    return _clustering_compare ? _clustering_compare : make_clustering_columns(clustering_types());
}

std::string schema::to_cql() const {
    std::string s = fmt::format("CREATE TABLE {}.{} (", maybe_quote_identifier(_keyspace), maybe_quote_identifier(_table));
    bool first = true;
    for (auto* c : columns_in_declaration_order()) {
        s += fmt::format("{}{} {}{}", first ? "" : ", ", maybe_quote_identifier(c->name), c->type->cql_name(),
                         c->is_static() ? " static" : "");
        first = false;
    }
    s += ", PRIMARY KEY (";
    auto names = [](const std::vector<column_definition>& cols) {
        std::string r;
        for (size_t i = 0; i < cols.size(); ++i) {
            r += (i ? ", " : "") + maybe_quote_identifier(cols[i].name);
        }
        return r;
    };
    s += _partition_key.size() == 1 ? names(_partition_key) : "(" + names(_partition_key) + ")";
    if (!_clustering_key.empty()) {
        s += ", " + names(_clustering_key);
    }
    s += "))";
    std::vector<std::string> with;
    with.push_back("id = " + format_table_id(_id));
    if (_options.compact_storage) {
        with.push_back("COMPACT STORAGE");
    }
    if (!_clustering_key.empty()) {
        std::string order = "CLUSTERING ORDER BY (";
        for (size_t i = 0; i < _clustering_key.size(); ++i) {
            order += fmt::format("{}{} {}", i ? ", " : "", maybe_quote_identifier(_clustering_key[i].name),
                                 _clustering_key[i].order == clustering_order::desc ? "DESC" : "ASC");
        }
        with.push_back(order + ")");
    }
    if (!_options.compression.empty()) {
        std::string m = "compression = {";
        bool f = true;
        for (auto& [k, v] : _options.compression) {
            m += fmt::format("{}'{}': '{}'", f ? "" : ", ", k, v);
            f = false;
        }
        with.push_back(m + "}");
    }
    with.push_back(fmt::format("gc_grace_seconds = {}", _options.gc_grace_seconds));
    with.push_back(fmt::format("default_time_to_live = {}", _options.default_time_to_live));
    for (auto& [k, v] : _options.other) {
        with.push_back(fmt::format("{} = {}", k, v));
    }
    for (size_t i = 0; i < with.size(); ++i) {
        s += (i ? " AND " : " WITH ") + with[i];
    }
    return s + ";";
}

schema_builder::schema_builder(std::string keyspace, std::string table) {
    _s._keyspace = std::move(keyspace);
    _s._table = std::move(table);
    // A random (version 4) id, as a new table gets a fresh id; tables read from files set theirs.
    std::random_device rd;
    for (auto& b : _s._id) {
        b = uint8_t(rd());
    }
    _s._id[6] = uint8_t((_s._id[6] & 0x0f) | 0x40);
    _s._id[8] = uint8_t((_s._id[8] & 0x3f) | 0x80);
}

schema_builder& schema_builder::with_id(const table_id& id) {
    _s._id = id;
    return *this;
}

schema_builder& schema_builder::with_column(std::string name, data_type type, column_kind kind,
                                            clustering_order order) {
    column_definition c{name, type->without_reversal(), kind, 0, order};
    if (type->is_reversed()) {
        c.order = clustering_order::desc;
    }
    switch (kind) {
    case column_kind::partition_key:
        c.position = uint32_t(_s._partition_key.size());
        _s._partition_key.push_back(std::move(c));
        break;
    case column_kind::clustering_key:
        c.position = uint32_t(_s._clustering_key.size());
        _s._clustering_key.push_back(std::move(c));
        break;
    case column_kind::static_column:
        _s._static_columns.push_back(std::move(c));
        break;
    case column_kind::regular_column:
        _s._regular_columns.push_back(std::move(c));
        break;
    }
    _s._declared.push_back(std::move(name));
    return *this;
}

schema_builder& schema_builder::without_column(std::string_view name) {
    for (auto* group : {&_s._static_columns, &_s._regular_columns}) {
        auto it = std::find_if(group->begin(), group->end(), [&](auto& c) { return c.name == name; });
        if (it != group->end()) {
            group->erase(it);
            std::erase(_s._declared, std::string(name));
            return *this;
        }
    }
    throw std::invalid_argument(fmt::format("table {}.{}: no static or regular column {}", _s._keyspace, _s._table, name));
}

schema_builder& schema_builder::with_options(table_options options) {
    _s._options = std::move(options);
    return *this;
}

schema_ptr schema_builder::build() {
    auto where = fmt::format("table {}.{}", _s._keyspace, _s._table);
    if (_s._partition_key.empty()) {
        throw std::invalid_argument(where + ": no partition key");
    }
    std::set<std::string> names;
    for (auto& n : _s._declared) {
        if (!names.insert(n).second) {
            throw std::invalid_argument(fmt::format("{}: column {} declared twice", where, n));
        }
    }
    for (auto* group : {&_s._partition_key, &_s._clustering_key}) {
        for (auto& c : *group) {
            if (c.type->is_multi_cell()) {
                throw std::invalid_argument(
                    fmt::format("{}: primary key column {} has a non-frozen type {}", where, c.name, c.type->cql_name()));
            }
            if (c.type->is_counter()) {
                throw std::invalid_argument(fmt::format("{}: primary key column {} is a counter", where, c.name));
            }
        }
    }
    if (!_s._static_columns.empty() && _s._clustering_key.empty()) {
        throw std::invalid_argument(where + ": static columns need clustering columns");
    }
    size_t counters = 0, others = 0;
    for (auto* group : {&_s._static_columns, &_s._regular_columns}) {
        for (auto& c : *group) {
            (c.type->is_counter() ? counters : others)++;
        }
    }
    if (counters && others) {
        throw std::invalid_argument(where + ": counter and non-counter columns cannot be mixed");
    }
    // Cassandra's Columns order: simple before complex, then by the name's bytes.
    auto order = [](const column_definition& a, const column_definition& b) {
        if (a.is_complex() != b.is_complex()) {
            return !a.is_complex();
        }
        return compare_unsigned(to_bytes_view(a.name), to_bytes_view(b.name)) < 0;
    };
    std::sort(_s._static_columns.begin(), _s._static_columns.end(), order);
    std::sort(_s._regular_columns.begin(), _s._regular_columns.end(), order);
    _s._clustering_compare = make_clustering_columns(_s.clustering_types());
    return std::make_shared<const schema>(_s);
}

std::string format_table_id(const table_id& id) {
    return format_uuid(bytes_view(id.data(), id.size()));
}

} // namespace reef
