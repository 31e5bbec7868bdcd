// cql_statement: one CQL statement, parsed (raw_statement) and then prepared against the schema it names
// (cql_statement): prepared once, kept in the prepared-statement cache, executed many times with options.
#pragma once

#include "cql/query_options.hh"
#include "cql/result_message.hh"
#include "runtime/future.hh"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace reef {
class database;
}

namespace reef::cql {

class query_processor;

// A connection's state that statements read and change: the keyspace of USE.
struct client_state {
    std::string keyspace;
};

// A statement bound to its schema (Cassandra's CQLStatement). Immutable once prepared: one instance serves every
// execution on its shard.
class cql_statement {
public:
    virtual ~cql_statement() = default;
    // The bind markers, in order: their names (the receiving column's, or the marker's :name) and types.
    virtual std::vector<column_spec> bind_variables() const { return {}; }
    // See prepared_result::partition_key_bind_indexes.
    virtual std::vector<uint16_t> partition_key_bind_indexes() const { return {}; }
    // The columns of the Rows this statement returns; empty when it returns no rows.
    virtual std::vector<column_spec> result_columns() const { return {}; }
    // Runs it on the calling shard (the coordinator); replica work hops to owner shards through the database.
    // Refusals throw cql_error.
    virtual future<result_message> execute(query_processor& qp, client_state& state,
                                           const query_options& options) const = 0;
};

// A parsed statement, not yet bound to a schema.
class raw_statement {
public:
    virtual ~raw_statement() = default;
    // Resolves names against this shard's schema (unqualified names use `keyspace`, the connection's USE). Throws
    // cql_error (invalid: unknown keyspace, table or column, wrong literal type...).
    virtual std::unique_ptr<cql_statement> prepare(const database& db, std::string_view keyspace) const = 0;
};

} // namespace reef::cql
