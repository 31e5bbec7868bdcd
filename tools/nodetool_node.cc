// nodetool's commands about the node and the cluster: info, status, describecluster, version, getlogginglevels,
// setlogginglevel, drain. Texts as Cassandra 5.0's Info, Status, DescribeCluster, Version, GetLoggingLevels print.
#include "tools/nodetool_command.hh"
#include "tools/nodetool_format.hh"

#include <cmath>
#include <fmt/format.h>
#include <map>
#include <set>

namespace reef::tools::nodetool {

namespace {

// Info's "%-23s: %s%n".
void info_line(std::string& out, std::string_view label, std::string_view value) {
    out += fmt::format("{:<23}: {}\n", label, value);
}

constexpr const char* off_heap_metrics[] = {"memtable_off_heap_size", "bloom_filter_off_heap_memory_used",
                                            "index_summary_off_heap_memory_used",
                                            "compression_metadata_off_heap_memory_used"};

// Sum of the four off-heap metrics over every table, in bytes (Info.getOffHeapMemoryUsed).
future<double> off_heap_bytes(rest_api& api) {
    auto tables = co_await api.get("/column_family/");
    double sum = 0;
    for (auto& t : as_array(tables, "/column_family/")) {
        auto name = as_string(member(t, "ks", "/column_family/"), "ks") + ":" +
                    as_string(member(t, "cf", "/column_family/"), "cf");
        for (auto* m : off_heap_metrics) {
            auto path = fmt::format("/column_family/metrics/{}/{}", m, name);
            sum += as_double(co_await api.get(path), path);
        }
    }
    co_return sum;
}

// "entries %d, size %s, capacity %s, %d hits, %d requests, %.3f recent hit rate, %d save period in seconds".
future<std::string> cache_line(rest_api& api, std::string cache) {
    auto metric = [&](const char* m) { return fmt::format("/cache_service/metrics/{}/{}", cache, m); };
    auto p_entries = metric("entries"), p_size = metric("size"), p_capacity = metric("capacity");
    auto p_hits = metric("hits_moving_avrage"), p_requests = metric("requests_moving_avrage");
    auto p_rate = metric("hit_rate");
    auto p_period = fmt::format("/cache_service/{}_cache_save_period", cache);
    auto entries = as_int(co_await api.get(p_entries), p_entries);
    auto size = as_double(co_await api.get(p_size), p_size);
    auto capacity = as_double(co_await api.get(p_capacity), p_capacity);
    auto hits = as_int(member(co_await api.get(p_hits), "count", p_hits), p_hits);
    auto requests = as_int(member(co_await api.get(p_requests), "count", p_requests), p_requests);
    auto rate = as_double(co_await api.get(p_rate), p_rate);
    auto period = as_int(co_await api.get(p_period), p_period);
    co_return fmt::format("entries {}, size {}, capacity {}, {} hits, {} requests, {} recent hit rate, {} save period "
                          "in seconds",
                          entries, file_size(size), file_size(capacity), hits, requests, java_fixed(rate, 3), period);
}

future<> token_lines(rest_api& api, bool all_tokens, std::string& out) {
    if (!as_bool(co_await api.get("/storage_service/join_ring"), "/storage_service/join_ring")) {
        info_line(out, "Token", "(node is not joined to the cluster)");
        co_return;
    }
    auto tokens = co_await api.get("/storage_service/tokens");
    auto& list = as_array(tokens, "/storage_service/tokens");
    if (list.size() == 1 || all_tokens) {
        for (auto& t : list) {
            info_line(out, "Token", as_string(t, "/storage_service/tokens"));
        }
    } else {
        info_line(out, "Token", fmt::format("(invoke with -T/--tokens to see all {} tokens)", list.size()));
    }
}

future<> info(rest_api& api, const command_line& cl, std::string& out) {
    bool gossip = as_bool(co_await api.get("/storage_service/gossiping"), "/storage_service/gossiping");
    info_line(out, "ID", as_string(co_await api.get("/storage_service/hostid/local"), "/storage_service/hostid/local"));
    info_line(out, "Gossip active", gossip ? "true" : "false");
    bool native = as_bool(co_await api.get("/storage_service/native_transport"), "/storage_service/native_transport");
    info_line(out, "Native Transport active", native ? "true" : "false");
    info_line(out, "Load", file_size(as_double(co_await api.get("/storage_service/load"), "/storage_service/load")));
    int64_t generation = 0;
    if (gossip) {
        generation = as_int(co_await api.get("/storage_service/generation_number"), "/storage_service/generation_number");
    }
    info_line(out, "Generation No", fmt::format("{}", generation));
    auto uptime_ms = as_int(co_await api.get("/system/uptime_ms"), "/system/uptime_ms");
    info_line(out, "Uptime (seconds)", fmt::format("{}", uptime_ms / 1000));
    // No JVM: Reef's memory is not a heap (ScyllaDB's nodetool prints zeros too).
    info_line(out, "Heap Memory (MB)", "0.00 / 0.00");
    auto off_heap = co_await off_heap_bytes(api);
    info_line(out, "Off Heap Memory (MB)", java_fixed(off_heap / (1024.0 * 1024.0), 2));
    info_line(out, "Data Center", as_string(co_await api.get("/snitch/datacenter"), "/snitch/datacenter"));
    info_line(out, "Rack", as_string(co_await api.get("/snitch/rack"), "/snitch/rack"));
    auto exceptions = as_int(co_await api.get("/storage_service/metrics/exceptions"), "/storage_service/metrics/exceptions");
    info_line(out, "Exceptions", fmt::format("{}", exceptions));
    info_line(out, "Key Cache", co_await cache_line(api, "key"));
    info_line(out, "Row Cache", co_await cache_line(api, "row"));
    info_line(out, "Counter Cache", co_await cache_line(api, "counter"));
    // Reef has no incremental repair: nothing is marked repaired.
    info_line(out, "Percent Repaired", "0.0%");
    co_await token_lines(api, cl.has("--tokens"), out);
}

// DecimalFormat("##0.0%") of a float.
std::string ownership_percent(float owns) {
    double tenths = std::nearbyint(double(owns) * 1000);
    return fmt::format("{:.1f}%", tenths / 10);
}

future<std::set<std::string>> string_set(rest_api& api, std::string path) {
    auto v = co_await api.get(path);
    std::set<std::string> out;
    for (auto& e : as_array(v, path)) {
        out.insert(as_string(e, path));
    }
    co_return out;
}

// [{"key": k, "value": v}] as a map, values as their text.
future<std::map<std::string, utils::json_value>> key_value_map(rest_api& api, std::string path) {
    auto v = co_await api.get(path);
    std::map<std::string, utils::json_value> out;
    for (auto& e : as_array(v, path)) {
        out.emplace(as_string(member(e, "key", path), path), member(e, "value", path));
    }
    co_return out;
}

struct status_node {
    std::string address;
    std::string rack;
    std::vector<std::string> tokens;
};

// What Status needs from the node besides the per-datacenter layout.
struct status_facts {
    std::set<std::string> live, down, joining, leaving, moving;
    std::map<std::string, utils::json_value> load, host_id, ownership;
    bool effective = false;
};

std::vector<std::string> status_row(const status_node& n, const status_facts& f, bool token_per_node) {
    std::string status = f.live.contains(n.address) ? "U" : f.down.contains(n.address) ? "D" : "?";
    std::string state = f.joining.contains(n.address)   ? "J"
                        : f.leaving.contains(n.address) ? "L"
                        : f.moving.contains(n.address)  ? "M"
                                                        : "N";
    std::string load = "?";
    if (auto it = f.load.find(n.address); it != f.load.end()) {
        load = file_size(as_double(it->second, "/storage_service/load_map"));
    }
    std::string owns = "?";
    if (auto it = f.ownership.find(n.address); f.effective && it != f.ownership.end()) {
        // The value is a number or its text ("1"); nodetool reads it as a float.
        auto& v = it->second;
        owns = ownership_percent(float(v.is_string() ? std::strtod(v.text.c_str(), nullptr) : as_double(v, "ownership")));
    }
    std::string host_id;
    if (auto it = f.host_id.find(n.address); it != f.host_id.end()) {
        host_id = as_string(it->second, "/storage_service/host_id");
    }
    if (token_per_node) {
        return {status + state, n.address, load, owns, host_id, n.tokens.front(), n.rack};
    }
    return {status + state, n.address, load, fmt::format("{}", n.tokens.size()), owns, host_id, n.rack};
}

future<status_facts> gather_status_facts(rest_api& api, const command_line& cl) {
    status_facts f;
    f.live = co_await string_set(api, "/gossiper/endpoint/live");
    f.down = co_await string_set(api, "/gossiper/endpoint/down");
    f.joining = co_await string_set(api, "/storage_service/nodes/joining");
    f.leaving = co_await string_set(api, "/storage_service/nodes/leaving");
    f.moving = co_await string_set(api, "/storage_service/nodes/moving");
    f.load = co_await key_value_map(api, "/storage_service/load_map");
    f.host_id = co_await key_value_map(api, "/storage_service/host_id");
    if (!cl.args.empty()) {
        co_await check_keyspace(api, cl.args[0]);
        f.ownership = co_await key_value_map(api, "/storage_service/ownership/" + cl.args[0]);
        f.effective = true;
    }
    co_return f;
}

future<> status(rest_api& api, const command_line& cl, std::string& out) {
    auto facts = co_await gather_status_facts(api, cl);
    auto tokens = co_await api.get("/storage_service/tokens_endpoint");
    // Datacenters in name order, nodes in address order, each with its tokens.
    std::map<std::string, std::map<std::string, status_node>> dcs;
    size_t n_tokens = 0;
    for (auto& e : as_array(tokens, "/storage_service/tokens_endpoint")) {
        auto token = as_string(member(e, "key", "tokens_endpoint"), "tokens_endpoint");
        auto address = as_string(member(e, "value", "tokens_endpoint"), "tokens_endpoint");
        query_params q;
        q.emplace_back("host", address);
        auto dc = as_string(co_await api.get("/snitch/datacenter", q), "/snitch/datacenter");
        auto& node = dcs[dc][address];
        if (node.address.empty()) {
            node.address = address;
            node.rack = as_string(co_await api.get("/snitch/rack", q), "/snitch/rack");
        }
        node.tokens.push_back(token);
        ++n_tokens;
    }
    // As Status decides it: more tokens than datacenters means vnodes, a Tokens column instead of a Token one.
    bool token_per_node = dcs.size() >= n_tokens;
    std::string owns = facts.effective ? "Owns (effective)" : "Owns";
    bool first = true;
    for (auto& [dc, nodes] : dcs) {
        text_table t("  ");
        if (token_per_node) {
            t.add({"--", "Address", "Load", owns, "Host ID", "Token", "Rack"});
        } else {
            t.add({"--", "Address", "Load", "Tokens", owns, "Host ID", "Rack"});
        }
        for (auto& [address, node] : nodes) {
            t.add(status_row(node, facts, token_per_node));
        }
        if (!first) {
            out += "\n";
        }
        first = false;
        auto header = fmt::format("Datacenter: {}", dc);
        out += header + "\n" + std::string(header.size(), '=') + "\n";
        out += "Status=Up/Down\n|/ State=Normal/Leaving/Joining/Moving\n";
        out += t.str();
    }
    out += "\n";
    if (!facts.effective) {
        out += "Note: Non-system keyspaces don't have the same replication settings, effective ownership information "
               "is meaningless\n";
    }
}

future<> describecluster(rest_api& api, const command_line&, std::string& out) {
    auto name = as_string(co_await api.get("/storage_service/cluster_name"), "/storage_service/cluster_name");
    auto snitch = as_string(co_await api.get("/snitch/name"), "/snitch/name");
    auto partitioner = as_string(co_await api.get("/storage_service/partitioner_name"),
                                 "/storage_service/partitioner_name");
    // Reef, like ScyllaDB, has no dynamic snitch.
    out += fmt::format("Cluster Information:\n\tName: {}\n\tSnitch: {}\n\tDynamicEndPointSnitch: disabled\n"
                       "\tPartitioner: {}\n\tSchema versions:\n",
                       name, snitch, partitioner);
    auto versions = co_await api.get("/storage_proxy/schema_versions");
    for (auto& v : as_array(versions, "/storage_proxy/schema_versions")) {
        std::vector<std::string> hosts;
        for (auto& h : as_array(member(v, "value", "schema_versions"), "schema_versions")) {
            hosts.push_back(as_string(h, "schema_versions"));
        }
        // "%s: %s%n%n" of a List: [a, b]
        out += fmt::format("\t\t{}: [{}]\n\n", as_string(member(v, "key", "schema_versions"), "schema_versions"),
                           join(hosts, 0, ", "));
    }
}

future<> version(rest_api& api, const command_line&, std::string& out) {
    auto v = co_await api.get("/storage_service/release_version");
    out += "ReleaseVersion: " + as_string(v, "/storage_service/release_version") + "\n";
}

future<> getlogginglevels(rest_api& api, const command_line&, std::string& out) {
    auto levels = co_await api.get("/storage_service/logging_level");
    out += fmt::format("\n{:<50}{:>10}\n", "Logger Name", "Log Level");
    for (auto& e : as_array(levels, "/storage_service/logging_level")) {
        out += fmt::format("{:<50}{:>10}\n", as_string(member(e, "key", "logging_level"), "logging_level"),
                           as_string(member(e, "value", "logging_level"), "logging_level"));
    }
}

future<> setlogginglevel(rest_api& api, const command_line& cl, std::string&) {
    query_params q;
    q.emplace_back("level", cl.args[1]);
    co_await api.post("/system/logger/" + cl.args[0], q);
}

future<> drain(rest_api& api, const command_line&, std::string&) {
    co_await api.post("/storage_service/drain");
}

const command commands[] = {
    {"info", nullptr, "Print node information (uptime, load, ...)", "",
     {{{"-T", "--tokens"}, false, "Display all tokens"}}, 0, 0, info},
    {"status", nullptr, "Print cluster information (state, load, IDs, ...)", "[<keyspace>]", {}, 0, 1, status},
    {"describecluster", nullptr, "Print the name, snitch, partitioner and schema version of a cluster", "", {}, 0, 0,
     describecluster},
    {"version", nullptr, "Print cassandra version", "", {}, 0, 0, version},
    {"getlogginglevels", nullptr, "Get the runtime logging levels", "", {}, 0, 0, getlogginglevels},
    {"setlogginglevel", nullptr, "Set the log level threshold for a given component or class", "<component|class> <level>",
     {}, 2, 2, setlogginglevel},
    {"drain", nullptr, "Drain the node (stop accepting writes and flush all tables)", "", {}, 0, 0, drain},
};

} // namespace

std::span<const command> node_commands() { return commands; }

} // namespace reef::tools::nodetool
