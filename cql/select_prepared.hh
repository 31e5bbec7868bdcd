// select_prepared: a SELECT prepared against its table: the WHERE clause sorted into what the database reads
// (partition keys, a token range, clustering relations) and what is filtered, the ordering, limits and selection.
// Internal to cql/select_*.cc.
#pragma once

#include "cql/clustering_restrictions.hh"
#include "cql/select_statement.hh"
#include "cql/selection.hh"
#include "db/query_page.hh"

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace reef::cql {

// A value of a relation: one term (a column's value, a tuple, or a list for `IN ?`), or the terms of IN (...).
struct relation_values {
    term_ptr single;
    std::vector<term_ptr> list;
    bool in = false;
    // Bound: the values (for IN, each element; a tuple's components are split by the caller). Throws
    // cql_error(invalid) for null or unset values, naming `what`.
    std::vector<bytes> bind(const query_options& o, const std::string& what) const;
};

struct token_bound {
    // The bigint, or the key whose token it is.
    term_ptr value;
    std::vector<term_ptr> key;
    bool inclusive = true;
};

struct filter_relation {
    std::vector<const column_definition*> columns;
    // "=", "<", "<=", ">", ">=", "in", "contains", "contains key"
    std::string op;
    relation_values values;
    std::string text;
};

struct clustering_restriction {
    std::vector<size_t> columns;
    restriction_op op;
    relation_values values;
    std::string text;
    // A multi-column relation: each value is a tuple (of one column too: `(a) IN ((1), (3))`).
    bool tuple = false;
};

class select_statement final : public cql_statement {
public:
    schema_ptr schema;
    std::vector<raw_selector> selectors;
    bool json = false;
    bool distinct = false;
    std::vector<column_spec> result;
    bool aggregate = false;
    // Every partition key column restricted by = or IN: per column its values.
    std::optional<std::vector<relation_values>> partition_keys;
    std::optional<token_bound> token_start, token_end;
    std::vector<clustering_restriction> clustering;
    // The clustering relations do not form ranges (ALLOW FILTERING): they filter rows instead.
    bool clustering_filters = false;
    // A partition with only a live static row is a row (no clustering or regular column restricted).
    bool static_only_rows = false;
    std::vector<filter_relation> filters;
    bool allow_filtering = false;
    bool reversed = false;
    bool ordered = false;
    term_ptr limit;
    term_ptr per_partition_limit;
    bool bypass_cache = false;
    std::optional<std::chrono::milliseconds> timeout;
    std::vector<column_spec> bind_vars;
    std::vector<uint16_t> pk_bind_indexes;

    std::vector<column_spec> bind_variables() const override { return bind_vars; }
    std::vector<uint16_t> partition_key_bind_indexes() const override { return pk_bind_indexes; }
    std::vector<column_spec> result_columns() const override { return result; }
    future<result_message> execute(query_processor& qp, client_state& state,
                                   const query_options& options) const override;
};

// Cassandra's refusal of a query that would need ALLOW FILTERING.
cql_error filtering_required();

} // namespace reef::cql
