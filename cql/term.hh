// term: a value expression of a CQL statement (literal, collection/tuple/UDT literal, bind marker, function call),
// parsed from tokens, checked against its receiver at prepare with Cassandra's messages, and bound to bytes.
#pragma once

// Design. parse_term reads one term into a raw_term tree; bind markers take their index from the
// term_parse_context the statement's parser threads through, so markers are numbered in text order across the
// whole statement. raw_term::prepare(receiver, specs) checks the term against the receiver (the column, or
// value(l), key(m), t[0], a.f, [ttl] ...) the way Cassandra's testAssignment does ("Invalid STRING constant (x)
// for "v" of type int"), converts constants to bytes once (a bad literal fails at PREPARE, as in Cassandra), and
// records each marker's column_spec (named after the receiver, or after the marker's :name). term::bind(options)
// gives a raw_value in the receiver type's serialization: collections, tuples and UDTs in their frozen form (sets
// sorted and deduplicated, maps sorted by key), whatever the order a client sent; statements split non-frozen
// collections into cells. Non-pure functions (now(), uuid(), currentTimestamp()) run at every bind.

#include "cql/cql_lexer.hh"
#include "cql/query_options.hh"
#include "cql/result_message.hh"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace reef::cql {

// What a statement's parse accumulates about its bind markers: one entry per marker in text order, the :name
// ("" for `?`).
struct term_parse_context {
    std::vector<std::string> marker_names;
    uint32_t add_marker(std::string name) {
        marker_names.push_back(std::move(name));
        return uint32_t(marker_names.size() - 1);
    }
};

// The column_spec of every marker of a statement, filled by the markers' prepare (PREPARE's bind variables).
class bind_specs {
public:
    explicit bind_specs(const term_parse_context& ctx);
    void set(uint32_t index, column_spec spec);
    const std::string& marker_name(uint32_t index) const { return _names.at(index); }
    size_t size() const noexcept { return _names.size(); }
    // In marker order. Throws std::logic_error when a marker was never prepared (a statement bug).
    std::vector<column_spec> specs() const;

private:
    std::vector<std::string> _names;
    std::vector<std::optional<column_spec>> _specs;
};

// A prepared term: gives its value for one execution.
class term {
public:
    virtual ~term() = default;
    // The value in the receiver type's serialization, null or unset. Throws cql_error (invalid bound value,
    // function_failure).
    virtual raw_value bind(const query_options& options) const = 0;
    // Bound values, functions and literals with markers inside give a value only at bind.
    virtual bool is_terminal() const { return false; }
};
using term_ptr = std::shared_ptr<const term>;

// A term as parsed.
class raw_term {
public:
    virtual ~raw_term() = default;
    // Checks the term against receiver (its name is the one messages and marker specs use) and prepares it.
    // Throws cql_error(invalid) naming the term and the receiver.
    virtual term_ptr prepare(const column_spec& receiver, bind_specs& specs) const = 0;
    // The term as Cassandra prints it in messages ('x', 42, [1, 2], ?, now()).
    virtual std::string to_string() const = 0;
    // A bind marker's index (statements report partition_key_bind_indexes with it).
    virtual std::optional<uint32_t> bind_index() const { return std::nullopt; }
    // The literal null.
    virtual bool is_null_literal() const { return false; }
};
using raw_term_ptr = std::shared_ptr<const raw_term>;

// Parses one term at the stream's position. Throws cql_parse_error (the statement parser makes it a syntax
// error).
raw_term_ptr parse_term(cql_token_stream& ts, term_parse_context& ctx);

// A term that always gives `value` (statements' own constants, tests).
term_ptr make_constant_term(raw_value value);

// The receiver of a collection's element, a map's key and value, a list index, a tuple component, a UDT field:
// Cassandra's names (value(l), key(m), idx(l), t[0], a.f).
column_spec element_receiver(const column_spec& collection);
column_spec map_key_receiver(const column_spec& map);
column_spec list_index_receiver(const column_spec& list);
column_spec tuple_component_receiver(const column_spec& tuple, size_t i);
column_spec udt_field_receiver(const column_spec& udt, size_t i);

// A value of type t put in its canonical serialization (sets sorted and deduplicated, map keys sorted, nested
// too), after checking it is valid. Throws cql_error(invalid) with the reason.
bytes canonical_value(const abstract_type& t, bytes_view v);

// The options a statement's terms bind from: named values (options.names) put in marker order, the count
// checked against the statement's markers ("There were 2 markers(?) in CQL but 1 bound variables").
query_options positional_options(const std::vector<column_spec>& bind_variables, const query_options& options);

// Cassandra's "frozen<list<int>>" style name of a receiver type in messages (reversed types print their base).
std::string receiver_type_name(const data_type& t);

} // namespace reef::cql
