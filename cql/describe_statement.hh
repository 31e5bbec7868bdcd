// describe_statement: server-side DESCRIBE (Cassandra 4+'s, which Apache cqlsh sends): listings of keyspaces,
// tables and types, and the CREATE statements of a keyspace, table, type or the whole schema, as Cassandra 5.0
// writes them; DESC CLUSTER.
#pragma once

#include "cql/cql_lexer.hh"
#include "cql/cql_statement.hh"
#include "db/schema_describe.hh"

#include <memory>
#include <string>

namespace reef::cql {

// DESCRIBE / DESC, called at the statement's first keyword.
std::unique_ptr<raw_statement> parse_describe_statement(cql_token_stream& ts);

// The CREATE statements DESCRIBE returns (create_statement) are db/schema_describe.hh's.

} // namespace reef::cql
