// modification_writes: bound INSERT/UPDATE/DELETE operations turned into one partition's mutation as Cassandra writes
// them (row markers, cells with TTLs, collection tombstones at timestamp - 1, element cells, tombstones), the parts
// that need the current row (counters, list index and removal operations) resolved against it, and IF conditions
// checked against it with the [applied] row Cassandra returns.
#pragma once

#include "cql/modification_impl.hh"
#include "mutation/counter.hh"
#include "reader/position_range.hh"

#include <optional>
#include <vector>

namespace reef::cql {

struct write_params {
    int64_t ts = 0;
    int32_t ttl = 0;
    // Seconds: deletion times, expiries.
    int64_t now = 0;
};

struct bound_operation {
    const prepared_operation* op = nullptr;
    raw_value key = raw_value::unset_value();
    raw_value value = raw_value::unset_value();
};

struct bound_condition {
    const column_definition* column = nullptr;
    bool is_static = false;
    column_id id = 0;
    std::optional<raw_value> key;
    std::optional<size_t> field;
    std::string op;
    std::vector<raw_value> values;
    data_type value_type;
};

// What a conditional statement checks: a row (or, without one, the static row or the partition).
struct cas_target {
    schema_ptr schema;
    std::optional<clustering_key_prefix> row;
    bool if_exists = false;
    bool if_not_exists = false;
    std::vector<bound_condition> conditions;
};

// A write that needs the current row: bound values and where it goes.
struct deferred_write {
    op_kind kind;
    bool is_static = false;
    clustering_key_prefix row;
    column_id id = 0;
    raw_value key;
    raw_value value;
    write_params params;
};

// Everything one execution writes to one partition.
struct partition_plan {
    partition_plan(schema_ptr s, dht::decorated_key k, std::vector<bytes> key_values)
        : key(k), key_values(std::move(key_values)), m(std::move(s), std::move(k)) {}
    dht::decorated_key key;
    std::vector<bytes> key_values;
    mutation m;
    std::vector<deferred_write> deferred;
    std::vector<cas_target> cas;
    bool needs_owner = false;

    // The clustering ranges the read before the write needs (rows touched, or all when a range is involved).
    clustering_ranges read_slice() const;
};

// The result of the conditions: applied or not, and the rows to show when not.
struct cas_outcome {
    bool applied = true;
    std::vector<column_spec> columns;
    std::vector<std::vector<std::optional<bytes>>> rows;
};

// Adds one statement's writes to plan: rows (full keys; empty with no clustering restriction), ranges (a DELETE's
// range tombstones), the bound operations.
void write_statement(partition_plan& plan, const modification_impl& st, const std::vector<clustering_key_prefix>& rows,
                     const std::optional<clustering_ranges>& ranges, const std::vector<bound_operation>& ops,
                     const write_params& p);

// Checks plan.cas against the current partition (drop_shadowed applied; null when there is none).
cas_outcome check_conditions(const partition_plan& plan, const mutation* current);

// Turns plan.deferred into cells of plan.m, reading the current values; counters get this node's shard.
void resolve_reads(partition_plan& plan, const mutation* current, const counter_id& node);

// The [applied] Rows result.
result_set cas_result_set(const schema_ptr& s, const cas_outcome& o);

} // namespace reef::cql
