// Tests of the per-shard metrics registry: histogram buckets, registration
// and unregistration, duplicate rejection and the Prometheus text.
#include "runtime/metrics.hh"
#include "runtime/shard.hh"

#include <boost/test/unit_test.hpp>

#include <cmath>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

using namespace reef;
namespace m = reef::metrics;

namespace {

std::string error_of(auto&& fn) {
    try {
        fn();
    } catch (const std::invalid_argument& e) {
        return e.what();
    }
    return "<no exception>";
}

const m::sample* find(const std::vector<m::sample>& samples, std::string_view group, std::string_view name) {
    for (auto& s : samples) {
        if (s.group == group && s.name == name) {
            return &s;
        }
    }
    return nullptr;
}

struct sample_io_stats {
    uint64_t reads = 0;
    uint64_t writes = 0;
    int64_t queued = 0;
};

} // namespace

BOOST_AUTO_TEST_CASE(test_histogram_bucket_math) {
    m::histogram h(1, 2, 4); // bounds 1, 2, 4, 8
    BOOST_REQUIRE_EQUAL(h.upper_bounds().size(), 4u);
    BOOST_CHECK_EQUAL(h.upper_bounds()[0], 1.0);
    BOOST_CHECK_EQUAL(h.upper_bounds()[3], 8.0);
    for (double v : {0.5, 1.0, 1.5, 2.0, 3.0, 8.0, 9.0, 100.0}) {
        h.add(v);
    }
    h.add(std::nan(""));
    auto s = h.snapshot();
    BOOST_CHECK_EQUAL(s.count, 8u);
    BOOST_CHECK_EQUAL(s.sum, 0.5 + 1 + 1.5 + 2 + 3 + 8 + 9 + 100);
    // Bounds are inclusive ("le"), counts cumulative; 9 and 100 only reach +Inf.
    std::vector<m::histogram_bucket> expected = {{1, 2}, {2, 4}, {4, 5}, {8, 6}};
    BOOST_CHECK(s.buckets == expected);
    BOOST_CHECK_EQUAL(h.count(), 8u);
}

BOOST_AUTO_TEST_CASE(test_histogram_bounds_and_validation) {
    m::histogram h(10, 10, 3);
    std::vector<double> bounds(h.upper_bounds().begin(), h.upper_bounds().end());
    BOOST_CHECK((bounds == std::vector<double>{10, 100, 1000}));
    h.add(-5); // below the first bound still lands in the first bucket
    h.add(1000);
    h.add(1000.5);
    auto s = h.snapshot();
    BOOST_CHECK_EQUAL(s.buckets[0].count, 1u);
    BOOST_CHECK_EQUAL(s.buckets[2].count, 2u);
    BOOST_CHECK_EQUAL(s.count, 3u);

    BOOST_CHECK_THROW(m::histogram(0, 2, 4), std::invalid_argument);
    BOOST_CHECK_THROW(m::histogram(1, 1, 4), std::invalid_argument);
    BOOST_CHECK_THROW(m::histogram(1, 2, 0), std::invalid_argument);
    BOOST_CHECK_THROW(m::histogram(INFINITY, 2, 4), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(test_values_are_read_at_collection_time) {
    sample_io_stats stats;
    double load = 0.25;
    m::metric_groups groups;
    groups.add_group("io", {
        m::make_counter("reads", [&] { return stats.reads; }, m::description("reads issued")),
        m::make_counter("writes", stats.writes), // a variable, captured by reference
        m::make_gauge("queued", [&] { return stats.queued; }),
        m::make_gauge("load", load),
    });
    BOOST_CHECK_EQUAL(groups.size(), 4u);
    stats.reads = 7;
    stats.writes = 3;
    stats.queued = -2;
    load = 0.75;
    auto samples = m::collect();
    BOOST_REQUIRE_EQUAL(samples.size(), 4u);
    // Sorted by group, then name.
    BOOST_CHECK_EQUAL(samples[0].name, "load");
    BOOST_CHECK_EQUAL(samples[3].name, "writes");

    auto* reads = find(samples, "io", "reads");
    BOOST_REQUIRE(reads);
    BOOST_CHECK(reads->type == m::metric_type::counter);
    BOOST_CHECK_EQUAL(reads->description, "reads issued");
    BOOST_CHECK_EQUAL(std::get<uint64_t>(reads->value), 7u);
    BOOST_CHECK_EQUAL(std::get<uint64_t>(find(samples, "io", "writes")->value), 3u);
    BOOST_CHECK_EQUAL(std::get<int64_t>(find(samples, "io", "queued")->value), -2);
    BOOST_CHECK_EQUAL(std::get<double>(find(samples, "io", "load")->value), 0.75);
    BOOST_CHECK(find(samples, "io", "load")->type == m::metric_type::gauge);

    stats.reads = 8;
    BOOST_CHECK_EQUAL(std::get<uint64_t>(find(m::collect(), "io", "reads")->value), 8u);
}

BOOST_AUTO_TEST_CASE(test_destruction_unregisters) {
    uint64_t kept = 1, dropped = 2;
    m::metric_groups outer;
    outer.add_group("t", {m::make_counter("kept", kept)});
    {
        m::metric_groups inner;
        inner.add_group("t", {m::make_counter("dropped", dropped)});
        BOOST_CHECK_EQUAL(m::collect().size(), 2u);
    }
    auto samples = m::collect();
    BOOST_REQUIRE_EQUAL(samples.size(), 1u);
    BOOST_CHECK_EQUAL(samples[0].name, "kept");

    // The name is free again once its owner is gone.
    m::metric_groups again;
    again.add_group("t", {m::make_counter("dropped", dropped)});
    BOOST_CHECK_EQUAL(m::collect().size(), 2u);
    again.clear();
    BOOST_CHECK_EQUAL(again.size(), 0u);
    BOOST_CHECK_EQUAL(m::collect().size(), 1u);
}

BOOST_AUTO_TEST_CASE(test_move_transfers_ownership) {
    uint64_t v = 5;
    m::metric_groups target;
    {
        m::metric_groups source;
        source.add_group("t", {m::make_counter("moved", v)});
        target = std::move(source);
    }
    BOOST_CHECK_EQUAL(m::collect().size(), 1u);
    m::metric_groups constructed(std::move(target));
    BOOST_CHECK_EQUAL(m::collect().size(), 1u);
    { auto dropped = std::move(constructed); }
    BOOST_CHECK(m::collect().empty());
}

BOOST_AUTO_TEST_CASE(test_duplicates_rejected) {
    uint64_t v = 0;
    m::metric_groups groups;
    groups.add_group("io", {m::make_counter("reads", v, m::description(""), {{"kind", "data"}})});
    // Different labels: another series of the same family.
    groups.add_group("io", {m::make_counter("reads", v, {}, {{"kind", "index"}})});

    m::metric_groups other;
    BOOST_CHECK_EQUAL(
        error_of([&] { other.add_group("io", {m::make_counter("reads", v, {}, {{"kind", "data"}})}); }),
        "duplicate metric 'reads' of group 'io' with labels {kind=\"data\"}: already registered on shard 0");
    // Labels are compared as a set, whatever order they were given in.
    groups.add_group("io", {m::make_counter("ops", v, {}, {{"a", "1"}, {"b", "2"}})});
    BOOST_CHECK_EQUAL(error_of([&] { other.add_group("io", {m::make_counter("ops", v, {}, {{"b", "2"}, {"a", "1"}})}); }),
                      "duplicate metric 'ops' of group 'io' with labels {a=\"1\",b=\"2\"}: already registered on shard 0");
    BOOST_CHECK_EQUAL(error_of([&] { other.add_group("io", {m::make_gauge("reads", v)}); }),
                      "metric 'reads' of group 'io' is already registered as a counter, not a gauge");

    // Within one add_group, and atomically: the good metric before the
    // duplicate is not registered either.
    BOOST_CHECK_EQUAL(error_of([&] {
                          other.add_group("x", {m::make_counter("fine", v), m::make_counter("twice", v),
                                                m::make_counter("twice", v)});
                      }),
                      "duplicate metric 'twice' of group 'x': already registered on shard 0");
    BOOST_CHECK_EQUAL(other.size(), 0u);
    BOOST_CHECK(!find(m::collect(), "x", "fine"));
    BOOST_CHECK_EQUAL(m::collect().size(), 3u);
}

BOOST_AUTO_TEST_CASE(test_bad_names_and_reserved_labels_rejected) {
    uint64_t v = 0;
    m::histogram h;
    m::metric_groups g;
    BOOST_CHECK_EQUAL(error_of([&] { g.add_group("io", {m::make_counter("bad name", v)}); }),
                      "invalid metric name 'bad name' in group 'io'");
    BOOST_CHECK_EQUAL(error_of([&] { g.add_group("1io", {m::make_counter("reads", v)}); }),
                      "invalid metric group name '1io'");
    BOOST_CHECK_EQUAL(error_of([&] { g.add_group("io", {m::make_counter("reads", v, {}, {{"shard", "1"}})}); }),
                      "label 'shard' on metric 'reads' of group 'io' with labels {shard=\"1\"} is reserved: "
                      "it is added on export");
    BOOST_CHECK_EQUAL(error_of([&] { g.add_group("io", {m::make_histogram("lat", h, {}, {{"le", "1"}})}); }),
                      "label 'le' on metric 'lat' of group 'io' with labels {le=\"1\"} is reserved: "
                      "it is added on export");
    BOOST_CHECK_EQUAL(error_of([&] { g.add_group("io", {m::make_counter("r", v, {}, {{"k", "1"}, {"k", "2"}})}); }),
                      "label 'k' given twice on metric 'r' of group 'io' with labels {k=\"1\",k=\"2\"}");
    BOOST_CHECK_EQUAL(error_of([&] { g.add_group("io", {m::make_counter("r", v, {}, {{"__x", "1"}})}); }),
                      "invalid label name '__x' on metric 'r' of group 'io' with labels {__x=\"1\"}");
    // "le" is only reserved on histograms.
    g.add_group("io", {m::make_counter("r", v, {}, {{"le", "1"}})});
    BOOST_CHECK_EQUAL(g.size(), 1u);
}

BOOST_AUTO_TEST_CASE(test_registries_are_per_shard) {
    uint64_t mine = 1, theirs = 2;
    m::metric_groups g;
    g.add_group("t", {m::make_counter("c", mine)});
    std::vector<m::sample> seen_there;
    std::thread t([&] {
        internal::current_shard = 1;
        BOOST_CHECK(m::collect().empty() == true);
        // The same id is free on another shard.
        m::metric_groups there;
        there.add_group("t", {m::make_counter("c", theirs)});
        seen_there = m::collect();
    });
    t.join();
    BOOST_REQUIRE_EQUAL(seen_there.size(), 1u);
    BOOST_CHECK_EQUAL(seen_there[0].shard, 1u);
    BOOST_CHECK_EQUAL(std::get<uint64_t>(seen_there[0].value), 2u);
    auto here = m::collect();
    BOOST_REQUIRE_EQUAL(here.size(), 1u);
    BOOST_CHECK_EQUAL(here[0].shard, 0u);
    BOOST_CHECK_EQUAL(std::get<uint64_t>(here[0].value), 1u);
}

BOOST_AUTO_TEST_CASE(test_prometheus_text) {
    uint64_t reads = 42;
    int64_t queued = -3;
    m::histogram latency(1, 2, 3); // 1, 2, 4
    latency.add(0.5);
    latency.add(3);
    latency.add(10);
    m::metric_groups g;
    g.add_group("io", {
        m::make_counter("reads", reads, m::description("Reads issued.\nBy kind, with \\ and \"quotes\""),
                        {{"kind", "say \"hi\"\\\n"}}),
        m::make_gauge("queued", queued, m::description("Requests waiting")),
        m::make_gauge("ratio", [] { return 0.5; }),
        m::make_histogram("latency", latency, m::description("Latency in us")),
    });
    BOOST_CHECK_EQUAL(m::format_prometheus(m::collect()),
                      "# HELP reef_io_latency Latency in us\n"
                      "# TYPE reef_io_latency histogram\n"
                      "reef_io_latency_bucket{shard=\"0\",le=\"1\"} 1\n"
                      "reef_io_latency_bucket{shard=\"0\",le=\"2\"} 1\n"
                      "reef_io_latency_bucket{shard=\"0\",le=\"4\"} 2\n"
                      "reef_io_latency_bucket{shard=\"0\",le=\"+Inf\"} 3\n"
                      "reef_io_latency_sum{shard=\"0\"} 13.5\n"
                      "reef_io_latency_count{shard=\"0\"} 3\n"
                      "# HELP reef_io_queued Requests waiting\n"
                      "# TYPE reef_io_queued gauge\n"
                      "reef_io_queued{shard=\"0\"} -3\n"
                      "# TYPE reef_io_ratio gauge\n"
                      "reef_io_ratio{shard=\"0\"} 0.5\n"
                      "# HELP reef_io_reads Reads issued.\\nBy kind, with \\\\ and \"quotes\"\n"
                      "# TYPE reef_io_reads counter\n"
                      "reef_io_reads{shard=\"0\",kind=\"say \\\"hi\\\"\\\\\\n\"} 42\n");
}

BOOST_AUTO_TEST_CASE(test_prometheus_merges_shards_into_one_family) {
    // What the REST API does: collect on each shard, concatenate, format.
    auto sample = [](std::string name, unsigned shard, std::vector<m::label> labels, m::metric_value v,
                     std::string help) {
        return m::sample{"cache", std::move(name), m::metric_type::counter, std::move(help), std::move(labels),
                         shard, std::move(v)};
    };
    std::vector<m::sample> samples = {
        sample("hits", 0, {{"kind", "row"}}, uint64_t(1), "Cache hits"),
        sample("misses", 0, {}, uint64_t(2), ""),
        sample("hits", 1, {{"kind", "row"}}, uint64_t(3), "Cache hits"),
        sample("hits", 0, {{"kind", "index"}}, uint64_t(4), "Cache hits"),
        sample("misses", 1, {}, uint64_t(18446744073709551615u), "Cache misses"),
    };
    BOOST_CHECK_EQUAL(m::format_prometheus(samples, {.prefix = "x"}),
                      "# HELP x_cache_hits Cache hits\n"
                      "# TYPE x_cache_hits counter\n"
                      "x_cache_hits{shard=\"0\",kind=\"index\"} 4\n"
                      "x_cache_hits{shard=\"0\",kind=\"row\"} 1\n"
                      "x_cache_hits{shard=\"1\",kind=\"row\"} 3\n"
                      "# HELP x_cache_misses Cache misses\n"
                      "# TYPE x_cache_misses counter\n"
                      "x_cache_misses{shard=\"0\"} 2\n"
                      "x_cache_misses{shard=\"1\"} 18446744073709551615\n");
}

BOOST_AUTO_TEST_CASE(test_histogram_from_snapshot_callback_and_non_finite_numbers) {
    m::metric_groups g;
    g.add_group("h", {
        m::make_histogram("custom", [] {
            return m::histogram_snapshot{2, 0.25, {{0.125, 1}, {INFINITY, 2}}};
        }),
        m::make_gauge("nan", [] { return std::nan(""); }),
        m::make_gauge("neg_inf", [] { return -INFINITY; }),
    });
    BOOST_CHECK_EQUAL(m::format_prometheus(m::collect()),
                      "# TYPE reef_h_custom histogram\n"
                      "reef_h_custom_bucket{shard=\"0\",le=\"0.125\"} 1\n"
                      "reef_h_custom_bucket{shard=\"0\",le=\"+Inf\"} 2\n"
                      "reef_h_custom_sum{shard=\"0\"} 0.25\n"
                      "reef_h_custom_count{shard=\"0\"} 2\n"
                      "# TYPE reef_h_nan gauge\n"
                      "reef_h_nan{shard=\"0\"} NaN\n"
                      "# TYPE reef_h_neg_inf gauge\n"
                      "reef_h_neg_inf{shard=\"0\"} -Inf\n");
}
