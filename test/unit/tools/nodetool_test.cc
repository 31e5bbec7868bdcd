// reef nodetool's commands against a scripted REST API: the calls each makes and the text it prints from fixed JSON
// answers. The expected texts are Cassandra 5.0.9's: tablestats', status', snapshot's and clearsnapshot's as its own
// classes printed the same values (nodetool_golden/*.jsh, run from cassandra-all-5.0.9.jar), the others written from
// its format strings (Info "%-23s: %s%n", GetLoggingLevels "%-50s%10s%n", ...); the Java number formats are checked
// against values the JDK printed (nodetool_golden/numbers.jsh).
#include "tools/nodetool_command.hh"
#include "tools/nodetool_format.hh"

#include "test/lib/reef_test.hh"

#include <cmath>
#include <fmt/format.h>
#include <map>
#include <sstream>

using namespace reef;
using namespace reef::tools::nodetool;

namespace {

// Answers from a table of "METHOD /path?k=v&..." -> JSON text ("" for a void answer); records every call.
class fake_api final : public rest_api {
public:
    std::map<std::string, std::string> replies;
    std::map<std::string, std::string> failures;  // -> the error message
    std::vector<std::string> calls;

    future<utils::json_value> call(api::http_method m, std::string path, query_params q) override {
        std::string key = std::string(api::to_string(m)) + " " + path;
        char sep = '?';
        for (auto& [k, v] : q) {
            key += sep + k + "=" + v;
            sep = '&';
        }
        calls.push_back(key);
        if (auto f = failures.find(key); f != failures.end()) {
            throw api_error(f->second);
        }
        auto it = replies.find(key);
        if (it == replies.end()) {
            throw std::runtime_error("no fixture for " + key);
        }
        if (it->second.empty()) {
            co_return utils::json_value();
        }
        co_return utils::parse_json(it->second);
    }
};

std::vector<std::string> words(const std::string& line) {
    std::istringstream in(line);
    std::vector<std::string> out;
    for (std::string w; in >> w;) {
        out.push_back(w);
    }
    return out;
}

future<std::string> run(fake_api& api, std::string line) {
    auto w = words(line);
    std::string out;
    co_await run_command(api, w, out);
    co_return out;
}

// The error run() ends with ("" when none).
future<std::string> failure(fake_api& api, std::string line) {
    std::string what;
    try {
        co_await run(api, line);
    } catch (const usage_error& e) {
        what = std::string("usage: ") + e.what();
    } catch (const api_error& e) {
        what = std::string("api: ") + e.what();
    }
    co_return what;
}

void add_metrics(fake_api& api, const std::string& table, const std::vector<std::pair<std::string, std::string>>& m) {
    for (auto& [name, value] : m) {
        api.replies["GET /column_family/metrics/" + name + "/" + table] = value;
    }
}

std::string histogram(int count, double mean, int max) {
    return fmt::format("{{\"count\":{},\"sum\":0,\"min\":0,\"max\":{},\"variance\":0.0,\"mean\":{},\"sample\":[]}}", count,
                       max, mean);
}

std::string latency(int count, double mean) {
    return fmt::format("{{\"meter\":{{\"rates\":[0,0,0],\"mean_rate\":0.0,\"count\":{}}},\"hist\":{}}}", count,
                       histogram(count, mean, 0));
}

} // namespace

BOOST_AUTO_TEST_CASE(java_number_formats) {
    // Printed by the JDK 17: String.format("%.<p>f"), for p = 0, 1, 2, 3, 5.
    struct row {
        double v;
        const char* texts[5];
    };
    const row rows[] = {
        {0.25, {"0", "0.3", "0.25", "0.250", "0.25000"}},
        {0.0355, {"0", "0.0", "0.04", "0.036", "0.03550"}},
        {0.125, {"0", "0.1", "0.13", "0.125", "0.12500"}},
        {1.005, {"1", "1.0", "1.01", "1.005", "1.00500"}},
        {2.675, {"3", "2.7", "2.68", "2.675", "2.67500"}},
        {0.0005, {"0", "0.0", "0.00", "0.001", "0.00050"}},
        {123456.789, {"123457", "123456.8", "123456.79", "123456.789", "123456.78900"}},
        {1e-7, {"0", "0.0", "0.00", "0.000", "0.00000"}},
        {9.9995, {"10", "10.0", "10.00", "10.000", "9.99950"}},
        {99.995, {"100", "100.0", "100.00", "99.995", "99.99500"}},
        {-0.5, {"-1", "-0.5", "-0.50", "-0.500", "-0.50000"}},
        {-1.25, {"-1", "-1.3", "-1.25", "-1.250", "-1.25000"}},
        {1e20, {"100000000000000000000", "100000000000000000000.0", "100000000000000000000.00",
                "100000000000000000000.000", "100000000000000000000.00000"}},
        {0.1 + 0.2, {"0", "0.3", "0.30", "0.300", "0.30000"}},
        {2.0 / 3, {"1", "0.7", "0.67", "0.667", "0.66667"}},
        {5e-5, {"0", "0.0", "0.00", "0.000", "0.00005"}},
        {0.00105, {"0", "0.0", "0.00", "0.001", "0.00105"}},
    };
    const int precisions[] = {0, 1, 2, 3, 5};
    for (auto& r : rows) {
        for (int i = 0; i < 5; ++i) {
            BOOST_CHECK_MESSAGE(java_fixed(r.v, precisions[i]) == r.texts[i],
                                r.v << " %." << precisions[i] << "f: " << java_fixed(r.v, precisions[i]));
        }
    }
    BOOST_CHECK_EQUAL(java_fixed(std::nan(""), 3), "NaN");
    // FileUtils.stringifyFileSize, as Cassandra 5.0.9 printed them.
    const std::pair<double, const char*> sizes[] = {
        {0, "0 bytes"}, {1, "1 bytes"}, {1023, "1023 bytes"}, {1024, "1 KiB"}, {1025, "1 KiB"},
        {1536.125, "1.5 KiB"}, {1048575, "1024 KiB"}, {1048576, "1 MiB"}, {1500000, "1.43 MiB"},
        {1.5e9, "1.4 GiB"}, {2.5e12, "2.27 TiB"}, {1126.4, "1.1 KiB"}, {1131.52, "1.1 KiB"}, {10485.76, "10.24 KiB"}};
    for (auto& [v, text] : sizes) {
        BOOST_CHECK_EQUAL(file_size(v), text);
    }
    // FBUtilities.prettyPrintMemory.
    const std::pair<int64_t, const char*> memory[] = {{0, "0B"},           {1023, "1023B"},
                                                      {1024, "1.000KiB"},  {1536, "1.500KiB"},
                                                      {1536000, "1.465MiB"}, {int64_t(1) << 30, "1.000GiB"},
                                                      {int64_t(5) << 40, "5.000TiB"}};
    for (auto& [v, text] : memory) {
        BOOST_CHECK_EQUAL(pretty_memory(v), text);
    }
    // TableBuilder: every column padded, the last one too.
    text_table t;
    t.add({"a", "bb", "c"});
    t.add({"aaa", "b", "cc"});
    BOOST_CHECK_EQUAL(t.str(), "a   bb c \naaa b  cc\n");
}

namespace {

fake_api tablestats_fixture() {
    fake_api api;
    api.replies["GET /column_family/"] = R"([{"ks":"ks1","cf":"t1","type":"ColumnFamilies"},
                                             {"ks":"ks1","cf":"t2","type":"ColumnFamilies"},
                                             {"ks":"ks2","cf":"t3","type":"ColumnFamilies"}])";
    add_metrics(api, "ks1:t1",
                {{"live_ss_table_count", "3"}, {"live_disk_space_used", "1536000"}, {"total_disk_space_used", "1600000"},
                 {"snapshots_size", "0"}, {"memtable_off_heap_size", "65536"},
                 {"bloom_filter_off_heap_memory_used", "120"}, {"index_summary_off_heap_memory_used", "48"},
                 {"compression_metadata_off_heap_memory_used", "16"}, {"compression_ratio", "0.4213"},
                 {"estimated_row_count", "1000"}, {"memtable_columns_count", "250"},
                 {"memtable_live_data_size", "10240"}, {"memtable_switch_count", "4"}, {"read_latency", "12500"},
                 {"write_latency", "17750"}, {"pending_flushes", "0"}, {"bloom_filter_false_positives", "2"},
                 {"recent_bloom_filter_false_ratio", "0.001"}, {"bloom_filter_disk_space_used", "2048"},
                 {"min_row_size", "30"}, {"max_row_size", "2299"}, {"mean_row_size", "150"},
                 {"live_scanned_histogram", histogram(4, 2.5, 10)}, {"tombstone_scanned_histogram", histogram(4, 0, 0)},
                 {"read_latency/moving_average_histogram", latency(10, 1250)},
                 {"write_latency/moving_average_histogram", latency(500, 35.5)}});
    add_metrics(api, "ks1:t2",
                {{"live_ss_table_count", "0"}, {"live_disk_space_used", "0"}, {"total_disk_space_used", "0"},
                 {"snapshots_size", "0"}, {"memtable_off_heap_size", "0"}, {"bloom_filter_off_heap_memory_used", "0"},
                 {"index_summary_off_heap_memory_used", "0"}, {"compression_metadata_off_heap_memory_used", "0"},
                 {"compression_ratio", "-1.0"}, {"estimated_row_count", "0"}, {"memtable_columns_count", "0"},
                 {"memtable_live_data_size", "0"}, {"memtable_switch_count", "0"}, {"read_latency", "0"},
                 {"write_latency", "0"}, {"pending_flushes", "0"}, {"bloom_filter_false_positives", "0"},
                 {"recent_bloom_filter_false_ratio", "0.0"}, {"bloom_filter_disk_space_used", "0"},
                 {"min_row_size", "0"}, {"max_row_size", "0"}, {"mean_row_size", "0"},
                 {"live_scanned_histogram", histogram(0, 0, 0)}, {"tombstone_scanned_histogram", histogram(0, 0, 0)},
                 {"read_latency/moving_average_histogram", latency(0, 0)},
                 {"write_latency/moving_average_histogram", latency(0, 0)}});
    api.replies["GET /column_family/sstables/per_level/ks1:t1"] = "[]";
    api.replies["GET /column_family/sstables/per_level/ks1:t2"] = "[]";
    return api;
}

// What Cassandra 5.0.9's TableStatsPrinter printed for a holder with the same values (ks1 alone selected).
const char* const tablestats_ks1 =
    "Total number of tables: 2\n"
    "----------------\n"
    "Keyspace: ks1\n"
    "\tRead Count: 10\n"
    "\tRead Latency: 1.25 ms\n"
    "\tWrite Count: 500\n"
    "\tWrite Latency: 0.0355 ms\n"
    "\tPending Flushes: 0\n"
    "\t\tTable: t1\n"
    "\t\tSSTable count: 3\n"
    "\t\tOld SSTable count: 0\n"
    "\t\tMax SSTable size: 0B\n"
    "\t\tSpace used (live): 1536000\n"
    "\t\tSpace used (total): 1600000\n"
    "\t\tSpace used by snapshots (total): 0\n"
    "\t\tOff heap memory used (total): 65720\n"
    "\t\tSSTable Compression Ratio: 0.42130\n"
    "\t\tNumber of partitions (estimate): 1000\n"
    "\t\tMemtable cell count: 250\n"
    "\t\tMemtable data size: 10240\n"
    "\t\tMemtable off heap memory used: 65536\n"
    "\t\tMemtable switch count: 4\n"
    "\t\tSpeculative retries: 0\n"
    "\t\tLocal read count: 10\n"
    "\t\tLocal read latency: 1.250 ms\n"
    "\t\tLocal write count: 500\n"
    "\t\tLocal write latency: 0.036 ms\n"
    "\t\tLocal read/write ratio: 0.02000\n"
    "\t\tPending flushes: 0\n"
    "\t\tPercent repaired: 0.0\n"
    "\t\tBytes repaired: 0B\n"
    "\t\tBytes unrepaired: 1.465MiB\n"
    "\t\tBytes pending repair: 0B\n"
    "\t\tBloom filter false positives: 2\n"
    "\t\tBloom filter false ratio: 0.00100\n"
    "\t\tBloom filter space used: 2048\n"
    "\t\tBloom filter off heap memory used: 120\n"
    "\t\tIndex summary off heap memory used: 48\n"
    "\t\tCompression metadata off heap memory used: 16\n"
    "\t\tCompacted partition minimum bytes: 30\n"
    "\t\tCompacted partition maximum bytes: 2299\n"
    "\t\tCompacted partition mean bytes: 150\n"
    "\t\tAverage live cells per slice (last five minutes): 2.5\n"
    "\t\tMaximum live cells per slice (last five minutes): 10\n"
    "\t\tAverage tombstones per slice (last five minutes): 0.0\n"
    "\t\tMaximum tombstones per slice (last five minutes): 0\n"
    "\t\tDroppable tombstone ratio: 0.00000\n"
    "\n"
    "\t\tTable: t2\n"
    "\t\tSSTable count: 0\n"
    "\t\tOld SSTable count: 0\n"
    "\t\tMax SSTable size: 0B\n"
    "\t\tSpace used (live): 0\n"
    "\t\tSpace used (total): 0\n"
    "\t\tSpace used by snapshots (total): 0\n"
    "\t\tOff heap memory used (total): 0\n"
    "\t\tSSTable Compression Ratio: -1.00000\n"
    "\t\tNumber of partitions (estimate): 0\n"
    "\t\tMemtable cell count: 0\n"
    "\t\tMemtable data size: 0\n"
    "\t\tMemtable off heap memory used: 0\n"
    "\t\tMemtable switch count: 0\n"
    "\t\tSpeculative retries: 0\n"
    "\t\tLocal read count: 0\n"
    "\t\tLocal read latency: NaN ms\n"
    "\t\tLocal write count: 0\n"
    "\t\tLocal write latency: NaN ms\n"
    "\t\tLocal read/write ratio: 0.00000\n"
    "\t\tPending flushes: 0\n"
    "\t\tPercent repaired: 0.0\n"
    "\t\tBytes repaired: 0B\n"
    "\t\tBytes unrepaired: 0B\n"
    "\t\tBytes pending repair: 0B\n"
    "\t\tBloom filter false positives: 0\n"
    "\t\tBloom filter false ratio: 0.00000\n"
    "\t\tBloom filter space used: 0\n"
    "\t\tBloom filter off heap memory used: 0\n"
    "\t\tIndex summary off heap memory used: 0\n"
    "\t\tCompression metadata off heap memory used: 0\n"
    "\t\tCompacted partition minimum bytes: 0\n"
    "\t\tCompacted partition maximum bytes: 0\n"
    "\t\tCompacted partition mean bytes: 0\n"
    "\t\tAverage live cells per slice (last five minutes): NaN\n"
    "\t\tMaximum live cells per slice (last five minutes): 0\n"
    "\t\tAverage tombstones per slice (last five minutes): NaN\n"
    "\t\tMaximum tombstones per slice (last five minutes): 0\n"
    "\t\tDroppable tombstone ratio: 0.00000\n"
    "\n"
    "----------------\n";

} // namespace

REEF_TEST_CASE(tablestats_prints_cassandra_5_0_lines) {
    auto api = tablestats_fixture();
    BOOST_CHECK_EQUAL(co_await run(api, "tablestats ks1"), tablestats_ks1);
    // cfstats is the same command; --ignore turns the selection around.
    auto again = tablestats_fixture();
    BOOST_CHECK_EQUAL(co_await run(again, "cfstats -i ks2"), tablestats_ks1);
    for (auto& c : again.calls) {
        BOOST_CHECK_MESSAGE(c.find("ks2:t3") == std::string::npos, "ks2 was not selected: " << c);
    }
}

REEF_TEST_CASE(tablestats_human_readable_sizes) {
    auto api = tablestats_fixture();
    auto out = co_await run(api, "tablestats -H ks1.t1");
    BOOST_CHECK(out.starts_with("Total number of tables: 1\n"));
    BOOST_CHECK_MESSAGE(out.find("\t\tSpace used (live): 1.46 MiB\n") != std::string::npos, out);
    BOOST_CHECK(out.find("\t\tOff heap memory used (total): 64.18 KiB\n") != std::string::npos);
    BOOST_CHECK(out.find("\t\tBloom filter space used: 2 KiB\n") != std::string::npos);
    BOOST_CHECK(out.find("Table: t2") == std::string::npos);
}

namespace {

fake_api status_fixture(int tokens) {
    fake_api api;
    api.replies["GET /gossiper/endpoint/live"] = R"(["127.0.0.1"])";
    api.replies["GET /gossiper/endpoint/down"] = "[]";
    api.replies["GET /storage_service/nodes/joining"] = "[]";
    api.replies["GET /storage_service/nodes/leaving"] = "[]";
    api.replies["GET /storage_service/nodes/moving"] = "[]";
    api.replies["GET /storage_service/load_map"] = R"([{"key":"127.0.0.1","value":1500000.0}])";
    api.replies["GET /storage_service/host_id"] = R"([{"key":"127.0.0.1","value":"5d3f7e4c-7c0e-4d5a-8c1e-2f8a9b6c1d00"}])";
    std::string list = "[";
    for (int i = 0; i < tokens; ++i) {
        list += fmt::format("{}{{\"key\":\"{}\",\"value\":\"127.0.0.1\"}}", i ? "," : "",
                            i == 0 ? "-3485513579396041028" : std::to_string(i * 1000));
    }
    api.replies["GET /storage_service/tokens_endpoint"] = list + "]";
    api.replies["GET /snitch/datacenter?host=127.0.0.1"] = R"("datacenter1")";
    api.replies["GET /snitch/rack?host=127.0.0.1"] = R"("rack1")";
    api.replies["GET /storage_service/keyspaces"] = R"(["ks1","system"])";
    api.replies["GET /storage_service/ownership/ks1"] = R"([{"key":"127.0.0.1","value":"1"}])";
    return api;
}

} // namespace

REEF_TEST_CASE(status_one_token_without_keyspace) {
    auto api = status_fixture(1);
    BOOST_CHECK_EQUAL(co_await run(api, "status"),
                      "Datacenter: datacenter1\n"
                      "=======================\n"
                      "Status=Up/Down\n"
                      "|/ State=Normal/Leaving/Joining/Moving\n"
                      "--  Address    Load      Owns  Host ID                               Token                 Rack \n"
                      "UN  127.0.0.1  1.43 MiB  ?     5d3f7e4c-7c0e-4d5a-8c1e-2f8a9b6c1d00  -3485513579396041028  rack1\n"
                      "\n"
                      "Note: Non-system keyspaces don't have the same replication settings, effective ownership "
                      "information is meaningless\n");
}

REEF_TEST_CASE(status_vnodes_with_keyspace) {
    auto api = status_fixture(3);
    BOOST_CHECK_EQUAL(co_await run(api, "status ks1"),
                      "Datacenter: datacenter1\n"
                      "=======================\n"
                      "Status=Up/Down\n"
                      "|/ State=Normal/Leaving/Joining/Moving\n"
                      "--  Address    Load      Tokens  Owns (effective)  Host ID                               Rack \n"
                      "UN  127.0.0.1  1.43 MiB  3       100.0%            5d3f7e4c-7c0e-4d5a-8c1e-2f8a9b6c1d00  rack1\n"
                      "\n");
    BOOST_CHECK_EQUAL(co_await failure(api, "status nosuch"), "usage: Keyspace [nosuch] does not exist.");
}

namespace {

fake_api info_fixture() {
    fake_api api;
    auto& r = api.replies;
    r["GET /storage_service/gossiping"] = "true";
    r["GET /storage_service/hostid/local"] = R"("5d3f7e4c-7c0e-4d5a-8c1e-2f8a9b6c1d00")";
    r["GET /storage_service/native_transport"] = "true";
    r["GET /storage_service/load"] = "1.5E6";
    r["GET /storage_service/generation_number"] = "1700000000";
    r["GET /system/uptime_ms"] = "12345678";
    r["GET /column_family/"] = R"([{"ks":"ks1","cf":"t1","type":"ColumnFamilies"}])";
    add_metrics(api, "ks1:t1", {{"memtable_off_heap_size", "1048576"}, {"bloom_filter_off_heap_memory_used", "524288"},
                                {"index_summary_off_heap_memory_used", "0"},
                                {"compression_metadata_off_heap_memory_used", "0"}});
    r["GET /snitch/datacenter"] = R"("datacenter1")";
    r["GET /snitch/rack"] = R"("rack1")";
    r["GET /storage_service/metrics/exceptions"] = "0";
    for (std::string c : {"key", "row", "counter"}) {
        bool row = c == "row";
        r["GET /cache_service/metrics/" + c + "/entries"] = row ? "1200" : "0";
        r["GET /cache_service/metrics/" + c + "/size"] = row ? "3145728" : "0";
        r["GET /cache_service/metrics/" + c + "/capacity"] = row ? "1073741824" : "0";
        r["GET /cache_service/metrics/" + c + "/hits_moving_avrage"] =
            fmt::format(R"({{"rates":[0,0,0],"mean_rate":0.0,"count":{}}})", row ? 900 : 0);
        r["GET /cache_service/metrics/" + c + "/requests_moving_avrage"] =
            fmt::format(R"({{"rates":[0,0,0],"mean_rate":0.0,"count":{}}})", row ? 1200 : 0);
        r["GET /cache_service/metrics/" + c + "/hit_rate"] = row ? "0.75" : "0.0";
        r["GET /cache_service/" + c + "_cache_save_period"] = "0";
    }
    r["GET /storage_service/join_ring"] = "true";
    r["GET /storage_service/tokens"] = R"(["-3485513579396041028","12"])";
    return api;
}

} // namespace

REEF_TEST_CASE(info_lines) {
    auto api = info_fixture();
    const std::string head = "ID                     : 5d3f7e4c-7c0e-4d5a-8c1e-2f8a9b6c1d00\n"
                             "Gossip active          : true\n"
                             "Native Transport active: true\n"
                             "Load                   : 1.43 MiB\n"
                             "Generation No          : 1700000000\n"
                             "Uptime (seconds)       : 12345\n"
                             "Heap Memory (MB)       : 0.00 / 0.00\n"
                             "Off Heap Memory (MB)   : 1.50\n"
                             "Data Center            : datacenter1\n"
                             "Rack                   : rack1\n"
                             "Exceptions             : 0\n"
                             "Key Cache              : entries 0, size 0 bytes, capacity 0 bytes, 0 hits, 0 requests, "
                             "0.000 recent hit rate, 0 save period in seconds\n"
                             "Row Cache              : entries 1200, size 3 MiB, capacity 1 GiB, 900 hits, 1200 requests, "
                             "0.750 recent hit rate, 0 save period in seconds\n"
                             "Counter Cache          : entries 0, size 0 bytes, capacity 0 bytes, 0 hits, 0 requests, "
                             "0.000 recent hit rate, 0 save period in seconds\n"
                             "Percent Repaired       : 0.0%\n";
    BOOST_CHECK_EQUAL(co_await run(api, "info"), head + "Token                  : (invoke with -T/--tokens to see all 2 tokens)\n");
    BOOST_CHECK_EQUAL(co_await run(api, "info -T"),
                      head + "Token                  : -3485513579396041028\nToken                  : 12\n");
    // A rate of nothing may come as null: Java prints NaN.
    api.replies["GET /cache_service/metrics/key/hit_rate"] = "null";
    BOOST_CHECK((co_await run(api, "info")).find("0 requests, NaN recent hit rate") != std::string::npos);
    api.replies["GET /storage_service/join_ring"] = "false";
    api.replies["GET /storage_service/gossiping"] = "false";
    auto out = co_await run(api, "info --tokens");
    BOOST_CHECK(out.find("Generation No          : 0\n") != std::string::npos);
    BOOST_CHECK(out.ends_with("Token                  : (node is not joined to the cluster)\n"));
}

REEF_TEST_CASE(snapshots) {
    fake_api api;
    api.replies["GET /storage_service/keyspaces"] = R"(["ks1","ks2","system"])";
    api.replies["POST /storage_service/snapshots?tag=t1&sf=false"] = "";
    api.replies["POST /storage_service/snapshots?tag=t2&kn=ks1,ks2&sf=true"] = "";
    api.replies["POST /storage_service/snapshots?tag=t3&kn=ks1&cf=tab&sf=false"] = "";
    api.replies["DELETE /storage_service/snapshots?tag=t1"] = "";
    api.replies["DELETE /storage_service/snapshots?kn=ks1"] = "";
    BOOST_CHECK_EQUAL(co_await run(api, "snapshot -t t1"),
                      "Requested creating snapshot(s) for [all keyspaces] with snapshot name [t1] and options "
                      "{skipFlush=false}\nSnapshot directory: t1\n");
    BOOST_CHECK_EQUAL(co_await run(api, "snapshot --tag=t2 -sf ks1 ks2"),
                      "Requested creating snapshot(s) for [ks1, ks2] with snapshot name [t2] and options "
                      "{skipFlush=true}\nSnapshot directory: t2\n");
    BOOST_CHECK_EQUAL(co_await run(api, "snapshot -t t3 -kt ks1.tab"),
                      "Requested creating snapshot(s) for [ks1.tab] with snapshot name [t3] and options "
                      "{skipFlush=false}\nSnapshot directory: t3\n");
    BOOST_CHECK_EQUAL(co_await run(api, "clearsnapshot -t t1"),
                      "Requested clearing snapshot(s) for [all keyspaces] with snapshot name [t1]\n");
    BOOST_CHECK_EQUAL(co_await run(api, "clearsnapshot --all ks1"),
                      "Requested clearing snapshot(s) for [ks1] with [all snapshots]\n");
    BOOST_CHECK_EQUAL(co_await failure(api, "clearsnapshot"), "usage: Specify snapshot name or --all");
    BOOST_CHECK_EQUAL(co_await failure(api, "clearsnapshot --all -t x"), "usage: Specify only one of snapshot name or --all");
    BOOST_CHECK_EQUAL(co_await failure(api, "clearsnapshot --all nosuch"), "usage: Keyspace [nosuch] does not exist.");

    api.replies["GET /storage_service/snapshots"] = "[]";
    BOOST_CHECK_EQUAL(co_await run(api, "listsnapshots"), "Snapshot Details: \nThere are no snapshots\n");
    api.replies["GET /storage_service/snapshots"] =
        R"([{"key":"t1","value":[{"ks":"ks1","cf":"table1","total":1536000,"live":0},
                                 {"ks":"ks2","cf":"t","total":2048,"live":1024}]},
            {"key":"nightly-2026-11-26","value":[{"ks":"ks1","cf":"table1","total":100,"live":100}]}])";
    api.replies["GET /storage_service/snapshots/size/true"] = "1124";
    BOOST_CHECK_EQUAL(co_await run(api, "listsnapshots"),
                      "Snapshot Details: \n"
                      "Snapshot name      Keyspace name Column family name True size Size on disk\n"
                      "t1                 ks1           table1             0 bytes   1.46 MiB    \n"
                      "t1                 ks2           t                  1 KiB     2 KiB       \n"
                      "nightly-2026-11-26 ks1           table1             100 bytes 100 bytes   \n"
                      "\n"
                      "Total TrueDiskSpaceUsed: 1.1 KiB\n"
                      "\n");
}

REEF_TEST_CASE(flush_compact_refresh_drain_make_their_calls) {
    fake_api api;
    api.replies["GET /storage_service/keyspaces"] = R"(["ks1","system"])";
    for (auto* k : {"POST /storage_service/flush", "POST /storage_service/keyspace_flush/ks1",
                    "POST /storage_service/keyspace_flush/ks1?cf=t1,t2", "POST /storage_service/compact",
                    "POST /storage_service/keyspace_compaction/ks1?cf=t1", "POST /storage_service/sstables/ks1?cf=t1",
                    "POST /storage_service/drain", "POST /system/logger/sstable?level=debug"}) {
        api.replies[k] = "";
    }
    for (auto* line : {"flush", "flush ks1", "flush ks1 t1 t2", "compact", "compact ks1 t1", "refresh ks1 t1", "drain",
                       "setlogginglevel sstable debug"}) {
        BOOST_CHECK_EQUAL(co_await run(api, line), "");
    }
    const std::vector<std::string> expected = {
        "POST /storage_service/flush", "GET /storage_service/keyspaces", "POST /storage_service/keyspace_flush/ks1",
        "GET /storage_service/keyspaces", "POST /storage_service/keyspace_flush/ks1?cf=t1,t2",
        "POST /storage_service/compact", "GET /storage_service/keyspaces",
        "POST /storage_service/keyspace_compaction/ks1?cf=t1", "POST /storage_service/sstables/ks1?cf=t1",
        "POST /storage_service/drain", "POST /system/logger/sstable?level=debug"};
    BOOST_CHECK_EQUAL_COLLECTIONS(api.calls.begin(), api.calls.end(), expected.begin(), expected.end());
    BOOST_CHECK_EQUAL(co_await failure(api, "flush nosuch"), "usage: Keyspace [nosuch] does not exist.");
    BOOST_CHECK_EQUAL(co_await failure(api, "refresh ks1"), "usage: refresh requires <keyspace> <table>");
    BOOST_CHECK_EQUAL(co_await failure(api, "drain now"), "usage: Found unexpected parameters: [now]");
    BOOST_CHECK_EQUAL(co_await failure(api, "flush --bogus ks1"), "usage: Found unexpected parameters: [--bogus]");
    BOOST_CHECK_EQUAL(co_await failure(api, "nosuchcommand"), "usage: Found unexpected parameters: [nosuchcommand]");
    // The node's refusal is its JSON message.
    api.failures["POST /system/logger/nosuch?level=debug"] = "Unknown logger name nosuch";
    BOOST_CHECK_EQUAL(co_await failure(api, "setlogginglevel nosuch debug"), "api: Unknown logger name nosuch");
}

REEF_TEST_CASE(small_reports) {
    fake_api api;
    api.replies["GET /storage_service/release_version"] = R"("3.0.8")";
    BOOST_CHECK_EQUAL(co_await run(api, "version"), "ReleaseVersion: 3.0.8\n");
    api.replies["GET /storage_service/logging_level"] = R"([{"key":"httpd","value":"info"},{"key":"sstable","value":"debug"}])";
    BOOST_CHECK_EQUAL(co_await run(api, "getlogginglevels"),
                      "\n"
                      "Logger Name                                        Log Level\n"
                      "httpd                                                   info\n"
                      "sstable                                                debug\n");
    api.replies["GET /storage_service/cluster_name"] = R"("Test Cluster")";
    api.replies["GET /snitch/name"] = R"("org.apache.cassandra.locator.SimpleSnitch")";
    api.replies["GET /storage_service/partitioner_name"] = R"("org.apache.cassandra.dht.Murmur3Partitioner")";
    api.replies["GET /storage_proxy/schema_versions"] =
        R"([{"key":"1f2e3d4c-0000-3000-8000-000000000000","value":["127.0.0.1"]}])";
    BOOST_CHECK_EQUAL(co_await run(api, "describecluster"),
                      "Cluster Information:\n"
                      "\tName: Test Cluster\n"
                      "\tSnitch: org.apache.cassandra.locator.SimpleSnitch\n"
                      "\tDynamicEndPointSnitch: disabled\n"
                      "\tPartitioner: org.apache.cassandra.dht.Murmur3Partitioner\n"
                      "\tSchema versions:\n"
                      "\t\t1f2e3d4c-0000-3000-8000-000000000000: [127.0.0.1]\n"
                      "\n");
}

REEF_TEST_CASE(compactionstats_pending_and_active) {
    fake_api api;
    api.replies["GET /compaction_manager/metrics/pending_tasks_by_table"] = "[]";
    api.replies["GET /compaction_manager/compactions"] = "[]";
    BOOST_CHECK_EQUAL(co_await run(api, "compactionstats"), "pending tasks: 0\n\n");
    api.replies["GET /compaction_manager/metrics/pending_tasks_by_table"] =
        R"([{"ks":"ks2","cf":"t","task":1},{"ks":"ks1","cf":"t1","task":2}])";
    api.replies["GET /compaction_manager/compactions"] =
        R"([{"id":"7c3a1e2b-1111-4222-8333-444455556666","ks":"ks1","cf":"t1","task_type":"COMPACTION",
             "completed":1200,"total":5000,"unit":"bytes"}])";
    api.replies["GET /storage_service/compaction_throughput"] = "0";
    const std::string pending = "pending tasks: 3\n- ks1.t1: 2\n- ks2.t: 1\n\n";
    BOOST_CHECK_EQUAL(co_await run(api, "compactionstats"),
                      pending +
                      "id                                   compaction type keyspace table completed total unit  progress\n"
                      "7c3a1e2b-1111-4222-8333-444455556666 COMPACTION      ks1      t1    1200      5000  bytes 24.00%  \n"
                      "Active compaction remaining time :        n/a\n");
    api.replies["GET /storage_service/compaction_throughput"] = "16";
    api.replies["GET /compaction_manager/compactions"] =
        R"([{"ks":"ks1","cf":"t1","task_type":"COMPACTION","completed":0,"total":2013265920,"unit":"bytes"}])";
    BOOST_CHECK_EQUAL(co_await run(api, "compactionstats -H"),
                      pending +
                      "id  compaction type keyspace table completed total    unit  progress\n"
                      "n/a COMPACTION      ks1      t1    0 bytes   1.88 GiB bytes 0.00%   \n"
                      "Active compaction remaining time :   0h02m00s\n");
}
