// Module compaction_manager: the running compactions and the pending work of every shard's compaction manager
// (compaction/compaction_manager.hh), with ScyllaDB's paths and shapes (nodetool compactionstats reads them).
#include "api/api_util.hh"
#include "api/table_modules.hh"
#include "compaction/compaction_manager.hh"
#include "db/database.hh"
#include "utils/json_writer.hh"

#include <map>

namespace reef::api {

namespace {

struct running_figures {
    std::vector<compaction::compaction_info> running;
    // (keyspace, table) -> pending compactions, summed over the shards.
    std::map<std::pair<std::string, std::string>, int64_t> pending;
    uint64_t completed = 0;
};

running_figures shard_figures(database& db) {
    running_figures out;
    auto& mgr = db.get_compaction_manager();
    out.running = mgr.compactions();
    out.completed = mgr.stats().completed;
    for (auto& s : all_tables(db)) {
        if (auto* t = db.find_table(s->id())) {
            if (auto n = mgr.pending_tasks(*t); n > 0) {
                out.pending[{s->keyspace(), s->table()}] += n;
            }
        }
    }
    return out;
}

future<running_figures> gather(api_context& ctx) {
    auto add = [](running_figures a, running_figures b) {
        a.running.insert(a.running.end(), b.running.begin(), b.running.end());
        for (auto& [k, n] : b.pending) {
            a.pending[k] += n;
        }
        a.completed += b.completed;
        return a;
    };
    running_figures none;
    auto out = co_await ctx.db.map_reduce0([](database& db) { return shard_figures(db); }, none, add);
    co_return out;
}

std::string compactions_json(const std::vector<compaction::compaction_info>& running) {
    utils::json_writer w(false);
    w.begin_array();
    for (auto& c : running) {
        w.begin_object().member("id", c.id).member("ks", c.keyspace).member("cf", c.table);
        w.member("task_type", c.task_type).member("completed", c.completed_bytes).member("total", c.total_bytes);
        w.member("unit", "bytes").end_object();
    }
    w.end_array();
    return w.take();
}

std::string pending_json(const std::map<std::pair<std::string, std::string>, int64_t>& pending) {
    utils::json_writer w(false);
    w.begin_array();
    for (auto& [k, n] : pending) {
        w.begin_object().member("ks", k.first).member("cf", k.second).member("task", n).end_object();
    }
    w.end_array();
    return w.take();
}

} // namespace

void register_compaction_manager(route_table& t, api_context& ctx) {
    ensure_module(t, "compaction_manager", "The Compaction manager API");
    t.add(http_method::get, "/compaction_manager/compactions", {"The running compactions", "get_compactions", "array"},
          [&ctx](http_request&) -> future<http_reply> {
              auto f = co_await gather(ctx);
              co_return http_reply::json(compactions_json(f.running));
          });
    t.add(http_method::get, "/compaction_manager/metrics/pending_tasks_by_table",
          {"Pending compactions per table (tables with none are left out)", "get_pending_tasks_by_table", "array"},
          [&ctx](http_request&) -> future<http_reply> {
              auto f = co_await gather(ctx);
              co_return http_reply::json(pending_json(f.pending));
          });
    t.add(http_method::get, "/compaction_manager/metrics/pending_tasks",
          {"Pending compactions of the node", "get_pending_tasks", "long"},
          [&ctx](http_request&) -> future<http_reply> {
              auto f = co_await gather(ctx);
              int64_t total = 0;
              for (auto& [k, n] : f.pending) {
                  total += n;
              }
              co_return http_reply::json(std::to_string(total));
          });
    t.add(http_method::get, "/compaction_manager/metrics/completed_tasks",
          {"Compactions finished since the node started", "get_completed_tasks", "long"},
          [&ctx](http_request&) -> future<http_reply> {
              auto f = co_await gather(ctx);
              co_return http_reply::json(std::to_string(f.completed));
          });
    t.add(http_method::post, "/compaction_manager/stop_compaction",
          {"Stops the running compactions (they resume at the table's next check)", "stop_compaction", "void",
           {param_doc{"type", "The kind of compaction to stop", true, "string", "query", {"COMPACTION"}}}},
          [&ctx](http_request&) -> future<http_reply> {
              auto one = [](database& db) -> future<> {
                  for (auto& s : all_tables(db)) {
                      if (auto t = db.find_table_shared(s->id())) {
                          co_await db.get_compaction_manager().stop_compactions(*t, "stopped by the REST API");
                      }
                  }
              };
              co_await ctx.db.invoke_on_all(one);
              co_return http_reply::json("");
          });
}

} // namespace reef::api
