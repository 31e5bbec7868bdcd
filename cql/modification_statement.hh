// modification_statement: INSERT (and INSERT JSON), UPDATE and DELETE, parsed (raw_modification_statement) and
// prepared against a table; executing one builds its mutations and applies them, or runs them as a lightweight
// transaction or counter update on the partition's owner shard.
#pragma once

#include "cql/cql_statement.hh"
#include "cql/term.hh"
#include "mutation/mutation.hh"
#include "schema/schema.hh"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace reef::cql {

enum class statement_type { insert, update, del };

// A WHERE relation on key columns: `c = t`, `c IN (t, ...)`, `c IN ?`, `c > t` ... or the same over a tuple of
// columns (`(c1, c2) >= (1, 2)`).
struct raw_key_relation {
    std::vector<std::string> columns;
    bool tuple = false;
    // "=", "<", "<=", ">", ">=", "IN"; anything else (CONTAINS, !=) is refused at prepare.
    std::string op;
    raw_term_ptr value;
    std::vector<raw_term_ptr> in_values;
    // `IN ?` (value is the marker).
    bool in_marker = false;
};

enum class operation_kind {
    set,          // c = t
    add,          // c = c + t, c += t
    subtract,     // c = c - t, c -= t
    prepend,      // c = t + c
    set_element,  // c[k] = t
    set_field,    // c.f = t
};

struct raw_operation {
    std::string column;
    operation_kind kind = operation_kind::set;
    raw_term_ptr key;
    std::string field;
    raw_term_ptr value;
    // As written, for messages: "v = v + 1".
    std::string text;
};

// DELETE's selection: a column, an element (c[k]) or a UDT field (c.f).
struct raw_deletion {
    std::string column;
    raw_term_ptr key;
    std::string field;
};

// IF condition: `c op t`, `c[k] op t`, `c.f op t`, `c IN (...)`.
struct raw_condition {
    std::string column;
    raw_term_ptr key;
    std::string field;
    std::string op;
    raw_term_ptr value;
    std::vector<raw_term_ptr> in_values;
    bool in_marker = false;
};

struct raw_attributes {
    raw_term_ptr timestamp;
    raw_term_ptr ttl;
};

struct modification_impl;

class raw_modification_statement final : public raw_statement {
public:
    statement_type type = statement_type::insert;
    std::string keyspace;
    std::string table;
    // INSERT
    std::vector<std::string> insert_columns;
    std::vector<raw_term_ptr> insert_values;
    bool json = false;
    raw_term_ptr json_value;
    bool json_default_unset = false;
    // UPDATE
    std::vector<raw_operation> operations;
    // DELETE
    std::vector<raw_deletion> deletions;
    std::vector<raw_key_relation> where;
    raw_attributes attrs;
    bool if_not_exists = false;
    bool if_exists = false;
    std::vector<raw_condition> conditions;
    // The markers of this statement alone (a batch numbers its statements' markers in its own context).
    term_parse_context markers;

    std::unique_ptr<cql_statement> prepare(const database& db, std::string_view keyspace) const override;
    // Prepared with the markers' specs going into `specs` (a batch's, or this statement's own).
    std::shared_ptr<const modification_impl> prepare_with(const database& db, std::string_view keyspace,
                                                               bind_specs& specs) const;
};

// The parsers of the three statements, at their first keyword; markers are numbered in ctx.
std::unique_ptr<raw_modification_statement> parse_insert(cql_token_stream& ts, term_parse_context& ctx);
std::unique_ptr<raw_modification_statement> parse_update(cql_token_stream& ts, term_parse_context& ctx);
std::unique_ptr<raw_modification_statement> parse_delete(cql_token_stream& ts, term_parse_context& ctx);
// The same as statement_kinds entries (each statement numbers its own markers).
std::unique_ptr<raw_statement> parse_insert_statement(cql_token_stream& ts);
std::unique_ptr<raw_statement> parse_update_statement(cql_token_stream& ts);
std::unique_ptr<raw_statement> parse_delete_statement(cql_token_stream& ts);

// A server timestamp (microseconds): the clock, made to increase on every call on this shard.
int64_t next_server_timestamp();

// A prepared INSERT, UPDATE or DELETE.
class modification_statement final : public cql_statement {
public:
    explicit modification_statement(std::shared_ptr<const modification_impl> i);
    ~modification_statement() override;

    std::vector<column_spec> bind_variables() const override;
    std::vector<uint16_t> partition_key_bind_indexes() const override;
    future<result_message> execute(query_processor& qp, client_state& state,
                                   const query_options& options) const override;

    const std::shared_ptr<const modification_impl>& impl() const noexcept { return _impl; }
    const schema_ptr& schema() const noexcept;
    statement_type type() const noexcept;
    bool is_counter() const noexcept;
    bool has_conditions() const noexcept;
    bool has_timestamp() const noexcept;

private:
    std::shared_ptr<const modification_impl> _impl;
};

// One statement of a write with the options its markers bind from (positional).
struct modification_execution {
    std::shared_ptr<const modification_impl> statement;
    query_options options;
};

// Runs writes (a batch's statements, or one statement) with `batch_timestamp` (if given) for writes without USING
// TIMESTAMP: mutations of one partition merged; blind writes go to database::apply; writes that read (counters, list
// index and removal operations, IF conditions) run per partition on its owner shard, under that partition's lock,
// read-check-write. Returns void, or the [applied] row of a conditional statement or batch.
future<result_message> execute_modifications(query_processor& qp, std::vector<modification_execution> writes,
                                             std::optional<int64_t> batch_timestamp, bool is_batch);

} // namespace reef::cql
