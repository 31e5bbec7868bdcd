// What the schema statements share, the dispatch of CREATE / ALTER / DROP on the object's keyword, and the two
// statements that need no file of their own: USE and TRUNCATE.
#include "cql/ddl_statements.hh"

#include "db/schema_tables.hh"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace reef::cql {

namespace ddl {

std::string keyspace_of(const std::string& given, std::string_view current) {
    if (!given.empty()) {
        return given;
    }
    if (current.empty()) {
        throw invalid_request("No keyspace has been specified. USE a keyspace, or explicitly specify keyspace.tablename");
    }
    return std::string(current);
}

void check_new_name(const std::string& name, std::string_view what) {
    bool ok = !name.empty() && name.size() <= 48 &&
              std::all_of(name.begin(), name.end(), [](char c) { return std::isalnum(uint8_t(c)) || c == '_'; });
    if (!ok) {
        throw invalid_request(fmt::format("{} name must not be empty, more than 48 characters long, or contain "
                                          "non-alphanumeric-underscore characters (got \"{}\")",
                                          what, name));
    }
}

void refuse_system_keyspace(const std::string& keyspace) {
    if (schema_tables::is_system_keyspace(keyspace)) {
        throw cql_error(error_code::unauthorized, keyspace + " keyspace is not user-modifiable.");
    }
}

cql_error keyspace_missing(const std::string& keyspace) {
    return invalid_request(fmt::format("Keyspace '{}' doesn't exist", keyspace));
}

cql_error table_missing(const std::string& keyspace, const std::string& table) {
    return invalid_request(fmt::format("Table '{}.{}' doesn't exist", keyspace, table));
}

cql_error type_missing(const std::string& keyspace, const std::string& type) {
    return invalid_request(fmt::format("Type '{}.{}' doesn't exist", keyspace, type));
}

user_type_resolver types_of(const database& db, const std::string& keyspace) {
    return [&db, keyspace](std::string_view ks, std::string_view name) -> data_type {
        auto in = ks.empty() ? keyspace : std::string(ks);
        auto t = db.find_type(in, name);
        if (!t) {
            throw invalid_request(fmt::format("Unknown type {}.{}", in, name));
        }
        return t;
    };
}

cql_error invalid_definition(const cql_parse_error& e) { return invalid_request(e.what()); }

future<> run_change(future<> change) {
    try {
        co_await std::move(change);
    } catch (const schema_change_error& e) {
        throw invalid_request(e.what());
    }
}

future<schema_ptr> run_change(future<schema_ptr> change) {
    try {
        co_return co_await std::move(change);
    } catch (const schema_change_error& e) {
        throw invalid_request(e.what());
    }
}

future<result_message> announce(query_processor& qp, schema_change change) {
    co_await qp.announce_schema_change(change);
    co_return result_message(std::move(change));
}

} // namespace ddl

// ---- the dispatch on the object's keyword ----

std::unique_ptr<raw_statement> parse_create_statement(cql_token_stream& ts) {
    auto start = ts.next();
    if (ts.accept_keyword("keyspace") || ts.accept_keyword("schema")) {
        return parse_create_keyspace_statement(ts);
    }
    if (ts.accept_keyword("table") || ts.accept_keyword("columnfamily")) {
        return parse_create_table_statement(ts, start);
    }
    if (ts.accept_keyword("type")) {
        return parse_create_type_statement(ts);
    }
    for (auto what : {"index", "materialized", "function", "aggregate", "trigger", "role", "user", "custom"}) {
        if (ts.peek_keyword(what)) {
            throw invalid_request(fmt::format("CREATE {} is not supported", ts.peek().text));
        }
    }
    ts.fail("KEYSPACE, TABLE or TYPE");
}

std::unique_ptr<raw_statement> parse_alter_statement(cql_token_stream& ts) {
    ts.next();
    if (ts.accept_keyword("keyspace") || ts.accept_keyword("schema")) {
        return parse_alter_keyspace_statement(ts);
    }
    if (ts.accept_keyword("table") || ts.accept_keyword("columnfamily")) {
        return parse_alter_table_statement(ts);
    }
    if (ts.accept_keyword("type")) {
        return parse_alter_type_statement(ts);
    }
    for (auto what : {"materialized", "role", "user"}) {
        if (ts.peek_keyword(what)) {
            throw invalid_request(fmt::format("ALTER {} is not supported", ts.peek().text));
        }
    }
    ts.fail("KEYSPACE, TABLE or TYPE");
}

std::unique_ptr<raw_statement> parse_drop_statement(cql_token_stream& ts) {
    ts.next();
    if (ts.accept_keyword("keyspace") || ts.accept_keyword("schema")) {
        return parse_drop_keyspace_statement(ts);
    }
    if (ts.accept_keyword("table") || ts.accept_keyword("columnfamily")) {
        return parse_drop_table_statement(ts);
    }
    if (ts.accept_keyword("type")) {
        return parse_drop_type_statement(ts);
    }
    for (auto what : {"index", "materialized", "function", "aggregate", "trigger", "role", "user"}) {
        if (ts.peek_keyword(what)) {
            throw invalid_request(fmt::format("DROP {} is not supported", ts.peek().text));
        }
    }
    ts.fail("KEYSPACE, TABLE or TYPE");
}

// ---- USE ----

namespace {

class use_statement final : public cql_statement {
public:
    explicit use_statement(std::string keyspace) : _keyspace(std::move(keyspace)) {}
    future<result_message> execute(query_processor& qp, client_state& state, const query_options&) const override {
        if (!qp.db().find_keyspace(_keyspace)) {
            throw invalid_request(fmt::format("Keyspace '{}' does not exist", _keyspace));
        }
        state.keyspace = _keyspace;
        co_return result_message(set_keyspace_result{_keyspace});
    }

private:
    std::string _keyspace;
};

class use_raw final : public raw_statement {
public:
    explicit use_raw(std::string keyspace) : _keyspace(std::move(keyspace)) {}
    std::unique_ptr<cql_statement> prepare(const database&, std::string_view) const override {
        return std::make_unique<use_statement>(_keyspace);
    }

private:
    std::string _keyspace;
};

} // namespace

std::unique_ptr<raw_statement> parse_use_statement(cql_token_stream& ts) {
    ts.next();
    return std::make_unique<use_raw>(ts.expect_name("a keyspace name"));
}

// ---- TRUNCATE [TABLE] name ----

namespace {

class truncate_statement final : public cql_statement {
public:
    truncate_statement(const cql_qualified_name& name, std::string keyspace)
        : _keyspace(std::move(keyspace)), _table(name.name) {}
    future<result_message> execute(query_processor& qp, client_state&, const query_options&) const override {
        auto& db = qp.db();
        if (!db.find_keyspace(_keyspace)) {
            throw invalid_request(fmt::format("keyspace {} does not exist", _keyspace));
        }
        if (!db.find_schema(_keyspace, _table)) {
            throw invalid_request(fmt::format("table {} does not exist", _table));
        }
        if (schema_tables::is_system_keyspace(_keyspace)) {
            throw cql_error(error_code::unauthorized, _keyspace + " keyspace is not user-modifiable.");
        }
        co_await ddl::run_change(db.truncate(_keyspace, _table));
        co_return result_message(void_result{});
    }

private:
    std::string _keyspace;
    std::string _table;
};

} // namespace

std::unique_ptr<raw_statement> parse_truncate_statement(cql_token_stream& ts) {
    ts.next();
    (void)(ts.accept_keyword("table") || ts.accept_keyword("columnfamily"));
    auto name = parse_qualified_name(ts, "a table name");
    auto given = name.keyspace;
    return std::make_unique<ddl::keyspace_bound_raw<cql_qualified_name, truncate_statement>>(std::move(name),
                                                                                            std::move(given));
}

} // namespace reef::cql
