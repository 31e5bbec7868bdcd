// reef perf-delete-range: RocksDB's DeleteRange blog workload in its wide-column form (issue 7,
// ../shared/benchmarks/delete-range.md) on Reef and on RocksDB, the same operations on both: ops/s per phase, the
// row counts that prove both ran the same operations (checked equal, and against delete-range.md at its scale),
// the ratio reef/rocksdb per phase, and a sweep of the range-deletion width (0 / 100 / 1000 / 10000).
#include "test/perf/delete_range_workload.hh"
#include "test/perf/perf.hh"
#include "test/perf/perf_util.hh"

#include "runtime/app_options.hh"

#include <algorithm>
#include <filesystem>
#include <fmt/core.h>
#include <map>
#include <string>
#include <unistd.h>
#include <vector>

namespace reef::perf {

namespace {

struct counts {
    uint64_t get_found, scan10_rows, scan10_first, scan1000_rows, scan1000_first, fullscan_rows;
    bool operator==(const counts&) const = default;
};

counts counts_of(const engine_run& r) {
    return {r.get.found, r.scan10.rows, r.scan10.first_found, r.scan1000.rows, r.scan1000.first_found, r.fullscan.rows};
}

std::string to_string(const counts& c) {
    return fmt::format("get found {}; scan10 rows {} first found {}; scan1000 rows {} first found {}; fullscan rows {}",
                       c.get_found, c.scan10_rows, c.scan10_first, c.scan1000_rows, c.scan1000_first, c.fullscan_rows);
}

// delete-range.md's "Check the semantics" figures, at its 1M-row scale.
std::optional<counts> documented_counts(const delete_range_workload& wl) {
    if (!wl.is_documented_scale()) {
        return std::nullopt;
    }
    if (wl.variant == delete_variant::none) {
        return counts{100'000, 999'895, 100'000, 9'913'161, 10'000, 1'000'000};
    }
    return counts{82'601, 999'851, 82'752, 9'902'965, 8'211, 828'112};
}

struct phase_ref {
    const char* name;
    phase_result engine_run::*member;
};
const phase_ref phases[] = {{"load", &engine_run::load},
                            {"get", &engine_run::get},
                            {"scan10", &engine_run::scan10},
                            {"scan1000", &engine_run::scan1000},
                            {"fullscan", &engine_run::fullscan}};

std::string json_of(const delete_range_workload& wl, const engine_run& r) {
    std::string out = fmt::format("{{\"engine\": \"{}\", \"variant\": \"{}\", \"rows\": {}, \"partitions\": {}, "
                                  "\"tombstones\": {}, \"width\": {}, \"major_compaction\": {}, \"phases\": {{",
                                  r.engine, variant_name(wl.variant), wl.rows, wl.partitions, wl.tombstones, wl.width,
                                  wl.major_compaction);
    auto rate = [](const phase_result& p) {
        return fmt::format("\"ops_per_s\": {:.1f}, \"cpu_ops_per_s\": {:.1f}, \"seconds\": {:.3f}", p.ops_per_s(),
                           p.cpu_ops_per_s(), p.seconds);
    };
    out += fmt::format("\"load\": {{{}}}", rate(r.load));
    out += fmt::format(", \"get\": {{{}, \"found\": {}}}", rate(r.get), r.get.found);
    for (auto [name, p] : {std::pair{"scan10", &r.scan10}, std::pair{"scan1000", &r.scan1000}}) {
        out += fmt::format(", \"{}\": {{{}, \"rows\": {}, \"first_found\": {}}}", name, rate(*p), p->rows,
                           p->first_found);
    }
    out += fmt::format(", \"fullscan\": {{{}, \"rows\": {}}}}}", rate(r.fullscan), r.fullscan.rows);
    out += ", \"notes\": {";
    for (size_t i = 0; i < r.notes.size(); ++i) {
        out += fmt::format("{}\"{}\": \"{}\"", i ? ", " : "", r.notes[i].first, r.notes[i].second);
    }
    return out + "}}";
}

void print_header() {
    fmt::print("{:<8} {:<7} {:>6} {:>13} {:>12} {:>13} {:>15} {:>16}\n", "engine", "variant", "width", "load rows/s",
               "get ops/s", "scan10 ops/s", "scan1000 ops/s", "fullscan rows/s");
}

void print_run(const delete_range_workload& wl, const engine_run& r) {
    fmt::print("{:<8} {:<7} {:>6} {:>13.0f} {:>12.0f} {:>13.0f} {:>15.0f} {:>16.0f}\n", r.engine,
               variant_name(wl.variant), wl.width, r.load.ops_per_s(), r.get.ops_per_s(), r.scan10.ops_per_s(),
               r.scan1000.ops_per_s(), r.fullscan.ops_per_s());
    fmt::print("{:<8} {:<7} {:>6} {:>13.0f} {:>12.0f} {:>13.0f} {:>15.0f} {:>16.0f}  (per CPU second)\n", "", "", "",
               r.load.cpu_ops_per_s(), r.get.cpu_ops_per_s(), r.scan10.cpu_ops_per_s(), r.scan1000.cpu_ops_per_s(),
               r.fullscan.cpu_ops_per_s());
    std::string notes;
    for (auto& [k, v] : r.notes) {
        notes += fmt::format("{}{} {}", notes.empty() ? "" : ", ", k, v);
    }
    fmt::print("    counts: {}\n    {}\n", to_string(counts_of(r)), notes);
    std::fflush(stdout);
}

// Every run of one workload (both engines, all repeats).
struct group {
    delete_range_workload wl;
    std::vector<engine_run> runs;

    double median_of(const std::string& engine, const phase_ref& p, bool cpu) const {
        std::vector<double> v;
        for (auto& r : runs) {
            if (r.engine == engine) {
                v.push_back(cpu ? (r.*p.member).cpu_ops_per_s() : (r.*p.member).ops_per_s());
            }
        }
        return median(v);
    }
};

} // namespace

int perf_delete_range_main(int argc, char** argv) {
    program_options::options opts(
        "reef perf-delete-range",
        "RocksDB's DeleteRange workload in its wide-column form (../shared/benchmarks/delete-range.md) on Reef "
        "(db::table: memtable, flushes, combined and compacting readers) and RocksDB: ops/s per phase, the row "
        "counts both must agree on, reef/rocksdb per phase.");
    runtime_options rt;
    rt.add(opts);
    delete_range_workload base;
    std::string engine, variant, data_dir, format;
    uint64_t runs = 1;
    bool sweep = false;
    opts.add("engine", "reef, rocksdb or both (alternating run by run, with the ratio reef/rocksdb per phase)", &engine,
             "both");
    opts.add("rows", "N, rows in all", &base.rows, uint64_t(1'000'000), uint64_t(1));
    opts.add("partitions", "P, partitions (N / P rows each)", &base.partitions, uint64_t(20), uint64_t(1));
    opts.add("tombstones", "T, range deletions, spread over the last tenth of the load", &base.tombstones,
             uint64_t(2'000));
    opts.add("width", "W, clustering keys per range deletion", &base.width, uint64_t(100));
    opts.add("variant", "range (one range deletion each), scan (read the range, delete each live row), none, or all",
             &variant, "range");
    opts.add("ops", "get and scan10 operations", &base.ops, uint64_t(100'000));
    opts.add("long-ops", "scan1000 operations", &base.long_ops, uint64_t(10'000));
    opts.add("sweep", "run the range-deletion widths 0, 100, 1000 and 10000 (instead of --width) and print them "
             "side by side", &sweep);
    opts.add("reef-memtable-bytes", "Reef's memtable flush threshold", &base.reef_memtable_bytes,
             uint64_t(64 << 20), uint64_t(1));
    opts.add("reef-block-kb", "Reef's promoted index block and CRC chunk, in KiB (a power of two; RocksDB's "
             "block_size is 4 KiB; Cassandra's default 64)", &base.reef_block_kb, uint64_t(4), uint64_t(1));
    opts.add("reef-no-flush", "diagnostic, not the workload: Reef's reads merge the memtables the load left (no "
             "final flush; with a large --reef-memtable-bytes, none at all): the read path above the sstable reader",
             &base.reef_no_flush);
    opts.add("major-compaction", "after the load, compact everything into one sorted run on both engines (not "
             "delete-range.md's workload: it only lets background work settle)", &base.major_compaction);
    opts.add("runs", "runs per engine and workload (medians are compared)", &runs, uint64_t(1), uint64_t(1));
    opts.add("data-directory", "where each run's database goes (tmpfs by default: both engines read memory)",
             &data_dir, "/dev/shm/reef-perf");
    opts.add("output-format", "text, or json (one object per engine run)", &format, "text");
    int exit_status = 0;
    auto parsed = parse_command_line("reef perf-delete-range", opts, rt, argc, argv, exit_status);
    if (!parsed) {
        return exit_status;
    }
    std::vector<std::string> engines;
    if (engine == "reef" || engine == "both") {
        engines.push_back("reef");
    }
    if (engine == "rocksdb" || engine == "both") {
        engines.push_back("rocksdb");
    }
    std::vector<group> groups;
    try {
        if (engines.empty()) {
            throw std::invalid_argument(fmt::format("--engine '{}': expected reef, rocksdb or both", engine));
        }
        if (format != "text" && format != "json") {
            throw std::invalid_argument(fmt::format("--output-format '{}': expected text or json", format));
        }
        if (engine != "reef" && !have_rocksdb()) {
            throw std::invalid_argument("--engine " + engine + ": built without librocksdb-dev (install it, run "
                                        "./configure.py again, or use --engine reef)");
        }
        std::vector<delete_variant> variants;
        if (variant == "all") {
            variants = {delete_variant::range, delete_variant::scan, delete_variant::none};
        } else {
            variants = {parse_variant(variant)};
        }
        std::vector<uint64_t> widths = sweep ? std::vector<uint64_t>{0, 100, 1000, 10000}
                                             : std::vector<uint64_t>{base.width};
        for (auto v : variants) {
            for (auto w : widths) {
                group g{base, {}};
                g.wl.variant = v;
                g.wl.width = w;
                g.wl.validate();
                groups.push_back(std::move(g));
            }
        }
    } catch (const std::exception& e) {
        fmt::print(stderr, "reef perf-delete-range: {}\n", e.what());
        return 2;
    }
    bool text = format == "text";
    if (text) {
        fmt::print("reef perf-delete-range: {} rows in {} partitions ({} rows each), {} range deletions in the last "
                   "tenth of the load; {} gets, {} scan10, {} scan1000; data in {}\n"
                   "(load: rows/s including the final flush and settling{}; reads on warm caches after one "
                   "unmeasured full scan)\n\n",
                   base.rows, base.partitions, base.rows_per_partition(), base.tombstones, base.ops, base.ops,
                   base.long_ops, data_dir, base.major_compaction ? ", and a major compaction" : "");
        print_header();
    }
    int rc = 0;
    for (auto& g : groups) {
        for (uint64_t run_no = 0; run_no < runs; ++run_no) {
            for (auto& e : engines) {
                auto dir = fmt::format("{}/perf-delete-range-{}-{}", data_dir, ::getpid(), e);
                std::filesystem::remove_all(dir);
                std::filesystem::create_directories(dir);
                engine_run r;
                try {
                    r = e == "reef" ? run_reef(g.wl, dir, *parsed) : run_rocksdb(g.wl, dir);
                } catch (const std::exception& ex) {
                    std::filesystem::remove_all(dir);
                    fmt::print(stderr, "reef perf-delete-range: {} run failed: {}\n", e, ex.what());
                    return 1;
                }
                std::filesystem::remove_all(dir);
                if (text) {
                    print_run(g.wl, r);
                } else {
                    fmt::print("{}\n", json_of(g.wl, r));
                    std::fflush(stdout);
                }
                g.runs.push_back(std::move(r));
            }
        }
        // The proof that the engines ran the same operations.
        auto want = documented_counts(g.wl);
        for (auto& r : g.runs) {
            auto c = counts_of(r);
            if (c != counts_of(g.runs.front())) {
                fmt::print(stderr, "reef perf-delete-range: {} counted [{}], {} counted [{}]: not the same operations\n",
                           g.runs.front().engine, to_string(counts_of(g.runs.front())), r.engine, to_string(c));
                rc = 1;
            }
            if (want && c != *want) {
                fmt::print(stderr, "reef perf-delete-range: {} counted [{}], delete-range.md says [{}]\n", r.engine,
                           to_string(c), to_string(*want));
                rc = 1;
            }
        }
        if (text && want && rc == 0) {
            fmt::print("    (the counts are delete-range.md's)\n");
        }
    }
    if (text && engines.size() == 2) {
        fmt::print("\nreef/rocksdb (median ops/s of {} run(s) each; above 1: reef is faster)\n", runs);
        fmt::print("{:<7} {:>6} {:<8} {:>9} {:>9} {:>9} {:>9} {:>9}\n", "variant", "width", "per", "load", "get",
                   "scan10", "scan1000", "fullscan");
        for (auto& g : groups) {
            for (bool cpu : {false, true}) {
                fmt::print("{:<7} {:>6} {:<8}", variant_name(g.wl.variant), g.wl.width, cpu ? "CPU s" : "wall s");
                for (auto& p : phases) {
                    double rocks = g.median_of("rocksdb", p, cpu);
                    fmt::print(" {:>9.2f}", rocks > 0 ? g.median_of("reef", p, cpu) / rocks : 0.0);
                }
                fmt::print("\n");
            }
        }
    }
    return rc;
}

} // namespace reef::perf
