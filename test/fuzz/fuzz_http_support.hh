// The body of the fuzz_http_request libFuzzer target (test/fuzz/fuzz_http_request.cc), also run by
// api/http_fuzz_test with g++: bytes read as one connection's stream, cut into pieces, parsed, routed through a
// route table like the node's (api-doc, path and query parameters, enumerations, /metrics filters, a throwing
// handler) and answered. Any crash, sanitizer report or escaping exception is a finding; so is a reply that
// breaks the server's promises (a status outside 200-599, an error body that is not {"message", "code"}).
#pragma once

#include "api/api_doc.hh"
#include "api/http_parser.hh"
#include "api/metrics_filter.hh"
#include "api/route_table.hh"
#include "runtime/log.hh"
#include "utils/json_writer.hh"

#include <coroutine>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

namespace reef::fuzz {

// Drives a future that never truly suspends (every handler here answers at once) to its end, without a reactor.
struct sync_task {
    struct promise_type {
        sync_task get_return_object() noexcept { return {}; }
        std::suspend_never initial_suspend() noexcept { return {}; }
        std::suspend_never final_suspend() noexcept { return {}; }
        void return_void() noexcept {}
        void unhandled_exception() noexcept { __builtin_trap(); }
    };
};

inline sync_task run_sync(future<api::http_reply> f, std::optional<api::http_reply>& out) {
    out = co_await std::move(f);
}

inline api::route_table& http_fuzz_routes() {
    using namespace api;
    static route_table t = [] {
        // The throwing handler's 500s are logged as warnings: thousands of lines per second here.
        global_logger_registry().set_logger_level("api", log_level::error);
        route_table r;
        r.add_module("storage_service", "The storage service API");
        r.add_module("system", "The system related API");
        r.add_module("empty", "A module without routes, never listed");
        r.add(http_method::post, "/storage_service/keyspace_flush/{keyspace}",
              {"Flush", "flush", "void",
               {param_doc{"keyspace", "ks", true, "string", "path"}, param_doc{"cf", "tables", false}}},
              [](http_request& req) -> future<http_reply> {
                  if (req.path_param("keyspace") == "nosuch") {
                      throw bad_request("Can't find a keyspace nosuch");
                  }
                  co_return http_reply{};
              });
        r.add(http_method::get, "/system/logger/{name}",
              {"Get", "get", "string", {param_doc{"name", "n", true, "string", "path"}}},
              [](http_request& req) -> future<http_reply> {
                  std::string out;
                  utils::json_writer::append_quoted(out, req.path_param("name"));
                  co_return http_reply::json(out);
              });
        r.add(http_method::post, "/system/logger/{name}",
              {"Set", "set", "void",
               {param_doc{"name", "n", true, "string", "path"},
                param_doc{"level", "l", true, "string", "query", {"info", "debug"}},
                param_doc{"flag", "f", false, "boolean"}}},
              [](http_request&) -> future<http_reply> { co_return http_reply{}; });
        r.add(http_method::del, "/system/boom", {"Throws", "boom"}, [](http_request& req) -> future<http_reply> {
            throw std::runtime_error("boom " + req.body.substr(0, 10));
            co_return http_reply{};
        });
        r.add_undocumented(http_method::get, "/metrics", [](http_request& req) -> future<http_reply> {
            std::vector<metrics::sample> samples;
            for (unsigned shard = 0; shard < 2; ++shard) {
                samples.push_back({"cache", "row_hits", metrics::metric_type::counter, "hits", {}, shard, uint64_t(7)});
                samples.push_back({"transport", "cql_requests_count", metrics::metric_type::counter, "",
                                   {metrics::label("kind", "QUERY")}, shard, uint64_t(3)});
                samples.push_back({"reactor", "utilization", metrics::metric_type::gauge, "busy", {}, shard, 1.5});
            }
            co_return http_reply::text(format_metrics(std::move(samples), req, "scylla"));
        });
        register_api_doc(r);
        return r;
    }();
    return t;
}

inline void check_reply(const api::http_reply& r) {
    if (r.status < 200 || r.status > 599) {
        __builtin_trap();
    }
    if (r.status >= 400 && (!r.body.starts_with("{\"message\":") || !r.body.ends_with("}"))) {
        __builtin_trap();
    }
}

// in[0] picks the piece size the stream arrives in (1 to 256 bytes); the rest is the stream.
inline void http_request_input(std::span<const uint8_t> in) {
    using namespace api;
    if (in.empty()) {
        return;
    }
    size_t piece = size_t(in[0]) + 1;
    in = in.subspan(1);
    http_limits limits;
    limits.max_header_bytes = 2048;
    limits.max_body_bytes = 4096;
    request_parser parser(limits);
    std::string buffered;
    size_t pos = 0;
    while (true) {
        auto st = parser.parse(buffered);
        if (st == request_parser::state::complete) {
            std::optional<http_reply> reply;
            run_sync(http_fuzz_routes().handle(parser.request()), reply);
            if (!reply) {
                __builtin_trap();
            }
            check_reply(*reply);
            auto bytes = format_response(*reply, parser.keep_alive());
            if (!bytes.starts_with("HTTP/1.1 ")) {
                __builtin_trap();
            }
            if (!parser.keep_alive()) {
                return;
            }
            continue;
        }
        if (st == request_parser::state::failed) {
            check_reply(parser.error_reply());
            auto bytes = format_response(parser.error_reply(), false);
            return;
        }
        // Bounded memory: what waits unparsed never exceeds the header limit plus one piece.
        if (buffered.size() > limits.max_header_bytes + piece) {
            __builtin_trap();
        }
        if (pos >= in.size()) {
            return;
        }
        size_t len = std::min(piece, in.size() - pos);
        buffered.append(reinterpret_cast<const char*>(in.data() + pos), len);
        pos += len;
    }
}

} // namespace reef::fuzz
