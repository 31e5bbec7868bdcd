// nodetool's commands on the node's data: flush, compact, refresh, snapshot, listsnapshots, clearsnapshot,
// compactionstats. Texts as Cassandra's Snapshot, ClearSnapshot, ListSnapshots and CompactionStats print.
#include "tools/nodetool_command.hh"
#include "tools/nodetool_format.hh"

#include <chrono>
#include <cmath>
#include <fmt/format.h>
#include <map>

namespace reef::tools::nodetool {

namespace {

// The "cf" parameter for the tables after the keyspace, when there are any.
query_params tables_param(const command_line& cl) {
    query_params q;
    if (cl.args.size() > 1) {
        q.emplace_back("cf", join(cl.args, 1, ","));
    }
    return q;
}

future<> flush(rest_api& api, const command_line& cl, std::string&) {
    if (cl.args.empty()) {
        co_await api.post("/storage_service/flush");
        co_return;
    }
    co_await check_keyspace(api, cl.args[0]);
    co_await api.post("/storage_service/keyspace_flush/" + cl.args[0], tables_param(cl));
}

future<> compact(rest_api& api, const command_line& cl, std::string&) {
    if (cl.args.empty()) {
        co_await api.post("/storage_service/compact");
        co_return;
    }
    co_await check_keyspace(api, cl.args[0]);
    co_await api.post("/storage_service/keyspace_compaction/" + cl.args[0], tables_param(cl));
}

future<> refresh(rest_api& api, const command_line& cl, std::string&) {
    query_params q;
    q.emplace_back("cf", cl.args[1]);
    co_await api.post("/storage_service/sstables/" + cl.args[0], q);
}

// "[all keyspaces]" or "[ks1, ks2]".
std::string keyspaces_text(const command_line& cl) {
    return cl.args.empty() ? "[all keyspaces]" : "[" + join(cl.args, 0, ", ") + "]";
}

query_params snapshot_params(const command_line& cl, const std::string& tag, std::string& what) {
    query_params q;
    q.emplace_back("tag", tag);
    auto* kt = cl.value("--kt-list");
    auto* table = cl.value("--column-family");
    if (kt) {
        if (!cl.args.empty() || table) {
            throw usage_error("When specifying the Keyspace columfamily list for a snapshot, you should not specify "
                              "columnfamily");
        }
        std::string list;
        for (char c : *kt) {
            if (c != ' ') {
                list += c;
            }
        }
        what = "[" + list + "]";
        // One ks.table goes as kn and cf, several as kn alone (ScyllaDB's API).
        auto dot = list.find('.');
        if (list.find(',') == std::string::npos && dot != std::string::npos) {
            q.emplace_back("kn", list.substr(0, dot));
            q.emplace_back("cf", list.substr(dot + 1));
        } else {
            q.emplace_back("kn", list);
        }
    } else {
        if (table && cl.args.size() != 1) {
            throw usage_error("When specifying the table for a snapshot, you must specify one and only one keyspace");
        }
        what = keyspaces_text(cl);
        if (!cl.args.empty()) {
            q.emplace_back("kn", join(cl.args, 0, ","));
        }
        if (table) {
            q.emplace_back("cf", *table);
        }
    }
    q.emplace_back("sf", cl.has("--skip-flush") ? "true" : "false");
    return q;
}

future<> snapshot(rest_api& api, const command_line& cl, std::string& out) {
    std::string tag;
    if (auto* t = cl.value("--tag")) {
        tag = *t;
    } else {
        // Cassandra's default name: the time in milliseconds.
        auto now = std::chrono::system_clock::now().time_since_epoch();
        tag = fmt::format("{}", std::chrono::duration_cast<std::chrono::milliseconds>(now).count());
    }
    std::string what;
    auto q = snapshot_params(cl, tag, what);
    out += fmt::format("Requested creating snapshot(s) for {} with snapshot name [{}] and options {{skipFlush={}}}\n",
                       what, tag, cl.has("--skip-flush") ? "true" : "false");
    co_await api.post("/storage_service/snapshots", q);
    out += "Snapshot directory: " + tag + "\n";
}

future<> clearsnapshot(rest_api& api, const command_line& cl, std::string& out) {
    auto* tag = cl.value("--tag");
    bool all = cl.has("--all");
    if (!tag && !all) {
        throw usage_error("Specify snapshot name or --all");
    }
    if (tag && all) {
        throw usage_error("Specify only one of snapshot name or --all");
    }
    for (auto& ks : cl.args) {
        co_await check_keyspace(api, ks);
    }
    query_params q;
    if (tag) {
        q.emplace_back("tag", *tag);
    }
    if (!cl.args.empty()) {
        q.emplace_back("kn", join(cl.args, 0, ","));
    }
    out += fmt::format("Requested clearing snapshot(s) for {} with {}\n", keyspaces_text(cl),
                       tag ? "snapshot name [" + *tag + "]" : std::string("[all snapshots]"));
    co_await api.del("/storage_service/snapshots", q);
}

future<> listsnapshots(rest_api& api, const command_line&, std::string& out) {
    out += "Snapshot Details: \n";
    auto snapshots = co_await api.get("/storage_service/snapshots");
    auto& list = as_array(snapshots, "/storage_service/snapshots");
    if (list.empty()) {
        out += "There are no snapshots\n";
        co_return;
    }
    auto true_size = as_double(co_await api.get("/storage_service/snapshots/size/true"),
                               "/storage_service/snapshots/size/true");
    text_table t;
    t.add({"Snapshot name", "Keyspace name", "Column family name", "True size", "Size on disk"});
    for (auto& s : list) {
        auto& tag = as_string(member(s, "key", "snapshots"), "snapshots");
        for (auto& e : as_array(member(s, "value", "snapshots"), "snapshots")) {
            t.add({tag, as_string(member(e, "ks", "snapshots"), "ks"), as_string(member(e, "cf", "snapshots"), "cf"),
                   file_size(as_double(member(e, "live", "snapshots"), "live")),
                   file_size(as_double(member(e, "total", "snapshots"), "total"))});
        }
    }
    out += t.str();
    out += "\nTotal TrueDiskSpaceUsed: " + file_size(true_size) + "\n\n";
}

// DecimalFormat("0.00") of completed / total * 100, then "%"; "n/a" for nothing to do.
std::string progress(int64_t completed, int64_t total) {
    if (total == 0) {
        return "n/a";
    }
    double hundredths = std::nearbyint(double(completed) / double(total) * 100 * 100);
    return fmt::format("{:.2f}%", hundredths / 100);
}

future<> active_compactions(rest_api& api, bool human, std::string& out) {
    auto compactions = co_await api.get("/compaction_manager/compactions");
    auto& list = as_array(compactions, "/compaction_manager/compactions");
    if (list.empty()) {
        co_return;
    }
    text_table t;
    t.add({"id", "compaction type", "keyspace", "table", "completed", "total", "unit", "progress"});
    int64_t remaining = 0;
    for (auto& c : list) {
        auto what = "/compaction_manager/compactions";
        auto* id = c.get("id");
        auto& unit = as_string(member(c, "unit", what), what);
        auto completed = as_int(member(c, "completed", what), what);
        auto total = as_int(member(c, "total", what), what);
        auto size = [&](int64_t n) { return human && unit == "bytes" ? file_size(double(n)) : fmt::format("{}", n); };
        t.add({id && id->is_string() ? id->text : "n/a", as_string(member(c, "task_type", what), what),
               as_string(member(c, "ks", what), what), as_string(member(c, "cf", what), what), size(completed),
               size(total), unit, progress(completed, total)});
        remaining += total - completed;
    }
    out += t.str();
    auto throughput = as_int(co_await api.get("/storage_service/compaction_throughput"),
                             "/storage_service/compaction_throughput");
    std::string left = "n/a";
    if (throughput != 0) {
        int64_t secs = remaining / (throughput * 1024 * 1024);
        left = fmt::format("{}h{:02}m{:02}s", secs / 3600, secs / 60 % 60, secs % 60);
    }
    out += fmt::format("Active compaction remaining time : {:>10}\n", left);
}

future<> compactionstats(rest_api& api, const command_line& cl, std::string& out) {
    auto pending = co_await api.get("/compaction_manager/metrics/pending_tasks_by_table");
    std::map<std::string, std::map<std::string, int64_t>> by_table;
    int64_t total = 0;
    for (auto& p : as_array(pending, "pending_tasks_by_table")) {
        auto n = as_int(member(p, "task", "pending_tasks_by_table"), "task");
        by_table[as_string(member(p, "ks", "pending_tasks_by_table"), "ks")]
                [as_string(member(p, "cf", "pending_tasks_by_table"), "cf")] = n;
        total += n;
    }
    out += fmt::format("pending tasks: {}\n", total);
    for (auto& [ks, tables] : by_table) {
        for (auto& [cf, n] : tables) {
            out += fmt::format("- {}.{}: {}\n", ks, cf, n);
        }
    }
    out += "\n";
    co_await active_compactions(api, cl.has("--human-readable"), out);
}

const command commands[] = {
    {"flush", nullptr, "Flush one or more tables", "[<keyspace> <tables>...]", {}, 0, SIZE_MAX, flush},
    {"compact", nullptr, "Force a (major) compaction on one or more tables", "[<keyspace> <tables>...]", {}, 0,
     SIZE_MAX, compact},
    {"refresh", nullptr, "Load newly placed SSTables to the system without restart", "<keyspace> <table>", {}, 2, 2,
     refresh},
    {"snapshot", nullptr, "Take a snapshot of specified keyspaces or a snapshot of the specified table",
     "[<keyspaces...>]",
     {{{"-t", "--tag"}, true, "The name of the snapshot"},
      {{"-cf", "--table", "--column-family"}, true, "The table name (you must specify one and only one keyspace)"},
      {{"-kt", "--kc.list", "-kc", "--kt-list"}, true, "The list of Keyspace.table to take snapshot"},
      {{"-sf", "--skip-flush"}, false, "Do not flush memtables before snapshotting"}},
     0, SIZE_MAX, snapshot},
    {"listsnapshots", nullptr, "Lists all the snapshots along with the size on disk and true size.", "", {}, 0, 0,
     listsnapshots},
    {"clearsnapshot", nullptr, "Remove the snapshot with the given name from the given keyspaces", "[<keyspaces>...]",
     {{{"-t", "--tag"}, true, "Remove the snapshot with a given name"},
      {{"--all"}, false, "Removes all snapshots"}},
     0, SIZE_MAX, clearsnapshot},
    {"compactionstats", nullptr, "Print statistics on compactions", "",
     {{{"-H", "--human-readable"}, false, "Display bytes in human readable form, i.e. KiB, MiB, GiB, TiB"}}, 0, 0,
     compactionstats},
};

} // namespace

std::span<const command> storage_commands() { return commands; }

} // namespace reef::tools::nodetool
