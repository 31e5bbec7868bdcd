// storage_service's data endpoints: thin handlers that check their parameters (an unknown keyspace or table is a
// 400 with ScyllaDB's message) and call the database; `void` answers an empty 200 body.
#include "api/storage_service.hh"

#include "api/api_util.hh"

#include "db/database.hh"
#include "db/schema_tables.hh"
#include "runtime/log.hh"
#include "utils/json_writer.hh"

#include <chrono>
#include <map>
#include <memory>

namespace reef::api {

namespace {

param_doc path_keyspace() { return param_doc{"keyspace", "The keyspace", true, "string", "path"}; }
param_doc query_param(std::string name, std::string description, std::string type = "string",
                      std::vector<std::string> allowed = {}) {
    return param_doc{std::move(name), std::move(description), false, std::move(type), "query", std::move(allowed)};
}

// "a,b" -> {"a", "b"}; empty items dropped.
std::vector<std::string> split_list(const std::string* v) {
    std::vector<std::string> out;
    if (!v) {
        return out;
    }
    size_t start = 0;
    while (start <= v->size()) {
        auto comma = v->find(',', start);
        auto item = v->substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        if (!item.empty()) {
            out.push_back(item);
        }
        if (comma == std::string::npos) {
            break;
        }
        start = comma + 1;
    }
    return out;
}

bool bool_param(const http_request& req, std::string_view name, bool dflt) {
    auto* v = req.query_param(name);
    if (!v || v->empty()) {
        return dflt;
    }
    if (*v == "true" || *v == "True" || *v == "1") {
        return true;
    }
    if (*v == "false" || *v == "False" || *v == "0") {
        return false;
    }
    throw bad_request("Invalid value for parameter " + std::string(name) + ": '" + *v + "' (true or false)");
}

void check_keyspace(database& db, const std::string& ks) {
    if (!db.find_keyspace(ks)) {
        throw bad_request("Can't find a keyspace " + ks);
    }
}

// The tables named by `cf` (comma-separated; all of the keyspace's when absent or empty), each checked.
std::vector<std::string> tables_of(database& db, const std::string& ks, const http_request& req) {
    check_keyspace(db, ks);
    auto names = split_list(req.query_param("cf"));
    if (names.empty()) {
        for (auto& s : db.tables_of(ks)) {
            names.push_back(s->table());
        }
    }
    for (auto& n : names) {
        if (!db.find_schema(ks, n)) {
            throw bad_request("Can't find a column family " + n + " in keyspace " + ks);
        }
    }
    return names;
}

http_reply void_reply() { return http_reply::json(""); }

std::string json_string(std::string_view s) {
    std::string out;
    utils::json_writer::append_quoted(out, s);
    return out;
}

// What GET /storage_service/drain reports (ScyllaDB's "Drained <done>/<total> ColumnFamilies").
struct drain_progress {
    bool drained = false;
    size_t tables = 0;
};

bool local_strategy(database& db, const std::string& ks) {
    auto* def = db.find_keyspace(ks);
    if (!def) {
        return false;
    }
    auto cls = def->replication.find("class");
    return cls != def->replication.end() && cls->second.ends_with("LocalStrategy");
}

size_t table_count(database& db) {
    size_t n = 0;
    for (auto& ks : db.keyspace_names()) {
        n += db.tables_of(ks).size();
    }
    return n;
}

void register_flush_and_compact(route_table& t, api_context& ctx) {
    t.add(http_method::post, "/storage_service/flush", {"Flush all memtables in all keyspaces.", "force_flush"},
          [&ctx](http_request&) -> future<http_reply> {
              co_await ctx.db.local().flush_all();
              co_return void_reply();
          });
    t.add(http_method::post, "/storage_service/keyspace_flush/{keyspace}",
          {"Flush the memtables of a keyspace's tables", "force_keyspace_flush", "void",
           {path_keyspace(), query_param("cf", "Comma-separated table names (all when absent)")}},
          [&ctx](http_request& req) -> future<http_reply> {
              auto ks = req.path_param("keyspace");
              auto& db = ctx.db.local();
              for (auto& table : tables_of(db, ks, req)) {
                  co_await db.flush(ks, table);
              }
              co_return void_reply();
          });
    auto compact_doc = [](std::string summary, std::string nickname, bool keyspace) {
        operation_doc d{std::move(summary), std::move(nickname)};
        if (keyspace) {
            d.params.push_back(path_keyspace());
            d.params.push_back(query_param("cf", "Comma-separated table names (all when absent)"));
        }
        d.params.push_back(query_param("flush_memtables", "Flush the memtables first (default true)", "boolean"));
        d.params.push_back(query_param("consider_only_existing_data",
                                       "Accepted for ScyllaDB's clients; every sstable present is compacted",
                                       "boolean"));
        return d;
    };
    t.add(http_method::post, "/storage_service/compact",
          compact_doc("Major compaction of every table of every keyspace", "force_compaction", false),
          [&ctx](http_request& req) -> future<http_reply> {
              auto& db = ctx.db.local();
              bool flush = bool_param(req, "flush_memtables", true);
              bool_param(req, "consider_only_existing_data", false);
              for (auto& ks : db.keyspace_names()) {
                  for (auto& s : db.tables_of(ks)) {
                      if (flush) {
                          co_await db.flush(ks, s->table());
                      }
                      std::vector<std::string> one{s->table()};
                      co_await db.compact(ks, one);
                  }
              }
              co_return void_reply();
          });
    t.add(http_method::post, "/storage_service/keyspace_compaction/{keyspace}",
          compact_doc("Major compaction of a keyspace's tables", "force_keyspace_compaction", true),
          [&ctx](http_request& req) -> future<http_reply> {
              auto ks = req.path_param("keyspace");
              auto& db = ctx.db.local();
              auto tables = tables_of(db, ks, req);
              bool flush = bool_param(req, "flush_memtables", true);
              bool_param(req, "consider_only_existing_data", false);
              for (auto& table : tables) {
                  if (flush) {
                      co_await db.flush(ks, table);
                  }
                  std::vector<std::string> one{table};
                  co_await db.compact(ks, one);
              }
              co_return void_reply();
          });
}

void register_node_state(route_table& t, api_context& ctx) {
    t.add(http_method::get, "/storage_service/keyspaces",
          {"The keyspaces", "get_keyspaces", "array",
           {query_param("type", "all, user (not the system ones) or non_local_strategy", "string",
                        {"all", "user", "non_local_strategy"}),
            query_param("replication", "all, vnodes or tablets (Reef has no tablets)", "string",
                        {"all", "vnodes", "tablets"})}},
          [&ctx](http_request& req) -> future<http_reply> {
              auto& db = ctx.db.local();
              auto* type = req.query_param("type");
              auto* replication = req.query_param("replication");
              utils::json_writer w(false);
              w.begin_array();
              if (!replication || *replication != "tablets") {
                  for (auto& ks : db.keyspace_names()) {
                      if (type && *type == "user" && schema_tables::is_system_keyspace(ks)) {
                          continue;
                      }
                      if (type && *type == "non_local_strategy" && local_strategy(db, ks)) {
                          continue;
                      }
                      w.value(ks);
                  }
              }
              w.end_array();
              co_return http_reply::json(w.take());
          });
    auto progress = std::make_shared<drain_progress>();
    t.add(http_method::post, "/storage_service/drain",
          {"Flushes every memtable and stops accepting writes (the node then serves only this API)", "drain"},
          [&ctx, progress](http_request&) -> future<http_reply> {
              progress->tables = table_count(ctx.db.local());
              if (ctx.drain) {
                  co_await ctx.drain();
              } else {
                  co_await ctx.db.local().drain();
              }
              progress->drained = true;
              co_return void_reply();
          });
    t.add(http_method::get, "/storage_service/drain", {"The progress of a drain", "get_drain_progress", "string"},
          [&ctx, progress](http_request&) -> future<http_reply> {
              auto total = progress->drained ? progress->tables : table_count(ctx.db.local());
              auto done = progress->drained ? total : 0;
              co_return http_reply::json(
                  json_string("Drained " + std::to_string(done) + "/" + std::to_string(total) + " ColumnFamilies"));
          });
    t.add(http_method::get, "/storage_service/release_version",
          {"The Cassandra release version the node answers as", "get_release_version", "string"},
          [&ctx](http_request&) -> future<http_reply> {
              co_return http_reply::json(json_string(ctx.db.local().config().release_version));
          });
    t.add(http_method::get, "/storage_service/compaction_throughput",
          {"The compaction throughput limit in MB/s (0: unthrottled)", "get_compaction_throughput_mb_per_sec",
           "long"},
          [&ctx](http_request&) -> future<http_reply> {
              co_return http_reply::json(std::to_string(ctx.db.local().compaction_throughput_mb_per_sec()));
          });
    t.add(http_method::post, "/storage_service/compaction_throughput",
          {"Sets the compaction throughput limit in MB/s (0: unthrottled)", "set_compaction_throughput_mb_per_sec",
           "void", {param_doc{"value", "MB/s for the node, shared by its shards (0: unthrottled)", true, "long"}}},
          [&ctx](http_request& req) -> future<http_reply> {
              auto mb = parse_unsigned_param("value", *req.query_param("value"));
              co_await ctx.db.local().set_compaction_throughput(mb);
              co_return void_reply();
          });
    t.add(http_method::get, "/storage_service/logging_level",
          {"Every logger's level", "get_logging_levels", "array"}, [](http_request&) -> future<http_reply> {
              auto& reg = global_logger_registry();
              utils::json_writer w(false);
              w.begin_array();
              for (auto& name : reg.get_all_logger_names()) {
                  w.begin_object().member("key", name).member("value", std::string(to_string(reg.get_logger_level(name))));
                  w.end_object();
              }
              w.end_array();
              co_return http_reply::json(w.take());
          });
}

void register_snapshots(route_table& t, api_context& ctx) {
    t.add(http_method::post, "/storage_service/snapshots",
          {"Takes a snapshot of keyspaces or of tables of one keyspace", "take_snapshot", "void",
           {query_param("tag", "The snapshot's name (default: the time in milliseconds)"),
            query_param("kn", "Comma-separated keyspaces (all user keyspaces when absent)"),
            query_param("cf", "Comma-separated tables of the one keyspace given"),
            query_param("sf", "Skip the flush", "boolean")}},
          [&ctx](http_request& req) -> future<http_reply> {
              auto& db = ctx.db.local();
              auto* tag_param = req.query_param("tag");
              std::string tag;
              if (tag_param && !tag_param->empty()) {
                  tag = *tag_param;
              } else {
                  auto now = std::chrono::system_clock::now().time_since_epoch();
                  tag = std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(now).count());
              }
              auto keyspaces = split_list(req.query_param("kn"));
              auto tables = split_list(req.query_param("cf"));
              if (!tables.empty() && keyspaces.size() != 1) {
                  throw bad_request("Only one keyspace may be given with cf (tables)");
              }
              for (auto& ks : keyspaces) {
                  check_keyspace(db, ks);
              }
              if (!tables.empty()) {
                  tables_of(db, keyspaces[0], req);
              }
              bool skip_flush = bool_param(req, "sf", false);
              try {
                  co_await db.snapshot(tag, keyspaces, tables, skip_flush);
              } catch (const std::invalid_argument& e) {
                  throw bad_request(e.what());
              }
              co_return void_reply();
          });
    t.add(http_method::get, "/storage_service/snapshots",
          {"The snapshots on disk, per tag: each table's total and live bytes", "get_snapshot_details", "array"},
          [&ctx](http_request&) -> future<http_reply> {
              auto list = co_await ctx.db.local().list_snapshots();
              std::map<std::string, std::vector<const snapshot_details*>> by_tag;
              for (auto& d : list) {
                  by_tag[d.tag].push_back(&d);
              }
              utils::json_writer w(false);
              w.begin_array();
              for (auto& [tag, tables] : by_tag) {
                  w.begin_object().member("key", tag).key("value").begin_array();
                  for (auto* d : tables) {
                      w.begin_object()
                          .member("ks", d->keyspace)
                          .member("cf", d->table)
                          .member("total", d->total_bytes)
                          .member("live", d->live_bytes)
                          .end_object();
                  }
                  w.end_array().end_object();
              }
              w.end_array();
              co_return http_reply::json(w.take());
          });
    t.add(http_method::get, "/storage_service/snapshots/size/true",
          {"The bytes clearing every snapshot would free (their live bytes)", "true_snapshots_size", "long"},
          [&ctx](http_request&) -> future<http_reply> {
              auto list = co_await ctx.db.local().list_snapshots();
              uint64_t live = 0;
              for (auto& d : list) {
                  live += d.live_bytes;
              }
              co_return http_reply::json(std::to_string(live));
          });
    t.add(http_method::del, "/storage_service/snapshots",
          {"Removes snapshots by tag and/or keyspaces (no tag: every snapshot)", "del_snapshot", "void",
           {query_param("tag", "The snapshot's name (all when absent)"),
            query_param("kn", "Comma-separated keyspaces (all when absent)"),
            query_param("cf", "A table of the keyspaces")}},
          [&ctx](http_request& req) -> future<http_reply> {
              auto& db = ctx.db.local();
              auto* tag_param = req.query_param("tag");
              auto tag = tag_param ? *tag_param : std::string();
              auto keyspaces = split_list(req.query_param("kn"));
              for (auto& ks : keyspaces) {
                  check_keyspace(db, ks);
              }
              auto* cf_param = req.query_param("cf");
              auto cf = cf_param ? *cf_param : std::string();
              try {
                  co_await db.clear_snapshot(tag, keyspaces, cf);
              } catch (const std::invalid_argument& e) {
                  throw bad_request(e.what());
              }
              co_return void_reply();
          });
}

// The flags ScyllaDB's refresh takes: checked to be booleans; on one node each means plain loading.
void check_refresh_flags(const http_request& req) {
    static const char* const names[] = {"load_and_stream", "primary_replica_only", "skip_cleanup", "skip_reshape"};
    for (auto* name : names) {
        bool_param(req, name, false);
    }
}

void register_refresh(route_table& t, api_context& ctx) {
    t.add(http_method::post, "/storage_service/sstables/{keyspace}",
          {"Loads the sstables placed in the table's upload/ directory (nodetool refresh)", "load_new_ss_tables",
           "void",
           {path_keyspace(), param_doc{"cf", "The table", true, "string", "query"},
            query_param("load_and_stream", "Accepted (one node: the same as loading)", "boolean"),
            query_param("primary_replica_only", "Accepted (one node)", "boolean"),
            query_param("skip_cleanup", "Accepted", "boolean"), query_param("skip_reshape", "Accepted", "boolean"),
            query_param("scope", "Accepted (one node)", "string", {"all", "dc", "rack", "node"})}},
          [&ctx](http_request& req) -> future<http_reply> {
              auto ks = req.path_param("keyspace");
              auto& db = ctx.db.local();
              check_keyspace(db, ks);
              auto cf = *req.query_param("cf");
              if (!db.find_schema(ks, cf)) {
                  throw bad_request("Can't find a column family " + cf + " in keyspace " + ks);
              }
              check_refresh_flags(req);
              try {
                  co_await db.load_new_sstables(ks, cf);
              } catch (const refresh_error& e) {
                  throw bad_request(e.what());
              }
              co_return void_reply();
          });
}

} // namespace

void register_storage_service(route_table& t, api_context& ctx) {
    register_flush_and_compact(t, ctx);
    register_node_state(t, ctx);
    register_snapshots(t, ctx);
    register_refresh(t, ctx);
}

} // namespace reef::api
