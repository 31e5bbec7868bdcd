// reef perf-compaction (issue 16): a table of --sstables overlapping sstables (--rows rows of --value-size-byte
// values, random keys, so later sstables overwrite rows of earlier ones) is major-compacted (table::compact_all, the
// swap log included); throughput in MB/s of input Data.db against a plain read-then-write copy of the same files
// (read(2) of each input Data.db, write(2) into one file, fsync), medians of --runs; then point reads (the table's
// single-partition read of a random written key, sstables read directly: no row cache) p50/p99 while a major
// compaction runs, against the same reads with none, on the same shard; then a sustained load (--wa-rows rows, a
// flush every --wa-flush-every) into a table whose background compaction manager runs the default STCS: the sstable
// count over time, the write amplification (bytes flushed plus bytes the compactions wrote, over bytes flushed) and
// spot-checked reads of what was written, during the load and once the manager is idle.
#include "test/perf/perf.hh"
#include "test/perf/perf_util.hh"

#include "compaction/compaction_manager.hh"
#include "db/table.hh"
#include "mutation/mutation.hh"
#include "runtime/app.hh"
#include "runtime/app_options.hh"
#include "runtime/reactor.hh"
#include "runtime/when_all.hh"

#include <algorithm>
#include <cerrno>
#include <ctime>
#include <fcntl.h>
#include <filesystem>
#include <fmt/core.h>
#include <random>
#include <string>
#include <system_error>
#include <unistd.h>
#include <vector>

namespace reef::perf {

namespace {

bytes int_bytes(uint32_t v) {
    return bytes{uint8_t(v >> 24), uint8_t(v >> 16), uint8_t(v >> 8), uint8_t(v)};
}

dht::decorated_key key_of(uint32_t p) {
    auto b = int_bytes(p);
    return dht::decorated_key(partition_key(std::string(b.begin(), b.end())));
}

schema_ptr compaction_schema() {
    return schema_builder("ks", "compaction")
        .with_column("pk", int32_type(), column_kind::partition_key)
        .with_column("ck", int32_type(), column_kind::clustering_key)
        .with_column("v", blob_type(), column_kind::regular_column)
        .build();
}

struct load_options {
    uint64_t rows, sstables, partitions, value_size;
};

// rows random (pk, ck) writes flushed into `sstables` sstables; returns the table's Data.db bytes.
future<uint64_t> load(table& t, const load_options& o, uint64_t seed) {
    auto s = t.schema();
    std::mt19937_64 rng(seed);
    std::string value(o.value_size, 'x');
    uint64_t per_sstable = std::max<uint64_t>(1, o.rows / o.sstables);
    write_time::timestamp_type ts = 1'750'000'000'000'000;
    for (uint64_t i = 0; i < o.rows; ++i) {
        mutation m(s, key_of(uint32_t(rng() % o.partitions)));
        deletable_row r;
        r.marker = row_marker{++ts};
        // Half random: compressible to about half, as db_bench's values.
        for (size_t j = 0; j < value.size() / 2; ++j) {
            value[j] = char(rng());
        }
        r.cells.apply(0, atomic_cell::make_live(ts, value));
        m.partition().apply_row(*s, clustering_key_prefix({int_bytes(uint32_t(rng() % 16))}), r);
        t.apply(m);
        if ((i + 1) % per_sstable == 0) {
            co_await t.flush();
        }
    }
    co_await t.flush();
    uint64_t bytes = 0;
    for (auto& d : t.sstable_descriptors()) {
        bytes += std::filesystem::file_size(d.filename(sstables::component_type::data));
    }
    co_return bytes;
}

// The baseline: each file read with read(2) in 1 MiB pieces and written to one new file of dir, then fsync.
double plain_copy_seconds(const std::vector<std::string>& files, const std::string& dir) {
    auto out_path = dir + "/plain-copy";
    std::string buf(1 << 20, '\0');
    auto start = clock_type::now();
    int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (out < 0) {
        throw std::system_error(errno, std::system_category(), "open " + out_path);
    }
    for (auto& f : files) {
        int in = ::open(f.c_str(), O_RDONLY | O_CLOEXEC);
        if (in < 0) {
            throw std::system_error(errno, std::system_category(), "open " + f);
        }
        ssize_t n;
        while ((n = ::read(in, buf.data(), buf.size())) > 0) {
            if (::write(out, buf.data(), size_t(n)) != n) {
                throw std::system_error(errno, std::system_category(), "write " + out_path);
            }
        }
        ::close(in);
        if (n < 0) {
            throw std::system_error(errno, std::system_category(), "read " + f);
        }
    }
    if (::fsync(out) != 0) {
        throw std::system_error(errno, std::system_category(), "fsync " + out_path);
    }
    ::close(out);
    double s = seconds_since(start);
    std::filesystem::remove(out_path);
    return s;
}

// One point read: the table's reader of the key's singular range, read to its end; microseconds.
future<double> point_read_us(table& t, const dht::decorated_key& k) {
    auto start = clock_type::now();
    auto r = t.make_reader(reader_permit(), {.range = dht::partition_range::singular(k)});
    while (auto f = co_await r()) {
    }
    co_await r.close();
    co_return seconds_since(start) * 1e6;
}

double percentile(std::vector<double> v, double p) {
    if (v.empty()) {
        return 0;
    }
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, size_t(double(v.size()) * p))];
}

table_config config_in(const std::string& dir) {
    table_config cfg;
    cfg.directory = dir;
    cfg.memtable_flush_threshold = SIZE_MAX;
    cfg.enable_cache = false;
    return cfg;
}

struct latency {
    double p50 = 0, p99 = 0;
    size_t reads = 0;
};

latency summarize(const std::vector<double>& us) {
    return latency{percentile(us, 0.5), percentile(us, 0.99), us.size()};
}

struct sustained_options {
    uint64_t rows, flush_every, value_size, checks;
    bool one_per_table = false;
    bool cap_at_half = false;
};

uint64_t splitmix64(uint64_t& x) {
    uint64_t z = (x += 0x9e3779b97f4a7c15);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9;
    z = (z ^ (z >> 27)) * 0x94d049bb133111eb;
    return z ^ (z >> 31);
}

// Row i of the sustained load: its own partition (an odd multiplier permutes the 32-bit keys: no overwrites, a random
// order), its value half random (from i, so a read can be checked without keeping the values) and half 'x'.
uint32_t sustained_key(uint64_t i) {
    return uint32_t(i * 2654435761u);
}

std::string sustained_value(uint64_t i, uint64_t size) {
    std::string v(size, 'x');
    uint64_t x = i;
    for (size_t j = 0; j < size / 2; j += 8) {
        uint64_t r = splitmix64(x);
        for (size_t b = 0; b < 8 && j + b < size / 2; ++b) {
            v[j + b] = char(r >> (8 * b));
        }
    }
    return v;
}

// Reads row i back through the table (memtables and sstables, whatever compactions run); true when it holds
// exactly the value written.
future<bool> check_row(table& t, uint64_t i, uint64_t value_size) {
    auto k = key_of(sustained_key(i));
    auto r = t.make_reader(reader_permit(), {.range = dht::partition_range::singular(k)});
    std::vector<mutation_fragment> fragments;
    while (auto f = co_await r()) {
        fragments.push_back(std::move(*f));
    }
    co_await r.close();
    auto ms = mutations_from_fragments(t.schema(), fragments);
    if (ms.size() != 1 || ms[0].partition().rows().size() != 1) {
        co_return false;
    }
    auto* c = ms[0].partition().rows().begin()->second.cells.find(0);
    if (!c || !std::holds_alternative<atomic_cell>(*c)) {
        co_return false;
    }
    auto v = std::get<atomic_cell>(*c).value();
    auto want = sustained_value(i, value_size);
    co_return std::string(v.begin(), v.end()) == want;
}

struct check_counts {
    uint64_t done = 0, wrong = 0;
};

// `n` random rows among the first `written`.
future<> check_rows(table& t, uint64_t written, uint64_t n, uint64_t value_size, std::mt19937_64& rng,
                    check_counts& c) {
    for (uint64_t j = 0; j < n && written > 0; ++j) {
        bool ok = co_await check_row(t, rng() % written, value_size);
        ++c.done;
        c.wrong += ok ? 0 : 1;
    }
}

// The sustained load; prints its figures, returns false when a read was wrong.
compaction::compaction_manager_config manager_config(const sustained_options& o) {
    compaction::compaction_manager_config c;
    c.one_per_table = o.one_per_table;
    if (o.cap_at_half) {
        c.backlog_curve = compaction::backlog_controller::capped_at_half();
    }
    return c;
}

future<bool> sustained_load(const schema_ptr& s, const sustained_options& o, const std::string& dir) {
    compaction::compaction_manager mgr(manager_config(o));
    auto cfg = config_in(dir);
    cfg.compaction_manager = &mgr;
    table t(s, cfg);
    co_await t.start();
    uint64_t report_every = std::min<uint64_t>(100'000, std::max<uint64_t>(1, o.rows / 10));
    fmt::print("\nsustained load (default STCS, background compaction manager{}{}): {} rows x {}-byte values, one "
               "partition each, a flush every {} rows\n",
               o.one_per_table ? ", one compaction per table at a time" : "",
               o.cap_at_half ? ", shares capped at half the shard" : "", o.rows, o.value_size, o.flush_every);
    // Per line: the sstable count now and at most since the last line (after each flush), compactions completed,
    // the backlog controller's input (normalized backlog) and output (background shares), seconds since the start.
    fmt::print("{:>12} {:>10} {:>10} {:>12} {:>10} {:>8} {:>10}\n", "rows", "sstables", "max", "compactions",
               "backlog", "shares", "seconds");
    std::mt19937_64 rng(5);
    check_counts checks;
    size_t max_count = 0, max_since_report = 0, count_sum = 0, counts = 0;
    auto start = clock_type::now();
    write_time::timestamp_type ts = 1'750'000'000'000'000;
    for (uint64_t i = 0; i < o.rows; ++i) {
        mutation m(s, key_of(sustained_key(i)));
        deletable_row r;
        r.marker = row_marker{++ts};
        r.cells.apply(0, atomic_cell::make_live(ts, sustained_value(i, o.value_size)));
        m.partition().apply_row(*s, clustering_key_prefix({int_bytes(0)}), r);
        t.apply(m);
        if (i % 64 == 0) {
            co_await maybe_yield();  // as a server's writes arrive: the loop runs the compactions between them
        }
        if ((i + 1) % o.flush_every == 0) {
            co_await t.flush();
            max_count = std::max(max_count, t.sstable_count());
            max_since_report = std::max(max_since_report, t.sstable_count());
            count_sum += t.sstable_count();
            ++counts;
        }
        if ((i + 1) % report_every == 0) {
            // Reads while the compactions run: a few random rows written so far.
            co_await check_rows(t, i + 1, o.checks / 20 + 1, o.value_size, rng, checks);
            fmt::print("{:>12} {:>10} {:>10} {:>12} {:>10.1f} {:>8} {:>10.1f}\n", i + 1, t.sstable_count(),
                       max_since_report, mgr.stats().completed, mgr.normalized_backlog(), mgr.shares(),
                       seconds_since(start));
            max_since_report = 0;
        }
    }
    co_await t.flush();
    max_count = std::max(max_count, t.sstable_count());
    double load_s = seconds_since(start);
    co_await mgr.wait_idle();
    double idle_s = seconds_since(start);
    co_await check_rows(t, o.rows, o.checks, o.value_size, rng, checks);
    // Every byte of Data.db the table ever held came from a flush or a compaction, and each compaction removed its
    // inputs (bytes_in): flushed = live now + bytes_in - bytes_out.
    uint64_t live = 0;
    for (auto& d : t.sstable_descriptors()) {
        live += std::filesystem::file_size(d.filename(sstables::component_type::data));
    }
    auto st = mgr.stats();
    uint64_t flushed = live + st.bytes_in - st.bytes_out;
    double wa = flushed > 0 ? double(flushed + st.bytes_out) / double(flushed) : 0.0;
    fmt::print("{:<44} {:>12.3f}\n", "bytes flushed (Data.db MB)", double(flushed) / 1e6);
    fmt::print("{:<44} {:>12.3f}\n", "bytes written by compactions (MB)", double(st.bytes_out) / 1e6);
    fmt::print("{:<44} {:>12.3f}\n", "bytes read by compactions (MB)", double(st.bytes_in) / 1e6);
    fmt::print("{:<44} {:>12.2f}\n", "write amplification", wa);
    fmt::print("{:<44} {:>12}\n", "compactions run", st.completed);
    fmt::print("{:<44} {:>12}\n", "compactions failed or stopped", st.failed + st.stopped);
    fmt::print("{:<44} {:>12}\n", "flushes", t.flushes());
    fmt::print("{:<44} {:>12}\n", "sstables at most (after a flush)", max_count);
    fmt::print("{:<44} {:>12.1f}\n", "sstables on average (after a flush)", counts ? double(count_sum) / counts : 0.0);
    fmt::print("{:<44} {:>12}\n", "sstables once the manager is idle", t.sstable_count());
    fmt::print("{:<44} {:>12.1f}\n", "load seconds (writes and flushes)", load_s);
    fmt::print("{:<44} {:>12.1f}\n", "seconds until the manager is idle", idle_s);
    fmt::print("{:<44} {:>12}\n", "reads checked", checks.done);
    fmt::print("{:<44} {:>12}\n", "reads wrong", checks.wrong);
    co_await t.stop();
    co_return checks.wrong == 0;
}

} // namespace

int perf_compaction_main(int argc, char** argv) {
    program_options::options opts("reef perf-compaction",
                                  "Major compaction of --sstables overlapping sstables: MB/s of input Data.db against "
                                  "a plain read-then-write copy of the same files (medians of --runs); point-read "
                                  "p50/p99 while a compaction runs against the same reads with none; the write "
                                  "amplification of a sustained load (--wa-rows, a flush every --wa-flush-every) "
                                  "under the background compaction manager's STCS, its sstable count over time.");
    runtime_options rt;
    rt.add(opts);
    load_options lo{};
    uint64_t runs = 0, reads = 0;
    sustained_options so{};
    std::string data_dir;
    opts.add("rows", "rows written (random keys: later sstables overwrite earlier ones' rows)", &lo.rows,
             uint64_t(300'000), uint64_t(1));
    opts.add("sstables", "flushes the rows are spread over (the compaction's inputs)", &lo.sstables, uint64_t(4),
             uint64_t(1));
    opts.add("partitions", "distinct partition keys (16 clustering keys each)", &lo.partitions, uint64_t(20'000),
             uint64_t(1));
    opts.add("value-size", "bytes of each row's one regular (blob) value", &lo.value_size, uint64_t(100));
    opts.add("runs", "compactions and copies measured; the medians are printed", &runs, uint64_t(3), uint64_t(1));
    opts.add("reads", "point reads measured with no compaction (those during one are as many as it lasts for)", &reads,
             uint64_t(2000), uint64_t(1));
    opts.add("wa-rows", "rows of the sustained load (write amplification; 0: not run)", &so.rows,
             uint64_t(2'000'000));
    opts.add("wa-flush-every", "the sustained load flushes after this many rows", &so.flush_every, uint64_t(50'000),
             uint64_t(1));
    opts.add("wa-checks", "rows of the sustained load read back once idle (a twentieth more at each report)",
             &so.checks, uint64_t(1000));
    opts.add("wa-one-per-table", "the sustained load's table runs one compaction at a time (the baseline), not one "
             "per weight", &so.one_per_table);
    opts.add("wa-cap-at-half", "the sustained load's compactions get at most the foreground's shares (ScyllaDB's cap, "
             "the baseline), not up to four times them", &so.cap_at_half);
    opts.add("data-directory", "where the sstables go (a real disk: the figures include its fsyncs)", &data_dir,
             "/var/tmp/reef-perf");
    int exit_status = 0;
    auto parsed = parse_command_line("reef perf-compaction", opts, rt, argc, argv, exit_status);
    if (!parsed) {
        return exit_status;
    }
    runtime_config cfg = *parsed;
    cfg.smp = 1;
    auto root = fmt::format("{}/perf-compaction-{}", data_dir, ::getpid());
    std::filesystem::create_directories(root);
    fmt::print("reef perf-compaction: {} rows x {}-byte values over {} partitions, {} sstables, one shard, {}\n\n", lo.rows,
               lo.value_size, lo.partitions, lo.sstables, root);
    int rc = run(cfg, [&]() -> future<int> {
        auto s = compaction_schema();
        auto now = deletion_time_type(std::time(nullptr));
        std::vector<double> compaction_s, compaction_cpu, copy_s;
        uint64_t input_bytes = 0, output_bytes = 0;
        for (uint64_t i = 0; i < runs; ++i) {
            auto dir = fmt::format("{}/run-{}", root, i);
            table t(s, config_in(dir));
            co_await t.start();
            input_bytes = co_await load(t, lo, 1);
            std::vector<std::string> files;
            for (auto& d : t.sstable_descriptors()) {
                files.push_back(d.filename(sstables::component_type::data));
            }
            copy_s.push_back(plain_copy_seconds(files, dir));
            auto start = clock_type::now();
            double cpu = thread_cpu_seconds();
            co_await t.compact_all(now);
            compaction_cpu.push_back(thread_cpu_seconds() - cpu);
            compaction_s.push_back(seconds_since(start));
            output_bytes = 0;
            for (auto& d : t.sstable_descriptors()) {
                output_bytes += std::filesystem::file_size(d.filename(sstables::component_type::data));
            }
            co_await t.stop();
        }
        double mb = double(input_bytes) / 1e6;
        double compaction_mbs = mb / median(compaction_s), copy_mbs = mb / median(copy_s);
        fmt::print("{:<44} {:>10} {:>10} {:>10} {:>8} {:>10}\n", "throughput (input Data.db)", "input MB", "output MB",
                   "MB/s", "ratio", "shard CPU s");
        fmt::print("{:<44} {:>10.1f} {:>10.1f} {:>10.1f} {:>8.2f} {:>10.2f}\n", "major compaction", mb,
                   double(output_bytes) / 1e6, compaction_mbs, compaction_mbs / copy_mbs, median(compaction_cpu));
        fmt::print("{:<44} {:>10.1f} {:>10.1f} {:>10.1f} {:>8.2f} {:>10}\n", "plain read-then-write copy (baseline)", mb,
                   mb, copy_mbs, 1.0, "-");

        // Point reads, idle and during a major compaction of the same sstables.
        auto dir = fmt::format("{}/reads", root);
        table t(s, config_in(dir));
        co_await t.start();
        co_await load(t, lo, 1);
        std::mt19937_64 rng(3);
        std::vector<double> idle, busy;
        // A first pass, untimed: index pages and the page cache warm, as they are when the compaction starts.
        for (uint64_t i = 0; i < reads; ++i) {
            co_await point_read_us(t, key_of(uint32_t(rng() % lo.partitions)));
        }
        for (uint64_t i = 0; i < reads; ++i) {
            idle.push_back(co_await point_read_us(t, key_of(uint32_t(rng() % lo.partitions))));
        }
        bool compacting = true;
        double compaction_seconds = 0;
        auto compaction = [&]() -> future<> {
            auto start = clock_type::now();
            co_await t.compact_all(now);
            compaction_seconds = seconds_since(start);
            compacting = false;
        };
        auto reader = [&]() -> future<> {
            while (compacting) {
                busy.push_back(co_await point_read_us(t, key_of(uint32_t(rng() % lo.partitions))));
            }
        };
        std::vector<future<>> both;
        both.push_back(compaction());
        both.push_back(reader());
        co_await when_all(std::move(both));
        co_await t.stop();
        auto a = summarize(idle), b = summarize(busy);
        fmt::print("\n{:<44} {:>10} {:>10} {:>10} {:>8} {:>8}\n", "point reads (one shard, no row cache)", "reads",
                   "p50 us", "p99 us", "p50 x", "p99 x");
        fmt::print("{:<44} {:>10} {:>10.1f} {:>10.1f} {:>8.2f} {:>8.2f}\n", "no compaction (baseline)", a.reads, a.p50,
                   a.p99, 1.0, 1.0);
        fmt::print("{:<44} {:>10} {:>10.1f} {:>10.1f} {:>8.2f} {:>8.2f}\n",
                   fmt::format("during a major compaction ({:.2f} s)", compaction_seconds), b.reads, b.p50, b.p99,
                   a.p50 > 0 ? b.p50 / a.p50 : 0.0, a.p99 > 0 ? b.p99 / a.p99 : 0.0);
        if (so.rows == 0) {
            co_return 0;
        }
        so.value_size = lo.value_size;
        bool ok = co_await sustained_load(s, so, fmt::format("{}/sustained", root));
        if (!ok) {
            fmt::print(stderr, "reef perf-compaction: a read of the sustained load returned the wrong value\n");
        }
        co_return ok ? 0 : 1;
    });
    std::filesystem::remove_all(root);
    return rc;
}

} // namespace reef::perf
