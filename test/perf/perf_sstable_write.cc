// reef perf-sstable-write: flush speed of the mx writer (issue 5): N rows with one V-byte value each are put in a
// memtable (untimed), then written from the memtable's reader to a `me` sstable on disk by write_sstable
// (uncompressed with CRC.db, and LZ4), fsyncs and the atomic commit included; rows/s and MB/s, medians of --runs
// flushes. The baseline is the disk's limit: the same number of bytes (all of the sstable's components) written
// to one file of the same directory with plain sequential write(2) calls of 1 MiB, then fsync.
#include "test/perf/perf.hh"
#include "test/perf/perf_util.hh"

#include "db/memtable.hh"
#include "db/memtable_reader.hh"
#include "runtime/app.hh"
#include "runtime/app_options.hh"
#include "sstables/writer.hh"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fmt/core.h>
#include <memory>
#include <random>
#include <string>
#include <system_error>
#include <unistd.h>
#include <vector>

namespace reef::perf {

namespace {

using namespace reef::sstables;

bytes int_bytes(uint32_t v) {
    return bytes{uint8_t(v >> 24), uint8_t(v >> 16), uint8_t(v >> 8), uint8_t(v)};
}

schema_ptr write_schema() {
    return schema_builder("ks", "write")
        .with_column("pk", int32_type(), column_kind::partition_key)
        .with_column("ck", int32_type(), column_kind::clustering_key)
        .with_column("v", blob_type(), column_kind::regular_column)
        .build();
}

using shape = sstable_shape;

// The disk's limit for `bytes` bytes: one new file in dir, sequential write(2)s of 1 MiB from one buffer, fsync;
// seconds from open to the end of fsync (the file is removed afterwards, untimed).
double plain_write_seconds(const std::string& dir, uint64_t bytes) {
    auto path = dir + "/plain-write";
    std::string buf(1 << 20, '\0');
    std::mt19937_64 rng(2);
    for (auto& c : buf) {
        c = char(rng());
    }
    auto start = clock_type::now();
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        throw std::system_error(errno, std::system_category(), "open " + path);
    }
    uint64_t left = bytes;
    while (left > 0) {
        auto n = ::write(fd, buf.data(), std::min<uint64_t>(left, buf.size()));
        if (n < 0) {
            int e = errno;
            ::close(fd);
            throw std::system_error(e, std::system_category(), "write " + path);
        }
        left -= uint64_t(n);
    }
    if (::fsync(fd) != 0) {
        int e = errno;
        ::close(fd);
        throw std::system_error(e, std::system_category(), "fsync " + path);
    }
    ::close(fd);
    double s = seconds_since(start);
    std::filesystem::remove(path);
    return s;
}

} // namespace

int perf_sstable_write_main(int argc, char** argv) {
    program_options::options opts("reef perf-sstable-write",
                                  "Flushes a memtable of --rows rows with one --value-size-byte value each to an "
                                  "sstable on disk (fsynced): rows/s and MB/s, medians of --runs flushes, against "
                                  "plain sequential write + fsync of the same bytes in the same directory.");
    runtime_options rt;
    rt.add(opts);
    uint64_t rows = 0, value_size = 0, rows_per_partition = 0, runs = 0;
    std::string data_dir, shapes, compression;
    opts.add("rows", "rows in the memtable", &rows, uint64_t(1'000'000), uint64_t(1));
    opts.add("value-size", "bytes of the one regular (blob) value of each row", &value_size, uint64_t(100));
    opts.add("rows-per-partition", "rows per partition of the `wide` shape", &rows_per_partition, uint64_t(1000),
             uint64_t(1));
    opts.add("shape", "wide (--rows-per-partition rows per partition), narrow (one row per partition) or both",
             &shapes, "both");
    opts.add("compression", "none, lz4 or both", &compression, "both");
    opts.add("runs", "flushes per configuration; the median is printed", &runs, uint64_t(3), uint64_t(1));
    opts.add("data-directory", "where the sstables go (a real disk: the figure includes its fsyncs)", &data_dir,
             "/var/tmp/reef-perf");
    int exit_status = 0;
    auto parsed = parse_command_line("reef perf-sstable-write", opts, rt, argc, argv, exit_status);
    if (!parsed) {
        return exit_status;
    }
    auto matrix = select_sstable_matrix("reef perf-sstable-write", shapes, compression, rows, rows_per_partition);
    if (!matrix) {
        return 2;
    }
    auto& todo = matrix->shapes;
    auto& compressors = matrix->compressors;
    runtime_config cfg = *parsed;
    cfg.smp = 1;
    auto dir = fmt::format("{}/perf-sstable-write-{}", data_dir, ::getpid());
    std::filesystem::create_directories(dir);
    fmt::print("reef perf-sstable-write: {} rows x {}-byte values (half random), flushed from a memtable into {}; "
               "median of {} flushes\n(MB/s: bytes of all components per elapsed second, fsyncs included; plain: "
               "write(2) + fsync of as many bytes, same directory)\n\n",
               rows, value_size, dir, runs);
    fmt::print("{:<30} {:>5} {:>9} {:>9} {:>12} {:>11} {:>9} {:>10} {:>11} {:>7}\n", "shape", "comp", "Data MiB",
               "all MiB", "rows/s", "raw MB/s", "MB/s", "CPU s", "plain MB/s", "ratio");
    int rc = run(cfg, [&]() -> future<int> {
        auto s = write_schema();
        int generation = 0;
        for (auto& sh : todo) {
            auto mt = std::make_shared<memtable>(s);
            std::string value(value_size, 'x');
            std::mt19937_64 rng(1);
            uint64_t row = 0;
            for (uint64_t p = 0; p < sh.partitions && row < rows; ++p) {
                mutation m(s, dht::decorated_key(partition_key(std::string(reinterpret_cast<const char*>(int_bytes(uint32_t(p)).data()), 4))));
                for (uint64_t j = 0; j < sh.rows_per_partition && row < rows; ++j, ++row) {
                    deletable_row r;
                    // Write times of 2025, deltas from the default encoding stats' epoch as a table's flush has.
                    write_time::timestamp_type ts = write_time::timestamp_type(1'750'000'000'000'000 + row);
                    r.marker = row_marker{ts};
                    // Half random: compressible to about half, as db_bench's default values.
                    for (size_t i = 0; i < value.size() / 2; ++i) {
                        value[i] = char(rng());
                    }
                    r.cells.apply(0, atomic_cell::make_live(ts, value));
                    m.partition().apply_row(*s, clustering_key_prefix({int_bytes(uint32_t(j))}), r);
                }
                mt->apply(m);
            }
            for (auto& comp : compressors) {
                std::vector<double> wall, cpu, plain;
                uint64_t data_bytes = 0, all_bytes = 0, raw_bytes = 0;
                for (uint64_t i = 0; i < runs; ++i) {
                    writer_options o;
                    o.compression = comp;
                    descriptor d{dir, sstable_version::me, std::to_string(++generation), "big"};
                    auto start = clock_type::now();
                    double c = thread_cpu_seconds();
                    auto in = make_memtable_reader(mt, s, read_options{});
                    auto written = co_await write_sstable(in, s, d, o);
                    co_await in.close();
                    cpu.push_back(thread_cpu_seconds() - c);
                    wall.push_back(seconds_since(start));
                    data_bytes = written.data_file_size;
                    raw_bytes = written.data_length;
                    all_bytes = 0;
                    for (auto t : written.components) {
                        all_bytes += std::filesystem::file_size(d.filename(t));
                    }
                    for (auto t : written.components) {
                        std::filesystem::remove(d.filename(t));
                    }
                    plain.push_back(plain_write_seconds(dir, all_bytes));
                }
                double w = median(wall), pw = median(plain);
                double mbs = double(all_bytes) / 1e6 / w, plain_mbs = double(all_bytes) / 1e6 / pw;
                fmt::print("{:<30} {:>5} {:>9.1f} {:>9.1f} {:>12.0f} {:>11.1f} {:>9.1f} {:>10.2f} {:>11.1f} {:>7.2f}\n",
                           sh.name, comp ? "lz4" : "none", double(data_bytes) / (1 << 20),
                           double(all_bytes) / (1 << 20), double(row) / w, double(raw_bytes) / 1e6 / w, mbs,
                           median(cpu), plain_mbs, mbs / plain_mbs);
                std::fflush(stdout);
            }
        }
        co_return 0;
    });
    std::filesystem::remove_all(dir);
    return rc;
}

} // namespace reef::perf
