// schema_grammar: CQL's schema statements (CREATE KEYSPACE, CREATE TYPE, CREATE TABLE) as syntax trees, and the
// trees built into a keyspace, a user type or a schema. Shared by parse_cql's scripts and the server's statements.
#pragma once

#include "cql/cql_lexer.hh"
#include "schema/keyspace.hh"
#include "schema/schema.hh"

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace reef {

// [keyspace.]name as written (names lowercased unless quoted); keyspace is empty when not given.
struct cql_qualified_name {
    std::string keyspace;
    std::string name;
    // The first token, for errors.
    cql_token token;
};

// One `name = value` of a WITH clause: a constant (strings unquoted) or a map of constants.
struct cql_property {
    std::string name;  // lowercased
    cql_token name_token;
    cql_token value_token;
    bool is_map = false;
    std::string value;
    std::vector<std::pair<std::string, std::string>> map;

    // The value as CQL writes it: 'text' quoted (with '' inside), numbers and words bare, maps as {'k': 'v'}.
    std::string literal() const;
};

// A type as written: checked for syntax when parsed, resolved against the user types when built.
struct cql_type_syntax {
    std::vector<cql_token> tokens;

    // Throws cql_parse_error at the offending token (an unknown user type names it).
    data_type resolve(const user_type_resolver& resolve) const;
    std::string text() const;
};

struct create_keyspace_syntax {
    bool if_not_exists = false;
    std::string name;
    cql_token name_token;
    std::vector<cql_property> properties;
};

struct field_syntax {
    std::string name;
    cql_token token;
    cql_type_syntax type;
};

struct create_type_syntax {
    bool if_not_exists = false;
    cql_qualified_name name;
    std::vector<field_syntax> fields;
};

struct column_syntax {
    std::string name;
    cql_token token;
    cql_type_syntax type;
    bool is_static = false;
};

struct create_table_syntax {
    cql_token start;
    bool if_not_exists = false;
    cql_qualified_name name;
    std::vector<column_syntax> columns;
    std::vector<cql_token> partition_key;
    std::vector<cql_token> clustering_key;
    // Where each PRIMARY KEY was declared (inline or as a clause): exactly one is valid.
    std::vector<cql_token> primary_key_declarations;
    std::vector<std::pair<cql_token, reef::clustering_order>> clustering_orders;
    bool compact_storage = false;
    std::vector<cql_property> properties;
};

// The grammar: each parser consumes its part of the stream or throws cql_parse_error at the offending token.
cql_qualified_name parse_qualified_name(cql_token_stream& ts, std::string_view what);
// IF NOT EXISTS / IF EXISTS, when present.
bool parse_if_not_exists(cql_token_stream& ts);
bool parse_if_exists(cql_token_stream& ts);
cql_type_syntax parse_type_syntax(cql_token_stream& ts);
// `name = value [AND name = value ...]`.
std::vector<cql_property> parse_properties(cql_token_stream& ts);
// Each called just after the statement's leading keywords (CREATE KEYSPACE, CREATE TYPE, CREATE TABLE).
create_keyspace_syntax parse_create_keyspace(cql_token_stream& ts);
create_type_syntax parse_create_type(cql_token_stream& ts);
create_table_syntax parse_create_table(cql_token_stream& ts, const cql_token& start);

// The table properties Cassandra 5.0 accepts (TableParams.Option, and id in CREATE TABLE).
bool is_table_property(std::string_view name);
// Checks a table property's value as Cassandra's PropertyDefinitions reads it (a map where a map is wanted, a
// number where a number is); throws cql_parse_error at the value, or at the name when it is no table property.
void check_table_property(const cql_property& p);

// The trees built. Each throws cql_parse_error at the offending token (the statement's first for a schema the
// builder refuses).
keyspace_definition build_keyspace(const create_keyspace_syntax& syntax);
// The non-frozen (multi-cell) user type, in `keyspace`.
data_type build_user_type(const create_type_syntax& syntax, const std::string& keyspace,
                          const user_type_resolver& resolve);
// Properties into options: known ones into their fields, the others (id aside) into options.other as literals.
// Returns the id when an `id` property gives one.
std::optional<table_id> apply_table_properties(const std::vector<cql_property>& properties, table_options& options);
schema_ptr build_table(const create_table_syntax& syntax, const std::string& keyspace,
                       const user_type_resolver& resolve);

} // namespace reef
