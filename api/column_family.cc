// Module column_family: GET /column_family/, /column_family/name, /column_family/metrics/<metric>/{name} (and the
// all-tables form without a name), the latency moving-average histograms and sstables per level, with ScyllaDB's
// paths and shapes. Values come from gather_table_figures (api/table_metrics.hh); api/README.md says which
// metrics Reef does not keep and what they answer.
#include "api/api_util.hh"
#include "api/table_metrics.hh"
#include "api/table_modules.hh"

#include <functional>

namespace reef::api {

namespace {

param_doc name_param() {
    return param_doc{"name", "The table, as keyspace:table", true, "string", "path"};
}

// A histogram as ScyllaDB's REST API writes one (microseconds), without the sample of recent values.
std::string histogram_json(const latency_summary& h) {
    return "{\"count\":" + json_number(h.count) + ",\"sum\":" + json_number(int64_t(h.sum)) +
           ",\"min\":" + json_number(int64_t(h.min)) + ",\"max\":" + json_number(int64_t(h.max)) +
           ",\"variance\":" + json_number(h.variance()) + ",\"mean\":" + json_number(h.mean()) + ",\"sample\":[]}";
}

std::string meter_json(const utils::rate_meter::figures& m) {
    return "{\"rates\":[" + json_number(m.rates[0]) + "," + json_number(m.rates[1]) + "," + json_number(m.rates[2]) +
           "],\"mean_rate\":" + json_number(m.mean_rate) + ",\"count\":" + json_number(m.count) + "}";
}

struct metric {
    const char* name;
    const char* summary;
    const char* type;
    // Whether it needs the files' sizes (a blocking stat per file).
    bool disk;
    std::function<std::string(const table_figures&)> value;
};

std::vector<metric> metrics() {
    auto u = [](uint64_t v) { return json_number(v); };
    return {
        {"live_ss_table_count", "Live sstables", "long", false, [u](auto& f) { return u(f.live_sstables); }},
        {"live_disk_space_used", "Bytes of the live sstables' files", "long", true,
         [u](auto& f) { return u(f.live_disk_bytes); }},
        {"total_disk_space_used", "Bytes of the sstables' files (Reef deletes compacted sstables at once: live ones)",
         "long", true, [u](auto& f) { return u(f.live_disk_bytes); }},
        {"snapshots_size", "Bytes of the files in the table's snapshots", "long", true,
         [u](auto& f) { return u(f.snapshot_bytes); }},
        {"memtable_off_heap_size", "Bytes the active memtable holds", "long", false,
         [u](auto& f) { return u(f.memtable_bytes); }},
        {"memtable_on_heap_size", "Always 0, as in ScyllaDB (memtables are counted off heap)", "long", false,
         [](auto&) { return std::string("0"); }},
        {"memtable_live_data_size", "Bytes the active memtable holds", "long", false,
         [u](auto& f) { return u(f.memtable_bytes); }},
        {"memtable_columns_count", "Partitions in the active memtable (ScyllaDB's meaning)", "long", false,
         [u](auto& f) { return u(f.memtable_partitions); }},
        {"memtable_switch_count", "Memtables sealed for flushing", "long", false,
         [u](auto& f) { return u(f.memtable_switches); }},
        {"pending_flushes", "Sealed memtables waiting to be flushed", "long", false,
         [u](auto& f) { return u(f.pending_flushes); }},
        {"bloom_filter_off_heap_memory_used", "Bytes of the sstables' bloom filters in memory", "long", false,
         [u](auto& f) { return u(f.filter_memory); }},
        {"index_summary_off_heap_memory_used", "Bytes of the sstables' summaries in memory", "long", false,
         [u](auto& f) { return u(f.summary_memory); }},
        {"compression_metadata_off_heap_memory_used", "Bytes of the sstables' compression offsets in memory", "long",
         false, [u](auto& f) { return u(f.compression_memory); }},
        {"bloom_filter_disk_space_used", "Bytes of the sstables' Filter.db files", "long", true,
         [u](auto& f) { return u(f.filter_disk_bytes); }},
        {"compression_ratio", "Mean compression ratio of the compressed sstables (0: none)", "double", false,
         [](auto& f) { return json_number(f.compression_ratio()); }},
        {"estimated_row_count", "Partitions in the sstables (their Statistics.db histograms)", "long", false,
         [u](auto& f) { return u(f.estimated_partitions); }},
        {"min_row_size", "Smallest partition size bucket of the sstables", "long", false,
         [](auto& f) { return json_number(f.min_partition_size.value_or(0)); }},
        {"max_row_size", "Largest partition size bucket of the sstables", "long", false,
         [](auto& f) { return json_number(f.max_partition_size); }},
        {"mean_row_size", "Mean partition size of the sstables", "long", false,
         [](auto& f) { return json_number(f.mean_partition_size()); }},
        {"read", "Local reads", "long", false, [u](auto& f) { return u(f.read_latency.count); }},
        {"write", "Local writes", "long", false, [u](auto& f) { return u(f.write_latency.count); }},
        {"read_latency", "Total local read latency, microseconds", "long", false,
         [](auto& f) { return json_number(int64_t(f.read_latency.sum)); }},
        {"write_latency", "Total local write latency, microseconds", "long", false,
         [](auto& f) { return json_number(int64_t(f.write_latency.sum)); }},
        // Reef does not count bloom filter false positives: 0, as ScyllaDB answers without sstables.
        {"bloom_filter_false_positives", "Not counted by Reef: 0", "long", false, [](auto&) { return std::string("0"); }},
        {"recent_bloom_filter_false_positives", "Not counted by Reef: 0", "long", false,
         [](auto&) { return std::string("0"); }},
        {"bloom_filter_false_ratio", "Not counted by Reef: 0", "double", false, [](auto&) { return std::string("0"); }},
        {"recent_bloom_filter_false_ratio", "Not counted by Reef: 0", "double", false,
         [](auto&) { return std::string("0"); }},
        // Nor does it keep per-read scanned-cell histograms: the empty histogram.
        {"live_scanned_histogram", "Not kept by Reef: the empty histogram", "histogram", false,
         [](auto&) { return histogram_json({}); }},
        {"tombstone_scanned_histogram", "Not kept by Reef: the empty histogram", "histogram", false,
         [](auto&) { return histogram_json({}); }},
    };
}

std::vector<table_id> ids_of(const std::vector<schema_ptr>& tables) {
    std::vector<table_id> ids;
    for (auto& s : tables) {
        ids.push_back(s->id());
    }
    return ids;
}

future<table_figures> figures_of(api_context& ctx, const http_request& req, bool disk) {
    std::vector<table_id> ids;
    if (auto it = std::find_if(req.path_params.begin(), req.path_params.end(),
                               [](auto& p) { return p.first == "name"; });
        it != req.path_params.end()) {
        ids.push_back(find_table_by_name(ctx.db.local(), it->second)->id());
    } else {
        ids = ids_of(all_tables(ctx.db.local()));
    }
    auto f = co_await gather_table_figures(ctx.db, std::move(ids), disk);
    co_return f;
}

} // namespace

void register_column_family(route_table& t, api_context& ctx) {
    ensure_module(t, "column_family", "The column family API");
    t.add(http_method::get, "/column_family/", {"Every table: keyspace, name and type", "get_column_family", "array"},
          [&ctx](http_request&) -> future<http_reply> {
              std::string out = "[";
              bool first = true;
              for (auto& s : all_tables(ctx.db.local())) {
                  out += first ? "" : ",";
                  first = false;
                  out += "{\"ks\":" + json_string(s->keyspace()) + ",\"cf\":" + json_string(s->table()) +
                         ",\"type\":\"ColumnFamilies\"}";
              }
              co_return http_reply::json(out + "]");
          });
    t.add(http_method::get, "/column_family/name", {"Every table's keyspace:name", "get_column_family_name", "array"},
          [&ctx](http_request&) -> future<http_reply> {
              std::vector<std::string> names;
              for (auto& s : all_tables(ctx.db.local())) {
                  names.push_back(s->keyspace() + ":" + s->table());
              }
              co_return http_reply::json(json_string_array(names));
          });
    t.add(http_method::get, "/column_family/name/keyspace",
          {"Every keyspace's name", "get_column_family_name_keyspace", "array"},
          [&ctx](http_request&) -> future<http_reply> {
              co_return http_reply::json(json_string_array(ctx.db.local().keyspace_names()));
          });
    for (auto& m : metrics()) {
        auto handler = [&ctx, value = m.value, disk = m.disk](http_request& req) -> future<http_reply> {
            auto f = co_await figures_of(ctx, req, disk);
            co_return http_reply::json(value(f));
        };
        std::string base = std::string("/column_family/metrics/") + m.name;
        t.add(http_method::get, base + "/{name}",
              {std::string(m.summary) + ", of one table", std::string("get_") + m.name, m.type, {name_param()}}, handler);
        t.add(http_method::get, base, {std::string(m.summary) + ", of every table", std::string("get_all_") + m.name,
                                       m.type}, handler);
    }
    for (auto kind : {"read", "write"}) {
        bool read = std::string_view(kind) == "read";
        t.add(http_method::get, std::string("/column_family/metrics/") + kind + "_latency/moving_average_histogram/{name}",
              {std::string("The table's local ") + kind + " rates and latency histogram (microseconds)",
               std::string("get_") + kind + "_latency_histogram", "rate_moving_average_and_histogram", {name_param()}},
              [&ctx, read](http_request& req) -> future<http_reply> {
                  auto f = co_await figures_of(ctx, req, false);
                  auto& h = read ? f.read_latency : f.write_latency;
                  auto& m = read ? f.read_rate : f.write_rate;
                  co_return http_reply::json("{\"meter\":" + meter_json(m) + ",\"hist\":" + histogram_json(h) + "}");
              });
    }
    t.add(http_method::get, "/column_family/sstables/per_level/{name}",
          {"Sstables per level: empty, Reef has no leveled compaction", "get_sstable_count_per_level", "array",
           {name_param()}},
          [&ctx](http_request& req) -> future<http_reply> {
              find_table_by_name(ctx.db.local(), req.path_param("name"));
              co_return http_reply::json("[]");
          });
}

} // namespace reef::api
