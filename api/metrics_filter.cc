// The /metrics filters, applied to the samples before they are formatted.
#include "api/metrics_filter.hh"

#include <regex>

namespace reef::api {

namespace {

constexpr size_t max_regex_size = 200;

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

std::string format_metrics(std::vector<metrics::sample> samples, const http_request& req, const std::string& prefix) {
    auto names = req.query_params("__name__");
    bool help = true;
    std::vector<std::pair<std::string, std::regex>> label_filters;
    for (auto& [k, v] : req.query) {
        if (k == "__help__") {
            help = v != "false";
        } else if (!k.starts_with("__")) {
            // std::regex recurses over the pattern: a long one could exhaust the stack.
            if (v.size() > max_regex_size) {
                throw bad_request("The regular expression for label '" + k + "' is longer than " +
                                  std::to_string(max_regex_size) + " bytes");
            }
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
        if (!name_matches(prefix + "_" + bare, bare, names)) {
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
    opts.prefix = prefix;
    return metrics::format_prometheus(kept, opts);
}

} // namespace reef::api
