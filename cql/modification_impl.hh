// modification_impl: what a prepared INSERT, UPDATE or DELETE holds (key restrictions, column operations, IF
// conditions, USING attributes), shared by its prepare (modification_statement.cc) and its execution
// (modification_execute.cc). Private to those files and batch_statement.cc.
#pragma once

#include "cql/modification_statement.hh"

namespace reef::cql {

// Restrictions of key columns: `c = t`, `c IN (...)`, `c IN ?`, slices, over one column or a tuple of clustering
// columns.
struct key_restriction {
    std::vector<const column_definition*> columns;
    std::string op;
    // One term for = and slices, the list's terms for IN (...). A term gives the column's value, or the tuple's.
    std::vector<term_ptr> values;
    // IN ?: gives a list of values (or of tuples).
    term_ptr in_marker;
    bool tuple = false;
    // `c = ?` (or an INSERT's ?): the marker's index, for drivers' token routing.
    std::optional<uint32_t> marker;
};

enum class op_kind {
    assign,           // whole column (frozen or simple value, or a non-frozen collection/UDT replaced)
    list_append,
    list_prepend,
    set_add,
    map_put,          // value is a map
    set_remove,
    map_remove,       // value is a set of keys
    list_remove,      // reads: every element equal to one of the values
    list_set_index,   // reads
    map_set_key,
    udt_set_field,
    counter_add,      // reads; value is a bigint, negated for subtract
    del_column,
    del_list_index,   // reads
    del_key,          // set element or map key
    del_field,
};

struct prepared_operation {
    const column_definition* column = nullptr;
    bool is_static = false;
    column_id id = 0;
    op_kind kind = op_kind::assign;
    term_ptr key;
    term_ptr value;
    size_t field = 0;
    bool negate = false;
};

struct prepared_condition {
    const column_definition* column = nullptr;
    bool is_static = false;
    column_id id = 0;
    // c[k]: the element of a list (index), map (key); c.f: a UDT field.
    term_ptr key;
    std::optional<size_t> field;
    std::string op;
    term_ptr value;
    std::vector<term_ptr> in_values;
    term_ptr in_marker;
    // The type the compared value has (the column's, its element's, its field's).
    data_type value_type;
};

struct modification_impl {
    schema_ptr schema;
    statement_type type = statement_type::insert;
    std::vector<column_spec> bind_variables;
    std::vector<uint16_t> partition_key_bind_indexes;
    // One per partition key column, in key order.
    std::vector<key_restriction> partition_key;
    // Clustering relations in WHERE order (INSERT: one = per clustering column given).
    std::vector<key_restriction> clustering;
    // INSERT and UPDATE: every clustering column restricted by = or IN (else only static columns are written).
    bool full_clustering = false;
    // A DELETE of a clustering prefix or slice (range tombstones).
    bool clustering_range = false;
    // The clustering columns a statement without full_clustering lacks, for messages.
    std::string clustering_missing;
    std::vector<prepared_operation> operations;
    term_ptr timestamp;
    term_ptr ttl;
    bool if_exists = false;
    bool if_not_exists = false;
    std::vector<prepared_condition> conditions;
    // INSERT JSON: the JSON text's term; columns missing from it are null (or untouched with DEFAULT UNSET).
    term_ptr json;
    bool json_default_unset = false;
    bool counter = false;
    // Some operation reads the current row (counters, list index/removal operations).
    bool reads = false;

    bool has_conditions() const { return if_exists || if_not_exists || !conditions.empty(); }
    bool static_only() const;
};

} // namespace reef::cql
