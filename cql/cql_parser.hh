// Reads schemas from CQL text: CREATE KEYSPACE, USE, CREATE TYPE and CREATE TABLE, as in the corpus' schema.cql
// files (through schema_grammar). A bad statement throws cql_parse_error with the line, column and offending token.
#pragma once

#include "cql/cql_lexer.hh"
#include "schema/keyspace.hh"
#include "schema/schema.hh"

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace reef {

// What a CQL script defines, in order; later statements see earlier ones (USE, user types).
struct cql_catalog {
    // The keyspace of unqualified names: set by USE.
    std::string current_keyspace;
    std::map<std::string, keyspace_definition> keyspaces;
    // (keyspace, name) -> the non-frozen user type.
    std::map<std::pair<std::string, std::string>, data_type> user_types;
    std::vector<schema_ptr> tables;

    data_type find_user_type(std::string_view keyspace, std::string_view name) const;
    schema_ptr find_table(std::string_view keyspace, std::string_view name) const;
};

// Runs every statement of text against catalog (statements end with ';', the last one may omit it).
void parse_cql(std::string_view text, cql_catalog& catalog);

// Parses a script and returns its last CREATE TABLE.
schema_ptr parse_create_table(std::string_view text);

} // namespace reef
