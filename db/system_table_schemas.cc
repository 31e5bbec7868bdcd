// system_table_schemas: the schemas of the system tables Reef keeps (system_schema, system.local and peers,
// system_virtual_schema), under Cassandra 5.0's table ids and columns, each built once.
#include "db/schema_tables.hh"

namespace reef::schema_tables {

namespace {

table_id id_of(std::string_view hex) {
    table_id id{};
    for (size_t i = 0; i < 16; ++i) {
        id[i] = uint8_t(std::stoi(std::string(hex.substr(2 * i, 2)), nullptr, 16));
    }
    return id;
}

data_type frozen_text_map() { return map_type(text_type(), text_type(), false); }
data_type frozen_text_list() { return list_type(text_type(), false); }

schema_builder system_table(std::string_view ks, std::string table, std::string_view id_hex) {
    schema_builder b{std::string(ks), std::move(table)};
    b.with_id(id_of(id_hex));
    b.options().gc_grace_seconds = 7 * 24 * 3600;
    return b;
}

schema_ptr build_keyspaces() {
    return system_table(system_schema_keyspace, "keyspaces", "abac5682dea631c5b535b3d6cffd0fb6")
        .with_column("keyspace_name", text_type(), column_kind::partition_key)
        .with_column("durable_writes", boolean_type(), column_kind::regular_column)
        .with_column("replication", frozen_text_map(), column_kind::regular_column)
        .build();
}

schema_ptr build_tables() {
    auto b = system_table(system_schema_keyspace, "tables", "afddfb9dbc1e30688056eed6c302ba09");
    b.with_column("keyspace_name", text_type(), column_kind::partition_key);
    b.with_column("table_name", text_type(), column_kind::clustering_key);
    // Cassandra 5.0's SchemaKeyspace.Tables, in its order.
    std::pair<const char*, data_type> cols[] = {
        {"allow_auto_snapshot", boolean_type()},
        {"bloom_filter_fp_chance", double_type()},
        {"caching", frozen_text_map()},
        {"comment", text_type()},
        {"compaction", frozen_text_map()},
        {"compression", frozen_text_map()},
        {"memtable", text_type()},
        {"crc_check_chance", double_type()},
        {"dclocal_read_repair_chance", double_type()},
        {"default_time_to_live", int32_type()},
        {"extensions", map_type(text_type(), blob_type(), false)},
        {"flags", set_type(text_type(), false)},
        {"gc_grace_seconds", int32_type()},
        {"incremental_backups", boolean_type()},
        {"id", uuid_type()},
        {"max_index_interval", int32_type()},
        {"memtable_flush_period_in_ms", int32_type()},
        {"min_index_interval", int32_type()},
        {"read_repair_chance", double_type()},
        {"speculative_retry", text_type()},
        {"additional_write_policy", text_type()},
        {"cdc", boolean_type()},
        {"read_repair", text_type()},
    };
    for (auto& [name, type] : cols) {
        b.with_column(name, type, column_kind::regular_column);
    }
    return b.build();
}

schema_ptr build_columns() {
    return system_table(system_schema_keyspace, "columns", "24101c25a2ae3af787c1b40ee1aca33f")
        .with_column("keyspace_name", text_type(), column_kind::partition_key)
        .with_column("table_name", text_type(), column_kind::clustering_key)
        .with_column("column_name", text_type(), column_kind::clustering_key)
        .with_column("clustering_order", text_type(), column_kind::regular_column)
        .with_column("column_name_bytes", blob_type(), column_kind::regular_column)
        .with_column("kind", text_type(), column_kind::regular_column)
        .with_column("position", int32_type(), column_kind::regular_column)
        .with_column("type", text_type(), column_kind::regular_column)
        .build();
}

schema_ptr build_dropped_columns() {
    return system_table(system_schema_keyspace, "dropped_columns", "5e7583b5f3f43af19a39b7e1d6f5f11f")
        .with_column("keyspace_name", text_type(), column_kind::partition_key)
        .with_column("table_name", text_type(), column_kind::clustering_key)
        .with_column("column_name", text_type(), column_kind::clustering_key)
        .with_column("dropped_time", timestamp_type(), column_kind::regular_column)
        .with_column("kind", text_type(), column_kind::regular_column)
        .with_column("type", text_type(), column_kind::regular_column)
        .build();
}

schema_ptr build_types() {
    return system_table(system_schema_keyspace, "types", "5a8b1ca866023f77a0459273d308917a")
        .with_column("keyspace_name", text_type(), column_kind::partition_key)
        .with_column("type_name", text_type(), column_kind::clustering_key)
        .with_column("field_names", frozen_text_list(), column_kind::regular_column)
        .with_column("field_types", frozen_text_list(), column_kind::regular_column)
        .build();
}

schema_ptr build_local() {
    // Cassandra 5.0's SystemKeyspace.Local.
    auto b = system_table(system_keyspace, "local", "7ad54392bcdd35a684174e047860b377");
    b.with_column("key", text_type(), column_kind::partition_key);
    std::pair<const char*, data_type> cols[] = {
        {"bootstrapped", text_type()},
        {"broadcast_address", inet_type()},
        {"broadcast_port", int32_type()},
        {"cluster_name", text_type()},
        {"cql_version", text_type()},
        {"data_center", text_type()},
        {"gossip_generation", int32_type()},
        {"host_id", uuid_type()},
        {"listen_address", inet_type()},
        {"listen_port", int32_type()},
        {"native_protocol_version", text_type()},
        {"partitioner", text_type()},
        {"rack", text_type()},
        {"release_version", text_type()},
        {"rpc_address", inet_type()},
        {"rpc_port", int32_type()},
        {"schema_version", uuid_type()},
        {"tokens", set_type(text_type(), true)},
        {"truncated_at", map_type(uuid_type(), blob_type(), true)},
    };
    for (auto& [name, type] : cols) {
        b.with_column(name, type, column_kind::regular_column);
    }
    return b.build();
}

// Cassandra 5.0's SystemKeyspace.LegacyPeers: the other nodes (none: Reef is one node).
schema_ptr build_peers() {
    auto b = system_table(system_keyspace, "peers", "37f71aca7dc2383ba70672528af04d4f");
    b.with_column("peer", inet_type(), column_kind::partition_key);
    std::pair<const char*, data_type> cols[] = {
        {"data_center", text_type()},     {"host_id", uuid_type()},         {"preferred_ip", inet_type()},
        {"rack", text_type()},            {"release_version", text_type()}, {"rpc_address", inet_type()},
        {"schema_version", uuid_type()},  {"tokens", set_type(text_type(), true)},
    };
    for (auto& [name, type] : cols) {
        b.with_column(name, type, column_kind::regular_column);
    }
    return b.build();
}

// SystemKeyspace.PeersV2.
schema_ptr build_peers_v2() {
    auto b = system_table(system_keyspace, "peers_v2", "c4325fbb8e5e3bafbd070f9250ed818e");
    b.with_column("peer", inet_type(), column_kind::partition_key);
    b.with_column("peer_port", int32_type(), column_kind::clustering_key);
    std::pair<const char*, data_type> cols[] = {
        {"data_center", text_type()},    {"host_id", uuid_type()},          {"native_address", inet_type()},
        {"native_port", int32_type()},   {"preferred_ip", inet_type()},     {"preferred_port", int32_type()},
        {"rack", text_type()},           {"release_version", text_type()},  {"schema_version", uuid_type()},
        {"tokens", set_type(text_type(), true)},
    };
    for (auto& [name, type] : cols) {
        b.with_column(name, type, column_kind::regular_column);
    }
    return b.build();
}

// SchemaKeyspace.Functions, Aggregates, Triggers, Views, Indexes: kept empty (Reef has none of them), for the
// drivers and cqlsh that read them.
schema_ptr build_functions() {
    return system_table(system_schema_keyspace, "functions", "96489b7980be3e14a70166a0b9159450")
        .with_column("keyspace_name", text_type(), column_kind::partition_key)
        .with_column("function_name", text_type(), column_kind::clustering_key)
        .with_column("argument_types", frozen_text_list(), column_kind::clustering_key)
        .with_column("argument_names", frozen_text_list(), column_kind::regular_column)
        .with_column("body", text_type(), column_kind::regular_column)
        .with_column("called_on_null_input", boolean_type(), column_kind::regular_column)
        .with_column("language", text_type(), column_kind::regular_column)
        .with_column("return_type", text_type(), column_kind::regular_column)
        .build();
}

schema_ptr build_aggregates() {
    return system_table(system_schema_keyspace, "aggregates", "924c55872e3a345bb10c12f37c1ba895")
        .with_column("keyspace_name", text_type(), column_kind::partition_key)
        .with_column("aggregate_name", text_type(), column_kind::clustering_key)
        .with_column("argument_types", frozen_text_list(), column_kind::clustering_key)
        .with_column("final_func", text_type(), column_kind::regular_column)
        .with_column("initcond", text_type(), column_kind::regular_column)
        .with_column("return_type", text_type(), column_kind::regular_column)
        .with_column("state_func", text_type(), column_kind::regular_column)
        .with_column("state_type", text_type(), column_kind::regular_column)
        .build();
}

schema_ptr build_triggers() {
    return system_table(system_schema_keyspace, "triggers", "4df70b666b05325195a132b54005fd48")
        .with_column("keyspace_name", text_type(), column_kind::partition_key)
        .with_column("table_name", text_type(), column_kind::clustering_key)
        .with_column("trigger_name", text_type(), column_kind::clustering_key)
        .with_column("options", frozen_text_map(), column_kind::regular_column)
        .build();
}

schema_ptr build_views() {
    auto b = system_table(system_schema_keyspace, "views", "9786ac1cdd583201a7cdad556410c985");
    b.with_column("keyspace_name", text_type(), column_kind::partition_key);
    b.with_column("view_name", text_type(), column_kind::clustering_key);
    std::pair<const char*, data_type> cols[] = {
        {"additional_write_policy", text_type()},
        {"allow_auto_snapshot", boolean_type()},
        {"base_table_id", uuid_type()},
        {"base_table_name", text_type()},
        {"bloom_filter_fp_chance", double_type()},
        {"caching", frozen_text_map()},
        {"cdc", boolean_type()},
        {"comment", text_type()},
        {"compaction", frozen_text_map()},
        {"compression", frozen_text_map()},
        {"crc_check_chance", double_type()},
        {"dclocal_read_repair_chance", double_type()},
        {"default_time_to_live", int32_type()},
        {"extensions", map_type(text_type(), blob_type(), false)},
        {"gc_grace_seconds", int32_type()},
        {"id", uuid_type()},
        {"include_all_columns", boolean_type()},
        {"incremental_backups", boolean_type()},
        {"max_index_interval", int32_type()},
        {"memtable", text_type()},
        {"memtable_flush_period_in_ms", int32_type()},
        {"min_index_interval", int32_type()},
        {"read_repair", text_type()},
        {"read_repair_chance", double_type()},
        {"speculative_retry", text_type()},
        {"where_clause", text_type()},
    };
    for (auto& [name, type] : cols) {
        b.with_column(name, type, column_kind::regular_column);
    }
    return b.build();
}

schema_ptr build_indexes() {
    return system_table(system_schema_keyspace, "indexes", "0feb57ac311f382fba6d9024d305702f")
        .with_column("keyspace_name", text_type(), column_kind::partition_key)
        .with_column("table_name", text_type(), column_kind::clustering_key)
        .with_column("index_name", text_type(), column_kind::clustering_key)
        .with_column("kind", text_type(), column_kind::regular_column)
        .with_column("options", frozen_text_map(), column_kind::regular_column)
        .build();
}

// ScyllaDB's per-table extras, the columns its drivers read (gocql's KeyspaceMetadata fails when the table is
// missing); no rows: Reef has no CDC, per-table partitioner or in-memory tables.
schema_ptr build_scylla_tables() {
    return system_table(system_schema_keyspace, "scylla_tables", "5d912ff1f7593665b2c88042ab5103dd")
        .with_column("keyspace_name", text_type(), column_kind::partition_key)
        .with_column("table_name", text_type(), column_kind::clustering_key)
        .with_column("cdc", frozen_text_map(), column_kind::regular_column)
        .with_column("in_memory", boolean_type(), column_kind::regular_column)
        .with_column("partitioner", text_type(), column_kind::regular_column)
        .with_column("version", uuid_type(), column_kind::regular_column)
        .build();
}

// Cassandra's VirtualSchemaKeyspace: the virtual keyspaces, tables and columns (here, its own three tables).
schema_ptr build_virtual_keyspaces() {
    return system_table(system_virtual_schema_keyspace, "keyspaces", "8943287ab42b3f26a2b231a1a8cb2a9a")
        .with_column("keyspace_name", text_type(), column_kind::partition_key)
        .build();
}

schema_ptr build_virtual_tables() {
    return system_table(system_virtual_schema_keyspace, "tables", "de8b29573de1357087936dcbce2e5d6e")
        .with_column("keyspace_name", text_type(), column_kind::partition_key)
        .with_column("table_name", text_type(), column_kind::clustering_key)
        .with_column("comment", text_type(), column_kind::regular_column)
        .build();
}

schema_ptr build_virtual_columns() {
    return system_table(system_virtual_schema_keyspace, "columns", "d30576e902a937358dafab45e4980183")
        .with_column("keyspace_name", text_type(), column_kind::partition_key)
        .with_column("table_name", text_type(), column_kind::clustering_key)
        .with_column("column_name", text_type(), column_kind::clustering_key)
        .with_column("clustering_order", text_type(), column_kind::regular_column)
        .with_column("column_name_bytes", blob_type(), column_kind::regular_column)
        .with_column("kind", text_type(), column_kind::regular_column)
        .with_column("position", int32_type(), column_kind::regular_column)
        .with_column("type", text_type(), column_kind::regular_column)
        .build();
}

} // namespace

schema_ptr keyspaces() { static const schema_ptr s = build_keyspaces(); return s; }
schema_ptr tables() { static const schema_ptr s = build_tables(); return s; }
schema_ptr columns() { static const schema_ptr s = build_columns(); return s; }
schema_ptr dropped_columns() { static const schema_ptr s = build_dropped_columns(); return s; }
schema_ptr types() { static const schema_ptr s = build_types(); return s; }
schema_ptr local() { static const schema_ptr s = build_local(); return s; }
schema_ptr peers() { static const schema_ptr s = build_peers(); return s; }
schema_ptr peers_v2() { static const schema_ptr s = build_peers_v2(); return s; }
schema_ptr functions() { static const schema_ptr s = build_functions(); return s; }
schema_ptr aggregates() { static const schema_ptr s = build_aggregates(); return s; }
schema_ptr triggers() { static const schema_ptr s = build_triggers(); return s; }
schema_ptr views() { static const schema_ptr s = build_views(); return s; }
schema_ptr indexes() { static const schema_ptr s = build_indexes(); return s; }
schema_ptr scylla_tables() { static const schema_ptr s = build_scylla_tables(); return s; }
schema_ptr virtual_keyspaces() { static const schema_ptr s = build_virtual_keyspaces(); return s; }
schema_ptr virtual_tables() { static const schema_ptr s = build_virtual_tables(); return s; }
schema_ptr virtual_columns() { static const schema_ptr s = build_virtual_columns(); return s; }

std::vector<schema_ptr> all_tables() {
    return {keyspaces(), tables(), columns(), dropped_columns(), types(), local(), peers(), peers_v2(),
            functions(), aggregates(), triggers(), views(), indexes(), scylla_tables(), virtual_keyspaces(),
            virtual_tables(), virtual_columns()};
}

bool is_system_keyspace(std::string_view ks) {
    return ks == system_schema_keyspace || ks == system_keyspace || ks == system_virtual_schema_keyspace;
}

} // namespace reef::schema_tables
