// storage_service's node and ring endpoints (what nodetool info, status, describecluster, describering and
// getendpoints call), and modules gossiper, snitch and storage_proxy (schema versions). One Reef node owns the whole
// ring: its address (system.local's listen_address), its tokens as system.local keeps them, every range's one
// replica; no gossip runs, and no node joins, leaves or moves.
#include "api/api_util.hh"
#include "api/table_metrics.hh"
#include "api/table_modules.hh"
#include "utils/uuid.hh"

#include <algorithm>
#include <charconv>

namespace reef::api {

namespace {

param_doc path_param(std::string name, std::string description) {
    return param_doc{std::move(name), std::move(description), true, "string", "path"};
}

// The tokens in ring order (they are kept as decimal text).
std::vector<std::string> sorted_tokens(std::vector<std::string> tokens) {
    auto value = [](const std::string& t) {
        int64_t v = 0;
        std::from_chars(t.data(), t.data() + t.size(), v);
        return v;
    };
    std::sort(tokens.begin(), tokens.end(), [&](auto& a, auto& b) { return value(a) < value(b); });
    return tokens;
}

future<double> node_load(api_context& ctx) {
    std::vector<table_id> ids;
    for (auto& s : all_tables(ctx.db.local())) {
        ids.push_back(s->id());
    }
    auto f = co_await gather_table_figures(ctx.db, std::move(ids), true);
    co_return double(f.live_disk_bytes);
}

// The node's own addresses: a `host` parameter naming another is refused.
void check_host(const schema_tables::local_info& info, const http_request& req) {
    if (auto* host = req.query_param("host"); host && *host != info.listen_address && *host != info.rpc_address) {
        throw bad_request("Host " + *host + " is not a member of the cluster (its only node is " +
                          info.listen_address + ")");
    }
}

// Registers GET `path` answering fn(local_info, req) as JSON.
template <typename Fn>
void add_local(route_table& t, api_context& ctx, std::string path, operation_doc doc, Fn fn) {
    t.add(http_method::get, std::move(path), std::move(doc), [&ctx, fn](http_request& req) -> future<http_reply> {
        auto info = co_await read_local_info(ctx.db);
        co_return http_reply::json(fn(info, req));
    });
}

// Registers GET `path` answering the constant JSON `body`, a fact of every single Reef node.
void add_fixed(route_table& t, std::string path, operation_doc doc, std::string body) {
    t.add(http_method::get, std::move(path), std::move(doc), [body](http_request&) -> future<http_reply> {
        co_return http_reply::json(body);
    });
}

std::string describe_ring(const schema_tables::local_info& info) {
    auto tokens = sorted_tokens(info.tokens);
    std::string out = "[";
    for (size_t i = 0; i < tokens.size(); ++i) {
        // Range (previous token, token]; the first wraps around from the last.
        auto& start = tokens[(i + tokens.size() - 1) % tokens.size()];
        out += i ? "," : "";
        out += "{\"start_token\":" + json_string(start) + ",\"end_token\":" + json_string(tokens[i]) +
               ",\"endpoints\":[" + json_string(info.listen_address) + "],\"rpc_endpoints\":[" +
               json_string(info.rpc_address) + "],\"endpoint_details\":[{\"host\":" + json_string(info.listen_address) +
               ",\"datacenter\":" + json_string(info.data_center) + ",\"rack\":" + json_string(info.rack) + "}]}";
    }
    return out + "]";
}

void register_storage_service_node(route_table& t, api_context& ctx) {
    add_local(t, ctx, "/storage_service/hostid/local", {"The node's host id", "local_hostid", "string"},
              [](auto& info, auto&) { return json_string(utils::to_string(info.host_id)); });
    add_local(t, ctx, "/storage_service/host_id", {"Each node's address and host id", "get_host_id_map", "array"},
              [](auto& info, auto&) {
                  return json_key_values({{info.listen_address, json_string(utils::to_string(info.host_id))}});
              });
    add_fixed(t, "/storage_service/gossiping", {"Whether gossip runs: false, Reef has none", "is_gossip_running",
                                                "boolean"}, "false");
    add_fixed(t, "/storage_service/rpc_server", {"Whether the Thrift server runs: false, Reef has none",
                                                 "is_rpc_server_running", "boolean"}, "false");
    t.add(http_method::get, "/storage_service/native_transport",
          {"Whether the CQL server serves", "is_native_transport_running", "boolean"},
          [&ctx](http_request&) -> future<http_reply> {
              bool running = ctx.native_transport_running && ctx.native_transport_running();
              co_return http_reply::json(running ? "true" : "false");
          });
    t.add(http_method::get, "/storage_service/load", {"Bytes of the node's live sstables", "get_load", "double"},
          [&ctx](http_request&) -> future<http_reply> {
              auto load = co_await node_load(ctx);
              co_return http_reply::json(json_number(load));
          });
    t.add(http_method::get, "/storage_service/load_map", {"Each node's load", "get_load_map", "array"},
          [&ctx](http_request&) -> future<http_reply> {
              auto load = co_await node_load(ctx);
              auto info = co_await read_local_info(ctx.db);
              co_return http_reply::json(json_key_values({{info.listen_address, json_number(load)}}));
          });
    add_local(t, ctx, "/storage_service/generation_number",
              {"The node's generation (seconds since the epoch at its start)", "get_current_generation_number", "long"},
              [](auto& info, auto&) { return json_number(int64_t(info.gossip_generation)); });
    add_local(t, ctx, "/storage_service/tokens", {"The ring's tokens", "get_tokens", "array"},
              [](auto& info, auto&) { return json_string_array(sorted_tokens(info.tokens)); });
    add_local(t, ctx, "/storage_service/tokens/{endpoint}",
              {"A node's tokens", "get_node_tokens", "array", {path_param("endpoint", "The node's address")}},
              [](auto& info, auto& req) {
                  auto& ep = req.path_param("endpoint");
                  bool self = ep == info.listen_address || ep == info.rpc_address;
                  return json_string_array(self ? sorted_tokens(info.tokens) : std::vector<std::string>{});
              });
    add_local(t, ctx, "/storage_service/tokens_endpoint", {"Each token's node", "get_token_endpoint", "array"},
              [](auto& info, auto&) {
                  std::vector<std::pair<std::string, std::string>> out;
                  for (auto& tok : sorted_tokens(info.tokens)) {
                      out.emplace_back(tok, json_string(info.listen_address));
                  }
                  return json_key_values(out);
              });
    add_fixed(t, "/storage_service/join_ring", {"Whether the node joined the ring: true", "is_joined", "boolean"},
              "true");
    for (auto state : {"joining", "leaving", "moving", "excluded"}) {
        add_fixed(t, std::string("/storage_service/nodes/") + state,
                  {std::string("Nodes ") + state + ": none, the ring has one node", std::string("get_") + state +
                   "_nodes", "array"}, "[]");
    }
    add_local(t, ctx, "/storage_service/ownership/", {"Each node's share of the ring", "get_ownership", "array"},
              [](auto& info, auto&) { return json_key_values({{info.listen_address, json_string("1")}}); });
    t.add(http_method::get, "/storage_service/ownership/{keyspace}",
          {"Each node's share of a keyspace's data", "get_effective_ownership", "array",
           {path_param("keyspace", "The keyspace"), param_doc{"cf", "A table of the keyspace"}}},
          [&ctx](http_request& req) -> future<http_reply> {
              check_keyspace(ctx.db.local(), req.path_param("keyspace"));
              if (auto* cf = req.query_param("cf")) {
                  find_table_by_name(ctx.db.local(), req.path_param("keyspace") + ":" + *cf);
              }
              auto info = co_await read_local_info(ctx.db);
              co_return http_reply::json(json_key_values({{info.listen_address, json_string("1")}}));
          });
    t.add(http_method::get, "/storage_service/describe_ring/{keyspace}",
          {"The ring's token ranges and their replicas", "describe_ring", "array",
           {path_param("keyspace", "The keyspace"), param_doc{"table", "A table of the keyspace"}}},
          [&ctx](http_request& req) -> future<http_reply> {
              check_keyspace(ctx.db.local(), req.path_param("keyspace"));
              if (auto* table = req.query_param("table")) {
                  find_table_by_name(ctx.db.local(), req.path_param("keyspace") + ":" + *table);
              }
              auto info = co_await read_local_info(ctx.db);
              co_return http_reply::json(describe_ring(info));
          });
    t.add(http_method::get, "/storage_service/natural_endpoints/{keyspace}",
          {"The nodes holding a partition key", "get_natural_endpoints", "array",
           {path_param("keyspace", "The keyspace"), param_doc{"cf", "The table", true},
            param_doc{"key", "The partition key", true}}},
          [&ctx](http_request& req) -> future<http_reply> {
              find_table_by_name(ctx.db.local(), req.path_param("keyspace") + ":" + *req.query_param("cf"));
              auto info = co_await read_local_info(ctx.db);
              co_return http_reply::json(json_string_array({info.listen_address}));
          });
    add_local(t, ctx, "/storage_service/schema_version", {"The schema's version (system.local)", "get_schema_version",
                                                          "string"},
              [](auto& info, auto&) { return json_string(utils::to_string(info.schema_version)); });
    add_fixed(t, "/storage_service/partitioner_name", {"The partitioner's class", "get_partitioner_name", "string"},
              json_string("org.apache.cassandra.dht.Murmur3Partitioner"));
    add_local(t, ctx, "/storage_service/cluster_name", {"The cluster's name", "get_cluster_name", "string"},
              [](auto& info, auto&) { return json_string(info.cluster_name); });
    add_fixed(t, "/storage_service/metrics/exceptions",
              {"Storage exceptions: 0, Reef does not count them", "get_exceptions", "long"}, "0");
    t.add(http_method::get, "/storage_service/scylla_release_version",
          {"Reef's own version", "get_scylla_release_version", "string"},
          [&ctx](http_request&) -> future<http_reply> { co_return http_reply::json(json_string(ctx.reef_version)); });
}

} // namespace

void register_node_info(route_table& t, api_context& ctx) {
    ensure_module(t, "storage_service", "The storage service API");
    ensure_module(t, "gossiper", "The gossiper API");
    ensure_module(t, "snitch", "The endpoint snitch info API");
    ensure_module(t, "storage_proxy", "The storage proxy API");
    register_storage_service_node(t, ctx);
    // Each schema version and the nodes that have it: one node, one version (nodetool describecluster).
    add_local(t, ctx, "/storage_proxy/schema_versions", {"Each schema version's nodes", "get_schema_versions", "array"},
              [](auto& info, auto&) {
                  return json_key_values({{utils::to_string(info.schema_version),
                                           json_string_array({info.listen_address})}});
              });
    add_local(t, ctx, "/gossiper/endpoint/live", {"The live nodes: this one", "get_live_endpoint", "array"},
              [](auto& info, auto&) { return json_string_array({info.listen_address}); });
    add_fixed(t, "/gossiper/endpoint/down", {"The nodes down: none", "get_down_endpoint", "array"}, "[]");
    param_doc host{"host", "A node's address (default: this node)"};
    add_local(t, ctx, "/snitch/datacenter", {"A node's datacenter", "get_datacenter", "string", {host}},
              [](auto& info, auto& req) {
                  check_host(info, req);
                  return json_string(info.data_center);
              });
    add_local(t, ctx, "/snitch/rack", {"A node's rack", "get_rack", "string", {host}}, [](auto& info, auto& req) {
        check_host(info, req);
        return json_string(info.rack);
    });
    add_fixed(t, "/snitch/name", {"The snitch's class: Reef places its node as SimpleSnitch does", "get_snitch_name",
                                  "string"}, json_string("org.apache.cassandra.locator.SimpleSnitch"));
}

} // namespace reef::api
