// reef perf-multiget: RocksDB's MultiGet experiment (its PR 5011, issue 19, ../shared/benchmarks/multiget.md) on Reef
// and RocksDB 7.8 in one run: 16-byte keys, 100-byte values, data in memory, batches of 1 to 32 keys at strides 0
// (random), 16, 256 and 4096; µs per key for single gets, a multi-get loop without batching and the batched
// multi-get, per engine; the found counts that prove both read the same keys; the targets (Reef's batching gain at
// batch 32, stride 16, over a single get of a random key, at least RocksDB's; Reef at or below RocksDB in every
// cell). Strides are in each engine's key order by default; --reef-stride-order ring puts Reef's in its ring order,
// where its partitions lie. Both engines are loaded at once and take turns cell by cell, each cell measured --rounds
// times per engine (its median kept).
#include "test/perf/multiget_workload.hh"
#include "test/perf/perf.hh"
#include "test/perf/perf_counters.hh"
#include "test/perf/perf_util.hh"

#include "runtime/app.hh"
#include "runtime/app_options.hh"
#include "sstables/bloom_calculations.hh"

#include <algorithm>
#include <filesystem>
#include <functional>
#include <fmt/core.h>
#include <map>
#include <sstream>
#include <stdexcept>
#include <unistd.h>

namespace reef::perf {

cell_meter::cell_meter()
    : _wall(clock_type::now()), _cpu(thread_cpu_seconds()), _insns(instructions_retired()), _allocs(allocations()) {}

void cell_meter::finish(multiget_cell& c) const {
    auto keys = double(c.keys);
    c.us_per_key = seconds_since(_wall) * 1e6 / keys;
    c.cpu_us_per_key = (thread_cpu_seconds() - _cpu) * 1e6 / keys;
    auto insns = instructions_retired();
    c.insns_per_key = _insns && insns ? std::optional<double>(double(*insns - *_insns) / keys) : std::nullopt;
    auto allocs = allocations();
    c.allocs_per_key = _allocs && allocs ? std::optional<double>(double(*allocs - *_allocs) / keys) : std::nullopt;
}

namespace {

std::vector<uint64_t> parse_list(const std::string& flag, const std::string& text, bool allow_zero) {
    std::vector<uint64_t> out;
    std::stringstream ss(text);
    std::string item;
    while (std::getline(ss, item, ',')) {
        size_t used = 0;
        uint64_t v = 0;
        try {
            v = std::stoull(item, &used);
        } catch (...) {
            used = 0;
        }
        if (item.empty() || used != item.size() || (!allow_zero && v == 0)) {
            throw std::invalid_argument(fmt::format("--{} '{}': expected a comma-separated list of {} integers", flag,
                                                    text, allow_zero ? "non-negative" : "positive"));
        }
        out.push_back(v);
    }
    if (out.empty()) {
        throw std::invalid_argument(fmt::format("--{}: empty", flag));
    }
    return out;
}


using cell_key = std::tuple<std::string, std::string, uint64_t, uint64_t>;  // engine, method, batch, stride

// One table of the cells: value(cell) per stride, engine and method (a row) and batch (a column); "-" where a cell
// has no value.
void print_table(const multiget_workload& wl, const std::vector<multiget_run>& runs,
                 const std::map<cell_key, const multiget_cell*>& cells, const std::string& title,
                 const std::function<std::optional<double>(const multiget_cell&)>& value) {
    fmt::print("\n{}\n", title);
    fmt::print("{:>6} {:<8} {:<14}", "stride", "engine", "method");
    for (auto b : wl.batches) {
        fmt::print(" {:>8}", fmt::format("batch {}", b));
    }
    fmt::print("\n");
    for (auto stride : wl.strides) {
        for (auto& r : runs) {
            for (auto m : multiget_methods) {
                fmt::print("{:>6} {:<8} {:<14}", stride, r.engine, m);
                for (auto b : wl.batches) {
                    auto it = cells.find({r.engine, m, b, stride});
                    auto v = it == cells.end() ? std::nullopt : value(*it->second);
                    fmt::print(" {:>8}", v ? fmt::format("{:.2f}", *v) : "-");
                }
                fmt::print("\n");
            }
        }
    }
}

// A cell's rounds as one: the median of each time and count (a count only when every round has it), the keys and
// found counts summed.
multiget_cell median_cell(std::vector<multiget_cell> rounds) {
    auto median_of = [&](double multiget_cell::*field) {
        std::vector<double> v;
        for (auto& c : rounds) {
            v.push_back(c.*field);
        }
        return median(std::move(v));
    };
    auto median_of_counts = [&](std::optional<double> multiget_cell::*field) -> std::optional<double> {
        std::vector<double> v;
        for (auto& c : rounds) {
            if (!(c.*field)) {
                return std::nullopt;
            }
            v.push_back(*(c.*field));
        }
        return median(std::move(v));
    };
    auto out = rounds.front();
    out.us_per_key = median_of(&multiget_cell::us_per_key);
    out.cpu_us_per_key = median_of(&multiget_cell::cpu_us_per_key);
    out.insns_per_key = median_of_counts(&multiget_cell::insns_per_key);
    out.allocs_per_key = median_of_counts(&multiget_cell::allocs_per_key);
    out.keys = out.found = 0;
    for (auto& c : rounds) {
        out.keys += c.keys;
        out.found += c.found;
    }
    return out;
}

// Starts every engine, then measures each cell and method wl.rounds times per engine, the engines taking turns (in
// the opposite order every other round), and keeps the median of each cell's rounds in cells[engine]. `at`: the
// engine at work (the one that failed, on a throw).
future<> measure_all(const multiget_workload& wl, std::vector<std::unique_ptr<multiget_engine>>& engines,
                     std::vector<std::vector<multiget_cell>>& cells, size_t& at) {
    for (at = 0; at < engines.size(); ++at) {
        co_await engines[at]->start();
    }
    for (auto stride : wl.strides) {
        for (auto batch : wl.batches) {
            for (unsigned m : wl.methods) {
                std::vector<std::vector<multiget_cell>> rounds(engines.size());
                for (unsigned r = 0; r < wl.rounds; ++r) {
                    for (size_t j = 0; j < engines.size(); ++j) {
                        at = r % 2 ? engines.size() - 1 - j : j;
                        rounds[at].push_back(co_await engines[at]->measure(batch, stride, m, r));
                    }
                }
                for (size_t e = 0; e < engines.size(); ++e) {
                    cells[e].push_back(median_cell(std::move(rounds[e])));
                }
            }
        }
    }
}

// Loads every engine (in one reactor session, one shard) and measures them (measure_all): the result's i-th run is
// engines[i]'s. Throws what failed, after removing the engines' directories; when
// an engine failed, `failed` names it.
std::vector<multiget_run> run_engines(const multiget_workload& wl, const std::vector<std::string>& names,
                                      const std::string& data_dir, runtime_config cfg, std::string& failed) {
    cfg.smp = 1;
    std::vector<std::string> dirs;
    auto remove_dirs = [&] {
        std::error_code ec;
        for (auto& d : dirs) {
            std::filesystem::remove_all(d, ec);
        }
    };
    std::vector<std::unique_ptr<multiget_engine>> engines;
    for (auto& n : names) {
        dirs.push_back(fmt::format("{}/perf-multiget-{}-{}", data_dir, ::getpid(), n));
        std::error_code ec;
        std::filesystem::remove_all(dirs.back(), ec);
        if (!std::filesystem::create_directories(dirs.back(), ec) && ec) {
            auto what = fmt::format("--data-directory: cannot create {}: {}", dirs.back(), ec.message());
            remove_dirs();
            throw std::runtime_error(what);
        }
        engines.push_back(n == "reef" ? make_reef_multiget(wl, dirs.back()) : make_rocksdb_multiget(wl, dirs.back()));
    }
    std::vector<std::vector<multiget_cell>> cells(engines.size());
    std::exception_ptr ex;
    run(cfg, [&]() -> future<int> {
        size_t at = 0;  // the engine at work
        try {
            co_await measure_all(wl, engines, cells, at);
        } catch (...) {
            ex = std::current_exception();
        }
        for (size_t e = 0; e < engines.size(); ++e) {
            try {
                co_await engines[e]->stop();
            } catch (...) {
                if (!ex) {
                    ex = std::current_exception();
                    at = e;
                }
            }
        }
        if (ex) {
            failed = names[at];
        }
        co_return ex ? 1 : 0;
    });
    remove_dirs();
    if (ex) {
        std::rethrow_exception(ex);
    }
    std::vector<multiget_run> runs;
    for (size_t e = 0; e < engines.size(); ++e) {
        runs.push_back(engines[e]->run());
        runs.back().cells = std::move(cells[e]);
    }
    return runs;
}

} // namespace

int perf_multiget_main(int argc, char** argv) {
    program_options::options opts(
        "reef perf-multiget",
        "RocksDB's MultiGet experiment (../shared/benchmarks/multiget.md) on Reef (db::table: make_reader per key, "
        "table::multi_get unbatched and batched) and RocksDB 7.8 (Get, MultiGet unbatched and batched): µs per key per batch size and "
        "stride, found counts both engines must agree on, and the issue's targets.");
    runtime_options rt;
    rt.add(opts);
    multiget_workload wl;
    std::string engine, data_dir, format, batches, strides, methods, stride_order;
    opts.add("engine", "reef, rocksdb or both", &engine, "both");
    opts.add("keys", "N, random keys of [0, N) written by the load (db_bench's -num)", &wl.keys, uint64_t(2'000'000),
             uint64_t(1));
    opts.add("reads", "keys read per cell and method (whole batches)", &wl.reads, uint64_t(200'000), uint64_t(1));
    opts.add("batches", "batch sizes, comma-separated", &batches, "1,2,4,8,16,32");
    opts.add("strides", "strides, comma-separated (0: random keys)", &strides, "0,16,256,4096");
    opts.add("methods", "methods, comma-separated (get, multiget_loop, multiget)", &methods,
             "get,multiget_loop,multiget");
    opts.add("rounds", "times each cell is measured per engine, the engines taking turns cell by cell; the median is "
             "reported", &wl.rounds, 3u, 1u);
    opts.add("cache-mb", "RocksDB's block cache and Reef's shard cache budget, MiB", &wl.cache_mb, uint64_t(40));
    opts.add("reef-memtable-mb", "Reef's memtable flush threshold (occupancy), MiB: 40 writes sstables of about "
             "8.6 MB", &wl.reef_memtable_mb, uint64_t(40), uint64_t(1));
    opts.add("reef-row-cache", "Reef reads through its row cache (charged to the same budget as its index caches; "
             "random reads of 16-byte keys rarely hit it, and each miss populates it)", &wl.reef_row_cache);
    opts.add("reef-flat", "Reef reads the sstables its flushes wrote, each spanning the ring (no major compaction "
             "into a leveled run after the load, which the RocksDB run has)", &wl.reef_flat);
    opts.add("reef-sstable-mb", "the size of the sstables of Reef's major compaction (LCS's sstable_size_in_mb), "
             "MiB", &wl.reef_sstable_mb, uint64_t(8), uint64_t(1));
    opts.add("reef-bloom-fp-chance", "the table's bloom_filter_fp_chance: 0.1 is Cassandra's for a table created with "
             "LeveledCompactionStrategy; 1 writes no filter, as RocksDB's run has none (db_bench's default)",
             &wl.reef_bloom_fp_chance, 0.1);
    opts.add("reef-stride-order", "key: Reef reads the batches RocksDB reads (keys stride apart in key order, which "
             "Murmur3 scatters over Reef's ring); ring: keys stride apart in ring order, where Reef stores them (the "
             "locality RocksDB's batches have in its key order)", &stride_order, "key");
    opts.add("data-directory", "where each engine's database goes (tmpfs by default: data in memory)", &data_dir,
             "/dev/shm/reef-perf");
    opts.add("output-format", "text, or json (one object per cell)", &format, "text");
    int exit_status = 0;
    auto parsed = parse_command_line("reef perf-multiget", opts, rt, argc, argv, exit_status);
    if (!parsed) {
        return exit_status;
    }
    std::vector<std::string> engines;
    try {
        wl.batches = parse_list("batches", batches, false);
        wl.strides = parse_list("strides", strides, true);
        wl.methods.clear();
        std::stringstream ms(methods);
        for (std::string m; std::getline(ms, m, ',');) {
            auto it = std::find(std::begin(multiget_methods), std::end(multiget_methods), m);
            if (it == std::end(multiget_methods)) {
                throw std::invalid_argument(fmt::format("--methods '{}': expected get, multiget_loop or multiget", methods));
            }
            wl.methods.push_back(unsigned(it - std::begin(multiget_methods)));
        }
        if (engine == "reef" || engine == "both") {
            engines.push_back("reef");
        }
        if (engine == "rocksdb" || engine == "both") {
            engines.push_back("rocksdb");
        }
        if (engines.empty()) {
            throw std::invalid_argument(fmt::format("--engine '{}': expected reef, rocksdb or both", engine));
        }
        if (stride_order != "key" && stride_order != "ring") {
            throw std::invalid_argument(fmt::format("--reef-stride-order '{}': expected key or ring", stride_order));
        }
        wl.reef_ring_order = stride_order == "ring";
        if (!sstables::valid_bloom_fp_chance(wl.reef_bloom_fp_chance)) {
            throw std::invalid_argument(fmt::format("--reef-bloom-fp-chance {}: expected more than {} and at most 1",
                                                    wl.reef_bloom_fp_chance, sstables::min_supported_bloom_fp_chance()));
        }
        if (format != "text" && format != "json") {
            throw std::invalid_argument(fmt::format("--output-format '{}': expected text or json", format));
        }
        if (engine != "reef" && !have_rocksdb_multiget()) {
            throw std::invalid_argument("--engine " + engine + ": built without librocksdb-dev (install it, run "
                                        "./configure.py again, or use --engine reef)");
        }
    } catch (const std::exception& e) {
        fmt::print(stderr, "reef perf-multiget: {}\n", e.what());
        return 2;
    }
    bool text = format == "text";
    if (text) {
        fmt::print("reef perf-multiget: {} random writes of 16-byte keys in [0, {}) with 100-byte values; {} keys "
                   "per cell, method and round; {} rounds (medians shown); cache {} MiB; Reef's bloom_filter_fp_chance "
                   "{}; data in {}\n",
                   wl.keys, wl.keys, wl.reads, wl.rounds, wl.cache_mb, wl.reef_bloom_fp_chance, data_dir);
        std::fflush(stdout);
    }
    std::vector<multiget_run> runs;
    std::string failed;  // the engine whose run failed, if one did
    try {
        runs = run_engines(wl, engines, data_dir, *parsed, failed);
    } catch (const std::exception& e) {
        fmt::print(stderr, "reef perf-multiget: {}{}\n", failed.empty() ? "" : failed + " run failed: ", e.what());
        return 1;
    }
    for (auto& r : runs) {
        if (text) {
            std::string notes;
            for (auto& [k, v] : r.notes) {
                notes += fmt::format(", {} {}", k, v);
            }
            fmt::print("{}: load {:.1f} s{}\n", r.engine, r.load_seconds, notes);
        } else {
            for (auto& c : r.cells) {
                auto count = [](const std::optional<double>& v) {
                    return v ? fmt::format("{:.1f}", *v) : std::string("null");
                };
                fmt::print("{{\"engine\": \"{}\", \"method\": \"{}\", \"batch\": {}, \"stride\": {}, \"us_per_key\": "
                           "{:.3f}, \"cpu_us_per_key\": {:.3f}, \"insns_per_key\": {}, \"allocs_per_key\": {}, "
                           "\"keys\": {}, \"found\": {}, \"stride_order\": \"{}\", \"rounds\": {}}}\n",
                           r.engine, c.method, c.batch, c.stride, c.us_per_key, c.cpu_us_per_key,
                           count(c.insns_per_key), count(c.allocs_per_key), c.keys, c.found,
                           r.engine == "reef" && wl.reef_ring_order ? "ring" : "key", wl.rounds);
            }
        }
        std::fflush(stdout);
    }
    std::map<cell_key, const multiget_cell*> cells;
    for (auto& r : runs) {
        for (auto& c : r.cells) {
            cells[{r.engine, c.method, c.batch, c.stride}] = &c;
        }
    }
    // Both engines found the same keys of each cell and method (random cells only when Reef's strides are in ring
    // order: its other batches are other keys).
    int rc = 0;
    for (auto stride : wl.strides) {
        if (wl.reef_ring_order && stride != 0) {
            continue;
        }
        for (auto b : wl.batches) {
            for (auto m : multiget_methods) {
                if (!cells.count({runs.front().engine, m, b, stride})) {
                    continue;
                }
                auto& first = *cells.at({runs.front().engine, m, b, stride});
                for (auto& r : runs) {
                    auto& c = *cells.at({r.engine, m, b, stride});
                    if (c.found != first.found || c.keys != first.keys) {
                        fmt::print(stderr, "reef perf-multiget: batch {} stride {} {}: {} found {} of {}, {} found "
                                   "{} of {}\n", b, stride, m, r.engine, c.found, c.keys, runs.front().engine,
                                   first.found, first.keys);
                        rc = 1;
                    }
                }
            }
        }
    }
    if (!text) {
        return rc;
    }
    print_table(wl, runs, cells, "wall time per key (µs)", [](const multiget_cell& c) { return c.us_per_key; });
    print_table(wl, runs, cells, "CPU time per key (µs) (this thread's)",
                [](const multiget_cell& c) { return c.cpu_us_per_key; });
    print_table(wl, runs, cells, "user-space instructions per key",
                [](const multiget_cell& c) { return c.insns_per_key; });
    print_table(wl, runs, cells, "operator new calls per key", [](const multiget_cell& c) { return c.allocs_per_key; });
    // Wall time on a quiet machine; CPU time (this thread's) where other work shares the cores: both are printed.
    auto per_key = [](const multiget_cell& c, bool cpu) { return cpu ? c.cpu_us_per_key : c.us_per_key; };
    // The batching gain, as RocksDB's PR 5011 and db_bench measure it: the batched multi-get's µs per key
    // over a single get's of a random key (the get cell of batch 1: a batch of one key is random at every stride).
    // Its locality counts as gain, as in their 0.53 and 0.37; the get cells of larger batches share it.
    auto gain = [&](const std::string& e, uint64_t b, uint64_t s, bool cpu) -> std::optional<double> {
        auto g = cells.find({e, "get", 1, s});
        auto m = cells.find({e, "multiget", b, s});
        if (g == cells.end() || m == cells.end()) {
            return std::nullopt;
        }
        return per_key(*m->second, cpu) / per_key(*g->second, cpu);
    };
    for (bool cpu : {false, true}) {
        const char* basis = cpu ? "CPU" : "wall";
        fmt::print("\nbatching gain by {} time (batched multiget µs/key over the µs/key of a single get of a random "
                   "key, batch 1; lower is better; '-' without batch 1)\n", basis);
        for (auto stride : wl.strides) {
            for (auto& r : runs) {
                fmt::print("{:>6} {:<8} {:<14}", stride, r.engine, "");
                for (auto b : wl.batches) {
                    auto g = gain(r.engine, b, stride, cpu);
                    fmt::print(" {:>8}", g ? fmt::format("{:.2f}", *g) : "-");
                }
                fmt::print("\n");
            }
        }
        if (runs.size() != 2) {
            continue;
        }
        auto rg = gain("reef", 32, 16, cpu), kg = gain("rocksdb", 32, 16, cpu);
        if (rg && kg) {
            fmt::print("target 1 by {} time, gain at batch 32 stride 16 (reef's strides in {} order): reef {:.2f}, "
                       "rocksdb {:.2f}: {}\n", basis, wl.reef_ring_order ? "ring" : "key", *rg, *kg,
                       *rg <= *kg ? "met" : "missed");
        } else {
            fmt::print("target 1 by {} time: not measured (it needs batches 1 and 32 at stride 16)\n", basis);
        }
        int worse = 0, total = 0;
        for (auto& [k, c] : cells) {
            if (std::get<0>(k) != "reef") {
                continue;
            }
            auto other = cells.find({"rocksdb", std::get<1>(k), std::get<2>(k), std::get<3>(k)});
            if (other == cells.end()) {
                continue;
            }
            ++total;
            worse += per_key(*c, cpu) > per_key(*other->second, cpu) ? 1 : 0;
        }
        fmt::print("target 2 by {} time, reef at or below rocksdb (µs/key): {} of {} cells{}\n", basis, total - worse,
                   total, worse ? " (missed)" : " (met)");
    }
    return rc;
}

} // namespace reef::perf
