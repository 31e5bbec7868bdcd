// route_table: the REST API's routes in one table: method + path template -> handler, with each operation's
// swagger 1.2 description. Promises: one trailing '/' never matters; a missing required parameter is a 400 before
// the handler runs; any exception becomes a JSON error reply, so no request can crash the node.
#pragma once

#include "api/http_message.hh"
#include "runtime/future.hh"

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace reef::api {

// One parameter of an operation, as swagger 1.2 (and so scylla-api-client) describes it.
struct param_doc {
    std::string name;
    std::string description;
    bool required = false;
    // "string", "long", "double", "boolean" or "array" (the types scylla-api-client knows).
    std::string type = "string";
    // "query" or "path": a path parameter is a `{name}` segment of the route's template.
    std::string param_type = "query";
    // The allowed values, when the parameter is an enumeration (empty: any).
    std::vector<std::string> allowed = {};
};

// What /api-doc/<module>/ says of an operation.
struct operation_doc {
    std::string summary;
    std::string nickname;
    // The result's swagger type: "void", "string", "long", "double", "boolean", "array" or a model name.
    std::string type = "void";
    std::vector<param_doc> params = {};
};

using handler = std::function<future<http_reply>(http_request&)>;

struct route {
    http_method method;
    // "/storage_service/keyspace_flush/{keyspace}": literal segments and `{name}` segments (one whole segment each).
    std::string path_template;
    operation_doc doc;
    handler fn;
    // Undocumented routes (/api-doc itself, /metrics) are left out of the module listings.
    bool documented = true;
};

struct module_info {
    std::string name;        // "storage_service": every documented path starts with "/<name>/"
    std::string description; // "The storage service API"
};

class route_table {
public:
    // A module must be added before its routes. Throws std::logic_error on a duplicate.
    void add_module(std::string name, std::string description);
    // Throws std::logic_error on a duplicate method + template, a documented path outside a known module, or a
    // `{name}` segment without its path param_doc (scylla-api-client builds URLs from the docs).
    void add(http_method method, std::string path_template, operation_doc doc, handler fn);
    // A route that no api-doc lists.
    void add_undocumented(http_method method, std::string path_template, handler fn);

    // Routes req: fills req.path_params, checks required query parameters and enumerations, runs the handler. An
    // unknown path answers 404 {"message": "Not found", ...}; a known path with another method 405; a handler's
    // http_error its status; any other exception 500 with its message. Never throws.
    future<http_reply> handle(http_request& req) const;

    const std::vector<module_info>& modules() const noexcept { return _modules; }
    // The documented routes of one module, in the order they were added.
    std::vector<const route*> routes_of(std::string_view module) const;
    const std::vector<route>& routes() const noexcept { return _routes; }

private:
    struct match_result {
        const route* found = nullptr;
        bool path_known = false;
    };
    match_result match(http_method method, std::string_view path,
                       std::vector<std::pair<std::string, std::string>>& params) const;
    future<http_reply> run(const route& r, http_request& req) const;

    std::vector<module_info> _modules;
    std::vector<route> _routes;
};

} // namespace reef::api
