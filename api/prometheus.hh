// prometheus: GET /metrics, every shard's metrics in Prometheus text format under ScyllaDB's names
// (scylla_<group>_<name>{shard="N"}). Promises: ScyllaDB's query filters (__name__, __help__, label regexes).
#pragma once

#include "api/route_table.hh"
#include "runtime/metrics.hh"

#include <string>
#include <vector>

namespace reef::api {

struct prometheus_config {
    // ScyllaDB's prometheus_prefix.
    std::string prefix = "scylla";
};

// Adds the undocumented GET /metrics to t (the metrics server's own table).
void register_prometheus(route_table& t, prometheus_config cfg = {});

// The exposition of samples as /metrics answers req: `__name__=` (repeatable; a trailing '*' makes it a prefix;
// with or without the prefix) keeps only the families it names, `__help__=false` drops the HELP lines, and any
// other `label=regex` keeps the samples whose label matches the regex entirely. Throws bad_request for a bad regex.
std::string format_metrics(std::vector<metrics::sample> samples, const http_request& req,
                           const prometheus_config& cfg);

} // namespace reef::api
