// /metrics: samples gathered from every shard on the request's shard, then filtered and formatted once.
#include "api/prometheus.hh"

#include "api/metrics_filter.hh"
#include "runtime/smp.hh"

namespace reef::api {

void register_prometheus(route_table& t, prometheus_config cfg) {
    t.add_undocumented(http_method::get, "/metrics", [cfg](http_request& req) -> future<http_reply> {
        std::vector<metrics::sample> all;
        for (shard_id s = 0; s < smp::count(); ++s) {
            auto part = co_await smp::submit_to(s, [] { return metrics::collect(); });
            all.insert(all.end(), std::make_move_iterator(part.begin()), std::make_move_iterator(part.end()));
        }
        co_return http_reply::text(format_metrics(std::move(all), req, cfg.prefix), "text/plain; version=0.0.4");
    });
}

} // namespace reef::api
