// The route table: matching by whole segments with one trailing '/' ignored, literal segments before parameters,
// 404 / 405 / 400 / 500 as JSON bodies, required and enumerated parameters checked from the docs, and the
// registration errors; percent-decoding of targets.
#include "api/route_table.hh"

#include "test/lib/reef_test.hh"

using namespace reef;
using namespace reef::api;

namespace {

handler echo(std::string tag) {
    return [tag](http_request& req) -> future<http_reply> {
        std::string body = tag;
        for (auto& [k, v] : req.path_params) {
            body += " " + k + "=" + v;
        }
        co_return http_reply::json(body);
    };
}

param_doc path_param(std::string name) { return param_doc{name, "the " + name, true, "string", "path"}; }

route_table sample_table() {
    route_table t;
    t.add_module("storage_service", "The storage service API");
    t.add_module("system", "The system related API");
    t.add(http_method::post, "/storage_service/flush", {"Flush all", "force_flush"}, echo("flush"));
    t.add(http_method::post, "/storage_service/keyspace_flush/{keyspace}",
          {"Flush a keyspace", "force_keyspace_flush", "void",
           {path_param("keyspace"), param_doc{"cf", "tables", false}}},
          echo("ks_flush"));
    t.add(http_method::get, "/system/logger/{name}", {"Get a level", "get_logger", "string", {path_param("name")}},
          echo("get_logger"));
    t.add(http_method::get, "/system/logger/all", {"All", "all"}, echo("all"));
    t.add(http_method::post, "/system/logger/{name}",
          {"Set a level", "set_logger", "void",
           {path_param("name"), param_doc{"level", "the level", true, "string", "query", {"info", "debug"}}}},
          echo("set_logger"));
    t.add(http_method::post, "/system/flag", {"A flag", "flag", "void", {param_doc{"on", "", false, "boolean"}}},
          echo("flag"));
    t.add(http_method::get, "/system/boom", {"Throws", "boom"}, [](http_request&) -> future<http_reply> {
        throw std::runtime_error("boom inside");
        co_return http_reply{};
    });
    t.add_undocumented(http_method::get, "/metrics", echo("metrics"));
    return t;
}

future<http_reply> call(const route_table& t, http_method m, std::string target) {
    http_request req;
    req.method = m;
    split_target(target, req.path, req.query);
    auto reply = co_await t.handle(req);
    co_return reply;
}

} // namespace

REEF_TEST_CASE(routes_match_whole_segments_and_ignore_one_trailing_slash) {
    auto t = sample_table();
    auto r = co_await call(t, http_method::post, "/storage_service/flush");
    BOOST_CHECK_EQUAL(r.status, 200);
    BOOST_CHECK_EQUAL(r.body, "flush");
    r = co_await call(t, http_method::post, "/storage_service/flush/");
    BOOST_CHECK_EQUAL(r.body, "flush");
    r = co_await call(t, http_method::post, "/storage_service/flushx");
    BOOST_CHECK_EQUAL(r.status, 404);
    BOOST_CHECK_EQUAL(r.body, R"({"message":"Not found","code":404})");
    r = co_await call(t, http_method::post, "/storage_service//flush");
    BOOST_CHECK_EQUAL(r.status, 404);
    r = co_await call(t, http_method::post, "/storage_service/keyspace_flush/ks%201?cf=t1%2Ct2");
    BOOST_CHECK_EQUAL(r.body, "ks_flush keyspace=ks 1");
    r = co_await call(t, http_method::post, "/storage_service/keyspace_flush/");
    BOOST_CHECK_EQUAL(r.status, 404);
    r = co_await call(t, http_method::get, "/metrics");
    BOOST_CHECK_EQUAL(r.body, "metrics");
}

REEF_TEST_CASE(a_literal_segment_wins_over_a_parameter) {
    auto t = sample_table();
    auto r = co_await call(t, http_method::get, "/system/logger/all");
    BOOST_CHECK_EQUAL(r.body, "all");
    r = co_await call(t, http_method::get, "/system/logger/sstable");
    BOOST_CHECK_EQUAL(r.body, "get_logger name=sstable");
}

REEF_TEST_CASE(a_known_path_with_another_method_is_405) {
    auto t = sample_table();
    auto r = co_await call(t, http_method::get, "/storage_service/flush");
    BOOST_CHECK_EQUAL(r.status, 405);
    BOOST_CHECK_NE(r.body.find("\"code\":405"), std::string::npos);
}

REEF_TEST_CASE(parameters_are_checked_against_the_docs) {
    auto t = sample_table();
    auto r = co_await call(t, http_method::post, "/system/logger/sstable");
    BOOST_CHECK_EQUAL(r.status, 400);
    BOOST_CHECK_EQUAL(r.body, R"({"message":"Missing mandatory parameter 'level'","code":400})");
    r = co_await call(t, http_method::post, "/system/logger/sstable?level=loud");
    BOOST_CHECK_EQUAL(r.status, 400);
    BOOST_CHECK_NE(r.body.find("'loud'"), std::string::npos);
    r = co_await call(t, http_method::post, "/system/logger/sstable?level=debug");
    BOOST_CHECK_EQUAL(r.status, 200);
    r = co_await call(t, http_method::post, "/system/flag?on=yes");
    BOOST_CHECK_EQUAL(r.status, 400);
    r = co_await call(t, http_method::post, "/system/flag?on=true");
    BOOST_CHECK_EQUAL(r.status, 200);
}

REEF_TEST_CASE(a_handler_exception_is_a_json_500_and_http_error_keeps_its_status) {
    auto t = sample_table();
    auto r = co_await call(t, http_method::get, "/system/boom");
    BOOST_CHECK_EQUAL(r.status, 500);
    BOOST_CHECK_EQUAL(r.body, R"({"message":"boom inside","code":500})");
    t.add(http_method::get, "/system/missing", {"400", "missing"}, [](http_request&) -> future<http_reply> {
        throw bad_request("Can't find a keyspace \"ks\"");
        co_return http_reply{};
    });
    r = co_await call(t, http_method::get, "/system/missing");
    BOOST_CHECK_EQUAL(r.status, 400);
    BOOST_CHECK_EQUAL(r.body, R"({"message":"Can't find a keyspace \"ks\"","code":400})");
}

BOOST_AUTO_TEST_CASE(registration_errors_are_programming_errors) {
    route_table t;
    t.add_module("system", "s");
    BOOST_CHECK_THROW(t.add_module("system", "again"), std::logic_error);
    BOOST_CHECK_THROW(t.add(http_method::get, "/nomodule/x", {"s", "n"}, echo("x")), std::logic_error);
    BOOST_CHECK_THROW(t.add(http_method::get, "/system/logger/{name}", {"s", "n"}, echo("x")), std::logic_error);
    t.add(http_method::get, "/system/a/{x}", {"s", "n", "void", {path_param("x")}}, echo("x"));
    BOOST_CHECK_THROW(t.add(http_method::get, "/system/a/{y}", {"s", "n", "void", {path_param("y")}}, echo("y")),
                      std::logic_error);
    t.add(http_method::post, "/system/a/{y}", {"s", "n", "void", {path_param("y")}}, echo("y"));
    BOOST_CHECK_EQUAL(t.routes_of("system").size(), 2u);
}

BOOST_AUTO_TEST_CASE(targets_are_percent_decoded) {
    std::string path;
    std::vector<std::pair<std::string, std::string>> query;
    split_target("/a%2Fb/c?x=1%2C2&y&z=a+b&x=3&&", path, query);
    BOOST_CHECK_EQUAL(path, "/a/b/c");
    BOOST_REQUIRE_EQUAL(query.size(), 4u);
    BOOST_CHECK_EQUAL(query[0].second, "1,2");
    BOOST_CHECK_EQUAL(query[1].first, "y");
    BOOST_CHECK_EQUAL(query[1].second, "");
    BOOST_CHECK_EQUAL(query[2].second, "a b");
    BOOST_CHECK_EQUAL(query[3].second, "3");
    BOOST_CHECK_THROW(split_target("/a%2", path, query), http_error);
    BOOST_CHECK_THROW(split_target("/a?x=%zz", path, query), http_error);
    BOOST_CHECK_THROW(split_target("/a%", path, query), http_error);
    BOOST_CHECK_EQUAL(percent_decode("a+b", false), "a+b");
}
