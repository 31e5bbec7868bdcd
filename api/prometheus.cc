// /metrics: samples gathered from every shard on the request's shard, filtered, then formatted once.
#include "api/prometheus.hh"

#include "runtime/smp.hh"

#include <regex>

namespace reef::api {

namespace {

bool name_matches(const std::string& family, const std::string& bare, const std::vector<std::string>& filters) {
    if (filters.empty()) {
        return true;
    }
    for (auto& f : filters) {
        if (!f.empty() && f.back() == '*') {
            auto p = std::string_view(f).substr(0, f.size() - 1);
            if (family.starts_with(p) || bare.starts_with(p)) {
                return true;
            }
        } else if (family == f || bare == f) {
            return true;
        }
    }
    return false;
}

const std::string* label_value(const metrics::sample& s, const std::string& name) {
    for (auto& l : s.labels) {
        if (l.name == name) {
            return &l.value;
        }
    }
    return nullptr;
}

} // namespace

std::string format_metrics(std::vector<metrics::sample> samples, const http_request& req,
                           const prometheus_config& cfg) {
    auto names = req.query_params("__name__");
    bool help = true;
    std::vector<std::pair<std::string, std::regex>> label_filters;
    for (auto& [k, v] : req.query) {
        if (k == "__help__") {
            help = v != "false";
        } else if (!k.starts_with("__")) {
            try {
                label_filters.emplace_back(k, std::regex(v, std::regex::ECMAScript));
            } catch (const std::regex_error& e) {
                throw bad_request("Bad regular expression for label '" + k + "': " + e.what());
            }
        }
    }
    std::vector<metrics::sample> kept;
    kept.reserve(samples.size());
    for (auto& s : samples) {
        auto bare = s.group + "_" + s.name;
        if (!name_matches(cfg.prefix + "_" + bare, bare, names)) {
            continue;
        }
        bool ok = true;
        for (auto& [label, re] : label_filters) {
            std::string shard = std::to_string(s.shard);
            const std::string* v = label == "shard" ? &shard : label_value(s, label);
            if (!v || !std::regex_match(*v, re)) {
                ok = false;
                break;
            }
        }
        if (ok) {
            if (!help) {
                s.description.clear();
            }
            kept.push_back(std::move(s));
        }
    }
    metrics::prometheus_options opts;
    opts.prefix = cfg.prefix;
    return metrics::format_prometheus(kept, opts);
}

void register_prometheus(route_table& t, prometheus_config cfg) {
    t.add_undocumented(http_method::get, "/metrics", [cfg](http_request& req) -> future<http_reply> {
        std::vector<metrics::sample> all;
        for (shard_id s = 0; s < smp::count(); ++s) {
            auto part = co_await smp::submit_to(s, [] { return metrics::collect(); });
            all.insert(all.end(), std::make_move_iterator(part.begin()), std::make_move_iterator(part.end()));
        }
        co_return http_reply::text(format_metrics(std::move(all), req, cfg), "text/plain; version=0.0.4");
    });
}

} // namespace reef::api
