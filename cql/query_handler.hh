// query_handler: what the native protocol server asks of the CQL layer, one instance per shard. The
// query_processor implements it; transport/ tests use fakes. Every call runs on the connection's shard.
#pragma once

#include "cql/cql_statement.hh"
#include "cql/query_options.hh"
#include "cql/result_message.hh"
#include "runtime/future.hh"
#include "schema/bytes.hh"

#include <functional>
#include <string>
#include <variant>
#include <vector>

namespace reef::cql {

enum class batch_type : uint8_t { logged = 0, unlogged = 1, counter = 2 };

// One statement of a BATCH frame: its text (kind 0) or its prepared id (kind 1), and its values.
struct batch_entry {
    std::variant<std::string, bytes> query_or_id;
    std::vector<raw_value> values;
    std::vector<std::string> names;
};

class query_handler {
public:
    virtual ~query_handler() = default;
    // QUERY: parse, prepare and run one statement. Throws cql_error.
    virtual future<result_message> execute(std::string query, client_state& state, query_options options) = 0;
    // PREPARE: returns a prepared_result. Throws cql_error.
    virtual future<result_message> prepare(std::string query, client_state& state) = 0;
    // EXECUTE: a statement this shard has prepared; an unknown id throws cql_error(unprepared) carrying the id.
    virtual future<result_message> execute_prepared(bytes id, client_state& state, query_options options) = 0;
    // BATCH: the statements' mutations applied with one timestamp (options.timestamp or the server's clock).
    virtual future<result_message> execute_batch(batch_type type, std::vector<batch_entry> entries,
                                                 client_state& state, query_options options) = 0;
    // Calls `listener` on this shard for every schema change made through any shard, after it is applied
    // everywhere (the SCHEMA_CHANGE events of REGISTERed connections).
    virtual void add_schema_change_listener(std::function<void(const schema_change&)> listener) = 0;
};

} // namespace reef::cql
