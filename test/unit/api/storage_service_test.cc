// storage_service's data endpoints through the route table against a running database: ScyllaDB's shapes (void is
// an empty 200 body, strings JSON-quoted, snapshot listings), its 400 messages for unknown keyspaces and tables,
// and that each endpoint did its work (sstables flushed, compacted, snapshotted, listed, cleared, refreshed).
#include "api/api.hh"
#include "db/database.hh"
#include "db/memtable.hh"
#include "db/memtable_reader.hh"
#include "sstables/writer.hh"
#include "test/lib/mutation_model.hh"
#include "test/lib/reef_test.hh"
#include "test/lib/simple_keys.hh"
#include "test/lib/tmpdir.hh"
#include "utils/json_reader.hh"

#include <filesystem>
#include <fstream>

using namespace reef;
using namespace reef::api;
using namespace reef::testing;

namespace fs = std::filesystem;

namespace {

keyspace_definition simple_keyspace(std::string name) {
    return keyspace_definition{std::move(name), {{"class", "SimpleStrategy"}, {"replication_factor", "1"}}, true};
}

future<http_reply> call(const route_table& t, http_method m, std::string target) {
    http_request req;
    req.method = m;
    split_target(target, req.path, req.query);
    auto reply = co_await t.handle(req);
    co_return reply;
}

mutation int_row(const schema_ptr& s, int pk, int ck_value, int v) {
    mutation m(s, pkey(pk));
    deletable_row r;
    r.marker = row_marker{1};
    auto value = int_value(v);
    r.cells.apply(0, atomic_cell::make_live(1, std::string(value.begin(), value.end())));
    m.partition().apply_row(*s, ck(ck_value), r);
    return m;
}

size_t sstable_count(sharded<database>& db, const schema_ptr& s) {
    size_t n = 0;
    for (auto& dir : db.local().table_directories(*s)) {
        for (auto& e : fs::directory_iterator(dir)) {
            n += e.path().filename().string().ends_with("-TOC.txt");
        }
    }
    return n;
}

void require(const http_reply& r, int status, const std::string& body) {
    BOOST_REQUIRE_MESSAGE(r.status == status && r.body == body, "got " << r.status << " " << r.body << ", expected "
                                                                        << status << " " << body);
}

clustering_ranges full_slice() { return clustering_ranges{position_range::full()}; }

std::string error(const std::string& message) { return R"({"message":")" + message + R"(","code":400})"; }

} // namespace

REEF_TEST_CASE(storage_service_endpoints) {
    tmpdir dir;
    database_config cfg;
    cfg.data_directory = dir.path() + "/data";
    cfg.dirty_memory_hard_limit = 64 << 20;
    sharded<database> db;
    co_await db.start(&db, cfg);
    std::exception_ptr err;
    try {
        co_await db.local().start();
        int drains = 0;
        api_context ctx{db, steady_clock_type::now(), [&drains]() -> future<> {
                            ++drains;
                            co_return;
                        }};
        route_table t;
        register_api_routes(t, ctx);
        auto& d = db.local();
        co_await d.create_keyspace(simple_keyspace("ks"));
        auto s = co_await d.create_table(int_table_schema());
        for (int k = 0; k < 20; ++k) {
            co_await d.apply(int_row(s, k, 1, k));
        }

        // keyspaces
        auto r = co_await call(t, http_method::get, "/storage_service/keyspaces?type=user");
        require(r, 200, R"(["ks"])");
        r = co_await call(t, http_method::get, "/storage_service/keyspaces");
        BOOST_REQUIRE(r.body.find(R"("system")") != std::string::npos && r.body.find(R"("ks")") != std::string::npos);
        r = co_await call(t, http_method::get, "/storage_service/keyspaces?type=non_local_strategy");
        BOOST_REQUIRE(r.body.find(R"("system")") == std::string::npos && r.body.find(R"("ks")") != std::string::npos);
        r = co_await call(t, http_method::get, "/storage_service/keyspaces?type=bogus");
        BOOST_REQUIRE_EQUAL(r.status, 400);

        // flush
        r = co_await call(t, http_method::post, "/storage_service/keyspace_flush/nosuch");
        require(r, 400, error("Can't find a keyspace nosuch"));
        r = co_await call(t, http_method::post, "/storage_service/keyspace_flush/ks?cf=t,nosuch");
        require(r, 400, error("Can't find a column family nosuch in keyspace ks"));
        BOOST_REQUIRE_EQUAL(sstable_count(db, s), 0u);
        r = co_await call(t, http_method::post, "/storage_service/keyspace_flush/ks?cf=t");
        require(r, 200, "");
        auto after_one = sstable_count(db, s);
        BOOST_REQUIRE_GE(after_one, 1u);
        co_await d.apply(int_row(s, 100, 1, 1));
        r = co_await call(t, http_method::post, "/storage_service/flush");
        require(r, 200, "");
        BOOST_REQUIRE_GT(sstable_count(db, s), after_one);

        // major compaction: one sstable per shard that holds data
        r = co_await call(t, http_method::post, "/storage_service/keyspace_compaction/ks?cf=t&flush_memtables=maybe");
        BOOST_REQUIRE_EQUAL(r.status, 400);
        r = co_await call(t, http_method::post, "/storage_service/keyspace_compaction/ks?cf=t");
        require(r, 200, "");
        BOOST_REQUIRE_LE(sstable_count(db, s), size_t(smp::count()));
        co_await d.apply(int_row(s, 101, 1, 1));
        r = co_await call(t, http_method::post, "/storage_service/compact?flush_memtables=true");
        require(r, 200, "");
        BOOST_REQUIRE_LE(sstable_count(db, s), size_t(smp::count()));

        // snapshots
        r = co_await call(t, http_method::post, "/storage_service/snapshots?tag=one&kn=ks&cf=t&sf=false");
        require(r, 200, "");
        r = co_await call(t, http_method::post, "/storage_service/snapshots?tag=one&kn=ks");
        BOOST_REQUIRE_EQUAL(r.status, 400);
        r = co_await call(t, http_method::post, "/storage_service/snapshots?tag=two&kn=nosuch");
        require(r, 400, error("Can't find a keyspace nosuch"));
        r = co_await call(t, http_method::post, "/storage_service/snapshots?tag=two&kn=ks&cf=nosuch");
        require(r, 400, error("Can't find a column family nosuch in keyspace ks"));
        r = co_await call(t, http_method::post, "/storage_service/snapshots?tag=two");
        require(r, 200, "");
        r = co_await call(t, http_method::get, "/storage_service/snapshots");
        BOOST_REQUIRE_EQUAL(r.status, 200);
        auto doc = utils::parse_json(r.body);
        BOOST_REQUIRE_EQUAL(doc.items.size(), 2u);
        BOOST_REQUIRE_EQUAL(doc.items[0].get("key")->text, "one");
        auto& first = doc.items[0].get("value")->items.at(0);
        BOOST_REQUIRE_EQUAL(first.get("ks")->text, "ks");
        BOOST_REQUIRE_EQUAL(first.get("cf")->text, "t");
        BOOST_REQUIRE_GT(std::stoull(first.get("total")->text), std::stoull(first.get("live")->text));
        // Compaction leaves the snapshots the only holders of their sstables: the true size grows.
        r = co_await call(t, http_method::get, "/storage_service/snapshots/size/true");
        auto before = std::stoull(r.body);
        co_await d.apply(int_row(s, 102, 1, 1));
        r = co_await call(t, http_method::post, "/storage_service/keyspace_compaction/ks");
        require(r, 200, "");
        r = co_await call(t, http_method::get, "/storage_service/snapshots/size/true");
        BOOST_REQUIRE_GT(std::stoull(r.body), before);
        r = co_await call(t, http_method::del, "/storage_service/snapshots?tag=one&kn=ks");
        require(r, 200, "");
        r = co_await call(t, http_method::get, "/storage_service/snapshots");
        doc = utils::parse_json(r.body);
        BOOST_REQUIRE_EQUAL(doc.items.size(), 1u);
        BOOST_REQUIRE_EQUAL(doc.items[0].get("key")->text, "two");
        r = co_await call(t, http_method::del, "/storage_service/snapshots");
        require(r, 200, "");
        r = co_await call(t, http_method::get, "/storage_service/snapshots");
        require(r, 200, "[]");

        // refresh: an sstable written into upload/ (another "host"'s generation 1) is read afterwards
        auto upload = d.table_directory(*s) + "/upload";
        fs::create_directories(upload);
        auto mt = std::make_shared<memtable>(s);
        mt->apply(int_row(s, 5000, 7, 77));
        auto reader = make_memtable_reader(mt, s, read_options{});
        sstables::descriptor desc{upload, sstables::sstable_version::me, "1", "big"};
        co_await sstables::write_sstable(reader, s, desc, sstables::writer_options_for(*s));
        co_await reader.close();
        r = co_await call(t, http_method::post, "/storage_service/sstables/ks");
        BOOST_REQUIRE_EQUAL(r.status, 400);  // cf is required
        r = co_await call(t, http_method::post, "/storage_service/sstables/ks?cf=nosuch");
        require(r, 400, error("Can't find a column family nosuch in keyspace ks"));
        r = co_await call(t, http_method::post, "/storage_service/sstables/ks?cf=t&load_and_stream=true");
        require(r, 200, "");
        BOOST_REQUIRE(fs::is_empty(upload));
        auto slice = full_slice();
        auto got = co_await d.query(s, dht::partition_range::singular(pkey(5000)), slice);
        BOOST_REQUIRE_EQUAL(got.size(), 1u);
        BOOST_REQUIRE(got[0].partition().rows().size() == 1);
        // A bad one: its file is named.
        {
            std::ofstream junk(upload + "/me-9-big-TOC.txt");
            junk << "Data.db\nStatistics.db\n";
        }
        r = co_await call(t, http_method::post, "/storage_service/sstables/ks?cf=t");
        BOOST_REQUIRE_EQUAL(r.status, 400);
        BOOST_REQUIRE_MESSAGE(r.body.find("me-9-big-Data.db") != std::string::npos, r.body);

        // scalars
        r = co_await call(t, http_method::get, "/storage_service/release_version");
        require(r, 200, R"("5.0.9")");
        r = co_await call(t, http_method::get, "/storage_service/compaction_throughput");
        require(r, 200, "0");
        r = co_await call(t, http_method::get, "/storage_service/logging_level");
        BOOST_REQUIRE_MESSAGE(r.body.find(R"({"key":"database","value":"info"})") != std::string::npos, r.body);

        // drain: the node's chain is called; the progress says so
        r = co_await call(t, http_method::get, "/storage_service/drain");
        BOOST_REQUIRE_MESSAGE(r.body.starts_with(R"("Drained 0/)") && r.body.ends_with(R"( ColumnFamilies")"), r.body);
        r = co_await call(t, http_method::post, "/storage_service/drain");
        require(r, 200, "");
        BOOST_REQUIRE_EQUAL(drains, 1);
        r = co_await call(t, http_method::get, "/storage_service/drain");
        auto total = r.body.substr(r.body.find('/') + 1);  // "N ColumnFamilies\""
        BOOST_REQUIRE_EQUAL(r.body, R"("Drained )" + total.substr(0, total.find(' ')) + "/" + total);
        BOOST_REQUIRE_NE(total.substr(0, total.find(' ')), "0");
    } catch (...) {
        err = std::current_exception();
    }
    co_await db.stop();
    if (err) {
        std::rethrow_exception(err);
    }
}
