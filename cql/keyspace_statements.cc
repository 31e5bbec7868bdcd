// CREATE KEYSPACE, ALTER KEYSPACE and DROP KEYSPACE, with IF [NOT] EXISTS, as Cassandra 5.0 answers them.
#include "cql/ddl_statements.hh"

#include <fmt/format.h>

#include <charconv>

namespace reef::cql {

namespace {

schema_change keyspace_change(schema_change::change_type type, const std::string& keyspace) {
    schema_change c;
    c.change = type;
    c.target = schema_change::target_type::keyspace;
    c.keyspace = keyspace;
    return c;
}

// Cassandra's checks of a replication map (config_error, as its ConfigurationException).
void check_replication(const std::map<std::string, std::string>& replication) {
    auto config_error = [](const std::string& m) { return cql_error(error_code::config_error, m); };
    auto cls = replication.find("class");
    if (cls == replication.end()) {
        throw config_error("Missing replication strategy class");
    }
    auto name = cls->second.substr(cls->second.rfind('.') + 1);
    auto is_count = [](const std::string& v) {
        int n = 0;
        auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
        return ec == std::errc() && p == v.data() + v.size() && n >= 0;
    };
    if (name == "SimpleStrategy") {
        auto rf = replication.find("replication_factor");
        if (rf == replication.end()) {
            throw config_error("SimpleStrategy requires a replication_factor strategy option.");
        }
        for (auto& [k, v] : replication) {
            if (k != "class" && k != "replication_factor") {
                throw config_error(fmt::format("Unrecognized strategy option {{{}}} passed to SimpleStrategy", k));
            }
        }
        if (!is_count(rf->second)) {
            throw config_error(fmt::format("Replication factor must be non-negative; found {}", rf->second));
        }
    } else if (name == "NetworkTopologyStrategy") {
        for (auto& [k, v] : replication) {
            if (k != "class" && !is_count(v)) {
                throw config_error(fmt::format("Replication factor must be non-negative; found {}", v));
            }
        }
    } else if (name != "LocalStrategy" && name != "EverywhereStrategy") {
        throw config_error(fmt::format("Unable to find replication strategy class '{}'", cls->second));
    }
}

class create_keyspace_statement final : public cql_statement {
public:
    explicit create_keyspace_statement(create_keyspace_syntax syntax) : _syntax(std::move(syntax)) {}
    future<result_message> execute(query_processor& qp, client_state&, const query_options&) const override {
        auto ks = build_keyspace(_syntax);
        ddl::check_new_name(ks.name, "Keyspace");
        if (qp.db().find_keyspace(ks.name)) {
            if (_syntax.if_not_exists) {
                co_return result_message(void_result{});
            }
            error_details d;
            d.keyspace = ks.name;
            throw cql_error(error_code::already_exists, fmt::format("Cannot add existing keyspace \"{}\"", ks.name), d);
        }
        ddl::refuse_system_keyspace(ks.name);
        check_replication(ks.replication);
        co_await ddl::run_change(qp.db().create_keyspace(ks));
        co_return co_await ddl::announce(qp, keyspace_change(schema_change::change_type::created, ks.name));
    }

private:
    create_keyspace_syntax _syntax;
};

class create_keyspace_raw final : public raw_statement {
public:
    explicit create_keyspace_raw(create_keyspace_syntax syntax) : _syntax(std::move(syntax)) {}
    std::unique_ptr<cql_statement> prepare(const database&, std::string_view) const override {
        return std::make_unique<create_keyspace_statement>(_syntax);
    }

private:
    create_keyspace_syntax _syntax;
};

struct alter_keyspace_syntax {
    bool if_exists = false;
    create_keyspace_syntax properties;
};

class alter_keyspace_statement final : public cql_statement {
public:
    explicit alter_keyspace_statement(alter_keyspace_syntax syntax) : _syntax(std::move(syntax)) {}
    future<result_message> execute(query_processor& qp, client_state&, const query_options&) const override {
        auto& name = _syntax.properties.name;
        auto* old = qp.db().find_keyspace(name);
        if (!old) {
            if (_syntax.if_exists) {
                co_return result_message(void_result{});
            }
            throw ddl::keyspace_missing(name);
        }
        ddl::refuse_system_keyspace(name);
        auto given = build_keyspace(_syntax.properties);
        keyspace_definition ks = *old;
        bool replication_given = false;
        for (auto& p : _syntax.properties.properties) {
            replication_given |= p.name == "replication";
            if (p.name == "durable_writes") {
                ks.durable_writes = given.durable_writes;
            }
        }
        if (replication_given) {
            ks.replication = given.replication;
            check_replication(ks.replication);
        }
        co_await ddl::run_change(qp.db().alter_keyspace(ks));
        co_return co_await ddl::announce(qp, keyspace_change(schema_change::change_type::updated, name));
    }

private:
    alter_keyspace_syntax _syntax;
};

class alter_keyspace_raw final : public raw_statement {
public:
    explicit alter_keyspace_raw(alter_keyspace_syntax syntax) : _syntax(std::move(syntax)) {}
    std::unique_ptr<cql_statement> prepare(const database&, std::string_view) const override {
        return std::make_unique<alter_keyspace_statement>(_syntax);
    }

private:
    alter_keyspace_syntax _syntax;
};

struct drop_keyspace_syntax {
    bool if_exists = false;
    std::string name;
};

class drop_keyspace_statement final : public cql_statement {
public:
    explicit drop_keyspace_statement(drop_keyspace_syntax syntax) : _syntax(std::move(syntax)) {}
    future<result_message> execute(query_processor& qp, client_state&, const query_options&) const override {
        if (!qp.db().find_keyspace(_syntax.name)) {
            if (_syntax.if_exists) {
                co_return result_message(void_result{});
            }
            throw ddl::keyspace_missing(_syntax.name);
        }
        ddl::refuse_system_keyspace(_syntax.name);
        co_await ddl::run_change(qp.db().drop_keyspace(_syntax.name));
        co_return co_await ddl::announce(qp, keyspace_change(schema_change::change_type::dropped, _syntax.name));
    }

private:
    drop_keyspace_syntax _syntax;
};

class drop_keyspace_raw final : public raw_statement {
public:
    explicit drop_keyspace_raw(drop_keyspace_syntax syntax) : _syntax(std::move(syntax)) {}
    std::unique_ptr<cql_statement> prepare(const database&, std::string_view) const override {
        return std::make_unique<drop_keyspace_statement>(_syntax);
    }

private:
    drop_keyspace_syntax _syntax;
};

} // namespace

std::unique_ptr<raw_statement> parse_create_keyspace_statement(cql_token_stream& ts) {
    auto syntax = parse_create_keyspace(ts);
    if (syntax.properties.empty()) {
        ts.fail("WITH replication = {...}");
    }
    // Unknown properties and values of the wrong kind are syntax errors, as in Cassandra.
    auto ks = build_keyspace(syntax);
    if (ks.replication.empty()) {
        throw cql_error(error_code::config_error, "Missing mandatory option 'replication'");
    }
    return std::make_unique<create_keyspace_raw>(std::move(syntax));
}

std::unique_ptr<raw_statement> parse_alter_keyspace_statement(cql_token_stream& ts) {
    alter_keyspace_syntax syntax;
    syntax.if_exists = parse_if_exists(ts);
    syntax.properties.name_token = ts.peek();
    syntax.properties.name = ts.expect_name("a keyspace name");
    ts.expect_keyword("with");
    syntax.properties.properties = parse_properties(ts);
    build_keyspace(syntax.properties);
    return std::make_unique<alter_keyspace_raw>(std::move(syntax));
}

std::unique_ptr<raw_statement> parse_drop_keyspace_statement(cql_token_stream& ts) {
    drop_keyspace_syntax syntax;
    syntax.if_exists = parse_if_exists(ts);
    syntax.name = ts.expect_name("a keyspace name");
    return std::make_unique<drop_keyspace_raw>(std::move(syntax));
}

} // namespace reef::cql
