// Route matching by whole path segments, parameter checks from the operation docs, and errors as JSON replies.
#include "api/route_table.hh"

#include "runtime/log.hh"

#include <algorithm>

namespace reef::api {

namespace {

logger alog("api");

// "/a/b/" -> {"a", "b"}; empty segments (a doubled '/') are kept so that "/a//b" does not match "/a/b".
std::vector<std::string_view> segments(std::string_view path) {
    std::vector<std::string_view> out;
    if (path.size() > 1 && path.back() == '/') {
        path.remove_suffix(1);
    }
    if (path.empty() || path.front() != '/') {
        return out;
    }
    path.remove_prefix(1);
    while (true) {
        auto slash = path.find('/');
        out.push_back(path.substr(0, slash));
        if (slash == std::string_view::npos) {
            break;
        }
        path.remove_prefix(slash + 1);
    }
    return out;
}

bool is_param(std::string_view seg) noexcept {
    return seg.size() > 2 && seg.front() == '{' && seg.back() == '}';
}

std::string_view param_name(std::string_view seg) noexcept { return seg.substr(1, seg.size() - 2); }

bool template_matches(std::string_view tmpl, const std::vector<std::string_view>& path,
                      std::vector<std::pair<std::string, std::string>>* params) {
    auto t = segments(tmpl);
    if (t.size() != path.size()) {
        return false;
    }
    for (size_t i = 0; i < t.size(); ++i) {
        if (is_param(t[i])) {
            if (path[i].empty()) {
                return false;
            }
        } else if (t[i] != path[i]) {
            return false;
        }
    }
    if (params) {
        params->clear();
        for (size_t i = 0; i < t.size(); ++i) {
            if (is_param(t[i])) {
                params->emplace_back(std::string(param_name(t[i])), std::string(path[i]));
            }
        }
    }
    return true;
}

bool same_shape(std::string_view a, std::string_view b) {
    auto x = segments(a);
    auto y = segments(b);
    if (x.size() != y.size()) {
        return false;
    }
    for (size_t i = 0; i < x.size(); ++i) {
        if (is_param(x[i]) != is_param(y[i]) || (!is_param(x[i]) && x[i] != y[i])) {
            return false;
        }
    }
    return true;
}

bool is_boolean_text(std::string_view v) noexcept { return v == "true" || v == "false"; }

} // namespace

void route_table::add_module(std::string name, std::string description) {
    for (auto& m : _modules) {
        if (m.name == name) {
            throw std::logic_error("api module added twice: " + name);
        }
    }
    _modules.push_back(module_info{std::move(name), std::move(description)});
}

void route_table::add(http_method method, std::string path_template, operation_doc doc, handler fn) {
    auto segs = segments(path_template);
    bool known = !segs.empty() && std::any_of(_modules.begin(), _modules.end(),
                                              [&](const module_info& m) { return m.name == segs.front(); });
    if (!known) {
        throw std::logic_error("api route outside every module: " + path_template);
    }
    for (auto seg : segs) {
        if (!is_param(seg)) {
            continue;
        }
        bool documented = std::any_of(doc.params.begin(), doc.params.end(), [&](const param_doc& p) {
            return p.param_type == "path" && p.name == param_name(seg);
        });
        if (!documented) {
            throw std::logic_error("api route " + path_template + " has no path parameter doc for " +
                                   std::string(seg));
        }
    }
    for (auto& r : _routes) {
        if (r.method == method && same_shape(r.path_template, path_template)) {
            throw std::logic_error("api route added twice: " + std::string(to_string(method)) + " " + path_template);
        }
    }
    _routes.push_back(route{method, std::move(path_template), std::move(doc), std::move(fn), true});
}

void route_table::add_undocumented(http_method method, std::string path_template, handler fn) {
    for (auto& r : _routes) {
        if (r.method == method && same_shape(r.path_template, path_template)) {
            throw std::logic_error("api route added twice: " + std::string(to_string(method)) + " " + path_template);
        }
    }
    _routes.push_back(route{method, std::move(path_template), operation_doc{}, std::move(fn), false});
}

std::vector<const route*> route_table::routes_of(std::string_view module) const {
    std::vector<const route*> out;
    for (auto& r : _routes) {
        auto segs = segments(r.path_template);
        if (r.documented && !segs.empty() && segs.front() == module) {
            out.push_back(&r);
        }
    }
    return out;
}

route_table::match_result route_table::match(http_method method, std::string_view path,
                                             std::vector<std::pair<std::string, std::string>>& params) const {
    match_result result;
    auto segs = segments(path);
    if (segs.empty()) {
        return result;
    }
    // A literal segment beats a parameter: the route with the most literal segments that matches wins.
    int best_literals = -1;
    for (auto& r : _routes) {
        if (!template_matches(r.path_template, segs, nullptr)) {
            continue;
        }
        result.path_known = true;
        if (r.method != method) {
            continue;
        }
        auto t = segments(r.path_template);
        int literals = int(std::count_if(t.begin(), t.end(), [](std::string_view s) { return !is_param(s); }));
        if (literals > best_literals) {
            best_literals = literals;
            result.found = &r;
        }
    }
    if (result.found) {
        template_matches(result.found->path_template, segs, &params);
    }
    return result;
}

future<http_reply> route_table::run(const route& r, http_request& req) const {
    for (auto& p : r.doc.params) {
        if (p.param_type != "query") {
            continue;
        }
        auto* v = req.query_param(p.name);
        if (!v) {
            if (p.required) {
                throw bad_request("Missing mandatory parameter '" + p.name + "'");
            }
            continue;
        }
        if (!p.allowed.empty() && std::find(p.allowed.begin(), p.allowed.end(), *v) == p.allowed.end()) {
            throw bad_request("Parameter '" + p.name + "' must be one of the allowed values, not '" + *v + "'");
        }
        if (p.type == "boolean" && !is_boolean_text(*v)) {
            throw bad_request("Parameter '" + p.name + "' must be true or false, not '" + *v + "'");
        }
    }
    auto reply = co_await r.fn(req);
    co_return reply;
}

future<http_reply> route_table::handle(http_request& req) const {
    std::vector<std::pair<std::string, std::string>> params;
    auto m = match(req.method, req.path, params);
    if (!m.found) {
        co_return m.path_known ? error_reply(405, "Method " + std::string(to_string(req.method)) + " not allowed")
                               : error_reply(404, "Not found");
    }
    req.path_params = std::move(params);
    http_reply reply;
    try {
        reply = co_await run(*m.found, req);
    } catch (const http_error& e) {
        reply = error_reply(e.status(), e.what());
    } catch (const std::exception& e) {
        alog.warn("{} {} failed: {}", to_string(req.method), req.path, e.what());
        reply = error_reply(500, e.what());
    } catch (...) {
        reply = error_reply(500, "unknown error");
    }
    co_return reply;
}

} // namespace reef::api
