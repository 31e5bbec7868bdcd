// Module cache_service: the row cache's figures from every shard's cache tracker (cache/tracker.hh), with
// ScyllaDB's paths (its "moving_avrage" spelling included) and shapes; Reef has no key or counter cache, and those
// answer 0 as ScyllaDB's do. Caches are never saved: the save periods are 0 ("never", as in ScyllaDB).
#include "api/api_util.hh"
#include "api/table_modules.hh"
#include "cache/tracker.hh"
#include "runtime/smp.hh"
#include "utils/rate_meter.hh"

#include <memory>

namespace reef::api {

namespace {

struct row_cache_figures {
    uint64_t hits = 0;
    uint64_t misses = 0;
    uint64_t partitions = 0;
    uint64_t bytes = 0;
    uint64_t budget = 0;
};

future<row_cache_figures> gather_row_cache(api_context& ctx) {
    auto mapper = [](database&) {
        auto& tr = cache::shard_cache_tracker();
        return row_cache_figures{tr.row_stats().hits, tr.row_stats().misses, tr.row_stats().partitions,
                                 tr.lru().memory_used(), tr.lru().budget()};
    };
    auto add = [](row_cache_figures a, row_cache_figures b) {
        return row_cache_figures{a.hits + b.hits, a.misses + b.misses, a.partitions + b.partitions, a.bytes + b.bytes,
                                 a.budget + b.budget};
    };
    row_cache_figures none;
    auto out = co_await ctx.db.map_reduce0(mapper, none, add);
    co_return out;
}

// The row cache keeps plain counters; the moving averages are Dropwizard meters fed, on the API's shard, with what
// the counters gained since the API last looked (so their counts are exact and their rates follow the API's reads).
struct observed_meters {
    utils::rate_meter hits;
    utils::rate_meter requests;
    uint64_t seen_hits = 0;
    uint64_t seen_requests = 0;

    void observe(const row_cache_figures& f) {
        auto now = utils::rate_meter::clock::now();
        uint64_t requests = f.hits + f.misses;
        hits.mark(f.hits - std::min(f.hits, seen_hits), now);
        this->requests.mark(requests - std::min(requests, seen_requests), now);
        seen_hits = std::max(seen_hits, f.hits);
        seen_requests = std::max(seen_requests, requests);
    }
};

std::string meter_json(const utils::rate_meter::figures& m) {
    return "{\"rates\":[" + json_number(m.rates[0]) + "," + json_number(m.rates[1]) + "," + json_number(m.rates[2]) +
           "],\"mean_rate\":" + json_number(m.mean_rate) + ",\"count\":" + json_number(m.count) + "}";
}

using figure_fn = std::function<std::string(const row_cache_figures&, observed_meters&)>;

} // namespace

void register_cache_service(route_table& t, api_context& ctx) {
    ensure_module(t, "cache_service", "The cache service API");
    auto meters = std::make_shared<observed_meters>();
    struct row_metric {
        const char* name;
        const char* summary;
        const char* type;
        figure_fn value;
    };
    std::vector<row_metric> row = {
        {"hits", "Row cache hits (partitions a read took from the cache alone)", "long",
         [](auto& f, auto&) { return json_number(f.hits); }},
        {"requests", "Row cache requests (hits and misses)", "long",
         [](auto& f, auto&) { return json_number(f.hits + f.misses); }},
        {"hit_rate", "Row cache hits / requests (0 before any request)", "double",
         [](auto& f, auto&) {
             auto requests = f.hits + f.misses;
             return json_number(requests ? double(f.hits) / double(requests) : 0.0);
         }},
        {"hits_moving_avrage", "Row cache hits: rates and count", "rate_moving_average",
         [](auto&, auto& m) { return meter_json(m.hits.read()); }},
        {"requests_moving_avrage", "Row cache requests: rates and count", "rate_moving_average",
         [](auto&, auto& m) { return meter_json(m.requests.read()); }},
        {"size", "Bytes of the shards' caches (row cache and index pages share one budget)", "long",
         [](auto& f, auto&) { return json_number(f.bytes); }},
        {"entries", "Partitions in the row caches", "long", [](auto& f, auto&) { return json_number(f.partitions); }},
        {"capacity", "The shards' cache budgets, in bytes", "long", [](auto& f, auto&) { return json_number(f.budget); }},
    };
    for (auto& m : row) {
        t.add(http_method::get, std::string("/cache_service/metrics/row/") + m.name,
              {m.summary, std::string("get_row_") + m.name, m.type},
              [&ctx, meters, value = m.value](http_request&) -> future<http_reply> {
                  auto f = co_await gather_row_cache(ctx);
                  meters->observe(f);
                  co_return http_reply::json(value(f, *meters));
              });
    }
    // No key or counter cache: zeros, and empty meters, as ScyllaDB answers.
    for (auto cache : {"key", "counter"}) {
        for (auto name : {"hits", "requests", "hit_rate", "size", "entries", "capacity"}) {
            t.add(http_method::get, std::string("/cache_service/metrics/") + cache + "/" + name,
                  {std::string("Reef has no ") + cache + " cache: 0", std::string("get_") + cache + "_" + name,
                   std::string_view(name) == "hit_rate" ? "double" : "long"},
                  [](http_request&) -> future<http_reply> { co_return http_reply::json("0"); });
        }
        for (auto name : {"hits_moving_avrage", "requests_moving_avrage"}) {
            t.add(http_method::get, std::string("/cache_service/metrics/") + cache + "/" + name,
                  {std::string("Reef has no ") + cache + " cache: an empty meter", std::string("get_") + cache + "_" + name,
                   "rate_moving_average"},
                  [](http_request&) -> future<http_reply> {
                      co_return http_reply::json(meter_json(utils::rate_meter::figures{}));
                  });
        }
    }
    for (auto cache : {"row", "key", "counter"}) {
        t.add(http_method::get, std::string("/cache_service/") + cache + "_cache_save_period",
              {"Seconds between saves of the cache: 0, Reef never saves it", std::string("get_") + cache +
               "_cache_save_period_in_seconds", "long"},
              [](http_request&) -> future<http_reply> { co_return http_reply::json("0"); });
    }
}

} // namespace reef::api
