// result_message: what a statement returns, as the protocol's RESULT kinds (Void, Rows, Set_keyspace, Prepared,
// Schema_change). cql/ builds it; transport/ encodes it. Rows keep their cells in wire form ([bytes] each).
#pragma once

#include "schema/bytes.hh"
#include "schema/types.hh"

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace reef::cql {

// A result column or a bind variable: where it comes from, its name as the client sees it, its type.
struct column_spec {
    std::string keyspace;
    std::string table;
    std::string name;
    data_type type;
};

struct result_metadata {
    std::vector<column_spec> columns;
    // Set when more pages follow (Has_more_pages): resume by sending it back in query_options::paging_state.
    std::optional<bytes> paging_state;
};

// The rows of a Rows result. Each cell is appended in wire form: a 4-byte big-endian length then the value, or
// length -1 for null; the row count is kept apart (the protocol puts it before the rows).
class result_set {
public:
    result_set() = default;
    explicit result_set(result_metadata metadata) : _metadata(std::move(metadata)) {}

    result_metadata& metadata() noexcept { return _metadata; }
    const result_metadata& metadata() const noexcept { return _metadata; }
    size_t column_count() const noexcept { return _metadata.columns.size(); }
    size_t row_count() const noexcept { return _rows; }

    // Appends one row: exactly column_count() cells (a null cell is std::nullopt). Throws std::logic_error
    // otherwise.
    void add_row(const std::vector<std::optional<bytes>>& cells);
    // The same, cell by cell: add_cell column_count() times, then end_row().
    void add_cell(const std::optional<bytes_view>& cell);
    void end_row();

    // The encoded cells of every row, in order (the <rows_content> after the count).
    const bytes& encoded_rows() const noexcept { return _encoded; }
    // Decoded back (tests, aggregates).
    std::vector<std::vector<std::optional<bytes>>> rows() const;

private:
    result_metadata _metadata;
    bytes _encoded;
    size_t _rows = 0;
    size_t _cells_in_row = 0;
};

struct void_result {};

struct set_keyspace_result {
    std::string keyspace;
};

// A schema change, as the Schema_change result and the SCHEMA_CHANGE event carry it.
struct schema_change {
    enum class change_type { created, updated, dropped };
    enum class target_type { keyspace, table, type, function, aggregate };
    change_type change = change_type::created;
    target_type target = target_type::keyspace;
    std::string keyspace;
    // The table or type name; empty for a keyspace.
    std::string name;
    // For functions and aggregates.
    std::vector<std::string> argument_types;
};

struct prepared_result {
    // The id Cassandra computes: MD5 of the keyspace then the query string (16 bytes).
    bytes id;
    std::vector<column_spec> bind_variables;
    // For each partition key column, in key order, the index of the bind marker that gives it (empty when some
    // partition key column is not a bind marker): drivers route by token with it.
    std::vector<uint16_t> partition_key_bind_indexes;
    // The columns of the Rows a SELECT returns (none for other statements).
    std::vector<column_spec> result_columns;
};

using result_message = std::variant<void_result, result_set, set_keyspace_result, prepared_result, schema_change>;

} // namespace reef::cql
