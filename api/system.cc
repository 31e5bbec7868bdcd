// The `system` module's handlers, with ScyllaDB's paths and shapes (../shared/notes/scylla-rest-api.md).
#include "api/system.hh"

#include "runtime/log.hh"
#include "utils/json_writer.hh"

#include <chrono>

namespace reef::api {

namespace {

const std::vector<std::string> level_names = {"error", "warn", "info", "debug", "trace"};

param_doc level_param() {
    return param_doc{"level", "The log level", true, "string", "query", level_names};
}

std::string quoted(std::string_view s) {
    std::string out;
    utils::json_writer::append_quoted(out, s);
    return out;
}

void check_logger(std::string_view name) {
    auto names = global_logger_registry().get_all_logger_names();
    if (std::find(names.begin(), names.end(), name) == names.end()) {
        throw bad_request("Unknown logger name " + std::string(name));
    }
}

} // namespace

void register_system(route_table& t, api_context& ctx) {
    t.add_module("system", "The system related API");
    auto* c = &ctx;
    t.add(http_method::get, "/system/uptime_ms", {"Get the node's uptime in milliseconds", "get_system_uptime", "long"},
          [c](http_request&) -> future<http_reply> {
              auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(steady_clock_type::now() -
                                                                              c->process_start);
              co_return http_reply::json(std::to_string(ms.count()));
          });
    t.add(http_method::get, "/system/logger", {"Get the names of all loggers", "get_all_logger_names", "array"},
          [](http_request&) -> future<http_reply> {
              utils::json_writer w(false);
              w.begin_array();
              for (auto& n : global_logger_registry().get_all_logger_names()) {
                  w.value(n);
              }
              w.end_array();
              co_return http_reply::json(w.take());
          });
    t.add(http_method::post, "/system/logger", {"Set the level of all loggers", "set_all_logger_level", "void",
                                                {level_param()}},
          [](http_request& req) -> future<http_reply> {
              global_logger_registry().set_all_loggers_level(parse_log_level(*req.query_param("level")));
              co_return http_reply::json("");
          });
    param_doc name{"name", "The logger's name", true, "string", "path"};
    t.add(http_method::get, "/system/logger/{name}", {"Get a logger's level", "get_logger_level", "string", {name}},
          [](http_request& req) -> future<http_reply> {
              auto& n = req.path_param("name");
              check_logger(n);
              co_return http_reply::json(quoted(to_string(global_logger_registry().get_logger_level(n))));
          });
    t.add(http_method::post, "/system/logger/{name}",
          {"Set a logger's level", "set_logger_level", "void", {name, level_param()}},
          [](http_request& req) -> future<http_reply> {
              auto& n = req.path_param("name");
              check_logger(n);
              global_logger_registry().set_logger_level(n, parse_log_level(*req.query_param("level")));
              co_return http_reply::json("");
          });
}

} // namespace reef::api
