// select_statement: CQL SELECT, parsed (raw_select_statement), prepared against its table (restrictions resolved,
// selection built) and executed a page at a time through db/query_page, as Cassandra 5.0 answers it.
#pragma once

#include "cql/cql_statement.hh"
#include "cql/term.hh"

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace reef::cql {

// One selector as written: a column, count(*), a function of selectors or constants (aggregates, token, toJson,
// native functions), WRITETIME/TTL of a column, CAST, an element m['k'], a slice s[a..b], a UDT field u.f, with its
// alias.
struct raw_selector {
    enum class kind { column, count_star, function, writetime, ttl, cast, element, slice, field, term };
    kind k = kind::column;
    // The column (kind column, writetime, ttl), or the function's name (lower case).
    std::string name;
    std::vector<raw_selector> args;
    // CAST's target type, as written.
    std::string cast_type;
    // An element selection's key; a slice's bounds (null: open); a constant (kind term).
    raw_term_ptr element;
    raw_term_ptr slice_end;
    // A UDT field's name (kind field).
    std::string field;
    std::string alias;
};

// One relation of the WHERE clause as written.
struct raw_relation {
    enum class lhs_kind { column, tuple, token };
    lhs_kind lhs = lhs_kind::column;
    std::vector<std::string> columns;
    // "=", "<", "<=", ">", ">=", "!=", "in", "contains", "contains key", "like", "is not"
    std::string op;
    // The value (a tuple literal or marker for a tuple, a list marker for IN ?); null for IN (...) and for a
    // token(...) on the right.
    raw_term_ptr value;
    std::vector<raw_term_ptr> in_values;
    // token(v, ...) on the right of a token relation.
    std::optional<std::vector<raw_term_ptr>> token_args;
    // The relation as Cassandra prints it in messages ("v != 10").
    std::string text;
};

struct raw_ordering {
    std::string column;
    bool descending = false;
};

class raw_select_statement final : public raw_statement {
public:
    bool json = false;
    bool distinct = false;
    // Empty: `*`.
    std::vector<raw_selector> selectors;
    std::string keyspace;  // empty: the connection's
    std::string table;
    std::vector<raw_relation> where;
    std::vector<raw_ordering> order_by;
    std::vector<std::string> group_by;
    raw_term_ptr per_partition_limit;
    raw_term_ptr limit;
    bool allow_filtering = false;
    bool bypass_cache = false;
    std::optional<std::chrono::milliseconds> timeout;
    term_parse_context ctx;

    std::unique_ptr<cql_statement> prepare(const database& db, std::string_view keyspace) const override;
};

// The parser of statement_kinds: at SELECT.
std::unique_ptr<raw_statement> parse_select_statement(cql_token_stream& ts);

} // namespace reef::cql
