// schema_describe: the CREATE statements of a keyspace, a user type and a table as Cassandra 5.0 writes them, for
// DESCRIBE (its toCqlString) and for a snapshot's schema.cql (its SchemaCQLHelper, with IF NOT EXISTS and the id).
#pragma once

#include "schema/keyspace.hh"
#include "schema/schema.hh"

#include <string>

namespace reef {

std::string describe_keyspace(const keyspace_definition& ks);
// if_not_exists: "CREATE TYPE IF NOT EXISTS", as schema.cql has it.
std::string describe_type(const user_type_impl& type, bool if_not_exists = false);
// with_internals: "CREATE TABLE IF NOT EXISTS ... WITH ID = <uuid>", as schema.cql has it.
std::string describe_table(const schema& s, bool with_internals = false);
// A snapshot's schema.cql: the user types the table's columns use (each after the types it uses), then the table,
// one statement per line group, each ended by a newline (Cassandra's reCreateStatementsForSchemaCql).
std::string snapshot_schema_cql(const schema& s);

} // namespace reef
