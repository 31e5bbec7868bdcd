// The system module and the api-doc documents through the route table: uptime, logger names and levels (a level
// set from shard 0 seen on every shard; unknown names and levels refused with ScyllaDB's answers), the /api-doc
// listing (modules without routes left out) and each module's swagger 1.2 document with every field
// scylla-api-client reads, with or without the trailing '/'.
#include "api/api_doc.hh"
#include "api/system.hh"
#include "db/database.hh"
#include "runtime/log.hh"
#include "runtime/smp.hh"
#include "test/lib/reef_test.hh"

#include "utils/json_reader.hh"

using namespace reef;
using namespace reef::api;
using utils::json_value;

namespace {

json_value parse(const std::string& s) { return utils::parse_json(s); }

const json_value& at(const json_value& v, std::string_view key) {
    auto* m = v.get(key);
    BOOST_REQUIRE_MESSAGE(m, "no member " << key);
    return *m;
}

} // namespace

namespace {

logger probe_log("api_test_probe");

future<http_reply> call(const route_table& t, http_method m, std::string target, std::string host = "") {
    http_request req;
    req.method = m;
    split_target(target, req.path, req.query);
    if (!host.empty()) {
        req.headers.emplace_back("host", host);
    }
    auto reply = co_await t.handle(req);
    co_return reply;
}

struct fixture {
    sharded<database> db;
    api_context ctx{db, steady_clock_type::now() - std::chrono::seconds(5), [] { return make_ready_future<>(); }};
    route_table t;
    fixture() {
        register_system(t, ctx);
        t.add_module("empty", "A module with no routes");
        register_api_doc(t);
    }
};

} // namespace

BOOST_AUTO_TEST_SUITE(system_api_test)

REEF_TEST_CASE(test_uptime) {
    fixture f;
    auto r = co_await call(f.t, http_method::get, "/system/uptime_ms");
    BOOST_CHECK_EQUAL(r.status, 200);
    auto ms = std::stoll(r.body);
    BOOST_CHECK_GE(ms, 5000);
    BOOST_CHECK_LT(ms, 600'000);
}

REEF_TEST_CASE(test_logger_levels) {
    fixture f;
    auto names = co_await call(f.t, http_method::get, "/system/logger");
    BOOST_CHECK_EQUAL(names.status, 200);
    auto list = parse(names.body);
    bool found = false;
    for (auto& v : list.items) {
        found = found || v.text == "api_test_probe";
    }
    BOOST_CHECK(found);

    auto r = co_await call(f.t, http_method::post, "/system/logger/api_test_probe?level=trace");
    BOOST_CHECK_EQUAL(r.status, 200);
    BOOST_CHECK_EQUAL(r.body, "");
    r = co_await call(f.t, http_method::get, "/system/logger/api_test_probe/");
    BOOST_CHECK_EQUAL(r.body, "\"trace\"");
    // Every shard logs at the new level.
    for (shard_id s = 0; s < smp::count(); ++s) {
        bool on = co_await smp::submit_to(s, [] { return probe_log.is_enabled(log_level::trace); });
        BOOST_CHECK(on);
    }

    r = co_await call(f.t, http_method::get, "/system/logger/nosuch");
    BOOST_CHECK_EQUAL(r.status, 400);
    BOOST_CHECK_EQUAL(r.body, R"({"message":"Unknown logger name nosuch","code":400})");
    r = co_await call(f.t, http_method::post, "/system/logger/nosuch?level=info");
    BOOST_CHECK_EQUAL(r.status, 400);
    r = co_await call(f.t, http_method::post, "/system/logger/api_test_probe?level=loud");
    BOOST_CHECK_EQUAL(r.status, 400);
    r = co_await call(f.t, http_method::post, "/system/logger/api_test_probe");
    BOOST_CHECK_EQUAL(r.status, 400);
    BOOST_CHECK(r.body.find("level") != std::string::npos);
    r = co_await call(f.t, http_method::get, "/system/logger/api_test_probe");
    BOOST_CHECK_EQUAL(r.body, "\"trace\"");

    // All at once.
    auto before = global_logger_registry().default_level();
    r = co_await call(f.t, http_method::post, "/system/logger?level=warn");
    BOOST_CHECK_EQUAL(r.status, 200);
    BOOST_CHECK(probe_log.level() == log_level::warn);
    BOOST_CHECK(global_logger_registry().get_logger_level("api") == log_level::warn);
    global_logger_registry().set_all_loggers_level(before);
}

REEF_TEST_CASE(test_api_doc) {
    fixture f;
    for (auto target : {"/api-doc", "/api-doc/"}) {
        auto r = co_await call(f.t, http_method::get, target);
        BOOST_CHECK_EQUAL(r.status, 200);
        auto doc = parse(r.body);
        BOOST_CHECK_EQUAL(at(doc, "swaggerVersion").text, "1.2");
        auto& apis = at(doc, "apis").items;
        BOOST_REQUIRE_EQUAL(apis.size(), 1u);
        BOOST_CHECK_EQUAL(at(apis[0], "path").text, "/system");
        BOOST_CHECK_EQUAL(at(apis[0], "description").text, "The system related API");
    }
    for (auto target : {"/api-doc/system", "/api-doc/system/"}) {
        auto r = co_await call(f.t, http_method::get, target, "127.0.0.1:10000");
        BOOST_CHECK_EQUAL(r.status, 200);
        auto doc = parse(r.body);
        BOOST_CHECK_EQUAL(at(doc, "basePath").text, "http://127.0.0.1:10000");
        BOOST_CHECK_EQUAL(at(doc, "resourcePath").text, "/system");
        BOOST_CHECK_EQUAL(at(doc, "apiVersion").text, "0.0.1");
        BOOST_CHECK_EQUAL(at(doc, "produces").items.at(0).text, "application/json");
        // One entry per path, its operations together; every route of the module is there.
        size_t operations = 0;
        std::vector<std::string> paths;
        for (auto& api : at(doc, "apis").items) {
            std::string path = at(api, "path").text;
            BOOST_CHECK(path.starts_with("/system/"));
            BOOST_CHECK(std::find(paths.begin(), paths.end(), path) == paths.end());
            paths.push_back(path);
            for (auto& o : at(api, "operations").items) {
                ++operations;
                for (auto key : {"method", "summary", "nickname", "type", "parameters"}) {
                    BOOST_CHECK_MESSAGE(o.get(key), path << " lacks " << key);
                }
                for (auto& po : at(o, "parameters").items) {
                    for (auto key : {"name", "description", "required", "allowMultiple", "type", "paramType"}) {
                        BOOST_CHECK_MESSAGE(po.get(key), path << " parameter lacks " << key);
                    }
                    std::string name = at(po, "name").text;
                    bool in_path = path.find("{" + name + "}") != std::string::npos;
                    BOOST_CHECK_EQUAL(at(po, "paramType").text == "path", in_path);
                }
            }
        }
        BOOST_CHECK_EQUAL(operations, f.t.routes_of("system").size());
        BOOST_CHECK_EQUAL(paths.size(), 3u);
    }
    auto set = api_doc_module(f.t, "system", "http://x");
    auto doc = parse(set);
    bool enum_seen = false;
    for (auto& api : at(doc, "apis").items) {
        for (auto& op : at(api, "operations").items) {
            for (auto& p : at(op, "parameters").items) {
                if (p.get("enum")) {
                    enum_seen = true;
                    BOOST_CHECK_EQUAL(at(p, "enum").items.size(), 5u);
                }
            }
        }
    }
    BOOST_CHECK(enum_seen);
    auto r = co_await call(f.t, http_method::get, "/api-doc/empty/");
    BOOST_CHECK_EQUAL(r.status, 404);
    r = co_await call(f.t, http_method::get, "/api-doc/nosuch");
    BOOST_CHECK_EQUAL(r.status, 404);
    BOOST_CHECK(r.body.ends_with(R"("code":404})"));
}

BOOST_AUTO_TEST_SUITE_END()
