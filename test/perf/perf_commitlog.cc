// reef perf-commitlog: the commitlog's write speed (issue 15). Batch mode: entries/s with 1, 16 and 128 writers in
// flight, each waiting for its add (written and fdatasync'ed, group commit), against the disk's limit for that: a
// plain loop of one write(2) + fdatasync per entry in the same directory. Periodic mode: MB/s of entry data with
// many writers, against plain sequential write(2)s of 1 MiB and one fdatasync; then the latency of its adds while
// other threads keep the disk busy (as flushes and compactions do), with segments written through the page cache
// against O_DIRECT segments (the write path before issue 17). Side by side in one run.
#include "test/perf/perf.hh"
#include "test/perf/perf_util.hh"

#include "commitlog/commitlog.hh"
#include "runtime/app.hh"
#include "runtime/app_options.hh"
#include "runtime/when_all.hh"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fmt/core.h>
#include <random>
#include <string>
#include <system_error>
#include <thread>
#include <unistd.h>
#include <vector>

namespace reef::perf {

namespace {

using namespace reef::commitlog;

void check(bool ok, const std::string& what) {
    if (!ok) {
        throw std::system_error(errno, std::system_category(), what);
    }
}

// Entries per second of a loop of write(2) of `size` bytes + fdatasync for `seconds` in dir.
double plain_sync_loop(const std::string& dir, size_t size, double seconds) {
    auto path = dir + "/plain-sync";
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    check(fd >= 0, "open " + path);
    std::string buf(size, 'x');
    uint64_t n = 0;
    auto start = clock_type::now();
    while (seconds_since(start) < seconds) {
        check(::write(fd, buf.data(), buf.size()) == ssize_t(buf.size()), "write " + path);
        check(::fdatasync(fd) == 0, "fdatasync " + path);
        ++n;
    }
    double s = seconds_since(start);
    ::close(fd);
    std::filesystem::remove(path);
    return double(n) / s;
}

// MB/s of sequential write(2)s of 1 MiB, `bytes` in all, then fdatasync.
double plain_sequential(const std::string& dir, uint64_t bytes) {
    auto path = dir + "/plain-seq";
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    check(fd >= 0, "open " + path);
    std::string buf(1 << 20, 'y');
    auto start = clock_type::now();
    for (uint64_t left = bytes; left > 0;) {
        auto n = ::write(fd, buf.data(), std::min<uint64_t>(left, buf.size()));
        check(n > 0, "write " + path);
        left -= uint64_t(n);
    }
    check(::fdatasync(fd) == 0, "fdatasync " + path);
    double s = seconds_since(start);
    ::close(fd);
    std::filesystem::remove(path);
    return double(bytes) / 1e6 / s;
}

// Keeps the disk busy while it lives: each thread writes 1 MiB blocks with O_DIRECT to a file of its own in dir
// (from its start again every 256 MiB), with an fdatasync every 32 MiB, as a flush or a compaction writes.
class busy_disk {
public:
    busy_disk(const std::string& dir, int threads) {
        for (int i = 0; i < threads; ++i) {
            _threads.emplace_back([this, path = fmt::format("{}/busy-{}", dir, i)] { write_loop(path); });
        }
    }
    busy_disk(const busy_disk&) = delete;
    ~busy_disk() {
        _stop = true;
        for (auto& t : _threads) {
            t.join();
        }
    }
    uint64_t bytes() const noexcept { return _bytes; }

private:
    void write_loop(const std::string& path) {
        constexpr size_t block = 1 << 20;
        constexpr uint64_t wrap = 256 << 20, sync_every = 32 << 20;
        int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_DIRECT, 0644);
        if (fd < 0) {  // a filesystem without O_DIRECT: through the page cache, synced as often
            fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        }
        void* buf = nullptr;
        if (fd < 0 || ::posix_memalign(&buf, 4096, block) != 0) {
            fmt::print(stderr, "perf-commitlog: cannot load the disk with {}\n", path);
            if (fd >= 0) {
                ::close(fd);
            }
            return;
        }
        std::memset(buf, 'z', block);
        uint64_t off = 0;
        while (!_stop) {
            if (::pwrite(fd, buf, block, off_t(off % wrap)) != ssize_t(block)) {
                break;
            }
            off += block;
            _bytes += block;
            if (off % sync_every == 0) {
                ::fdatasync(fd);
            }
        }
        std::free(buf);
        ::close(fd);
        ::unlink(path.c_str());
    }

    std::atomic<bool> _stop{false};
    std::atomic<uint64_t> _bytes{0};
    std::vector<std::thread> _threads;
};

struct result {
    double entries_per_s;
    double mb_per_s;
    commitlog_stats stats;
    std::vector<double> add_ms;  // each add's latency, sorted (when asked for)

    double percentile(double p) const {
        return add_ms.empty() ? 0 : add_ms[std::min(add_ms.size() - 1, size_t(p * double(add_ms.size())))];
    }
};

// `writers` coroutines adding `size`-byte entries for `seconds`; the log's segments are deleted as they fill
// (the table discarded up to the last position every 1024 entries), as flushes would.
struct log_options {
    uint64_t segment_size_mb = 32;
    uint64_t recycled_segments = commitlog_config().max_recycled_segments;
    bool periodic_direct_writes = false;
    bool latencies = false;
};

future<result> run_log(const std::string& dir, sync_mode mode, int writers, size_t size, double seconds,
                       log_options lo) {
    std::filesystem::remove_all(dir);
    commitlog_config cfg;
    cfg.commitlog_directory = dir;
    cfg.commitlog_sync = mode;
    cfg.commitlog_segment_size_in_mb = lo.segment_size_mb;
    cfg.max_recycled_segments = lo.recycled_segments;
    cfg.periodic_direct_writes = lo.periodic_direct_writes;
    auto log = co_await commitlog::commitlog::create(cfg, 0);
    table_id t{};
    t[0] = 1;
    bytes data(size);
    std::mt19937_64 rng(1);
    for (auto& b : data) {
        b = uint8_t(rng());
    }
    uint64_t entries = 0;
    replay_position last;
    std::vector<double> add_ms;
    auto start = clock_type::now();
    auto writer = [&]() -> future<> {
        while (seconds_since(start) < seconds) {
            auto began = clock_type::now();
            auto pos = co_await log->add(t, data);
            if (lo.latencies) {
                add_ms.push_back(seconds_since(began) * 1000);
            }
            last = std::max(last, pos);
            if (++entries % 1024 == 0) {
                co_await log->discard_completed_segments(t, last);  // as flushes would: full segments go
            }
        }
    };
    std::vector<future<>> fs;
    for (int i = 0; i < writers; ++i) {
        fs.push_back(writer());
    }
    co_await when_all(std::move(fs));
    co_await log->close();  // timed: periodic mode's last fdatasync, as the baseline's
    double s = seconds_since(start);
    co_await log->discard_completed_segments(t, last);
    std::filesystem::remove_all(dir);
    std::sort(add_ms.begin(), add_ms.end());
    co_return result{double(entries) / s, double(entries * size) / 1e6 / s, log->stats(), std::move(add_ms)};
}

// Periodic mode's add latencies with the disk kept busy by `threads` threads: O_DIRECT segments, then segments
// through the page cache, each run under its own load of the same kind.
future<> busy_disk_runs(const std::string& dir, int threads, int writers, size_t size, double seconds, log_options lo) {
    fmt::print("\nperiodic mode, {}-byte entries, {} writers, with {} threads writing 1 MiB O_DIRECT blocks beside "
               "it (fdatasync every 32 MiB)\n",
               size, writers, threads);
    fmt::print("{:<28} {:>10} {:>9} {:>9} {:>9} {:>10} {:>13}\n", "", "entries/s", "p50 ms", "p99 ms", "max ms",
               "busy MB/s", "vs O_DIRECT");
    double direct_rate = 0;
    for (bool direct : {true, false}) {
        lo.periodic_direct_writes = direct;
        lo.latencies = true;
        result r;
        uint64_t busy_bytes = 0;
        {
            busy_disk load(dir, threads);
            r = co_await run_log(dir + "/log", sync_mode::periodic, writers, size, seconds, lo);
            busy_bytes = load.bytes();
        }
        if (direct) {
            direct_rate = r.entries_per_s;
        }
        fmt::print("{:<28} {:>10.0f} {:>9.2f} {:>9.2f} {:>9.1f} {:>10.1f} {:>13.2f}\n",
                   direct ? "O_DIRECT segments" : "page-cache segments", r.entries_per_s, r.percentile(0.5),
                   r.percentile(0.99), r.add_ms.empty() ? 0 : r.add_ms.back(), double(busy_bytes) / 1e6 / seconds,
                   direct_rate > 0 ? r.entries_per_s / direct_rate : 0);
        std::fflush(stdout);
    }
}

} // namespace

int perf_commitlog_main(int argc, char** argv) {
    program_options::options opts("reef perf-commitlog",
                                  "Commitlog write speed: batch mode entries/s with 1, 16 and 128 writers against a "
                                  "plain write + fdatasync loop, periodic mode MB/s against sequential writes.");
    runtime_options rt;
    rt.add(opts);
    uint64_t entry_size = 0, periodic_entry_size = 0, ms = 0, periodic_writers = 0;
    std::string data_dir;
    opts.add("entry-size", "bytes of each batch-mode entry's data", &entry_size, uint64_t(256), uint64_t(1));
    opts.add("periodic-entry-size", "bytes of each periodic-mode entry's data", &periodic_entry_size, uint64_t(4096),
             uint64_t(1));
    opts.add("periodic-writers", "writers in flight in periodic mode", &periodic_writers, uint64_t(64), uint64_t(1));
    opts.add("duration-ms", "milliseconds per measurement", &ms, uint64_t(3000), uint64_t(1));
    log_options lo;
    opts.add("segment-size-mb", "commitlog_segment_size_in_mb", &lo.segment_size_mb, uint64_t(32), uint64_t(1));
    opts.add("recycled-segments", "max_recycled_segments (0: discarded segments are deleted, new ones created)",
             &lo.recycled_segments, lo.recycled_segments, uint64_t(0));
    uint64_t busy_threads = 0;
    opts.add("busy-threads", "threads keeping the disk busy in the last runs (0: no such runs)", &busy_threads,
             uint64_t(4), uint64_t(0));
    opts.add("data-directory", "where the segments go (a real disk: the figures include its fdatasyncs)", &data_dir,
             "/var/tmp/reef-perf");
    int exit_status = 0;
    auto parsed = parse_command_line("reef perf-commitlog", opts, rt, argc, argv, exit_status);
    if (!parsed) {
        return exit_status;
    }
    runtime_config cfg = *parsed;
    cfg.smp = 1;
    auto dir = fmt::format("{}/perf-commitlog-{}", data_dir, ::getpid());
    std::filesystem::create_directories(dir);
    double seconds = double(ms) / 1000;
    fmt::print("reef perf-commitlog: segments of {} MiB in {}, at most {} recycled, {:.1f} s per measurement\n\n",
               lo.segment_size_mb, dir, lo.recycled_segments, seconds);
    int rc = run(cfg, [&]() -> future<int> {
        double plain = plain_sync_loop(dir, entry_size, seconds);
        fmt::print("batch mode, {}-byte entries (acknowledged after fdatasync)\n", entry_size);
        fmt::print("{:<28} {:>12} {:>10} {:>10} {:>10} {:>12} {:>14} {:>12}\n", "", "entries/s", "entries", "syncs",
                   "writes", "vs 1 writer", "vs plain loop", "new/reused");
        fmt::print("{:<28} {:>12.0f} {:>10} {:>10} {:>10} {:>12} {:>14}\n", "plain write+fdatasync loop", plain, "", "",
                   "", "", "1.00");
        double one = 0;
        for (int writers : {1, 16, 128}) {
            auto r = co_await run_log(dir + "/log", sync_mode::batch, writers, entry_size, seconds, lo);
            if (writers == 1) {
                one = r.entries_per_s;
            }
            fmt::print("{:<28} {:>12.0f} {:>10} {:>10} {:>10} {:>12.2f} {:>14.2f} {:>12}\n",
                       fmt::format("commitlog, {} writers", writers), r.entries_per_s, r.stats.entries, r.stats.syncs,
                       r.stats.writes, r.entries_per_s / one, r.entries_per_s / plain,
                       fmt::format("{}/{}", r.stats.segments_created, r.stats.segments_recycled));
            std::fflush(stdout);
        }
        auto r = co_await run_log(dir + "/log", sync_mode::periodic, int(periodic_writers), periodic_entry_size, seconds,
                                  lo);
        uint64_t bytes = uint64_t(r.mb_per_s * 1e6 * seconds);
        double seq = plain_sequential(dir, std::max<uint64_t>(bytes, 64 << 20));
        fmt::print("\nperiodic mode, {}-byte entries, {} writers (acknowledged after write)\n", periodic_entry_size,
                   periodic_writers);
        fmt::print("{:<28} {:>12} {:>10} {:>10} {:>12}\n", "", "MB/s", "entries/s", "writes", "vs plain");
        fmt::print("{:<28} {:>12.1f} {:>10} {:>10} {:>12}\n", "plain sequential write", seq, "", "", "1.00");
        fmt::print("{:<28} {:>12.1f} {:>10.0f} {:>10} {:>12.2f}\n", "commitlog", r.mb_per_s, r.entries_per_s,
                   r.stats.writes, r.mb_per_s / seq);
        if (busy_threads > 0) {
            co_await busy_disk_runs(dir, int(busy_threads), int(periodic_writers), periodic_entry_size, seconds, lo);
        }
        co_return 0;
    });
    std::filesystem::remove_all(dir);
    return rc;
}

} // namespace reef::perf
