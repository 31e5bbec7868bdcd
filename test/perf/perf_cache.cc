// reef perf-cache: what the index caches cost and save: scans and random small reads of a file through
// cached_file (cold, warm, and with a budget smaller than the file) next to the plain file stream, and
// partition_index_cache lookups; rates per thread-CPU second, with the disk reads each pass did.
#include "test/perf/perf.hh"
#include "test/perf/perf_util.hh"

#include "cache/cached_file.hh"
#include "cache/partition_index_cache.hh"
#include "cache/tracker.hh"
#include "runtime/app.hh"
#include "runtime/app_options.hh"
#include "runtime/file.hh"
#include "runtime/input_stream.hh"
#include "runtime/program_options.hh"
#include "runtime/reactor.hh"

#include <filesystem>
#include <fmt/core.h>
#include <fstream>
#include <random>

namespace reef::perf {

namespace {

using namespace reef::cache;

void write_file(const std::string& path, uint64_t size) {
    std::mt19937_64 rng(1);
    std::string bytes(size, '\0');
    for (auto& c : bytes) {
        c = char(rng());
    }
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), std::streamsize(bytes.size()));
    if (!out) {
        throw std::runtime_error("cannot write " + path);
    }
}

struct pass_result {
    double wall = 0;
    double cpu = 0;
    uint64_t ops = 0;
    uint64_t bytes = 0;
    uint64_t disk_reads = 0;
    cached_file_stats stats;
};

// Runs body, measuring it and the disk reads and page lookups it did.
template <typename Body>
future<pass_result> measure(cached_file* cf, Body body) {
    pass_result r;
    auto reads = engine().io().reads;
    cached_file_stats before;
    if (cf) {
        before = cf->stats();
    }
    auto start = clock_type::now();
    double cpu = thread_cpu_seconds();
    co_await body(r);
    r.cpu = thread_cpu_seconds() - cpu;
    r.wall = seconds_since(start);
    r.disk_reads = engine().io().reads - reads;
    if (cf) {
        auto& s = cf->stats();
        r.stats.page_hits = s.page_hits - before.page_hits;
        r.stats.page_misses = s.page_misses - before.page_misses;
        r.stats.page_blocks = s.page_blocks - before.page_blocks;
    }
    co_return r;
}

void print_row(const std::string& name, const std::string& unit, const pass_result& r) {
    double rate = r.cpu > 0 ? double(unit == "MB/s" ? r.bytes / 1e6 : double(r.ops)) / r.cpu : 0;
    double wall_rate = r.wall > 0 ? double(unit == "MB/s" ? r.bytes / 1e6 : double(r.ops)) / r.wall : 0;
    fmt::print("{:<34} {:>12.0f} {:>12.0f} {:<8} {:>10} {:>10} {:>10} {:>8}\n", name, rate, wall_rate, unit,
               r.disk_reads, r.stats.page_hits, r.stats.page_misses, r.stats.page_blocks);
}

struct small_page {
    uint64_t key;
    size_t memory_usage() const noexcept { return sizeof(*this); }
};

} // namespace

int perf_cache_main(int argc, char** argv) {
    program_options::options opts("reef perf-cache",
                                  "Scans and random small reads through cached_file (cold, warm, small budget) next "
                                  "to the plain file stream, and partition_index_cache lookups.");
    runtime_options rt;
    rt.add(opts);
    uint64_t size_mb = 0, reads = 0, read_bytes = 0, lookups = 0;
    std::string data_dir;
    opts.add("size-mb", "size of the file", &size_mb, uint64_t(32), uint64_t(1));
    opts.add("reads", "random reads per pass", &reads, uint64_t(100000), uint64_t(1));
    opts.add("read-bytes", "bytes per random read", &read_bytes, uint64_t(64), uint64_t(1), uint64_t(4096));
    opts.add("lookups", "partition_index_cache lookups per pass", &lookups, uint64_t(1000000), uint64_t(1));
    opts.add("data-directory", "where the file goes (a real disk: O_DIRECT)", &data_dir, "/var/tmp/reef-perf");
    int exit_status = 0;
    auto parsed = parse_command_line("reef perf-cache", opts, rt, argc, argv, exit_status);
    if (!parsed) {
        return exit_status;
    }
    runtime_config cfg = *parsed;
    cfg.smp = 1;
    std::filesystem::create_directories(data_dir);
    auto path = data_dir + "/perf-cache-Index.db";
    uint64_t size = size_mb << 20;
    write_file(path, size);
    fmt::print("reef perf-cache: a {} MiB file, {} random reads of {} bytes, {} index cache lookups\n"
               "(rates per thread-CPU second and per wall second; disk reads, page hits, misses, blocks)\n\n",
               size_mb, reads, read_bytes, lookups);
    fmt::print("{:<34} {:>12} {:>12} {:<8} {:>10} {:>10} {:>10} {:>8}\n", "pass", "per cpu s", "per wall s", "",
               "disk rds", "hits", "misses", "blocks");
    int status = run(cfg, [&]() -> future<int> {
        auto f = co_await open_file_dma(path, open_flags::ro);
        auto random_reads = [&](cached_file* cf, unsigned seed) {
            return [&, cf, seed](pass_result& r) -> future<> {
                std::mt19937_64 rng(seed);
                for (uint64_t i = 0; i < reads; ++i) {
                    uint64_t pos = rng() % (size - read_bytes);
                    if (cf) {
                        auto b = co_await cf->read(pos, read_bytes);
                        r.bytes += b.size();
                    } else {
                        auto b = co_await f.dma_read(pos, read_bytes);
                        r.bytes += b.size();
                    }
                    ++r.ops;
                }
            };
        };
        auto scan = [&](cached_file* cf) {
            return [&, cf](pass_result& r) -> future<> {
                if (cf) {
                    r.bytes = co_await drain(cf->make_data_source(0, size));
                } else {
                    r.bytes = co_await drain(make_file_data_source(f, 0, size, file_input_stream_options{4096, 4}));
                }
                r.ops = 1;
            };
        };
        {
            auto plain_scan = scan(nullptr);
            {
                auto res = co_await measure(nullptr, plain_scan);
                print_row("file stream scan (4 KiB, ahead 4)", "MB/s", res);
            }
            auto plain_reads = random_reads(nullptr, 1);
            {
                auto res = co_await measure(nullptr, plain_reads);
                print_row("file dma_read, random", "reads/s", res);
            }
        }
        {
            cache_tracker big(size * 2);
            cached_file cf(f, size, big);
            auto cold = scan(&cf);
            {
                auto res = co_await measure(&cf, cold);
                print_row("cached_file scan, cold", "MB/s", res);
            }
            auto warm = scan(&cf);
            {
                auto res = co_await measure(&cf, warm);
                print_row("cached_file scan, warm", "MB/s", res);
            }
            auto warm_reads = random_reads(&cf, 2);
            {
                auto res = co_await measure(&cf, warm_reads);
                print_row("cached_file random, warm", "reads/s", res);
            }
            co_await cf.close();
        }
        {
            cache_tracker quarter(size / 4);
            cached_file cf(f, size, quarter);
            auto fill = random_reads(&cf, 3);
            (void)co_await measure(&cf, fill);
            auto small = random_reads(&cf, 4);
            {
                auto res = co_await measure(&cf, small);
                print_row("cached_file random, budget 1/4", "reads/s", res);
            }
            co_await cf.close();
        }
        {
            cache_tracker t(64 << 20);
            partition_index_cache<small_page> c(t);
            uint64_t keys = 4096;
            for (uint64_t k = 0; k < keys; ++k) {
                (void)co_await c.get_or_load(k, [k] { return small_page{k}; });
            }
            auto hits = [&](pass_result& r) -> future<> {
                std::mt19937_64 rng(5);
                for (uint64_t i = 0; i < lookups; ++i) {
                    uint64_t k = rng() % keys;
                    auto e = co_await c.get_or_load(k, [k] { return small_page{k}; });
                    r.ops += e->key == k;
                }
            };
            auto res = co_await measure(nullptr, hits);
            print_row("partition_index_cache hits", "lookups/s", res);
            fmt::print("{:<34} {:>12} hits {} misses {}\n", "", "", c.stats().hits, c.stats().misses);
        }
        co_await f.close();
        co_return 0;
    });
    std::filesystem::remove(path);
    return status;
}

} // namespace reef::perf
