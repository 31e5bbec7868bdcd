// The swagger 1.2 documents scylla-api-client discovers the API by, written from the route table's docs.
#include "api/api_doc.hh"

#include "utils/json_writer.hh"

#include <algorithm>

namespace reef::api {

namespace {

constexpr std::string_view api_version = "0.0.1";
constexpr std::string_view swagger_version = "1.2";

void write_param(utils::json_writer& w, const param_doc& p) {
    w.begin_object();
    w.member("name", p.name).member("description", p.description).member("required", p.required);
    w.member("allowMultiple", false).member("type", p.type).member("paramType", p.param_type);
    if (!p.allowed.empty()) {
        w.key("enum").begin_array();
        for (auto& v : p.allowed) {
            w.value(v);
        }
        w.end_array();
    }
    w.end_object();
}

void write_operation(utils::json_writer& w, const route& r) {
    w.begin_object();
    w.member("method", to_string(r.method)).member("summary", r.doc.summary).member("type", r.doc.type);
    w.member("nickname", r.doc.nickname);
    w.key("produces").begin_array().value("application/json").end_array();
    w.key("parameters").begin_array();
    for (auto& p : r.doc.params) {
        write_param(w, p);
    }
    w.end_array();
    w.end_object();
}

} // namespace

std::string api_doc_listing(const route_table& t) {
    utils::json_writer w(false);
    w.begin_object().member("apiVersion", api_version).member("swaggerVersion", swagger_version);
    w.key("apis").begin_array();
    for (auto& m : t.modules()) {
        if (t.routes_of(m.name).empty()) {
            continue;
        }
        w.begin_object().member("path", "/" + m.name).member("description", m.description).end_object();
    }
    w.end_array().end_object();
    return w.take();
}

std::string api_doc_module(const route_table& t, std::string_view module, std::string_view base_path) {
    auto routes = t.routes_of(module);
    if (routes.empty()) {
        throw not_found("No api-doc for module '" + std::string(module) + "'");
    }
    // One apis[] entry per path, its operations in the order they were added.
    std::vector<std::string> paths;
    for (auto* r : routes) {
        if (std::find(paths.begin(), paths.end(), r->path_template) == paths.end()) {
            paths.push_back(r->path_template);
        }
    }
    utils::json_writer w(false);
    w.begin_object().member("apiVersion", api_version).member("swaggerVersion", swagger_version);
    w.member("basePath", base_path).member("resourcePath", "/" + std::string(module));
    w.key("produces").begin_array().value("application/json").end_array();
    w.key("apis").begin_array();
    for (auto& path : paths) {
        w.begin_object().member("path", path).key("operations").begin_array();
        for (auto* r : routes) {
            if (r->path_template == path) {
                write_operation(w, *r);
            }
        }
        w.end_array().end_object();
    }
    w.end_array().end_object();
    return w.take();
}

void register_api_doc(route_table& t) {
    const route_table* table = &t;
    t.add_undocumented(http_method::get, "/api-doc", [table](http_request&) -> future<http_reply> {
        co_return http_reply::json(api_doc_listing(*table));
    });
    t.add_undocumented(http_method::get, "/api-doc/{module}", [table](http_request& req) -> future<http_reply> {
        // swagger's basePath: where the client reached us (ScyllaDB substitutes the Host header the same way).
        auto* host = req.header("host");
        std::string base = "http://" + (host && !host->empty() ? *host : std::string("localhost"));
        co_return http_reply::json(api_doc_module(*table, req.path_param("module"), base));
    });
}

} // namespace reef::api
