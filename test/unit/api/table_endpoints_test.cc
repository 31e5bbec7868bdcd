// The column_family, cache_service, node (storage_service, gossiper, snitch) and drop_sstable_caches endpoints,
// called through the route table over a real sharded database: each value checked against what the test wrote,
// read or found on disk; bad names and parameters are 400s.
#include "api/api.hh"
#include "api/route_table.hh"
#include "db/database.hh"
#include "db/schema_tables.hh"
#include "runtime/smp.hh"
#include "test/lib/database_test_support.hh"
#include "test/lib/reef_test.hh"
#include "test/lib/simple_keys.hh"
#include "test/lib/tmpdir.hh"
#include "utils/json_reader.hh"
#include "utils/uuid.hh"

#include <boost/test/unit_test.hpp>

#include <chrono>
#include <filesystem>
#include <set>

using namespace reef;
using namespace reef::api;
using namespace reef::testing;

namespace {

keyspace_definition simple_keyspace(std::string name) {
    return keyspace_definition{std::move(name), {{"class", "SimpleStrategy"}, {"replication_factor", "1"}}, true};
}

mutation int_row(const schema_ptr& s, int k, int v) {
    mutation m(s, pkey(k));
    deletable_row r;
    r.marker = row_marker{1};
    auto b = int_value(v);
    r.cells.apply(0, atomic_cell::make_live(1, std::string(b.begin(), b.end())));
    m.partition().apply_row(*s, ck(0), r);
    return m;
}

// A started database with the API's routes over it; stopped whatever the body does.
template <typename Body>
future<> with_api(const tmpdir& dir, Body body) {
    database_config cfg;
    cfg.data_directory = dir.path() + "/data";
    sharded<database> db;
    co_await db.start(&db, cfg);
    std::exception_ptr err;
    try {
        co_await db.local().start();
        api_context ctx{db, steady_clock_type::now(), {}};
        ctx.reef_version = "9.8.7";
        bool cql_up = true;
        ctx.native_transport_running = [&cql_up] { return cql_up; };
        route_table t;
        register_api_routes(t, ctx);
        co_await body(db, t, cql_up);
    } catch (...) {
        err = std::current_exception();
    }
    co_await db.stop();
    if (err) {
        std::rethrow_exception(err);
    }
}

struct answer {
    int status;
    std::string body;
    utils::json_value json;
};

future<answer> call(const route_table& t, http_method m, std::string target) {
    http_request req;
    req.method = m;
    split_target(target, req.path, req.query);
    auto reply = co_await t.handle(req);
    answer a{reply.status, reply.body, {}};
    if (!reply.body.empty()) {
        a.json = utils::parse_json(reply.body);
    }
    co_return a;
}

future<answer> get_ok(const route_table& t, std::string target) {
    auto a = co_await call(t, http_method::get, target);
    BOOST_REQUIRE_MESSAGE(a.status == 200, target + " answered " + std::to_string(a.status) + " " + a.body);
    co_return a;
}

future<int64_t> get_long(const route_table& t, std::string target) {
    auto a = co_await get_ok(t, target);
    BOOST_REQUIRE_MESSAGE(a.json.is_number(), target + ": " + a.body);
    co_return std::stoll(a.json.text);
}

// Bytes of the regular files directly in dir (an sstable's components).
uint64_t bytes_in(const std::string& dir) {
    uint64_t n = 0;
    for (auto& e : std::filesystem::directory_iterator(dir)) {
        if (e.is_regular_file()) {
            n += e.file_size();
        }
    }
    return n;
}

std::set<shard_id> owner_shards(int keys) {
    std::set<shard_id> out;
    for (int k = 0; k < keys; ++k) {
        out.insert(dht::shard_of(pkey(k).get_token(), smp::count()));
    }
    return out;
}

} // namespace

REEF_TEST_CASE(column_family_names_and_metrics_match_what_was_written_and_read) {
    tmpdir dir;
    co_await with_api(dir, [](sharded<database>& db, route_table& t, bool&) -> future<> {
        co_await db.local().create_keyspace(simple_keyspace("ks"));
        auto s = co_await db.local().create_table(int_table_schema());

        auto names = co_await get_ok(t, "/column_family/name");
        std::set<std::string> name_set;
        for (auto& v : names.json.items) {
            name_set.insert(v.text);
        }
        BOOST_REQUIRE(name_set.count("ks:t"));
        BOOST_REQUIRE(name_set.count("system.local") == 0 && name_set.count("system:local"));
        auto list = co_await get_ok(t, "/column_family/");
        BOOST_REQUIRE_EQUAL(list.json.items.size(), names.json.items.size());
        bool found = false;
        for (auto& e : list.json.items) {
            found |= e.get("ks")->text == "ks" && e.get("cf")->text == "t" && e.get("type")->text == "ColumnFamilies";
        }
        BOOST_REQUIRE(found);

        // Writes from both shards: each counted once, on its owner shard.
        const int n = 40;
        for (int k = 0; k < n; ++k) {
            co_await apply_from(db, shard_id(k % smp::count()), int_row(s, k, k));
        }
        BOOST_CHECK_EQUAL(co_await get_long(t, "/column_family/metrics/write/ks:t"), n);
        BOOST_CHECK_EQUAL(co_await get_long(t, "/column_family/metrics/memtable_columns_count/ks:t"), n);
        BOOST_CHECK_GT(co_await get_long(t, "/column_family/metrics/memtable_off_heap_size/ks:t"), 0);
        BOOST_CHECK_EQUAL(co_await get_long(t, "/column_family/metrics/live_ss_table_count/ks:t"), 0);
        BOOST_CHECK_EQUAL(co_await get_long(t, "/column_family/metrics/read/ks:t"), 0);

        // Reads: a single partition reads its owner shard, a range every shard.
        clustering_ranges slice{position_range::full()};
        for (int k = 0; k < 5; ++k) {
            auto range = dht::partition_range::singular(pkey(k));
            auto got = co_await db.local().query(s, range, slice);
            BOOST_REQUIRE_EQUAL(got.size(), 1u);
        }
        auto full = dht::partition_range::full();
        auto all = co_await db.local().query(s, full, slice);
        BOOST_REQUIRE_EQUAL(all.size(), size_t(n));
        int64_t reads = 5 + int64_t(smp::count());
        BOOST_CHECK_EQUAL(co_await get_long(t, "/column_family/metrics/read/ks:t"), reads);
        auto hist = co_await get_ok(t, "/column_family/metrics/read_latency/moving_average_histogram/ks:t");
        BOOST_CHECK_EQUAL(hist.json.get("meter")->get("count")->text, std::to_string(reads));
        BOOST_CHECK_EQUAL(hist.json.get("meter")->get("rates")->items.size(), 3u);
        BOOST_CHECK_EQUAL(hist.json.get("hist")->get("count")->text, std::to_string(reads));
        BOOST_CHECK(hist.json.get("hist")->get("sample")->is_array());
        auto total_us = co_await get_long(t, "/column_family/metrics/read_latency/ks:t");
        BOOST_CHECK_GE(total_us, std::stoll(hist.json.get("hist")->get("max")->text));
        auto whist = co_await get_ok(t, "/column_family/metrics/write_latency/moving_average_histogram/ks:t");
        BOOST_CHECK_EQUAL(whist.json.get("hist")->get("count")->text, std::to_string(n));

        // Flushed: one sstable per shard that owns keys; the files on disk are what the metric says.
        co_await db.local().flush("ks", "t");
        auto shards = owner_shards(n);
        BOOST_CHECK_EQUAL(co_await get_long(t, "/column_family/metrics/live_ss_table_count/ks:t"), int64_t(shards.size()));
        BOOST_CHECK_EQUAL(co_await get_long(t, "/column_family/metrics/memtable_switch_count/ks:t"), int64_t(shards.size()));
        BOOST_CHECK_EQUAL(co_await get_long(t, "/column_family/metrics/pending_flushes/ks:t"), 0);
        BOOST_CHECK_EQUAL(co_await get_long(t, "/column_family/metrics/memtable_columns_count/ks:t"), 0);
        BOOST_CHECK_EQUAL(co_await get_long(t, "/column_family/metrics/estimated_row_count/ks:t"), n);
        auto table_dir = db.local().table_directory(*s);
        auto on_disk = int64_t(bytes_in(table_dir));
        BOOST_CHECK_EQUAL(co_await get_long(t, "/column_family/metrics/live_disk_space_used/ks:t"), on_disk);
        BOOST_CHECK_EQUAL(co_await get_long(t, "/column_family/metrics/total_disk_space_used/ks:t"), on_disk);
        int64_t filters = 0;
        for (auto& e : std::filesystem::directory_iterator(table_dir)) {
            if (e.path().string().ends_with("-Filter.db")) {
                filters += int64_t(e.file_size());
            }
        }
        BOOST_CHECK_EQUAL(co_await get_long(t, "/column_family/metrics/bloom_filter_disk_space_used/ks:t"), filters);
        BOOST_CHECK_GT(co_await get_long(t, "/column_family/metrics/bloom_filter_off_heap_memory_used/ks:t"), 0);
        BOOST_CHECK_GT(co_await get_long(t, "/column_family/metrics/index_summary_off_heap_memory_used/ks:t"), 0);
        auto min = co_await get_long(t, "/column_family/metrics/min_row_size/ks:t");
        auto mean = co_await get_long(t, "/column_family/metrics/mean_row_size/ks:t");
        auto max = co_await get_long(t, "/column_family/metrics/max_row_size/ks:t");
        BOOST_CHECK(0 < min && min <= mean && mean <= max);
        BOOST_CHECK_EQUAL(co_await get_long(t, "/column_family/metrics/snapshots_size/ks:t"), 0);
        auto keyspaces = std::vector<std::string>(1, "ks");
        co_await db.local().snapshot("tag", keyspaces);
        auto snap = co_await get_long(t, "/column_family/metrics/snapshots_size/ks:t");
        BOOST_CHECK_EQUAL(snap, int64_t(bytes_in(table_dir + "/snapshots/tag")));

        // The all-tables form sums the tables; the node's load is their disk space.
        BOOST_CHECK_GE(co_await get_long(t, "/column_family/metrics/live_ss_table_count"), int64_t(shards.size()));
        auto all_disk = co_await get_long(t, "/column_family/metrics/live_disk_space_used");
        BOOST_CHECK_GE(all_disk, on_disk);
        auto load = co_await get_ok(t, "/storage_service/load");
        BOOST_CHECK_EQUAL(std::stod(load.json.text), double(all_disk));

        auto per_level = co_await get_ok(t, "/column_family/sstables/per_level/ks:t");
        BOOST_CHECK(per_level.json.is_array() && per_level.json.items.empty());
        auto scanned = co_await get_ok(t, "/column_family/metrics/live_scanned_histogram/ks:t");
        BOOST_CHECK_EQUAL(scanned.json.get("count")->text, "0");

        // Bad names: 400 with the name in the message.
        auto bad = co_await call(t, http_method::get, "/column_family/metrics/read/nocolon");
        BOOST_CHECK_EQUAL(bad.status, 400);
        BOOST_CHECK_NE(bad.body.find("nocolon"), std::string::npos);
        bad = co_await call(t, http_method::get, "/column_family/metrics/read/ks:nope");
        BOOST_CHECK_EQUAL(bad.status, 400);
        BOOST_CHECK_NE(bad.body.find("nope"), std::string::npos);
        bad = co_await call(t, http_method::get, "/column_family/sstables/per_level/ks:nope");
        BOOST_CHECK_EQUAL(bad.status, 400);
    });
}

REEF_TEST_CASE(row_cache_metrics_count_hits_and_drop_sstable_caches_empties_them) {
    tmpdir dir;
    co_await with_api(dir, [](sharded<database>& db, route_table& t, bool&) -> future<> {
        co_await db.local().create_keyspace(simple_keyspace("ks"));
        auto s = co_await db.local().create_table(int_table_schema());
        const int n = 20;
        for (int k = 0; k < n; ++k) {
            co_await db.local().apply(int_row(s, k, k));
        }
        co_await db.local().flush("ks", "t");
        auto dropped = co_await call(t, http_method::post, "/system/drop_sstable_caches");
        BOOST_REQUIRE_EQUAL(dropped.status, 200);
        BOOST_CHECK_EQUAL(dropped.body, "");
        BOOST_CHECK_EQUAL(co_await get_long(t, "/cache_service/metrics/row/entries"), 0);
        auto hits0 = co_await get_long(t, "/cache_service/metrics/row/hits");
        auto requests0 = co_await get_long(t, "/cache_service/metrics/row/requests");

        // The first read of each key misses and populates; the second hits.
        clustering_ranges slice{position_range::full()};
        for (int pass = 0; pass < 2; ++pass) {
            for (int k = 0; k < n; ++k) {
                auto range = dht::partition_range::singular(pkey(k));
                auto got = co_await db.local().query(s, range, slice);
                BOOST_REQUIRE_EQUAL(got.size(), 1u);
            }
        }
        BOOST_CHECK_EQUAL(co_await get_long(t, "/cache_service/metrics/row/entries"), n);
        BOOST_CHECK_EQUAL(co_await get_long(t, "/cache_service/metrics/row/hits") - hits0, n);
        BOOST_CHECK_EQUAL(co_await get_long(t, "/cache_service/metrics/row/requests") - requests0, 2 * n);
        BOOST_CHECK_GT(co_await get_long(t, "/cache_service/metrics/row/size"), 0);
        BOOST_CHECK_GT(co_await get_long(t, "/cache_service/metrics/row/capacity"), 0);
        auto rate = co_await get_ok(t, "/cache_service/metrics/row/hit_rate");
        auto hits = co_await get_long(t, "/cache_service/metrics/row/hits");
        auto requests = co_await get_long(t, "/cache_service/metrics/row/requests");
        BOOST_CHECK_CLOSE(std::stod(rate.json.text), double(hits) / double(requests), 1e-9);
        auto avg = co_await get_ok(t, "/cache_service/metrics/row/hits_moving_avrage");
        BOOST_CHECK_EQUAL(avg.json.get("count")->text, std::to_string(hits));
        BOOST_CHECK_EQUAL(avg.json.get("rates")->items.size(), 3u);
        avg = co_await get_ok(t, "/cache_service/metrics/row/requests_moving_avrage");
        BOOST_CHECK_EQUAL(avg.json.get("count")->text, std::to_string(requests));

        // No key or counter cache: zeros, as ScyllaDB answers.
        BOOST_CHECK_EQUAL(co_await get_long(t, "/cache_service/metrics/key/entries"), 0);
        BOOST_CHECK_EQUAL(co_await get_long(t, "/cache_service/metrics/counter/hits"), 0);
        BOOST_CHECK_EQUAL(co_await get_long(t, "/cache_service/row_cache_save_period"), 0);
        avg = co_await get_ok(t, "/cache_service/metrics/key/requests_moving_avrage");
        BOOST_CHECK_EQUAL(avg.json.get("count")->text, "0");

        dropped = co_await call(t, http_method::post, "/system/drop_sstable_caches");
        BOOST_REQUIRE_EQUAL(dropped.status, 200);
        BOOST_CHECK_EQUAL(co_await get_long(t, "/cache_service/metrics/row/entries"), 0);
        // The index pages went too: every shard's tracker holds nothing now.
        auto held = co_await db.map_reduce0([](database&) { return cache::shard_cache_tracker().lru().memory_used(); },
                                            size_t(0), std::plus<size_t>());
        BOOST_CHECK_EQUAL(held, 0u);
        BOOST_CHECK_EQUAL(co_await get_long(t, "/cache_service/metrics/row/size"), 0);
    });
}

REEF_TEST_CASE(node_endpoints_describe_one_node_owning_the_ring) {
    tmpdir dir;
    co_await with_api(dir, [](sharded<database>& db, route_table& t, bool& cql_up) -> future<> {
        auto range = dht::partition_range::full();
        clustering_ranges slice{position_range::full()};
        auto local = co_await db.local().query(schema_tables::local(), range, slice);
        auto identity = schema_tables::read_local_identity(local);
        BOOST_REQUIRE(identity);
        BOOST_REQUIRE_EQUAL(identity->tokens.size(), 1u);
        auto token = identity->tokens[0];
        auto host_id = utils::to_string(db.local().host_id());

        BOOST_CHECK_EQUAL((co_await get_ok(t, "/storage_service/hostid/local")).body, "\"" + host_id + "\"");
        BOOST_CHECK_EQUAL((co_await get_ok(t, "/storage_service/host_id")).body,
                          "[{\"key\":\"127.0.0.1\",\"value\":\"" + host_id + "\"}]");
        BOOST_CHECK_EQUAL((co_await get_ok(t, "/storage_service/tokens")).body, "[\"" + token + "\"]");
        BOOST_CHECK_EQUAL((co_await get_ok(t, "/storage_service/tokens/127.0.0.1")).body, "[\"" + token + "\"]");
        BOOST_CHECK_EQUAL((co_await get_ok(t, "/storage_service/tokens/10.0.0.9")).body, "[]");
        BOOST_CHECK_EQUAL((co_await get_ok(t, "/storage_service/tokens_endpoint")).body,
                          "[{\"key\":\"" + token + "\",\"value\":\"127.0.0.1\"}]");
        BOOST_CHECK_EQUAL((co_await get_ok(t, "/storage_service/gossiping")).body, "false");
        BOOST_CHECK_EQUAL((co_await get_ok(t, "/storage_service/join_ring")).body, "true");
        BOOST_CHECK_EQUAL((co_await get_ok(t, "/storage_service/native_transport")).body, "true");
        cql_up = false;
        BOOST_CHECK_EQUAL((co_await get_ok(t, "/storage_service/native_transport")).body, "false");
        BOOST_CHECK_EQUAL((co_await get_ok(t, "/storage_service/nodes/joining")).body, "[]");
        BOOST_CHECK_EQUAL((co_await get_ok(t, "/storage_service/cluster_name")).body, "\"Test Cluster\"");
        BOOST_CHECK_EQUAL((co_await get_ok(t, "/storage_service/scylla_release_version")).body, "\"9.8.7\"");
        auto now = std::chrono::duration_cast<std::chrono::seconds>(
                       std::chrono::system_clock::now().time_since_epoch()).count();
        auto generation = co_await get_long(t, "/storage_service/generation_number");
        BOOST_CHECK(generation <= now && generation > now - 600);

        // The schema version is system.local's, and a schema change makes a new one.
        auto v1 = (co_await get_ok(t, "/storage_service/schema_version")).json.text;
        BOOST_CHECK_EQUAL(v1.size(), 36u);
        co_await db.local().create_keyspace(simple_keyspace("ks"));
        co_await db.local().create_table(int_table_schema());
        auto v2 = (co_await get_ok(t, "/storage_service/schema_version")).json.text;
        BOOST_CHECK_NE(v1, v2);
        BOOST_CHECK_EQUAL((co_await get_ok(t, "/storage_proxy/schema_versions")).body,
                          "[{\"key\":\"" + v2 + "\",\"value\":[\"127.0.0.1\"]}]");
        BOOST_CHECK_EQUAL((co_await get_ok(t, "/storage_service/partitioner_name")).body,
                          "\"org.apache.cassandra.dht.Murmur3Partitioner\"");

        BOOST_CHECK_EQUAL((co_await get_ok(t, "/storage_service/ownership/ks")).body,
                          "[{\"key\":\"127.0.0.1\",\"value\":\"1\"}]");
        BOOST_CHECK_EQUAL((co_await call(t, http_method::get, "/storage_service/ownership/nope")).status, 400);
        auto ring = co_await get_ok(t, "/storage_service/describe_ring/ks?table=t");
        BOOST_REQUIRE_EQUAL(ring.json.items.size(), 1u);
        BOOST_CHECK_EQUAL(ring.json.items[0].get("start_token")->text, token);
        BOOST_CHECK_EQUAL(ring.json.items[0].get("end_token")->text, token);
        BOOST_CHECK_EQUAL(ring.json.items[0].get("endpoints")->items.at(0).text, "127.0.0.1");
        BOOST_CHECK_EQUAL(ring.json.items[0].get("endpoint_details")->items.at(0).get("datacenter")->text,
                          "datacenter1");
        BOOST_CHECK_EQUAL((co_await call(t, http_method::get, "/storage_service/describe_ring/ks?table=x")).status, 400);
        BOOST_CHECK_EQUAL((co_await get_ok(t, "/storage_service/natural_endpoints/ks?cf=t&key=1")).body,
                          "[\"127.0.0.1\"]");
        BOOST_CHECK_EQUAL((co_await call(t, http_method::get, "/storage_service/natural_endpoints/ks?cf=t")).status, 400);

        BOOST_CHECK_EQUAL((co_await get_ok(t, "/gossiper/endpoint/live/")).body, "[\"127.0.0.1\"]");
        BOOST_CHECK_EQUAL((co_await get_ok(t, "/gossiper/endpoint/down")).body, "[]");
        BOOST_CHECK_EQUAL((co_await get_ok(t, "/snitch/datacenter")).body, "\"datacenter1\"");
        BOOST_CHECK_EQUAL((co_await get_ok(t, "/snitch/rack?host=127.0.0.1")).body, "\"rack1\"");
        BOOST_CHECK_EQUAL((co_await call(t, http_method::get, "/snitch/rack?host=10.1.1.1")).status, 400);
    });
}
