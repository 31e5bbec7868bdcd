// CREATE TABLE, ALTER TABLE (ADD, DROP, ALTER ... TYPE, RENAME, WITH) and DROP TABLE, with IF [NOT] EXISTS, as
// Cassandra 5.0 answers them.
#include "cql/ddl_statements.hh"

#include "compaction/compaction_options.hh"
#include "sstables/bloom_calculations.hh"
#include "utils/java_double_format.hh"

#include <fmt/format.h>

namespace reef::cql {

namespace {

// WITH compaction = {...}: checked as Cassandra checks it (the strategy class and its options), a configuration
// error naming the bad option.
void check_compaction_options(const std::vector<cql_property>& properties) {
    for (auto& p : properties) {
        if (p.name != "compaction" || !p.is_map) {
            continue;
        }
        std::map<std::string, std::string> m(p.map.begin(), p.map.end());
        try {
            compaction::parse_compaction_options(m);
        } catch (const compaction::invalid_compaction_options& e) {
            throw cql_error(error_code::config_error, e.what());
        }
    }
}

// The numeric table options in Cassandra's ranges, checked in the order its TableParams.validate checks them, each
// refused with its message (the value printed as Java prints it). An ALTER's index intervals are checked with the
// table's current ones (`old`) where it does not give them.
void check_table_params(const std::vector<cql_property>& properties, const table_options* old = nullptr) {
    auto given = [&](std::string_view name) -> const cql_property* {
        for (auto& p : properties) {
            if (p.name == name && !p.is_map) {
                return &p;
            }
        }
        return nullptr;
    };
    auto refuse = [](std::string message) { throw cql_error(error_code::config_error, std::move(message)); };
    if (auto* p = given("bloom_filter_fp_chance")) {
        double v = std::strtod(p->value.c_str(), nullptr);
        if (!sstables::valid_bloom_fp_chance(v)) {
            refuse(fmt::format("bloom_filter_fp_chance must be larger than {} and less than or equal to 1.0 (got {})",
                               utils::java_double_to_string(sstables::min_supported_bloom_fp_chance()),
                               utils::java_double_to_string(v)));
        }
    }
    if (auto* p = given("crc_check_chance")) {
        double v = std::strtod(p->value.c_str(), nullptr);
        if (!(v >= 0 && v <= 1)) {
            refuse(fmt::format("crc_check_chance must be larger than or equal to 0 and smaller than or equal to 1.0 "
                               "(got {})",
                               utils::java_double_to_string(v)));
        }
    }
    // The syntax check (check_table_property) took these values as integers.
    constexpr int64_t max_ttl = 630720000;  // Attributes.MAX_TTL: 20 years
    if (auto* p = given("default_time_to_live")) {
        int64_t v = std::strtoll(p->value.c_str(), nullptr, 10);
        if (v < 0) {
            refuse(fmt::format("default_time_to_live must be greater than or equal to 0 (got {})", v));
        }
        if (v > max_ttl) {
            refuse(fmt::format("default_time_to_live must be less than or equal to {} (got {})", max_ttl, v));
        }
    }
    if (auto* p = given("gc_grace_seconds")) {
        int64_t v = std::strtoll(p->value.c_str(), nullptr, 10);
        if (v < 0) {
            refuse(fmt::format("gc_grace_seconds must be greater than or equal to 0 (got {})", v));
        }
    }
    auto interval = [&](std::string_view name, int64_t default_value) {
        if (auto* p = given(name)) {
            return std::strtoll(p->value.c_str(), nullptr, 10);
        }
        if (old) {
            if (auto it = old->other.find(std::string(name)); it != old->other.end()) {
                return std::strtoll(it->second.c_str(), nullptr, 10);
            }
        }
        return static_cast<long long>(default_value);
    };
    auto min_interval = interval("min_index_interval", 128);
    auto max_interval = interval("max_index_interval", 2048);
    if (min_interval < 1) {
        refuse(fmt::format("min_index_interval must be greater than or equal to 1 (got {})", min_interval));
    }
    if (max_interval < min_interval) {
        refuse(fmt::format("max_index_interval must be greater than or equal to min_index_interval ({}) (got {})",
                           min_interval, max_interval));
    }
}

schema_change table_change(schema_change::change_type type, const std::string& keyspace, const std::string& table) {
    schema_change c;
    c.change = type;
    c.target = schema_change::target_type::table;
    c.keyspace = keyspace;
    c.name = table;
    return c;
}

// Unknown table properties and values of the wrong kind are syntax errors, as in Cassandra.
void check_table_properties(const std::vector<cql_property>& properties, bool id_allowed) {
    for (auto& p : properties) {
        if (p.name == "id" && !id_allowed) {
            throw invalid_request("Cannot alter table id.");
        }
        check_table_property(p);
    }
}

bool is_counter_table(const schema& s) {
    auto counter = [](const column_definition& c) { return c.type->is_counter(); };
    return std::any_of(s.regular_columns().begin(), s.regular_columns().end(), counter) ||
           std::any_of(s.static_columns().begin(), s.static_columns().end(), counter);
}

// ---- CREATE TABLE ----

class create_table_statement final : public cql_statement {
public:
    create_table_statement(create_table_syntax syntax, std::string keyspace)
        : _syntax(std::move(syntax)), _keyspace(std::move(keyspace)) {}

    future<result_message> execute(query_processor& qp, client_state&, const query_options&) const override {
        auto& db = qp.db();
        auto& table = _syntax.name.name;
        if (!db.find_keyspace(_keyspace)) {
            throw ddl::keyspace_missing(_keyspace);
        }
        ddl::refuse_system_keyspace(_keyspace);
        if (db.find_schema(_keyspace, table)) {
            if (_syntax.if_not_exists) {
                co_return result_message(void_result{});
            }
            error_details d;
            d.keyspace = _keyspace;
            d.table = table;
            throw cql_error(error_code::already_exists,
                            fmt::format("Cannot add already existing table \"{}\" to keyspace \"{}\"", table, _keyspace),
                            d);
        }
        ddl::check_new_name(table, "Table");
        // Values out of range (a negative default_time_to_live) are configuration errors, as in Cassandra, which
        // checks the compaction options first.
        check_compaction_options(_syntax.properties);
        check_table_params(_syntax.properties);
        try {
            table_options scratch;
            apply_table_properties(_syntax.properties, scratch);
        } catch (const cql_parse_error& e) {
            throw cql_error(error_code::config_error, e.what());
        }
        schema_ptr s;
        try {
            s = build_table(_syntax, _keyspace, ddl::types_of(db, _keyspace));
        } catch (const cql_parse_error& e) {
            throw ddl::invalid_definition(e);
        }
        if (_syntax.compact_storage) {
            throw invalid_request(s->regular_columns().empty() && s->static_columns().empty()
                                      ? "No definition found that is not part of the PRIMARY KEY"
                                      : "Compact tables are not allowed in Cassandra starting with 4.0 version.");
        }
        co_await ddl::run_change(db.create_table(s));
        co_return co_await ddl::announce(qp, table_change(schema_change::change_type::created, _keyspace, table));
    }

private:
    create_table_syntax _syntax;
    std::string _keyspace;
};

// ---- ALTER TABLE ----

struct alter_table_syntax {
    enum class kind { add, drop, alter_type, rename, with };
    bool if_exists = false;
    cql_qualified_name name;
    kind what = kind::with;
    // ADD IF NOT EXISTS, DROP IF EXISTS, RENAME IF EXISTS.
    bool if_column_check = false;
    std::vector<column_syntax> added;
    std::vector<std::string> dropped;
    std::vector<std::pair<std::string, std::string>> renamed;
    std::vector<cql_property> properties;
};

class alter_table_statement final : public cql_statement {
public:
    alter_table_statement(alter_table_syntax syntax, std::string keyspace)
        : _syntax(std::move(syntax)), _keyspace(std::move(keyspace)) {}

    future<result_message> execute(query_processor& qp, client_state&, const query_options&) const override {
        auto& db = qp.db();
        auto& table = _syntax.name.name;
        auto old = db.find_schema(_keyspace, table);
        if (!old) {
            if (_syntax.if_exists) {
                co_return result_message(void_result{});
            }
            if (!db.find_keyspace(_keyspace)) {
                throw ddl::keyspace_missing(_keyspace);
            }
            throw ddl::table_missing(_keyspace, table);
        }
        ddl::refuse_system_keyspace(_keyspace);
        auto altered = altered_schema(db, *old);
        if (!altered) {
            co_return result_message(void_result{});
        }
        co_await ddl::run_change(db.alter_table(altered));
        co_return co_await ddl::announce(qp, table_change(schema_change::change_type::updated, _keyspace, table));
    }

private:
    // The new version of `old`, or null when IF [NOT] EXISTS on the columns leaves nothing to change.
    schema_ptr altered_schema(const database& db, const schema& old) const {
        using kind = alter_table_syntax::kind;
        auto& table = old.table();
        if (_syntax.what == kind::alter_type) {
            throw invalid_request("Altering column types is no longer supported");
        }
        std::map<std::string, std::string> renames;
        std::set<std::string> drops;
        std::vector<std::pair<const column_syntax*, data_type>> adds;
        table_options options = old.options();
        bool changed = false;
        for (auto& [from, to] : _syntax.renamed) {
            auto* c = old.find_column(from);
            if (!c) {
                if (_syntax.if_column_check) {
                    continue;
                }
                throw invalid_request(fmt::format("Column {} was not found in table {}", from, table));
            }
            if (!c->is_primary_key()) {
                throw invalid_request(fmt::format("Cannot rename non PRIMARY KEY column {}", from));
            }
            if (old.find_column(to) || std::any_of(renames.begin(), renames.end(), [&](auto& r) { return r.second == to; })) {
                throw invalid_request(fmt::format(
                    "Cannot rename column {} to {} in table '{}'; another column with that name already exists", from, to,
                    table));
            }
            renames[from] = to;
            changed = true;
        }
        for (auto& name : _syntax.dropped) {
            auto* c = old.find_column(name);
            if (!c) {
                if (_syntax.if_column_check) {
                    continue;
                }
                throw invalid_request(fmt::format("Column {} was not found in table {}", name, table));
            }
            if (c->is_primary_key()) {
                throw invalid_request(fmt::format("Cannot drop PRIMARY KEY column {}", name));
            }
            drops.insert(name);
            changed = true;
        }
        for (auto& c : _syntax.added) {
            if (old.find_column(c.name)) {
                if (_syntax.if_column_check) {
                    continue;
                }
                throw invalid_request(fmt::format("Column with name '{}' already exists", c.name));
            }
            if (c.is_static && old.clustering_key().empty()) {
                throw invalid_request(
                    "Static columns are only useful (and thus allowed) if the table has at least one clustering column");
            }
            data_type type;
            try {
                type = c.type.resolve(ddl::types_of(db, _keyspace));
            } catch (const cql_parse_error& e) {
                throw ddl::invalid_definition(e);
            }
            if (is_counter_table(old) != type->is_counter()) {
                auto message = type->is_counter() ? "Cannot add a counter column ({}) in a non counter table"
                                                  : "Cannot add a non counter column ({}) in a counter table";
                throw cql_error(error_code::config_error, fmt::format(fmt::runtime(message), c.name));
            }
            adds.emplace_back(&c, type);
            changed = true;
        }
        if (_syntax.what == kind::with) {
            check_compaction_options(_syntax.properties);
            check_table_params(_syntax.properties, &old.options());
            try {
                apply_table_properties(_syntax.properties, options);
            } catch (const cql_parse_error& e) {
                throw cql_error(error_code::config_error, e.what());
            }
            changed = true;
        }
        if (!changed) {
            return nullptr;
        }
        schema_builder b(_keyspace, table);
        b.with_id(old.id());
        for (auto* c : old.columns_in_declaration_order()) {
            if (drops.contains(c->name)) {
                continue;
            }
            auto r = renames.find(c->name);
            b.with_column(r == renames.end() ? c->name : r->second, c->type, c->kind, c->order);
        }
        for (auto& [c, type] : adds) {
            b.with_column(c->name, type, c->is_static ? column_kind::static_column : column_kind::regular_column);
        }
        b.with_options(std::move(options));
        try {
            return b.build();
        } catch (const std::invalid_argument& e) {
            throw invalid_request(e.what());
        }
    }

    alter_table_syntax _syntax;
    std::string _keyspace;
};

// ---- DROP TABLE ----

struct drop_table_syntax {
    bool if_exists = false;
    cql_qualified_name name;
};

class drop_table_statement final : public cql_statement {
public:
    drop_table_statement(drop_table_syntax syntax, std::string keyspace)
        : _syntax(std::move(syntax)), _keyspace(std::move(keyspace)) {}

    future<result_message> execute(query_processor& qp, client_state&, const query_options&) const override {
        auto& db = qp.db();
        auto& table = _syntax.name.name;
        if (!db.find_schema(_keyspace, table)) {
            if (_syntax.if_exists) {
                co_return result_message(void_result{});
            }
            if (!db.find_keyspace(_keyspace)) {
                throw ddl::keyspace_missing(_keyspace);
            }
            throw ddl::table_missing(_keyspace, table);
        }
        ddl::refuse_system_keyspace(_keyspace);
        co_await ddl::run_change(db.drop_table(_keyspace, table));
        co_return co_await ddl::announce(qp, table_change(schema_change::change_type::dropped, _keyspace, table));
    }

private:
    drop_table_syntax _syntax;
    std::string _keyspace;
};

// One `name type [static]` of ALTER TABLE ADD.
column_syntax added_column(cql_token_stream& ts) {
    column_syntax c;
    c.token = ts.peek();
    c.name = ts.expect_name("a column name");
    c.type = parse_type_syntax(ts);
    c.is_static = ts.accept_keyword("static");
    return c;
}

} // namespace

std::unique_ptr<raw_statement> parse_create_table_statement(cql_token_stream& ts, const cql_token& start) {
    auto syntax = parse_create_table(ts, start);
    check_table_properties(syntax.properties, true);
    auto given = syntax.name.keyspace;
    return std::make_unique<ddl::keyspace_bound_raw<create_table_syntax, create_table_statement>>(std::move(syntax),
                                                                                                  std::move(given));
}

std::unique_ptr<raw_statement> parse_alter_table_statement(cql_token_stream& ts) {
    using kind = alter_table_syntax::kind;
    alter_table_syntax s;
    s.if_exists = parse_if_exists(ts);
    s.name = parse_qualified_name(ts, "a table name");
    if (ts.accept_keyword("add")) {
        s.what = kind::add;
        s.if_column_check = parse_if_not_exists(ts);
        if (ts.accept_symbol('(')) {
            do {
                s.added.push_back(added_column(ts));
            } while (ts.accept_symbol(','));
            ts.expect_symbol(')');
        } else {
            s.added.push_back(added_column(ts));
        }
    } else if (ts.accept_keyword("drop")) {
        s.what = kind::drop;
        s.if_column_check = parse_if_exists(ts);
        if (ts.accept_symbol('(')) {
            do {
                s.dropped.push_back(ts.expect_name("a column name"));
            } while (ts.accept_symbol(','));
            ts.expect_symbol(')');
        } else {
            s.dropped.push_back(ts.expect_name("a column name"));
        }
        if (ts.accept_keyword("using")) {
            ts.expect_keyword("timestamp");
            if (ts.peek().kind != cql_token_kind::number) {
                ts.fail("a timestamp");
            }
            ts.next();
        }
    } else if (ts.accept_keyword("alter")) {
        s.what = kind::alter_type;
        ts.expect_name("a column name");
        ts.expect_keyword("type");
        parse_type_syntax(ts);
    } else if (ts.accept_keyword("rename")) {
        s.what = kind::rename;
        s.if_column_check = parse_if_exists(ts);
        do {
            auto from = ts.expect_name("a column name");
            ts.expect_keyword("to");
            s.renamed.emplace_back(std::move(from), ts.expect_name("a column name"));
        } while (ts.accept_keyword("and"));
    } else if (ts.accept_keyword("with")) {
        s.what = kind::with;
        s.properties = parse_properties(ts);
        check_table_properties(s.properties, false);
    } else {
        ts.fail("ADD, DROP, ALTER, RENAME or WITH");
    }
    auto given = s.name.keyspace;
    return std::make_unique<ddl::keyspace_bound_raw<alter_table_syntax, alter_table_statement>>(std::move(s),
                                                                                                std::move(given));
}

std::unique_ptr<raw_statement> parse_drop_table_statement(cql_token_stream& ts) {
    drop_table_syntax s;
    s.if_exists = parse_if_exists(ts);
    s.name = parse_qualified_name(ts, "a table name");
    auto given = s.name.keyspace;
    return std::make_unique<ddl::keyspace_bound_raw<drop_table_syntax, drop_table_statement>>(std::move(s),
                                                                                              std::move(given));
}

} // namespace reef::cql
