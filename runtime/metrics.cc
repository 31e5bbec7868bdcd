#include "runtime/metrics.hh"

#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <cmath>
#include <iterator>
#include <map>
#include <numeric>
#include <stdexcept>

namespace reef::metrics {

namespace internal {

struct registered_metric {
    metric_type type;
    std::string description;
    std::function<metric_value()> read;
};

class metric_registry {
public:
    // Ordered so that a family's metrics are neighbours and collect() is sorted.
    std::map<metric_id, registered_metric> metrics;
};

metric_registry& local_registry() {
    thread_local metric_registry registry;
    return registry;
}

} // namespace internal

namespace {

bool is_identifier(std::string_view s) {
    auto head = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
    auto tail = [&](char c) { return head(c) || (c >= '0' && c <= '9'); };
    return !s.empty() && head(s[0]) && std::all_of(s.begin() + 1, s.end(), tail);
}

std::string escape_label_value(std::string_view v) {
    std::string out;
    out.reserve(v.size());
    for (char c : v) {
        switch (c) {
        case '\\': out += "\\\\"; break;
        case '"': out += "\\\""; break;
        case '\n': out += "\\n"; break;
        default: out += c;
        }
    }
    return out;
}

std::string escape_help(std::string_view v) {
    std::string out;
    out.reserve(v.size());
    for (char c : v) {
        switch (c) {
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        default: out += c;
        }
    }
    return out;
}

std::string format_labels(const std::vector<label>& labels) {
    std::string out;
    for (auto& l : labels) {
        out += out.empty() ? "{" : ",";
        out += fmt::format("{}=\"{}\"", l.name, escape_label_value(l.value));
    }
    return out.empty() ? out : out + "}";
}

std::string describe(const metric_id& id) {
    auto labels = format_labels(id.labels);
    return fmt::format("metric '{}' of group '{}'{}{}", id.name, id.group, labels.empty() ? "" : " with labels ",
                       labels);
}

// Go's ParseFloat, which Prometheus uses, reads fmt's shortest round-trip
// form; only the non-finite values are spelled differently.
std::string format_number(double v) {
    if (std::isnan(v)) {
        return "NaN";
    }
    if (std::isinf(v)) {
        return v > 0 ? "+Inf" : "-Inf";
    }
    return fmt::format("{}", v);
}

std::string format_value(const metric_value& v) {
    if (auto* u = std::get_if<uint64_t>(&v)) {
        return fmt::format("{}", *u);
    }
    if (auto* i = std::get_if<int64_t>(&v)) {
        return fmt::format("{}", *i);
    }
    return format_number(std::get<double>(v));
}

// `{shard="N",user labels...[,le="bound"]}`
void write_labels(std::string& out, shard_id shard, const std::vector<label>& labels, const std::string* le) {
    fmt::format_to(std::back_inserter(out), "{{shard=\"{}\"", shard);
    for (auto& l : labels) {
        fmt::format_to(std::back_inserter(out), ",{}=\"{}\"", l.name, escape_label_value(l.value));
    }
    if (le) {
        fmt::format_to(std::back_inserter(out), ",le=\"{}\"", *le);
    }
    out += '}';
}

void check_name(const metric_id& id) {
    if (!is_identifier(id.group)) {
        throw std::invalid_argument(fmt::format("invalid metric group name '{}'", id.group));
    }
    if (!is_identifier(id.name)) {
        throw std::invalid_argument(fmt::format("invalid metric name '{}' in group '{}'", id.name, id.group));
    }
}

void check_labels(const metric_id& id, metric_type type) {
    for (size_t i = 0; i < id.labels.size(); ++i) {
        auto& name = id.labels[i].name;
        if (!is_identifier(name) || name.starts_with("__")) {
            throw std::invalid_argument(fmt::format("invalid label name '{}' on {}", name, describe(id)));
        }
        if (name == "shard" || (name == "le" && type == metric_type::histogram)) {
            throw std::invalid_argument(
                fmt::format("label '{}' on {} is reserved: it is added on export", name, describe(id)));
        }
        if (i > 0 && id.labels[i - 1].name == name) {
            throw std::invalid_argument(fmt::format("label '{}' given twice on {}", name, describe(id)));
        }
    }
}

// Refuses `id` if `existing` already has it, or has its family with another type.
void check_free(const std::map<metric_id, internal::registered_metric>& existing, const metric_id& id,
                metric_type type) {
    if (existing.contains(id)) {
        throw std::invalid_argument(
            fmt::format("duplicate {}: already registered on shard {}", describe(id), this_shard_id()));
    }
    auto it = existing.lower_bound(metric_id{id.group, id.name, {}});
    if (it != existing.end() && it->first.group == id.group && it->first.name == id.name &&
        it->second.type != type) {
        throw std::invalid_argument(fmt::format("metric '{}' of group '{}' is already registered as a {}, not a {}",
                                                id.name, id.group, to_string(it->second.type), to_string(type)));
    }
}

} // namespace

std::string_view to_string(metric_type type) noexcept {
    switch (type) {
    case metric_type::counter: return "counter";
    case metric_type::gauge: return "gauge";
    case metric_type::histogram: return "histogram";
    }
    return "untyped";
}

histogram::histogram(double first_bound, double growth, size_t bucket_count) {
    if (!(first_bound > 0) || !std::isfinite(first_bound) || !(growth > 1) || !std::isfinite(growth) ||
        bucket_count == 0) {
        throw std::invalid_argument(fmt::format(
            "histogram needs first_bound > 0, growth > 1 and at least one bucket, got {}, {}, {}", first_bound,
            growth, bucket_count));
    }
    _bounds.reserve(bucket_count);
    // Repeated multiplication keeps power-of-two bounds exact.
    double bound = first_bound;
    for (size_t i = 0; i < bucket_count; ++i, bound *= growth) {
        _bounds.push_back(bound);
    }
    _counts.assign(bucket_count + 1, 0);
}

void histogram::add(double value) noexcept {
    if (std::isnan(value)) {
        return;
    }
    // The first bound >= value: Prometheus buckets are "less than or equal".
    auto i = std::lower_bound(_bounds.begin(), _bounds.end(), value) - _bounds.begin();
    ++_counts[size_t(i)];
    ++_count;
    _sum += value;
}

histogram_snapshot histogram::snapshot() const {
    histogram_snapshot s;
    s.count = _count;
    s.sum = _sum;
    s.buckets.reserve(_bounds.size());
    uint64_t cumulative = 0;
    for (size_t i = 0; i < _bounds.size(); ++i) {
        cumulative += _counts[i];
        s.buckets.push_back({_bounds[i], cumulative});
    }
    return s;
}

metric_groups::metric_groups()
        // Touching the registry here makes it outlive a thread_local metric_groups.
        : _registry(&internal::local_registry()) {
}

metric_groups::metric_groups(metric_groups&& other) noexcept
        : _registry(other._registry)
        , _ids(std::exchange(other._ids, {})) {
}

metric_groups& metric_groups::operator=(metric_groups&& other) noexcept {
    if (this != &other) {
        clear();
        _registry = other._registry;
        _ids = std::exchange(other._ids, {});
    }
    return *this;
}

metric_groups::~metric_groups() {
    clear();
}

metric_groups& metric_groups::add_group(std::string_view group, std::vector<metric_definition> metrics) {
    auto& registered = _registry->metrics;
    assert(_registry == &internal::local_registry() && "metric_groups used off the shard that created it");
    // Staged first, so that one bad definition registers nothing.
    std::map<metric_id, internal::registered_metric> staged;
    for (auto& def : metrics) {
        metric_id id{std::string(group), std::move(def.name), std::move(def.labels)};
        std::sort(id.labels.begin(), id.labels.end(), [](auto& a, auto& b) { return a.name < b.name; });
        check_name(id);
        check_labels(id, def.type);
        check_free(registered, id, def.type);
        check_free(staged, id, def.type);
        staged.emplace(std::move(id), internal::registered_metric{def.type, std::move(def.description),
                                                                  std::move(def.read)});
    }
    _ids.reserve(_ids.size() + staged.size());
    for (auto& [id, m] : staged) {
        _ids.push_back(id);
    }
    registered.merge(staged);
    return *this;
}

void metric_groups::clear() noexcept {
    if (_ids.empty()) {
        return;
    }
    assert(_registry == &internal::local_registry() && "metric_groups destroyed off the shard that created it");
    for (auto& id : _ids) {
        _registry->metrics.erase(id);
    }
    _ids.clear();
}

std::vector<sample> collect() {
    auto& registry = internal::local_registry();
    auto shard = this_shard_id();
    std::vector<sample> out;
    out.reserve(registry.metrics.size());
    for (auto& [id, m] : registry.metrics) {
        out.push_back(sample{id.group, id.name, m.type, m.description, id.labels, shard, m.read()});
    }
    return out;
}

std::string format_prometheus(std::span<const sample> samples, const prometheus_options& options) {
    std::vector<std::string> families;
    families.reserve(samples.size());
    for (auto& s : samples) {
        families.push_back(fmt::format("{}_{}_{}", options.prefix, s.group, s.name));
    }
    // Samples arrive shard by shard; Prometheus wants each family in one block.
    std::vector<size_t> order(samples.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        return std::tie(families[a], samples[a].shard, samples[a].labels) <
               std::tie(families[b], samples[b].shard, samples[b].labels);
    });

    std::string out;
    auto o = std::back_inserter(out);
    for (size_t k = 0; k < order.size(); ++k) {
        auto& s = samples[order[k]];
        auto& family = families[order[k]];
        if (k == 0 || families[order[k - 1]] != family) {
            auto described = std::find_if(order.begin() + k, order.end(), [&](size_t i) {
                return families[i] != family || !samples[i].description.empty();
            });
            if (described != order.end() && families[*described] == family) {
                fmt::format_to(o, "# HELP {} {}\n", family, escape_help(samples[*described].description));
            }
            fmt::format_to(o, "# TYPE {} {}\n", family, to_string(s.type));
        }
        if (auto* h = std::get_if<histogram_snapshot>(&s.value)) {
            for (auto& b : h->buckets) {
                // +Inf is always written below, from the count.
                if (b.upper_bound == INFINITY) {
                    continue;
                }
                auto le = format_number(b.upper_bound);
                fmt::format_to(o, "{}_bucket", family);
                write_labels(out, s.shard, s.labels, &le);
                fmt::format_to(o, " {}\n", b.count);
            }
            const std::string inf = "+Inf";
            fmt::format_to(o, "{}_bucket", family);
            write_labels(out, s.shard, s.labels, &inf);
            fmt::format_to(o, " {}\n", h->count);
            fmt::format_to(o, "{}_sum", family);
            write_labels(out, s.shard, s.labels, nullptr);
            fmt::format_to(o, " {}\n", format_number(h->sum));
            fmt::format_to(o, "{}_count", family);
            write_labels(out, s.shard, s.labels, nullptr);
            fmt::format_to(o, " {}\n", h->count);
        } else {
            out += family;
            write_labels(out, s.shard, s.labels, nullptr);
            fmt::format_to(o, " {}\n", format_value(s.value));
        }
    }
    return out;
}

} // namespace reef::metrics
