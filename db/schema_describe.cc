// The CREATE statements of DESCRIBE and of a snapshot's schema.cql, as Cassandra 5.0 writes them.
#include "db/schema_describe.hh"

#include "db/schema_tables.hh"
#include "utils/uuid.hh"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <vector>

namespace reef {

namespace {

std::string q(std::string_view id) { return maybe_quote_identifier(id); }

std::string quote_string(std::string_view v) {
    std::string out = "'";
    for (char c : v) {
        out += c;
        if (c == '\'') {
            out += c;
        }
    }
    return out + "'";
}

std::string map_literal(const std::map<std::string, std::string>& m) {
    std::string s = "{";
    for (auto& [k, v] : m) {
        s += fmt::format("{}{}: {}", s.size() > 1 ? ", " : "", quote_string(k), quote_string(v));
    }
    return s + "}";
}

// The table options as Cassandra 5.0 prints them, in its order (values as system_schema.tables keeps them).
std::vector<std::pair<std::string, std::string>> table_option_lines(const table_options& o) {
    static const char* names[] = {
        "additional_write_policy", "allow_auto_snapshot", "bloom_filter_fp_chance", "caching", "cdc", "comment",
        "compaction", "compression", "memtable", "crc_check_chance", "default_time_to_live", "extensions",
        "gc_grace_seconds", "incremental_backups", "max_index_interval", "memtable_flush_period_in_ms",
        "min_index_interval", "read_repair", "speculative_retry",
    };
    std::vector<std::pair<std::string, std::string>> lines;
    for (auto* n : names) {
        lines.emplace_back(n, schema_tables::table_option_literal(o, n));
    }
    return lines;
}

// The user types t uses (itself included), each after the types it uses, appended to out once.
void add_user_types(const data_type& t, std::vector<const user_type_impl*>& out) {
    for (auto& f : t->field_types()) {
        add_user_types(f, out);
    }
    if (auto* ut = dynamic_cast<const user_type_impl*>(t.get())) {
        bool known = std::any_of(out.begin(), out.end(), [&](auto* o) {
            return o->keyspace() == ut->keyspace() && o->type_name() == ut->type_name();
        });
        if (!known) {
            out.push_back(ut);
        }
    }
}

} // namespace

std::string describe_keyspace(const keyspace_definition& ks) {
    return fmt::format("CREATE KEYSPACE {} WITH replication = {}  AND durable_writes = {};", q(ks.name),
                       map_literal(ks.replication), ks.durable_writes ? "true" : "false");
}

std::string describe_type(const user_type_impl& type, bool if_not_exists) {
    std::string s = fmt::format("CREATE TYPE {}{}.{} (\n", if_not_exists ? "IF NOT EXISTS " : "", q(type.keyspace()),
                                q(type.type_name()));
    auto& names = type.field_names();
    auto& types = type.declared_field_types();
    for (size_t i = 0; i < names.size(); ++i) {
        s += fmt::format("    {} {}{}\n", q(names[i]), types[i]->cql_name(), i + 1 < names.size() ? "," : "");
    }
    return s + ");";
}

std::string describe_table(const schema& s, bool with_internals) {
    std::string out = fmt::format("CREATE TABLE {}{}.{} (\n", with_internals ? "IF NOT EXISTS " : "",
                                  q(s.keyspace()), q(s.table()));
    bool inline_key = s.partition_key().size() == 1 && s.clustering_key().empty();
    auto column = [&](const column_definition& c) {
        out += fmt::format("    {} {}{}{},\n", q(c.name), c.type->cql_name(), c.is_static() ? " static" : "",
                           inline_key && c.kind == column_kind::partition_key ? " PRIMARY KEY" : "");
    };
    // Cassandra's select order: key columns, then static and regular ones by name.
    std::vector<const column_definition*> rest;
    for (auto* group : {&s.static_columns(), &s.regular_columns()}) {
        for (auto& c : *group) {
            rest.push_back(&c);
        }
    }
    auto by_name = [](auto* a, auto* b) { return a->name < b->name; };
    std::stable_sort(rest.begin(), rest.begin() + long(s.static_columns().size()), by_name);
    std::stable_sort(rest.begin() + long(s.static_columns().size()), rest.end(), by_name);
    for (auto& c : s.partition_key()) {
        column(c);
    }
    for (auto& c : s.clustering_key()) {
        column(c);
    }
    for (auto* c : rest) {
        column(*c);
    }
    if (inline_key) {
        out.erase(out.size() - 2, 1); // the last column's ','
    } else {
        auto names = [](const std::vector<column_definition>& cols) {
            std::string r;
            for (auto& c : cols) {
                r += (r.empty() ? "" : ", ") + q(c.name);
            }
            return r;
        };
        auto pk = s.partition_key().size() == 1 ? names(s.partition_key()) : "(" + names(s.partition_key()) + ")";
        out += fmt::format("    PRIMARY KEY ({}{}{})\n", pk, s.clustering_key().empty() ? "" : ", ",
                           names(s.clustering_key()));
    }
    out += ") WITH ";
    if (with_internals) {
        out += "ID = " + utils::to_string(s.id()) + "\n    AND ";
    }
    if (!s.clustering_key().empty()) {
        out += "CLUSTERING ORDER BY (";
        for (size_t i = 0; i < s.clustering_key().size(); ++i) {
            auto& c = s.clustering_key()[i];
            out += fmt::format("{}{} {}", i ? ", " : "", q(c.name), c.order == clustering_order::desc ? "DESC" : "ASC");
        }
        out += ")\n    AND ";
    }
    auto lines = table_option_lines(s.options());
    for (size_t i = 0; i < lines.size(); ++i) {
        out += fmt::format("{}{} = {}", i ? "\n    AND " : "", lines[i].first, lines[i].second);
    }
    return out + ";";
}


std::string snapshot_schema_cql(const schema& s) {
    std::vector<const user_type_impl*> types;
    for (auto* c : s.columns_in_declaration_order()) {
        add_user_types(c->type, types);
    }
    std::string out;
    for (auto* ut : types) {
        out += describe_type(*ut, true) + "\n";
    }
    return out + describe_table(s, true) + "\n";
}

} // namespace reef
