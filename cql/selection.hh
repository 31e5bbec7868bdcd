// selection: what a SELECT returns per row: prepared selectors (columns, WRITETIME/TTL, token, casts, element
// selection, native functions, aggregates) named and typed as Cassandra 5.0 names them, and the JSON form of a row.
#pragma once

#include "cql/result_message.hh"
#include "cql/select_statement.hh"
#include "mutation/mutation_partition.hh"
#include "mutation/token.hh"
#include "schema/schema.hh"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace reef::cql {

// One result row's sources: the partition's key (and its components), the row (none for a static-only
// partition's row) and the partition's static row, at the query's time.
struct row_view {
    const schema& s;
    const dht::decorated_key& key;
    const std::vector<std::string_view>& pk;
    const clustering_key_prefix* ck;
    const deletable_row* clustered;
    const reef::row& static_cells;
    deletion_time_type now;
};

// A column's value in the row: null when absent (or an empty non-frozen collection); a non-frozen collection or
// UDT in its frozen serialization.
std::optional<bytes> column_value(const row_view& r, const column_definition& c);

// A prepared selector (Cassandra's Selector): fed rows, then asked for its value. A non-aggregate gives the
// value of the first row it was fed since the last reset.
class selector {
public:
    virtual ~selector() = default;
    virtual void add_input(const row_view& r) = 0;
    virtual std::optional<bytes> output() const = 0;
    virtual void reset() = 0;
    virtual bool is_aggregate() const { return false; }
    const std::string& name() const noexcept { return _name; }
    const data_type& type() const noexcept { return _type; }

protected:
    std::string _name;
    data_type _type;
};

class selection {
public:
    // `raw` empty: `*` (Cassandra's order: partition key, clustering, static then regular columns by name).
    // Throws cql_error(invalid) naming an unknown column, a bad function or argument.
    selection(const schema_ptr& s, const std::vector<raw_selector>& raw, bool json);

    // The result's column specs (one "[json]" text column for SELECT JSON).
    const std::vector<column_spec>& result_columns() const noexcept { return _result; }
    bool is_aggregate() const noexcept { return _aggregate; }
    // Columns the selectors read, for DISTINCT's checks.
    const std::vector<const column_definition*>& columns_read() const noexcept { return _read; }
    // Whether a selector reads regular or clustering columns (a DISTINCT may not).

    void add_input(const row_view& r);
    // The values of the selectors (then reset), JSON applied.
    std::vector<std::optional<bytes>> output_row();

private:
    std::vector<std::unique_ptr<selector>> _selectors;
    std::vector<column_spec> _spec;    // of the selectors
    std::vector<column_spec> _result;  // what the client sees
    std::vector<const column_definition*> _read;
    bool _aggregate = false;
    bool _json = false;
};

// Cassandra's JSON key for a result column: the name, double-quoted when it is not all lower case.
std::string json_column_key(const std::string& name);

} // namespace reef::cql
