// batch_statement: BEGIN [UNLOGGED|COUNTER] BATCH ... APPLY BATCH and the BATCH frame: INSERT, UPDATE and DELETE
// statements run as one write, with one timestamp for the statements without their own, partitions merged.
#pragma once

#include "cql/modification_statement.hh"
#include "cql/query_handler.hh"

#include <memory>
#include <optional>
#include <vector>

namespace reef::cql {

class raw_batch_statement final : public raw_statement {
public:
    batch_type type = batch_type::logged;
    raw_term_ptr timestamp;
    std::vector<std::unique_ptr<raw_modification_statement>> statements;
    term_parse_context markers;

    std::unique_ptr<cql_statement> prepare(const database& db, std::string_view keyspace) const override;
};

// The statement_kinds entry: BEGIN ... APPLY BATCH.
std::unique_ptr<raw_statement> parse_batch_statement(cql_token_stream& ts);

// Cassandra's refusals of a batch's mix: counters in a logged batch, non-counters in a counter batch, a
// timestamp on both the batch and a statement, conditions over several tables.
void check_batch(batch_type type, const std::vector<std::shared_ptr<const modification_impl>>& statements,
                 bool batch_has_timestamp);

// The BATCH frame's statements, each with its own positional values; `options` gives the timestamp.
future<result_message> execute_batch_writes(query_processor& qp, batch_type type,
                                            std::vector<modification_execution> writes, const query_options& options);

} // namespace reef::cql
