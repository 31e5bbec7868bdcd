// A table's schema: keyspace and name, id, partition key, clustering columns with their order, static and
// regular columns, and the options later rooms need. Immutable once built; shared through schema_ptr.
#pragma once

#include "schema/clustering_columns.hh"
#include "schema/types.hh"

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace reef {

enum class column_kind : uint8_t { partition_key, clustering_key, static_column, regular_column };
enum class clustering_order : uint8_t { asc, desc };

struct column_definition {
    std::string name;
    // The declared type, never reversed (see clustering_type()).
    data_type type;
    column_kind kind;
    // Index within the partition key or the clustering key; 0 for other columns.
    uint32_t position = 0;
    clustering_order order = clustering_order::asc;

    bool is_static() const { return kind == column_kind::static_column; }
    bool is_primary_key() const { return kind == column_kind::partition_key || kind == column_kind::clustering_key; }
    // Non-frozen collections and UDTs: cells of their own, a complex column in the sstable.
    bool is_complex() const { return type->is_multi_cell(); }
    // The type clustering values compare with: reversed(type) for DESC.
    data_type clustering_type() const { return order == clustering_order::desc ? reversed_type(type) : type; }
};

struct table_options {
    // The compression map as given: {"class": "LZ4Compressor", "chunk_length_in_kb": "4"}, {"enabled": "false"}.
    // Empty means Cassandra's default (LZ4, 16 KiB chunks).
    std::map<std::string, std::string> compression;
    int32_t gc_grace_seconds = 864000;
    int32_t default_time_to_live = 0;
    bool compact_storage = false;
    // Other WITH options, their values as written (strings unquoted, maps in CQL syntax).
    std::map<std::string, std::string> other;

    bool compression_enabled() const;
};

using table_id = std::array<uint8_t, 16>;

class schema;
using schema_ptr = std::shared_ptr<const schema>;

class schema {
    std::string _keyspace;
    std::string _table;
    table_id _id{};
    std::vector<column_definition> _partition_key;
    std::vector<column_definition> _clustering_key;
    // In sstable order: simple columns, then complex ones, each sorted by name (Cassandra's Columns order).
    std::vector<column_definition> _static_columns;
    std::vector<column_definition> _regular_columns;
    // Every column in declaration order.
    std::vector<std::string> _declared;
    table_options _options;
    // clustering_types() as comparators use them, made by build() (every read compares positions).
    std::shared_ptr<const clustering_columns> _clustering_compare;
    friend class schema_builder;
public:
    const std::string& keyspace() const { return _keyspace; }
    const std::string& table() const { return _table; }
    const table_id& id() const { return _id; }
    const std::vector<column_definition>& partition_key() const { return _partition_key; }
    const std::vector<column_definition>& clustering_key() const { return _clustering_key; }
    const std::vector<column_definition>& static_columns() const { return _static_columns; }
    const std::vector<column_definition>& regular_columns() const { return _regular_columns; }
    const table_options& options() const { return _options; }
    const column_definition* find_column(std::string_view name) const;
    // All columns in the order of the CREATE TABLE statement.
    std::vector<const column_definition*> columns_in_declaration_order() const;
    // The partition key's type: the column's type, or CompositeType of all of them.
    data_type partition_key_type() const;
    // Clustering column types as compared (reversed for DESC), the serialization header's clustering types.
    std::vector<data_type> clustering_types() const;
    // The same, ready for comparisons (shared: copying it allocates nothing).
    std::shared_ptr<const clustering_columns> clustering_compare() const;
    // A CREATE TABLE statement that parse_cql reads back into an equal schema.
    std::string to_cql() const;
};

// Builds a schema column by column; build() checks it (a partition key, unique names, counters alone).
class schema_builder {
    schema _s;
public:
    schema_builder(std::string keyspace, std::string table);
    // A new version of s (same id, columns, options), for ALTER TABLE.
    explicit schema_builder(const schema& s) : _s(s) {}
    schema_builder& with_id(const table_id& id);
    schema_builder& with_column(std::string name, data_type type, column_kind kind,
                                clustering_order order = clustering_order::asc);
    schema_builder& with_options(table_options options);
    // Removes a static or regular column; throws std::invalid_argument when there is none of that name.
    schema_builder& without_column(std::string_view name);
    table_options& options() { return _s._options; }
    // Throws std::invalid_argument naming the problem.
    schema_ptr build();
};

std::string format_table_id(const table_id& id);

} // namespace reef
