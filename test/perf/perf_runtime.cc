// reef perf-runtime: what the shard runtime costs, side by side with its baselines in one
// run: coroutine call vs plain call, cross-shard round trip, file reads per backend vs pread and raw io_uring.
#include "test/perf/perf.hh"
#include "test/perf/perf_util.hh"

#include "runtime/app.hh"
#include "runtime/app_options.hh"
#include "runtime/file.hh"
#include "runtime/reactor.hh"
#include "runtime/smp.hh"
#include "runtime/when_all.hh"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <fmt/core.h>
#include <liburing.h>
#include <string>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sched.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace reef::perf {

namespace {

// ---- coroutine call cost ------------------------------------------------

// noinline on both, so the coroutine frame is really allocated (no
// heap-elision) and the plain call is really a call.
[[gnu::noinline]] future<uint64_t> coroutine_add(uint64_t x) { co_return x + 1; }
[[gnu::noinline]] uint64_t plain_add(uint64_t x) {
    asm volatile("" : : : "memory");
    return x + 1;
}

struct call_costs {
    double coroutine_ns;
    double plain_ns;
};

future<call_costs> measure_calls(uint64_t n) {
    uint64_t sum = 0;
    for (uint64_t i = 0; i < 1000; ++i) {  // warm the frame pool
        sum += co_await coroutine_add(i);
    }
    auto start = clock_type::now();
    for (uint64_t i = 0; i < n; ++i) {
        sum += co_await coroutine_add(i);
    }
    double co = seconds_since(start);
    start = clock_type::now();
    for (uint64_t i = 0; i < n; ++i) {
        sum += plain_add(i);
    }
    double pl = seconds_since(start);
    if (sum == 42) {
        fmt::print("");  // keeps sum alive
    }
    co_return call_costs{co * 1e9 / double(n), pl * 1e9 / double(n)};
}

// ---- cross-shard round trip ---------------------------------------------

std::atomic<bool> keep_busy{false};

// Keeps a shard's run queue non-empty so its loop never sleeps.
future<> busy_loop() {
    while (keep_busy.load(std::memory_order_relaxed)) {
        co_await yield();
    }
}

struct smp_costs {
    double busy_round_trip_us;
    double idle_round_trip_us;
    double pipelined_calls_per_s;
};

future<smp_costs> measure_smp(uint64_t n) {
    smp_costs out{};
    shard_id target = 1;
    // Both shards busy: each runs a spinning task besides the calls.
    keep_busy = true;
    co_await smp::invoke_on_all([] { spawn(busy_loop()); });
    for (int i = 0; i < 1000; ++i) {
        co_await smp::submit_to(target, [] { return 1; });
    }
    auto start = clock_type::now();
    for (uint64_t i = 0; i < n; ++i) {
        co_await smp::submit_to(target, [] { return 1; });
    }
    out.busy_round_trip_us = seconds_since(start) * 1e6 / double(n);

    // Many calls in flight at once: throughput of the rings.
    start = clock_type::now();
    constexpr unsigned fibers = 64;
    std::vector<future<>> fs;
    for (unsigned f = 0; f < fibers; ++f) {
        fs.push_back([](shard_id t, uint64_t calls) -> future<> {
            for (uint64_t i = 0; i < calls; ++i) {
                co_await smp::submit_to(t, [] { return 1; });
            }
        }(target, n / fibers));
    }
    co_await when_all(std::move(fs));
    out.pipelined_calls_per_s = double(n / fibers * fibers) / seconds_since(start);
    keep_busy = false;
    co_await sleep(std::chrono::milliseconds(5));

    // Idle target: it sleeps between calls, so each call pays the wake-up.
    uint64_t idle_n = std::max<uint64_t>(100, n / 1000);
    double total = 0;
    for (uint64_t i = 0; i < idle_n; ++i) {
        co_await sleep(std::chrono::microseconds(300));  // let shard 1 fall asleep
        auto t0 = clock_type::now();
        co_await smp::submit_to(target, [] { return 1; });
        total += seconds_since(t0);
    }
    out.idle_round_trip_us = total * 1e6 / double(idle_n);
    co_return out;
}

// ---- file reads -----------------------------------------------------------

struct read_setup {
    std::string path;
    uint64_t file_size;
    size_t block;
    double duration;
};

// Offsets of reads: a stride through the file, so that no two fibers read
// the same block at the same time and every read is a real disk read.
uint64_t offset_of(const read_setup& s, uint64_t i) {
    uint64_t blocks = s.file_size / s.block;
    return (i * 7919 % blocks) * s.block;
}

double process_cpu_seconds() {
    rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return double(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) + double(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

double mb_per_s(uint64_t bytes, double secs) { return double(bytes) / secs / (1024.0 * 1024.0); }

future<double> reef_read_rate(const read_setup& s, unsigned depth) {
    auto f = co_await open_file_dma(s.path, open_flags::ro);
    std::atomic<uint64_t> next{0};
    uint64_t bytes = 0;
    auto start = clock_type::now();
    auto deadline = start + std::chrono::duration_cast<clock_type::duration>(std::chrono::duration<double>(s.duration));
    std::vector<future<>> fibers;
    for (unsigned d = 0; d < depth; ++d) {
        fibers.push_back([](file f, const read_setup& s, std::atomic<uint64_t>& next, uint64_t& bytes,
                            clock_type::time_point deadline) -> future<> {
            auto buf = f.allocate_aligned_buffer(s.block);
            while (clock_type::now() < deadline) {
                uint64_t i = next.fetch_add(1, std::memory_order_relaxed);
                bytes += co_await f.dma_read(offset_of(s, i), buf.get_write(), s.block);
            }
        }(f, s, next, bytes, deadline));
    }
    co_await when_all(std::move(fibers));
    double secs = seconds_since(start);
    co_await f.close();
    co_return mb_per_s(bytes, secs);
}

double pread_rate(const read_setup& s, unsigned depth) {
    std::atomic<uint64_t> next{0};
    std::atomic<uint64_t> bytes{0};
    auto deadline = clock_type::now() + std::chrono::duration<double>(s.duration);
    auto start = clock_type::now();
    std::vector<std::thread> threads;
    for (unsigned d = 0; d < depth; ++d) {
        threads.emplace_back([&] {
            int fd = ::open(s.path.c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC);
            if (fd < 0) {
                return;
            }
            void* buf = std::aligned_alloc(4096, s.block);
            uint64_t mine = 0;
            while (clock_type::now() < deadline) {
                uint64_t i = next.fetch_add(1, std::memory_order_relaxed);
                ssize_t r = ::pread(fd, buf, s.block, off_t(offset_of(s, i)));
                if (r <= 0) {
                    break;
                }
                mine += uint64_t(r);
            }
            bytes += mine;
            std::free(buf);
            ::close(fd);
        });
    }
    for (auto& t : threads) {
        t.join();
    }
    return mb_per_s(bytes, seconds_since(start));
}

// liburing used directly, with nothing in between: the ceiling for our
// io_uring backend.
double raw_uring_rate(const read_setup& s, unsigned depth) {
    io_uring ring;
    if (io_uring_queue_init(std::max(depth, 4u), &ring, 0) < 0) {
        return 0;
    }
    int fd = ::open(s.path.c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC);
    std::vector<void*> bufs(depth);
    for (auto& b : bufs) {
        b = std::aligned_alloc(4096, s.block);
    }
    uint64_t next = 0, bytes = 0;
    auto submit_one = [&](unsigned slot) {
        auto* sqe = io_uring_get_sqe(&ring);
        io_uring_prep_read(sqe, fd, bufs[slot], s.block, offset_of(s, next++));
        io_uring_sqe_set_data64(sqe, slot);
    };
    auto deadline = clock_type::now() + std::chrono::duration<double>(s.duration);
    auto start = clock_type::now();
    for (unsigned d = 0; d < depth; ++d) {
        submit_one(d);
    }
    io_uring_submit(&ring);
    unsigned in_flight = depth;
    while (in_flight) {
        io_uring_cqe* cqe;
        if (io_uring_wait_cqe(&ring, &cqe) < 0) {
            break;
        }
        unsigned slot = unsigned(io_uring_cqe_get_data64(cqe));
        if (cqe->res > 0) {
            bytes += uint64_t(cqe->res);
        }
        io_uring_cqe_seen(&ring, cqe);
        --in_flight;
        if (clock_type::now() < deadline) {
            submit_one(slot);
            io_uring_submit(&ring);
            ++in_flight;
        }
    }
    double secs = seconds_since(start);
    for (auto* b : bufs) {
        std::free(b);
    }
    ::close(fd);
    io_uring_queue_exit(&ring);
    return mb_per_s(bytes, secs);
}

// Runs fn with the calling thread on the CPU shard 0 uses when shards are
// pinned, so that a baseline and the runtime take their completions on the
// same CPU (on a VM the disk's interrupts land on one CPU, and waking a
// thread on another costs an interprocessor interrupt).
template <typename Func>
auto on_shard0_cpu(bool pinned, Func fn) {
    cpu_set_t old;
    bool restore = pinned && sched_getaffinity(0, sizeof(old), &old) == 0;
    if (restore) {
        for (int c = 0; c < CPU_SETSIZE; ++c) {
            if (CPU_ISSET(c, &old)) {
                cpu_set_t one;
                CPU_ZERO(&one);
                CPU_SET(c, &one);
                sched_setaffinity(0, sizeof(one), &one);
                break;
            }
        }
    }
    auto r = fn();
    if (restore) {
        sched_setaffinity(0, sizeof(old), &old);
    }
    return r;
}

void make_test_file(const std::string& path, uint64_t size) {
    struct stat st;
    if (::stat(path.c_str(), &st) == 0 && uint64_t(st.st_size) == size) {
        return;  // left by an earlier run
    }
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        throw std::system_error(errno, std::system_category(), "create " + path);
    }
    std::vector<char> chunk(1 << 20);
    for (size_t i = 0; i < chunk.size(); ++i) {
        chunk[i] = char(i * 131 + 7);
    }
    for (uint64_t done = 0; done < size; done += chunk.size()) {
        if (::write(fd, chunk.data(), chunk.size()) != ssize_t(chunk.size())) {
            int e = errno;
            ::close(fd);
            throw std::system_error(e, std::system_category(), "write " + path);
        }
    }
    ::fsync(fd);
    ::close(fd);
}

} // namespace

int perf_runtime_main(int argc, char** argv) {
    program_options::options opts("reef perf-runtime",
                                  "Measures the shard runtime against its baselines, side by side in one run.");
    runtime_options rt;
    rt.add(opts);
    uint64_t calls = 0, smp_calls = 0, file_mb = 0, block_kb = 0;
    double duration = 0;
    unsigned rounds = 0;
    std::string data_dir;
    opts.add("calls", "coroutine calls to time", &calls, uint64_t(20'000'000), uint64_t(1000));
    opts.add("smp-calls", "cross-shard round trips to time", &smp_calls, uint64_t(200'000), uint64_t(1000));
    opts.add("file-size-mb", "size of the file the read tests use", &file_mb, uint64_t(256), uint64_t(1));
    opts.add("block-size-kb", "size of each read", &block_kb, uint64_t(128), uint64_t(4), uint64_t(8192));
    opts.add("duration", "seconds per read test", &duration, 1.0);
    opts.add("rounds", "rounds of read tests; each cell is the median", &rounds, 3u, 1u, 100u);
    opts.add("data-directory", "where the read-test file lives (a real disk: O_DIRECT)", &data_dir, "/var/tmp/reef-perf");
    int exit_status = 0;
    auto parsed = parse_command_line("reef perf-runtime", opts, rt, argc, argv, exit_status);
    if (!parsed) {
        return exit_status;
    }
    runtime_config cfg = *parsed;
    cfg.smp = std::max(2u, cfg.smp ? cfg.smp : 2u);

    fmt::print("reef perf-runtime: {} CPUs available, {} shards for the call tests\n\n", available_cpus(), cfg.smp);

    call_costs cc{};
    smp_costs sc{};
    double idle_cpu = 0;
    run(cfg, [&]() -> future<int> {
        cc = co_await measure_calls(calls);
        sc = co_await measure_smp(smp_calls);
        co_await sleep(std::chrono::milliseconds(50));
        double before = process_cpu_seconds();
        co_await sleep(std::chrono::seconds(1));
        idle_cpu = process_cpu_seconds() - before;
        co_return 0;
    });
    fmt::print("{:<48} {:>12}\n", "coroutine call (pooled frame), ns", fmt::format("{:.2f}", cc.coroutine_ns));
    fmt::print("{:<48} {:>12}\n", "plain function call, ns", fmt::format("{:.2f}", cc.plain_ns));
    fmt::print("{:<48} {:>12}\n", "cross-shard round trip, both shards busy, us", fmt::format("{:.2f}", sc.busy_round_trip_us));
    fmt::print("{:<48} {:>12}\n", "cross-shard round trip, target asleep, us", fmt::format("{:.2f}", sc.idle_round_trip_us));
    fmt::print("{:<48} {:>12}\n", "cross-shard calls/s, 64 in flight", fmt::format("{:.0f}", sc.pipelined_calls_per_s));
    fmt::print("{:<48} {:>12}\n", fmt::format("idle CPU, all {} shards, % of one core", cfg.smp),
               fmt::format("{:.2f}", idle_cpu * 100));

    ::mkdir(data_dir.c_str(), 0755);
    read_setup s{data_dir + "/perf-runtime.dat", file_mb << 20, size_t(block_kb) << 10, duration};
    try {
        make_test_file(s.path, s.file_size);
    } catch (const std::exception& e) {
        fmt::print(stderr, "reef perf-runtime: {}\n", e.what());
        return 1;
    }
    fmt::print("\nfile reads: {} KiB blocks, O_DIRECT, {} MiB file in {}, median of {} rounds of {:.1f} s{}\n",
               block_kb, file_mb, data_dir, rounds, duration,
               cfg.pin_threads ? ", baselines on shard 0's CPU" : "");
    fmt::print("{:<22} {:>14} {:>14}\n", "engine", "QD1 MB/s", "QD16 MB/s");
    // The disk's speed drifts from second to second, so the engines take
    // turns, round after round, and each cell is the median of its rounds.
    std::vector<std::string> names;
    std::vector<std::vector<double>> qd1s, qd16s;
    auto record = [&](const std::string& name, double qd1, double qd16) {
        size_t i = std::find(names.begin(), names.end(), name) - names.begin();
        if (i == names.size()) {
            names.push_back(name);
            qd1s.emplace_back();
            qd16s.emplace_back();
        }
        qd1s[i].push_back(qd1);
        qd16s[i].push_back(qd16);
    };
    std::vector<std::string> unavailable;
    for (unsigned round = 0; round < rounds; ++round) {
        for (auto kind : {io_backend_kind::uring, io_backend_kind::aio, io_backend_kind::pread}) {
            runtime_config one = cfg;
            one.smp = 1;
            one.io_backend = kind;
            double qd1 = 0, qd16 = 0;
            try {
                run(one, [&]() -> future<int> {
                    qd1 = co_await reef_read_rate(s, 1);
                    qd16 = co_await reef_read_rate(s, 16);
                    co_return 0;
                });
            } catch (const std::exception& e) {
                if (round == 0) {
                    unavailable.push_back(fmt::format("reef {}: {}", to_string(kind), e.what()));
                }
                continue;
            }
            record(fmt::format("reef {}", to_string(kind)), qd1, qd16);
            if (kind == io_backend_kind::uring) {
                // Right after ours, so both see the same disk.
                record("raw liburing", on_shard0_cpu(cfg.pin_threads, [&] { return raw_uring_rate(s, 1); }),
                       on_shard0_cpu(cfg.pin_threads, [&] { return raw_uring_rate(s, 16); }));
            }
        }
        // Threads started from a pinned thread inherit its CPU.
        record("plain pread (threads)", on_shard0_cpu(cfg.pin_threads, [&] { return pread_rate(s, 1); }),
               on_shard0_cpu(cfg.pin_threads, [&] { return pread_rate(s, 16); }));
    }
    auto median = [](std::vector<double> v) {
        std::sort(v.begin(), v.end());
        return v.empty() ? 0.0 : v[v.size() / 2];
    };
    std::vector<std::pair<std::string, std::pair<double, double>>> rows;
    for (size_t i = 0; i < names.size(); ++i) {
        rows.push_back({names[i], {median(qd1s[i]), median(qd16s[i])}});
    }
    for (auto& u : unavailable) {
        fmt::print("{} (unavailable)\n", u);
    }
    for (auto& [name, r] : rows) {
        fmt::print("{:<22} {:>14.1f} {:>14.1f}\n", name, r.first, r.second);
    }
    auto find = [&](std::string_view name) -> const std::pair<double, double>* {
        for (auto& [n, r] : rows) {
            if (n == name) {
                return &r;
            }
        }
        return nullptr;
    };
    auto* ours = find("reef io_uring");
    auto* raw = find("raw liburing");
    if (ours && raw && raw->second > 0) {
        fmt::print("\nreef io_uring / raw liburing: QD1 {:.2f}, QD16 {:.2f}\n", ours->first / raw->first,
                   ours->second / raw->second);
    }
    return 0;
}

} // namespace reef::perf
