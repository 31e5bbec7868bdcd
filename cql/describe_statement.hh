// describe_statement: server-side DESCRIBE (Cassandra 4+'s, which Apache cqlsh sends): listings of keyspaces,
// tables and types, and the CREATE statements of a keyspace, table, type or the whole schema, as Cassandra 5.0
// writes them; DESC CLUSTER.
#pragma once

#include "cql/cql_lexer.hh"
#include "cql/cql_statement.hh"
#include "schema/keyspace.hh"
#include "schema/schema.hh"

#include <memory>
#include <string>

namespace reef::cql {

// DESCRIBE / DESC, called at the statement's first keyword.
std::unique_ptr<raw_statement> parse_describe_statement(cql_token_stream& ts);

// The CREATE statements DESCRIBE returns (create_statement), as Cassandra 5.0's toCqlString writes them.
std::string describe_keyspace(const keyspace_definition& ks);
std::string describe_type(const user_type_impl& type);
std::string describe_table(const schema& s);

} // namespace reef::cql
