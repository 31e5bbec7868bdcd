// Per-shard metrics: counters, gauges and histograms registered by metric_groups, read through callbacks, exported as Prometheus text.
// Values are read only when collected, so hot paths bump plain fields; each shard thread has its own registry and needs no locks.
#pragma once

#include "runtime/shard.hh"

#include <compare>
#include <concepts>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace reef::metrics {

enum class metric_type { counter, gauge, histogram };

// "counter", "gauge", "histogram": the Prometheus TYPE words.
std::string_view to_string(metric_type type) noexcept;

struct label {
    std::string name;
    std::string value;

    label(std::string name, std::string value) : name(std::move(name)), value(std::move(value)) {}
    template <std::integral T>
    label(std::string name, T value) : name(std::move(name)), value(std::to_string(value)) {}

    auto operator<=>(const label&) const = default;
    bool operator==(const label&) const = default;
};

struct description {
    std::string text;

    description() = default;
    explicit description(std::string text) : text(std::move(text)) {}
};

// Buckets are cumulative, as Prometheus wants them: bucket i counts every
// value <= its upper_bound. The implicit +Inf bucket holds `count`.
struct histogram_bucket {
    double upper_bound;
    uint64_t count;

    bool operator==(const histogram_bucket&) const = default;
};

struct histogram_snapshot {
    uint64_t count = 0;
    double sum = 0;
    std::vector<histogram_bucket> buckets;

    bool operator==(const histogram_snapshot&) const = default;
};

// A distribution for code to fill with add(); export it with make_histogram.
// Bucket i has upper bound first_bound * growth^i; values above the last
// bound are counted only in +Inf.
class histogram {
    std::vector<double> _bounds;
    std::vector<uint64_t> _counts; // per bucket, not cumulative; the last is the overflow
    uint64_t _count = 0;
    double _sum = 0;

public:
    // Throws std::invalid_argument unless first_bound > 0, growth > 1 and bucket_count >= 1.
    explicit histogram(double first_bound = 1.0, double growth = 2.0, size_t bucket_count = 20);

    // O(log buckets), no allocation. NaN is ignored.
    void add(double value) noexcept;

    uint64_t count() const noexcept { return _count; }
    double sum() const noexcept { return _sum; }
    std::span<const double> upper_bounds() const noexcept { return _bounds; }
    histogram_snapshot snapshot() const;
};

// Counters read as uint64_t, integer gauges as int64_t, floating gauges as double.
using metric_value = std::variant<uint64_t, int64_t, double, histogram_snapshot>;

// What makes a registration unique on a shard. Labels are kept sorted by name.
struct metric_id {
    std::string group;
    std::string name;
    std::vector<label> labels;

    auto operator<=>(const metric_id&) const = default;
    bool operator==(const metric_id&) const = default;
};

// Built by make_counter, make_gauge and make_histogram; handed to metric_groups::add_group.
struct metric_definition {
    std::string name;
    metric_type type;
    std::string description;
    std::vector<label> labels;
    std::function<metric_value()> read;
};

namespace internal {

class metric_registry;

template <typename T, typename Convert>
std::function<metric_value()> make_reader(T&& value, Convert convert) {
    using stored = std::remove_cvref_t<T>;
    if constexpr (std::is_invocable_v<stored&>) {
        return [f = std::forward<T>(value), convert]() mutable -> metric_value { return convert(f()); };
    } else {
        static_assert(std::is_lvalue_reference_v<T>,
                      "a metric's value must be a callback or a variable passed by reference");
        const stored* p = &value;
        return [p, convert]() -> metric_value { return convert(*p); };
    }
}

// What a metric's value reads as: the callback's result, or the variable itself.
template <typename T, bool = std::is_invocable_v<std::remove_cvref_t<T>&>>
struct read_type_of {
    using type = std::remove_cvref_t<std::invoke_result_t<std::remove_cvref_t<T>&>>;
};
template <typename T>
struct read_type_of<T, false> {
    using type = std::remove_cvref_t<T>;
};
template <typename T>
using read_type = typename read_type_of<T>::type;

} // namespace internal

// `value` is either a callback returning the value or a variable, captured by
// reference, that must outlive the registration.
template <typename T>
metric_definition make_counter(std::string name, T&& value, description d = {}, std::vector<label> labels = {}) {
    static_assert(std::is_integral_v<internal::read_type<T>>, "a counter reads as an integer");
    return {std::move(name), metric_type::counter, std::move(d.text), std::move(labels),
            internal::make_reader(std::forward<T>(value), [](auto v) { return metric_value(std::in_place_type<uint64_t>, uint64_t(v)); })};
}

template <typename T>
metric_definition make_gauge(std::string name, T&& value, description d = {}, std::vector<label> labels = {}) {
    using R = internal::read_type<T>;
    static_assert(std::is_arithmetic_v<R>, "a gauge reads as a number");
    return {std::move(name), metric_type::gauge, std::move(d.text), std::move(labels),
            internal::make_reader(std::forward<T>(value), [](auto v) {
                if constexpr (std::is_floating_point_v<R>) {
                    return metric_value(std::in_place_type<double>, double(v));
                } else {
                    return metric_value(std::in_place_type<int64_t>, int64_t(v));
                }
            })};
}

// `value` is a metrics::histogram variable (captured by reference), or a
// callback returning a histogram or a histogram_snapshot.
template <typename T>
metric_definition make_histogram(std::string name, T&& value, description d = {}, std::vector<label> labels = {}) {
    using R = internal::read_type<T>;
    static_assert(std::is_same_v<R, histogram> || std::is_same_v<R, histogram_snapshot>,
                  "a histogram metric reads as a metrics::histogram or a histogram_snapshot");
    return {std::move(name), metric_type::histogram, std::move(d.text), std::move(labels),
            internal::make_reader(std::forward<T>(value), [](const auto& v) {
                if constexpr (std::is_same_v<R, histogram>) {
                    return metric_value(v.snapshot());
                } else {
                    return metric_value(v);
                }
            })};
}

// Owns registrations on the shard that constructed it; destroying it (on that
// same shard) unregisters them. Movable within the shard.
class metric_groups {
    internal::metric_registry* _registry;
    std::vector<metric_id> _ids;

public:
    metric_groups();
    metric_groups(metric_groups&& other) noexcept;
    metric_groups& operator=(metric_groups&& other) noexcept;
    ~metric_groups();

    // Registers all of `metrics` or none. Throws std::invalid_argument naming
    // the metric when a name or label is malformed, a label is reserved
    // ("shard"; "le" on histograms), the same group+name+labels is already
    // registered on this shard, or the same group+name has another type.
    metric_groups& add_group(std::string_view group, std::vector<metric_definition> metrics);

    // Unregisters everything this object registered.
    void clear() noexcept;

    size_t size() const noexcept { return _ids.size(); }
};

// One value read at collection time.
struct sample {
    std::string group;
    std::string name;
    metric_type type;
    std::string description;
    std::vector<label> labels; // sorted by name; the shard is in `shard`, not here
    shard_id shard;
    metric_value value;
};

// Reads every metric of the calling shard, ordered by group, name, labels.
std::vector<sample> collect();

struct prometheus_options {
    // Families are named <prefix>_<group>_<name>.
    std::string prefix = "reef";
};

// Prometheus text exposition (version 0.0.4) of samples from any number of
// shards: one HELP (when described) and TYPE per family, samples of a family
// together, a `shard` label first on each sample.
std::string format_prometheus(std::span<const sample> samples, const prometheus_options& options = {});

} // namespace reef::metrics
