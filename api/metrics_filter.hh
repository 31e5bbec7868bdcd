// metrics_filter: the text /metrics answers, from samples and the request's query, as ScyllaDB filters it.
// Promises: __name__ (repeatable, `prefix*`), __help__=false and label=regex filters; a bad filter is a 400.
#pragma once

#include "api/http_message.hh"
#include "runtime/metrics.hh"

#include <string>
#include <vector>

namespace reef::api {

// `__name__=` keeps only the families it names (with or without the prefix; a trailing '*' makes it a prefix),
// `__help__=false` drops the HELP lines, any other `label=regex` keeps the samples whose label (`shard` included)
// the regex matches entirely. Throws bad_request for a bad or over-long regex.
std::string format_metrics(std::vector<metrics::sample> samples, const http_request& req, const std::string& prefix);

} // namespace reef::api
