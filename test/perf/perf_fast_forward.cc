// reef perf-fast-forward: ScyllaDB's perf_fast_forward for Reef. `--populate` writes the datasets (through a
// table: memtables, flushes, one major compaction); without it the test groups read them back through the
// sstable reader on one shard, each case for --test-case-duration, and print the median iteration's figures.
#include "test/perf/perf.hh"
#include "test/perf/perf_fast_forward.hh"

#include "runtime/app.hh"
#include "runtime/app_options.hh"
#include "runtime/blocking.hh"

#include <filesystem>
#include <fmt/core.h>
#include <set>
#include <sstream>

namespace reef::perf {

namespace {

std::vector<std::string> split_list(const std::vector<std::string>& args) {
    std::vector<std::string> out;
    for (auto& a : args) {
        std::istringstream in(a);
        std::string item;
        while (std::getline(in, item, ',')) {
            if (!item.empty()) {
                out.push_back(item);
            }
        }
    }
    return out;
}

} // namespace

int perf_fast_forward_main(int argc, char** argv) {
    using namespace pff;
    program_options::options opts(
        "reef perf-fast-forward",
        "ScyllaDB's perf_fast_forward: run once with --populate to write the datasets, then without it to "
        "measure reads that skip and slice through one large partition and many small ones. Each case prints "
        "the median iteration: time, fragments, frag/s and its spread, aio operations and KiB, reads that "
        "blocked, read-ahead dropped, index cache hits/misses/blocks (idx), Index.db page cache "
        "hits/misses/blocks (c: Reef has no row cache yet, so these columns are the cached_file pages that "
        "stand in front of Index.db), operator new calls, tasks, instructions per fragment and the shard's busy "
        "share. A fragment count other than the case's expected one is an error (exit status 1).");
    runtime_options rt;
    rt.add(opts);
    dataset_config cfg;
    bool populate_flag = false, with_compression = false, enable_cache = false, keep_cache = false,
         list_tests = false;
    std::string data_dir, output_format;
    std::vector<std::string> datasets_arg, run_tests_arg;
    double test_case_duration = 1;
    opts.add("populate", "write the datasets (replacing what the data directory holds)", &populate_flag);
    opts.add("rows", "rows of each dataset (population only)", &cfg.rows, uint64_t(1'000'000), uint64_t(1),
             uint64_t(std::numeric_limits<int32_t>::max() / 2));
    opts.add("value-size", "bytes of each row's value (population only)", &cfg.value_size, uint64_t(100));
    opts.add("with-compression", "LZ4-compressed Data.db (population only; plain with CRC.db otherwise)",
             &with_compression);
    opts.add("column-index-size-in-kb", "promoted index block size (population only)", &cfg.column_index_size_kb,
             uint64_t(64), uint64_t(1));
    opts.add("flush-threshold-mb", "memtable size that triggers a flush while populating", &cfg.flush_threshold_mb,
             uint64_t(64), uint64_t(1));
    opts.add("datasets", "datasets to populate or read: large-part-ds1, small-part (comma-separated; repeatable; "
             "default both)", &datasets_arg);
    opts.add("data-directory", "where the datasets are", &data_dir, "./perf_fast_forward_data");
    opts.add("run-tests", "test groups to run (comma-separated; repeatable; default all)", &run_tests_arg);
    opts.add("list-tests", "print the test groups and exit", &list_tests);
    opts.add("test-case-duration", "seconds each case runs (at least 3 iterations after the first; 0: one run)",
             &test_case_duration, 1.0);
    opts.add("output-format", "text or json (one object per case and read, on stdout)", &output_format, "text");
    opts.add("enable-cache",
             "read through a row cache in front of the sstable (the shard's caches get 4 GiB; dropped before each "
             "iteration unless --keep-cache-across-test-cases, as the index caches)",
             &enable_cache);
    opts.add("keep-cache-across-test-cases",
             "keep the index caches between iterations (warm); by default they are dropped before each (cold)",
             &keep_cache);
    int exit_status = 0;
    auto parsed = parse_command_line("reef perf-fast-forward", opts, rt, argc, argv, exit_status);
    if (!parsed) {
        return exit_status;
    }
    auto fail = [](const std::string& msg) {
        fmt::print(stderr, "reef perf-fast-forward: {}\n", msg);
        return 2;
    };
    if (list_tests) {
        for (auto& g : all_test_groups()) {
            auto description = g.description;
            for (size_t at = description.find('\n'); at != std::string::npos; at = description.find('\n', at + 2)) {
                description.replace(at, 1, "\n\t");
            }
            fmt::print("{}\n\t{} partition test{}\n\t{}\n\n", g.name,
                       g.kind == dataset_kind::large_partition ? "large" : "small",
                       g.needs_cache ? " (ScyllaDB runs it with its row cache)" : "", description);
        }
        return 0;
    }
    if (output_format != "text" && output_format != "json") {
        return fail(fmt::format("--output-format must be text or json, not \"{}\"", output_format));
    }
    if (test_case_duration < 0) {
        return fail("--test-case-duration must not be negative");
    }
    cfg.compression = with_compression;
    std::vector<const dataset*> datasets;
    try {
        auto names = split_list(datasets_arg);
        if (names.empty()) {
            for (auto& d : all_datasets()) {
                datasets.push_back(&d);
            }
        }
        for (auto& n : names) {
            datasets.push_back(&find_dataset(n));
        }
    } catch (const std::exception& e) {
        return fail(std::string("--datasets: ") + e.what());
    }
    std::set<std::string> groups;
    for (auto& g : split_list(run_tests_arg)) {
        bool known = false;
        for (auto& t : all_test_groups()) {
            known |= t.name == g;
        }
        if (!known) {
            return fail(fmt::format("--run-tests: no test group \"{}\" (--list-tests lists them)", g));
        }
        groups.insert(g);
    }
    if (!populate_flag) {
        bool population_option = false;
        for (auto o : {"rows", "value-size", "with-compression", "column-index-size-in-kb", "flush-threshold-mb"}) {
            population_option |= opts.was_set(o);
        }
        if (population_option) {
            return fail("--rows, --value-size, --with-compression, --column-index-size-in-kb and --flush-threshold-mb "
                        "apply to --populate only (a measuring run reads what the data directory holds)");
        }
    }
    runtime_config rc = *parsed;
    rc.smp = 1;  // the measuring runs need one shard, as ScyllaDB's -c1
    auto fmt_kind = output_format == "json" ? report::format::json : report::format::text;
    auto body = [&]() -> future<int> {
        if (populate_flag) {
            co_await run_blocking([&] { std::filesystem::create_directories(data_dir); });
            std::vector<std::string> names;
            for (auto* d : datasets) {
                fmt::print(stderr, "Populating {}: {}\n", d->name, d->description);
                co_await populate(data_dir, *d, cfg);
                names.push_back(d->name);
            }
            write_config(data_dir, cfg, names);
            fmt::print(stderr, "Config: rows: {}, value size: {}, compression: {}, column index size: {} KiB; in {}\n",
                       cfg.rows, cfg.value_size, cfg.compression ? "lz4" : "none", cfg.column_index_size_kb,
                       data_dir);
            co_return 0;
        }
        auto stored = read_config(data_dir);
        auto populated = populated_datasets(data_dir);
        report out(fmt_kind);
        fmt::print(fmt_kind == report::format::text ? stdout : stderr,
                   "Config: rows: {}, value size: {}, compression: {}, column index size: {} KiB; in {}; {} "
                   "{}\n",
                   stored.rows, stored.value_size, stored.compression ? "lz4" : "none", stored.column_index_size_kb,
                   data_dir, enable_cache ? "row cache and index caches" : "index caches",
                   keep_cache ? "kept across iterations (warm)" : "dropped before each iteration (cold)");
        // Large-partition groups first, then small, as ScyllaDB runs them.
        for (int k = 0; k < 2; ++k) {
            auto kind = k == 0 ? dataset_kind::large_partition : dataset_kind::small_partition;
            for (auto* ds : datasets) {
                if (ds->kind != kind) {
                    continue;
                }
                bool wanted = false;
                for (auto& g : all_test_groups()) {
                    wanted |= g.kind == kind && (groups.empty() || groups.contains(g.name));
                }
                if (!wanted) {
                    continue;
                }
                if (std::find(populated.begin(), populated.end(), ds->name) == populated.end()) {
                    throw std::runtime_error(
                        fmt::format("{}: dataset {} was not populated (run --populate --datasets {})", data_dir,
                                    ds->name, ds->name));
                }
                auto sst = co_await dataset_sstable::open(data_dir, *ds);
                if (enable_cache) {
                    // Room for a whole large partition (the default 64 MiB would evict it as it is populated),
                    // as ScyllaDB gives its cache most of the shard's memory.
                    cache::shard_cache_tracker().lru().set_budget(size_t(4) << 30);
                    sst->enable_cache();
                }
                std::exception_ptr err;
                try {
                    for (auto& g : all_test_groups()) {
                        if (g.kind != kind || !(groups.empty() || groups.contains(g.name))) {
                            continue;
                        }
                        run_context ctx{*sst, *ds, stored, out, test_case_duration, keep_cache};
                        out.group(g.name, g.description, *ds, group_params(g.name));
                        co_await g.run(ctx);
                    }
                } catch (...) {
                    err = std::current_exception();
                }
                co_await sst->close();
                if (err) {
                    std::rethrow_exception(err);
                }
            }
        }
        if (out.errors()) {
            fmt::print(stderr, "reef perf-fast-forward: {} reads did not give what they should\n", out.errors());
            co_return 1;
        }
        co_return 0;
    };
    try {
        return run(rc, body);
    } catch (const std::exception& e) {
        fmt::print(stderr, "reef perf-fast-forward: {}\n", e.what());
        return 1;
    }
}

} // namespace reef::perf
