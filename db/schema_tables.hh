// The schema stored as data: system_schema.keyspaces, tables, columns, dropped_columns and types with Cassandra
// 5.0's columns, and system.local; schema changes as mutations of them, and the catalog read back from them.
#pragma once

#include "commitlog/replay_position.hh"
#include "mutation/mutation.hh"
#include "schema/keyspace.hh"
#include "schema/schema.hh"
#include "utils/uuid.hh"

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace reef::schema_tables {

inline constexpr std::string_view system_schema_keyspace = "system_schema";
inline constexpr std::string_view system_keyspace = "system";

// The tables, with Cassandra's ids (TableId.forSystemTable: name-based UUIDs), so their directories carry
// Cassandra's names (system_schema/tables-afddfb9dbc1e30688056eed6c302ba09).
schema_ptr keyspaces();
schema_ptr tables();
schema_ptr columns();
schema_ptr dropped_columns();
schema_ptr types();
schema_ptr local();
// The system_schema tables above, then system.local.
std::vector<schema_ptr> all_tables();
bool is_system_keyspace(std::string_view ks);

// 'SimpleStrategy' -> 'org.apache.cassandra.locator.SimpleStrategy' (what Cassandra stores and shows).
keyspace_definition normalized(keyspace_definition ks);

// One schema change is a vector of mutations, all with the change's write timestamp `ts` (microseconds).
// CREATE KEYSPACE: the keyspaces row.
std::vector<mutation> create_keyspace_mutations(const keyspace_definition& ks, int64_t ts);
// DROP KEYSPACE: the keyspace's partition deleted in every system_schema table.
std::vector<mutation> drop_keyspace_mutations(const std::string& ks, int64_t ts);
// CREATE TABLE, or ALTER TABLE's new version: the tables row and every column's row; with `old`, the rows of its
// columns that `s` lacks are deleted and recorded in dropped_columns (dropped_time = ts / 1000).
std::vector<mutation> table_mutations(const schema& s, int64_t ts, const schema* old = nullptr);
// DROP TABLE: the tables row, its columns and dropped columns deleted.
std::vector<mutation> drop_table_mutations(const std::string& ks, const std::string& table, int64_t ts);
// CREATE TYPE (or ALTER TYPE): the types row; DROP TYPE: its deletion.
std::vector<mutation> type_mutations(const user_type_impl& t, int64_t ts);
std::vector<mutation> drop_type_mutations(const std::string& ks, const std::string& name, int64_t ts);

// What the system_schema tables hold about user keyspaces (the system keyspaces' rows are left out).
struct catalog {
    std::map<std::string, keyspace_definition> keyspaces;
    // (keyspace, name) -> the non-frozen user type.
    std::map<std::pair<std::string, std::string>, data_type> types;
    std::vector<schema_ptr> tables;
};

// Builds the catalog from the partitions (raw, with tombstones, any order) read from the system_schema tables.
// Throws std::runtime_error naming the table and row when a row does not parse (a type string, a column kind).
catalog read_catalog(const std::vector<mutation>& keyspaces, const std::vector<mutation>& tables,
                     const std::vector<mutation>& columns, const std::vector<mutation>& types);

// system.local's row.
struct local_info {
    std::string cluster_name;
    utils::uuid_bytes host_id{};
    std::vector<std::string> tokens;
    utils::uuid_bytes schema_version{};
    std::string release_version;
    std::string data_center = "datacenter1";
    std::string rack = "rack1";
};
mutation local_mutation(const local_info& info, int64_t ts);
// The host id and tokens of a system.local partition, if it holds a live row.
struct persisted_identity {
    utils::uuid_bytes host_id{};
    std::vector<std::string> tokens;
};
std::optional<persisted_identity> read_local_identity(const std::vector<mutation>& local);

// A table's truncation record, system.local.truncated_at[table id] (Cassandra's column): where each shard's
// commitlog stood when the table was truncated (every entry of the table at or below is truncated) and when.
// The blob is Cassandra's for shard 0 (segment id 8 bytes, offset 4, truncated_at in ms 8, big-endian), then 12
// bytes (segment id, offset) for each further shard.
struct truncation_record {
    std::vector<commitlog::replay_position> positions;  // by shard
    int64_t truncated_at_millis = 0;
};
bytes encode_truncation_record(const truncation_record& r);
// Throws std::runtime_error naming the table and the length when the blob is not 20 + 12 * k bytes.
truncation_record decode_truncation_record(const table_id& table, bytes_view blob);
// The map element truncated_at[table] of system.local, written at ts.
mutation truncation_record_mutation(const table_id& table, const truncation_record& r, int64_t ts);
// Every live truncated_at element of a system.local partition (decode errors thrown as above).
std::map<table_id, truncation_record> read_truncation_records(const std::vector<mutation>& local);

// The live rows of a partition as a query at `now` sees them: (clustering key, row) after tombstones are applied.
// For callers that read schema tables (tests, the CQL layer's system queries).
struct live_row {
    std::vector<bytes> key;
    // Live simple cells by column name; non-frozen collections as their live element paths and values.
    std::map<std::string, bytes> cells;
    std::map<std::string, std::vector<std::pair<bytes, bytes>>> collections;
};
std::vector<live_row> live_rows(const mutation& m);

} // namespace reef::schema_tables
