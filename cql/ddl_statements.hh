// ddl_statements: the schema statements the server runs (USE; CREATE, ALTER, DROP of keyspaces, tables and types;
// TRUNCATE) and what they share: naming checks, Cassandra's refusals, the schema_change they return and announce.
#pragma once

#include "cql/cql_error.hh"
#include "cql/cql_lexer.hh"
#include "cql/cql_statement.hh"
#include "cql/query_processor.hh"
#include "cql/schema_grammar.hh"
#include "db/database.hh"

#include <memory>
#include <string>
#include <string_view>

namespace reef::cql {

// The statement kinds' parsers (statement_parser.cc's table), each at the statement's first keyword.
std::unique_ptr<raw_statement> parse_use_statement(cql_token_stream& ts);
std::unique_ptr<raw_statement> parse_create_statement(cql_token_stream& ts);
std::unique_ptr<raw_statement> parse_alter_statement(cql_token_stream& ts);
std::unique_ptr<raw_statement> parse_drop_statement(cql_token_stream& ts);
std::unique_ptr<raw_statement> parse_truncate_statement(cql_token_stream& ts);

// Per object, called after the leading keywords (CREATE KEYSPACE, ALTER TABLE, ...).
std::unique_ptr<raw_statement> parse_create_keyspace_statement(cql_token_stream& ts);
std::unique_ptr<raw_statement> parse_alter_keyspace_statement(cql_token_stream& ts);
std::unique_ptr<raw_statement> parse_drop_keyspace_statement(cql_token_stream& ts);
std::unique_ptr<raw_statement> parse_create_table_statement(cql_token_stream& ts, const cql_token& start);
std::unique_ptr<raw_statement> parse_alter_table_statement(cql_token_stream& ts);
std::unique_ptr<raw_statement> parse_drop_table_statement(cql_token_stream& ts);
std::unique_ptr<raw_statement> parse_create_type_statement(cql_token_stream& ts);
std::unique_ptr<raw_statement> parse_alter_type_statement(cql_token_stream& ts);
std::unique_ptr<raw_statement> parse_drop_type_statement(cql_token_stream& ts);

namespace ddl {

// The keyspace a statement works in: the one its name gives, else the connection's (USE); neither is invalid.
std::string keyspace_of(const std::string& given, std::string_view current);
// Cassandra's rule for new keyspace and table names: 1 to 48 of [A-Za-z0-9_] (invalid otherwise).
void check_new_name(const std::string& name, std::string_view what);
// Keyspaces no statement changes (system, system_schema, ...): unauthorized.
void refuse_system_keyspace(const std::string& keyspace);
// The refusals Cassandra words this way.
cql_error keyspace_missing(const std::string& keyspace);
cql_error table_missing(const std::string& keyspace, const std::string& table);
cql_error type_missing(const std::string& keyspace, const std::string& type);
// A database's user types of `keyspace` (unqualified names), the resolver CREATE TABLE and CREATE TYPE build with;
// an unknown name is invalid ("Unknown type ks.name").
user_type_resolver types_of(const database& db, const std::string& keyspace);
// The build of a syntax tree refused: cql_parse_error becomes invalid, keeping its message.
cql_error invalid_definition(const cql_parse_error& e);

// Runs a database schema change: what it refuses (schema_change_error, a change that raced the statement's own
// checks) becomes invalid with the database's message.
future<> run_change(future<> change);
future<schema_ptr> run_change(future<schema_ptr> change);

// The result of a change that happened: announced to every shard's listeners, then returned.
future<result_message> announce(query_processor& qp, schema_change change);

// A statement whose preparation only fixes its keyspace: the schema checks run when it executes, against the
// schema the change applies to. Prepared holds the syntax and the keyspace.
template <typename Syntax, typename Prepared>
class keyspace_bound_raw final : public raw_statement {
public:
    // `given_keyspace`: what the statement names (may be empty: the connection's then).
    keyspace_bound_raw(Syntax syntax, std::string given_keyspace)
        : _syntax(std::move(syntax)), _given(std::move(given_keyspace)) {}
    std::unique_ptr<cql_statement> prepare(const database&, std::string_view keyspace) const override {
        return std::make_unique<Prepared>(_syntax, keyspace_of(_given, keyspace));
    }

private:
    Syntax _syntax;
    std::string _given;
};

} // namespace ddl

} // namespace reef::cql
