// nodetool tablestats (cfstats): per keyspace and table, the lines Cassandra 5.0's TableStatsPrinter prints, from
// the node's /column_family/metrics. What no endpoint gives (old-format sstables, max sstable size, droppable
// tombstones, speculative retries, repair) prints as Cassandra prints a node that has none.
#include "tools/nodetool_command.hh"
#include "tools/nodetool_format.hh"

#include <cmath>
#include <fmt/format.h>
#include <limits>
#include <map>
#include <set>

namespace reef::tools::nodetool {

namespace {

constexpr double nan = std::numeric_limits<double>::quiet_NaN();

constexpr std::pair<const char*, const char*> scanned_histograms[] = {{"live_scanned_histogram", "live cells"},
                                                                      {"tombstone_scanned_histogram", "tombstones"}};

// tablestats' arguments: "ks" or "ks.table", all of them included, or (--ignore) all of them left out.
struct table_filter {
    std::map<std::string, std::set<std::string>> specs;  // keyspace -> tables (empty: all of it)
    bool ignore = false;

    bool matches(const std::string& ks, const std::string& cf) const {
        auto it = specs.find(ks);
        return it != specs.end() && (it->second.empty() || it->second.contains(cf));
    }
    bool included(const std::string& ks, const std::string& cf) const {
        if (specs.empty()) {
            return true;
        }
        return matches(ks, cf) != ignore;
    }
};

table_filter make_filter(const command_line& cl) {
    table_filter f;
    f.ignore = cl.has("--ignore");
    for (auto& a : cl.args) {
        auto dot = a.find('.');
        auto& tables = f.specs[a.substr(0, dot)];
        if (dot != std::string::npos && dot + 1 < a.size()) {
            tables.insert(a.substr(dot + 1));
        }
    }
    return f;
}

// One table's metrics, read from /column_family/metrics/<name>/<ks>:<cf>.
class table_metrics {
    rest_api& _api;
    std::string _name;  // ks:cf

public:
    table_metrics(rest_api& api, std::string ks, std::string cf) : _api(api), _name(ks + ":" + cf) {}

    future<utils::json_value> get(std::string metric) {
        auto v = co_await _api.get(fmt::format("/column_family/metrics/{}/{}", metric, _name));
        co_return v;
    }
    future<int64_t> count(std::string metric) {
        auto path = metric + " of " + _name;
        co_return as_int(co_await get(metric), path);
    }
    future<double> real(std::string metric) {
        auto path = metric + " of " + _name;
        co_return as_double(co_await get(metric), path);
    }
    // {"count", "mean", "max", ...} of a histogram.
    future<utils::json_value> histogram(std::string metric) { return get(metric); }
    // The count and mean (µs) of read_latency or write_latency.
    future<std::pair<int64_t, double>> latency(std::string metric) {
        auto v = co_await get(metric + "/moving_average_histogram");
        auto& hist = member(v, "hist", metric);
        co_return std::pair{as_int(member(hist, "count", metric), metric), as_double(member(hist, "mean", metric), metric)};
    }
};

struct keyspace_totals {
    int64_t read_count = 0, write_count = 0, pending_flushes = 0;
    double read_time = 0, write_time = 0;  // µs
};

future<> add_to_totals(table_metrics& m, keyspace_totals& k) {
    auto [reads, read_mean] = co_await m.latency("read_latency");
    if (reads > 0) {
        k.read_count += reads;
        k.read_time += co_await m.real("read_latency");
    }
    auto [writes, write_mean] = co_await m.latency("write_latency");
    if (writes > 0) {
        k.write_count += writes;
        k.write_time += co_await m.real("write_latency");
    }
    k.pending_flushes += co_await m.count("pending_flushes");
}

// "Local read latency": the mean in ms, NaN when nothing was measured.
double latency_ms(std::pair<int64_t, double> count_mean) {
    double ms = count_mean.second / 1000;
    return ms > 0 ? ms : nan;
}

future<> print_space_lines(table_metrics& m, bool human, std::string& out) {
    auto size = [human](int64_t n) { return human ? file_size(double(n)) : fmt::format("{}", n); };
    auto print = [&out](std::string_view label, std::string_view value) {
        out += fmt::format("\t\t{}: {}\n", label, value);
    };
    print("Space used (live)", size(co_await m.count("live_disk_space_used")));
    print("Space used (total)", size(co_await m.count("total_disk_space_used")));
    print("Space used by snapshots (total)", size(co_await m.count("snapshots_size")));
    int64_t off_heap = co_await m.count("memtable_off_heap_size") + co_await m.count("bloom_filter_off_heap_memory_used") +
                       co_await m.count("index_summary_off_heap_memory_used") +
                       co_await m.count("compression_metadata_off_heap_memory_used");
    print("Off heap memory used (total)", size(off_heap));
    print("SSTable Compression Ratio", java_fixed(co_await m.real("compression_ratio"), 5));
    print("Number of partitions (estimate)", fmt::format("{}", co_await m.count("estimated_row_count")));
    print("Memtable cell count", fmt::format("{}", co_await m.count("memtable_columns_count")));
    print("Memtable data size", size(co_await m.count("memtable_live_data_size")));
    print("Memtable off heap memory used", size(co_await m.count("memtable_off_heap_size")));
    print("Memtable switch count", fmt::format("{}", co_await m.count("memtable_switch_count")));
}

future<> print_io_lines(table_metrics& m, std::string& out) {
    auto print = [&out](std::string_view label, std::string_view value) {
        out += fmt::format("\t\t{}: {}\n", label, value);
    };
    // Reef reads one replica: no speculative retries.
    print("Speculative retries", "0");
    auto reads = co_await m.latency("read_latency");
    auto writes = co_await m.latency("write_latency");
    print("Local read count", fmt::format("{}", reads.first));
    print("Local read latency", java_fixed(latency_ms(reads), 3) + " ms");
    print("Local write count", fmt::format("{}", writes.first));
    print("Local write latency", java_fixed(latency_ms(writes), 3) + " ms");
    double ratio = writes.first > 0 ? double(reads.first) / double(writes.first) : 0.0;
    print("Local read/write ratio", java_fixed(ratio, 5));
    print("Pending flushes", fmt::format("{}", co_await m.count("pending_flushes")));
}

future<> print_repair_and_filter_lines(table_metrics& m, bool human, std::string& out) {
    auto size = [human](int64_t n) { return human ? file_size(double(n)) : fmt::format("{}", n); };
    auto print = [&out](std::string_view label, std::string_view value) {
        out += fmt::format("\t\t{}: {}\n", label, value);
    };
    // No incremental repair: every live byte is unrepaired.
    print("Percent repaired", "0.0");
    print("Bytes repaired", pretty_memory(0));
    print("Bytes unrepaired", pretty_memory(co_await m.count("live_disk_space_used")));
    print("Bytes pending repair", pretty_memory(0));
    print("Bloom filter false positives", fmt::format("{}", co_await m.count("bloom_filter_false_positives")));
    print("Bloom filter false ratio", java_fixed(co_await m.real("recent_bloom_filter_false_ratio"), 5));
    print("Bloom filter space used", size(co_await m.count("bloom_filter_disk_space_used")));
    print("Bloom filter off heap memory used", size(co_await m.count("bloom_filter_off_heap_memory_used")));
    print("Index summary off heap memory used", size(co_await m.count("index_summary_off_heap_memory_used")));
    print("Compression metadata off heap memory used",
          size(co_await m.count("compression_metadata_off_heap_memory_used")));
}

future<> print_partition_lines(table_metrics& m, std::string& out) {
    auto print = [&out](std::string_view label, std::string_view value) {
        out += fmt::format("\t\t{}: {}\n", label, value);
    };
    print("Compacted partition minimum bytes", fmt::format("{}", co_await m.count("min_row_size")));
    print("Compacted partition maximum bytes", fmt::format("{}", co_await m.count("max_row_size")));
    print("Compacted partition mean bytes", fmt::format("{}", co_await m.count("mean_row_size")));
    for (auto [metric, what] : scanned_histograms) {
        auto h = co_await m.histogram(metric);
        // An empty histogram's mean is NaN, as Cassandra's.
        double mean = as_int(member(h, "count", metric), metric) > 0 ? as_double(member(h, "mean", metric), metric) : nan;
        print(fmt::format("Average {} per slice (last five minutes)", what), java_double(mean));
        print(fmt::format("Maximum {} per slice (last five minutes)", what),
              fmt::format("{}", as_int(member(h, "max", metric), metric)));
    }
    print("Droppable tombstone ratio", java_fixed(0.0, 5));
}

future<> print_table(rest_api& api, const std::string& ks, const std::string& cf, bool human, std::string& out) {
    table_metrics m(api, ks, cf);
    out += "\t\tTable: " + cf + "\n";
    out += fmt::format("\t\tSSTable count: {}\n", co_await m.count("live_ss_table_count"));
    // Not measured yet: Reef rewrites nothing by format version and keeps no per-sstable maximum.
    out += "\t\tOld SSTable count: 0\n";
    out += "\t\tMax SSTable size: " + pretty_memory(0) + "\n";
    auto per_level = co_await api.get(fmt::format("/column_family/sstables/per_level/{}:{}", ks, cf));
    if (per_level.is_array() && !per_level.items.empty()) {
        std::vector<std::string> levels;
        for (auto& l : per_level.items) {
            levels.push_back(fmt::format("{}", as_int(l, "per_level")));
        }
        out += "\t\tSSTables in each level: [" + join(levels, 0, ", ") + "]\n";
    }
    co_await print_space_lines(m, human, out);
    co_await print_io_lines(m, out);
    co_await print_repair_and_filter_lines(m, human, out);
    co_await print_partition_lines(m, out);
    out += "\n";
}

future<> tablestats(rest_api& api, const command_line& cl, std::string& out) {
    const auto filter = make_filter(cl);
    const bool human = cl.has("--human-readable");
    auto tables = co_await api.get("/column_family/");
    std::map<std::string, std::set<std::string>> by_keyspace;
    for (auto& t : as_array(tables, "/column_family/")) {
        by_keyspace[as_string(member(t, "ks", "/column_family/"), "ks")].insert(
            as_string(member(t, "cf", "/column_family/"), "cf"));
    }
    size_t n_tables = 0;
    for (auto& [ks, cfs] : by_keyspace) {
        for (auto& cf : cfs) {
            n_tables += filter.included(ks, cf);
        }
    }
    out += fmt::format("Total number of tables: {}\n----------------\n", n_tables);
    for (auto& [ks, cfs] : by_keyspace) {
        std::vector<std::string> shown;
        keyspace_totals totals;
        for (auto& cf : cfs) {
            if (filter.included(ks, cf)) {
                shown.push_back(cf);
            }
        }
        if (shown.empty()) {
            continue;
        }
        // A keyspace's totals cover all its tables, the shown ones or not (StatsKeyspace).
        for (auto& cf : cfs) {
            table_metrics m(api, ks, cf);
            co_await add_to_totals(m, totals);
        }
        out += "Keyspace: " + ks + "\n";
        out += fmt::format("\tRead Count: {}\n", totals.read_count);
        double read_ms = totals.read_count > 0 ? totals.read_time / double(totals.read_count) / 1000 : nan;
        out += "\tRead Latency: " + java_double(read_ms) + " ms\n";
        out += fmt::format("\tWrite Count: {}\n", totals.write_count);
        double write_ms = totals.write_count > 0 ? totals.write_time / double(totals.write_count) / 1000 : nan;
        out += "\tWrite Latency: " + java_double(write_ms) + " ms\n";
        out += fmt::format("\tPending Flushes: {}\n", totals.pending_flushes);
        for (auto& cf : shown) {
            co_await print_table(api, ks, cf, human, out);
        }
        out += "----------------\n";
    }
}

const command commands[] = {
    {"tablestats", "cfstats", "Print statistics on tables", "[<keyspace.table>...]",
     {{{"-i", "--ignore"}, false, "Ignore the list of tables and display the remaining tables"},
      {{"-H", "--human-readable"}, false, "Display bytes in human readable form, i.e. KiB, MiB, GiB, TiB"}},
     0, SIZE_MAX, tablestats},
};

} // namespace

std::span<const command> table_commands() { return commands; }

} // namespace reef::tools::nodetool
