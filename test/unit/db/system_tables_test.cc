// The system tables drivers read: their ids (Cassandra's name-based ones), system.local's row complete with the
// configured addresses, system.peers / peers_v2 and the empty system_schema tables present and empty, the
// system_schema rows of the system keyspaces, and system_virtual_schema describing itself; across a restart.
#include "db/database.hh"
#include "test/lib/database_test_support.hh"
#include "db/schema_tables.hh"
#include "runtime/smp.hh"
#include "test/lib/reef_test.hh"
#include "test/lib/tmpdir.hh"
#include "utils/md5.hh"

#include <boost/test/unit_test.hpp>

#include <set>

using namespace reef;
using namespace reef::testing;

namespace {

std::string text_of(const bytes& b) { return std::string(b.begin(), b.end()); }

clustering_ranges full_slice() { return clustering_ranges{position_range::full()}; }

// The live rows of a system table in one keyspace (its partition), read through database::query.
future<std::vector<schema_tables::live_row>> rows_of(database& db, schema_ptr table, std::string ks) {
    auto key = dht::decorated_key(partition_key::from_single_value(ks));
    auto ms = co_await db.query(table, dht::partition_range::singular(key), full_slice());
    std::vector<schema_tables::live_row> out;
    for (auto& m : ms) {
        for (auto& r : schema_tables::live_rows(m)) {
            out.push_back(std::move(r));
        }
    }
    co_return out;
}

// Every partition of a table: (partition key bytes, live rows).
future<size_t> live_row_count(database& db, schema_ptr table) {
    auto ms = co_await db.query(table, dht::partition_range::full(), full_slice());
    size_t n = 0;
    for (auto& m : ms) {
        n += schema_tables::live_rows(m).size();
    }
    co_return n;
}

} // namespace

BOOST_AUTO_TEST_CASE(system_table_ids_are_cassandras) {
    // TableId.forSystemTable: UUID.nameUUIDFromBytes(keyspace bytes + table bytes), an MD5 (version 3) UUID.
    for (auto& s : schema_tables::all_tables()) {
        auto d = utils::md5::of(s->keyspace() + s->table());
        d[6] = uint8_t((d[6] & 0x0f) | 0x30);
        d[8] = uint8_t((d[8] & 0x3f) | 0x80);
        BOOST_CHECK_MESSAGE(std::equal(d.begin(), d.end(), s->id().begin()),
                            s->keyspace() << "." << s->table() << ": id " << format_table_id(s->id()));
    }
}

REEF_TEST_CASE(system_tables_drivers_read) {
    tmpdir dir;
    database_config cfg;
    cfg.data_directory = dir.path() + "/data";
    cfg.listen_address = "127.0.0.7";
    cfg.rpc_address = "127.0.0.8";
    cfg.native_transport_port = 19999;
    cfg.storage_port = 17000;
    auto check = [](sharded<database>& db) -> future<> {
        auto& d = db.local();
        // system.local: every column but truncated_at.
        auto local = co_await rows_of(d, schema_tables::local(), "local");
        BOOST_REQUIRE_EQUAL(local.size(), 1u);
        auto& row = local[0];
        for (auto& c : schema_tables::local()->regular_columns()) {
            if (c.name == "truncated_at") {
                continue;
            }
            bool set = row.cells.contains(c.name) || row.collections.contains(c.name);
            BOOST_CHECK_MESSAGE(set, "system.local." << c.name << " is not set");
        }
        BOOST_REQUIRE_EQUAL(inet_type()->to_string(row.cells.at("rpc_address")), "127.0.0.8");
        BOOST_REQUIRE_EQUAL(inet_type()->to_string(row.cells.at("listen_address")), "127.0.0.7");
        BOOST_REQUIRE_EQUAL(inet_type()->to_string(row.cells.at("broadcast_address")), "127.0.0.7");
        BOOST_REQUIRE_EQUAL(int32_type()->to_string(row.cells.at("rpc_port")), "19999");
        BOOST_REQUIRE_EQUAL(int32_type()->to_string(row.cells.at("listen_port")), "17000");
        BOOST_REQUIRE_EQUAL(text_of(row.cells.at("partitioner")), "org.apache.cassandra.dht.Murmur3Partitioner");
        BOOST_REQUIRE_EQUAL(text_of(row.cells.at("native_protocol_version")), "4");
        BOOST_REQUIRE_EQUAL(row.collections.at("tokens").size(), 1u);
        BOOST_REQUIRE_GT(int32_type()->to_string(row.cells.at("gossip_generation")).size(), 8u);
        // The empty ones: present (on every shard), no rows.
        for (auto& s : {schema_tables::peers(), schema_tables::peers_v2(), schema_tables::functions(),
                        schema_tables::aggregates(), schema_tables::triggers(), schema_tables::views(),
                        schema_tables::indexes(), schema_tables::scylla_tables()}) {
            auto present = [s](database& one) { BOOST_REQUIRE(one.find_schema(s->keyspace(), s->table())); };
            co_await db.invoke_on_all(present);
            BOOST_REQUIRE_EQUAL(co_await live_row_count(d, s), 0u);
        }
        // system_schema describes system and system_schema, not the virtual keyspace.
        std::set<std::string> listed;
        for (auto ks : {"system", "system_schema", "system_virtual_schema"}) {
            auto rows = co_await rows_of(d, schema_tables::tables(), ks);
            for (auto& r : rows) {
                listed.insert(std::string(ks) + "." + text_of(r.key.at(0)));
            }
        }
        for (auto& s : schema_tables::all_tables()) {
            bool is_virtual = s->keyspace() == schema_tables::system_virtual_schema_keyspace;
            BOOST_CHECK_MESSAGE(listed.contains(s->keyspace() + "." + s->table()) != is_virtual,
                                s->keyspace() << "." << s->table() << " in system_schema.tables: " << !is_virtual);
        }
        auto virtual_ks = co_await rows_of(d, schema_tables::keyspaces(), "system_virtual_schema");
        BOOST_REQUIRE(virtual_ks.empty());
        auto system_ks = co_await rows_of(d, schema_tables::keyspaces(), "system");
        BOOST_REQUIRE_EQUAL(system_ks.size(), 1u);
        // system_virtual_schema: itself, its three tables and their columns.
        BOOST_REQUIRE_EQUAL(co_await live_row_count(d, schema_tables::virtual_keyspaces()), 1u);
        auto vtables = co_await rows_of(d, schema_tables::virtual_tables(), "system_virtual_schema");
        BOOST_REQUIRE_EQUAL(vtables.size(), 3u);
        BOOST_REQUIRE_EQUAL(text_of(vtables[0].key.at(0)), "columns");
        auto vcols = co_await rows_of(d, schema_tables::virtual_columns(), "system_virtual_schema");
        BOOST_REQUIRE_EQUAL(vcols.size(), 1u + 3u + 8u);
        for (auto& r : vcols) {
            if (text_of(r.key.at(1)) == "keyspace_name") {
                BOOST_REQUIRE_EQUAL(text_of(r.cells.at("kind")), "partition_key");
            }
        }
    };
    co_await with_database(cfg, check);
    // A restart reads none of it as user schema and writes it again.
    co_await with_database(cfg, check);
}
