// prometheus: GET /metrics, every shard's metrics in Prometheus text format under ScyllaDB's names
// (scylla_<group>_<name>{shard="N"}), filtered as metrics_filter.hh says.
#pragma once

#include "api/route_table.hh"
#include "runtime/metrics.hh"

#include <string>

namespace reef::api {

struct prometheus_config {
    // ScyllaDB's prometheus_prefix.
    std::string prefix = "scylla";
};

// Adds the undocumented GET /metrics to t (the metrics server's own table).
void register_prometheus(route_table& t, prometheus_config cfg = {});

} // namespace reef::api
