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
inline constexpr std::string_view system_virtual_schema_keyspace = "system_virtual_schema";

// The tables, with Cassandra's ids (TableId.forSystemTable: name-based UUIDs), so their directories carry
// Cassandra's names (system_schema/tables-afddfb9dbc1e30688056eed6c302ba09).
schema_ptr keyspaces();
schema_ptr tables();
schema_ptr columns();
schema_ptr dropped_columns();
schema_ptr types();
schema_ptr local();
// system.peers and system.peers_v2 (empty: one node).
schema_ptr peers();
schema_ptr peers_v2();
// system_schema.functions, aggregates, triggers, views, indexes (empty: Reef has none).
schema_ptr functions();
schema_ptr aggregates();
schema_ptr triggers();
schema_ptr views();
schema_ptr indexes();
// system_schema.scylla_tables (ScyllaDB's: cdc, in_memory, partitioner, version per table), empty; ScyllaDB's
// drivers read it for every table.
schema_ptr scylla_tables();
// system_virtual_schema.keyspaces, tables, columns: what drivers read of the virtual keyspaces; they describe
// system_virtual_schema itself (virtual_schema_mutations).
schema_ptr virtual_keyspaces();
schema_ptr virtual_tables();
schema_ptr virtual_columns();
// Every system table above: the system_schema ones first.
std::vector<schema_ptr> all_tables();
// system, system_schema and system_virtual_schema: no statement changes them. Only the first two have rows in
// system_schema (the virtual keyspace is described by its own tables, as in Cassandra).
bool is_system_keyspace(std::string_view ks);
// A table option as system_schema.tables stores it and DESCRIBE prints it, as a CQL literal ('99p', 0.01,
// {'keys': 'ALL', ...}): the table's value (table_options' fields and `other`) or Cassandra's default. The names
// are Cassandra 5.0's table options; another name throws std::invalid_argument.
std::string table_option_literal(const table_options& o, std::string_view name);
// The rows of system_virtual_schema's tables.
std::vector<mutation> virtual_schema_mutations(int64_t ts);

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
    // Where the node listens: for other nodes (listen_address, storage port) and for clients (rpc_address, the
    // native transport port). IPv4 or IPv6 text.
    std::string listen_address = "127.0.0.1";
    int32_t listen_port = 7000;
    std::string rpc_address = "127.0.0.1";
    int32_t rpc_port = 9042;
    // Seconds since the epoch of the node's start (gossip's generation).
    int32_t gossip_generation = 0;
};
mutation local_mutation(const local_info& info, int64_t ts);
// The host id and tokens of a system.local partition, if it holds a live row.
struct persisted_identity {
    utils::uuid_bytes host_id{};
    std::vector<std::string> tokens;
};
std::optional<persisted_identity> read_local_identity(const std::vector<mutation>& local);
// system.local's row as local_mutation wrote it (the REST API's node endpoints), if the partition holds a live row
// with a host id; columns it lacks keep local_info's defaults.
std::optional<local_info> read_local_info(const std::vector<mutation>& local);

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
