// reef perf-sstable-scan: full-scan speed of an mx sstable from memory (issue 4): an sstable of N rows with
// one V-byte value each is written by our writer (uncompressed and LZ4), then scanned whole by the full-scan
// reader several times; rows/s and MB/s of Data.db per thread-CPU second and per wall second, medians. With
// librocksdb-dev at configure time, RocksDB scans the same rows as the baseline.
#include "test/perf/perf.hh"
#include "test/perf/perf_counters.hh"
#include "test/perf/perf_util.hh"

#include "db/memtable.hh"
#include "db/memtable_reader.hh"
#include "runtime/app.hh"
#include "runtime/app_options.hh"
#include "runtime/file.hh"
#include "sstables/components.hh"
#include "sstables/mx_reader.hh"
#include "sstables/sstable.hh"
#include "sstables/statistics.hh"
#include "sstables/writer.hh"

#include <algorithm>
#include <filesystem>
#include <fmt/core.h>
#include <memory>
#include <optional>
#include <string>
#include <random>
#include <unistd.h>
#include <vector>

#ifdef REEF_HAVE_ROCKSDB
#include <rocksdb/db.h>
#include <rocksdb/version.h>
#include <rocksdb/write_batch.h>
#endif

namespace reef::perf {

namespace {

using namespace reef::sstables;

bytes int_bytes(uint32_t v) {
    return bytes{uint8_t(v >> 24), uint8_t(v >> 16), uint8_t(v >> 8), uint8_t(v)};
}

std::string int_string(uint32_t v) {
    auto b = int_bytes(v);
    return std::string(b.begin(), b.end());
}

schema_ptr scan_schema() {
    return schema_builder("ks", "scan")
        .with_column("pk", int32_type(), column_kind::partition_key)
        .with_column("ck", int32_type(), column_kind::clustering_key)
        .with_column("v", blob_type(), column_kind::regular_column)
        .build();
}

using shape = sstable_shape;

struct scan_run {
    uint64_t rows = 0;
    double wall = 0;
    double cpu = 0;
    std::optional<uint64_t> allocs;  // operator new calls on the scanning thread (not counted under sanitizers)
};

// One whole scan of d: components and statistics loaded, Data.db through its checked source, every fragment
// popped straight from the reader's buffer (so the figure is the reader's, not a coroutine resume per fragment).
future<scan_run> scan_once(descriptor d, schema_ptr s) {
    scan_run out;
    auto start = clock_type::now();
    double cpu = thread_cpu_seconds();
    auto allocs = allocations();
    auto components = co_await load_components(d);
    auto stats = co_await load_statistics(d);
    auto header = std::make_shared<const serialization_header>(*stats.header);
    auto f = co_await open_file_dma(d.filename(component_type::data), open_flags::ro);
    auto reader = make_mx_full_scan_reader(s, header, make_data_source(f, components, 0, components.data_length(), integrity_check::no),
                                           d.filename(component_type::data), components.data_length());
    std::exception_ptr err;
    try {
        while (true) {
            if (reader.is_buffer_empty()) {
                if (reader.is_end_of_stream()) {
                    break;
                }
                co_await reader.fill_buffer();
                continue;
            }
            auto frag = reader.pop_mutation_fragment();
            out.rows += std::holds_alternative<clustering_row>(frag);
        }
    } catch (...) {
        err = std::current_exception();
    }
    co_await reader.close();
    co_await f.close();
    if (err) {
        std::rethrow_exception(err);
    }
    out.cpu = thread_cpu_seconds() - cpu;
    if (auto a = allocations(); a && allocs) {
        out.allocs = *a - *allocs;
    }
    out.wall = seconds_since(start);
    co_return out;
}

// The first half of the value random, the rest a constant: compressible to about half, as db_bench's
// default (--compression_ratio=0.5) makes RocksDB's values.
void fill_value(std::string& value, std::mt19937_64& rng) {
    for (size_t i = 0; i < value.size() / 2; ++i) {
        value[i] = char(rng());
    }
}

#ifdef REEF_HAVE_ROCKSDB
// The baseline: the same rows in RocksDB (key: the 4-byte partition and clustering values, 8 bytes; value:
// the same bytes), loaded and compacted into one sorted run, scanned with an iterator on this thread (outside
// the runtime); the files are in the page cache (written just before, and read once before timing).
void rocksdb_baseline(const std::string& dir, const shape& sh, uint64_t rows, uint64_t value_size, bool lz4,
                      uint64_t runs) {
    rocksdb::Options o;
    o.create_if_missing = true;
    o.compression = lz4 ? rocksdb::kLZ4Compression : rocksdb::kNoCompression;
    o.bottommost_compression = o.compression;
    rocksdb::DB* raw = nullptr;
    auto path = fmt::format("{}/rocksdb-{}-{}", dir, sh.rows_per_partition, lz4 ? "lz4" : "none");
    auto st = rocksdb::DB::Open(o, path, &raw);
    if (!st.ok()) {
        throw std::runtime_error("rocksdb: " + st.ToString());
    }
    std::unique_ptr<rocksdb::DB> db(raw);
    std::string value(value_size, 'x');
    std::mt19937_64 rng(1);
    rocksdb::WriteOptions wo;
    wo.disableWAL = true;
    rocksdb::WriteBatch batch;
    uint64_t row = 0;
    for (uint64_t p = 0; p < sh.partitions && row < rows; ++p) {
        for (uint64_t j = 0; j < sh.rows_per_partition && row < rows; ++j, ++row) {
            auto key = int_string(uint32_t(p)) + int_string(uint32_t(j));
            fill_value(value, rng);
            batch.Put(key, value);
            if (batch.Count() >= 10000) {
                db->Write(wo, &batch);
                batch.Clear();
            }
        }
    }
    db->Write(wo, &batch);
    db->Flush(rocksdb::FlushOptions());
    db->CompactRange(rocksdb::CompactRangeOptions(), nullptr, nullptr);
    std::vector<double> cpu, wall;
    uint64_t bytes = 0;
    for (uint64_t i = 0; i <= runs; ++i) {  // the first pass warms the page cache, untimed
        auto start = clock_type::now();
        double c = thread_cpu_seconds();
        uint64_t n = 0;
        bytes = 0;
        std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(rocksdb::ReadOptions()));
        for (it->SeekToFirst(); it->Valid(); it->Next()) {
            ++n;
            bytes += it->key().size() + it->value().size();
        }
        if (n != row) {
            throw std::runtime_error(fmt::format("rocksdb scanned {} rows of {}", n, row));
        }
        if (i > 0) {
            cpu.push_back(thread_cpu_seconds() - c);
            wall.push_back(seconds_since(start));
        }
    }
    uint64_t sst_bytes = 0;
    for (auto& e : std::filesystem::directory_iterator(path)) {
        if (e.path().extension() == ".sst") {
            sst_bytes += e.file_size();
        }
    }
    db.reset();
    std::filesystem::remove_all(path);
    double c = median(cpu), w = median(wall);
    fmt::print("{:<36} {:>6} {:>10.1f} {:>10.1f} {:>14.0f} {:>14.0f} {:>12.0f} {:>12.0f}\n", "RocksDB " + sh.name,
               lz4 ? "lz4" : "none", double(sst_bytes) / (1 << 20), double(bytes) / (1 << 20), double(row) / c,
               double(row) / w, double(sst_bytes) / 1e6 / c, double(bytes) / 1e6 / c);
    std::fflush(stdout);
}
#endif

} // namespace

int perf_sstable_scan_main(int argc, char** argv) {
    program_options::options opts("reef perf-sstable-scan",
                                  "Writes an sstable of --rows rows with one --value-size-byte value each and scans "
                                  "it whole from memory: rows/s and Data.db MB/s per core, medians of --runs scans.");
    runtime_options rt;
    rt.add(opts);
    uint64_t rows = 0, value_size = 0, rows_per_partition = 0, runs = 0;
    std::string data_dir, shapes, compression;
    opts.add("rows", "rows in the sstable", &rows, uint64_t(1'000'000), uint64_t(1));
    opts.add("value-size", "bytes of the one regular (blob) value of each row", &value_size, uint64_t(100));
    opts.add("rows-per-partition", "rows per partition of the `wide` shape", &rows_per_partition, uint64_t(1000),
             uint64_t(1));
    opts.add("shape", "wide (--rows-per-partition rows per partition), narrow (one row per partition) or both",
             &shapes, "both");
    opts.add("compression", "none, lz4 or both", &compression, "both");
    opts.add("runs", "scans per sstable; the median is printed", &runs, uint64_t(5), uint64_t(1));
    opts.add("data-directory", "where the sstables go (tmpfs by default: the scan reads memory, as from the page "
             "cache)", &data_dir, "/dev/shm/reef-perf");
    int exit_status = 0;
    auto parsed = parse_command_line("reef perf-sstable-scan", opts, rt, argc, argv, exit_status);
    if (!parsed) {
        return exit_status;
    }
    auto matrix = select_sstable_matrix("reef perf-sstable-scan", shapes, compression, rows, rows_per_partition);
    if (!matrix) {
        return 2;
    }
    auto& todo = matrix->shapes;
    auto& compressors = matrix->compressors;
    runtime_config cfg = *parsed;
    cfg.smp = 1;
    auto dir = fmt::format("{}/perf-sstable-scan-{}", data_dir, ::getpid());
    std::filesystem::create_directories(dir);
    fmt::print("reef perf-sstable-scan: {} rows x {}-byte values, in {}; median of {} full scans\n"
               "(per core: rows and bytes per second of the scanning thread's CPU time; wall: per elapsed second)\n\n",
               rows, value_size, dir, runs);
    fmt::print("{:<36} {:>6} {:>10} {:>10} {:>14} {:>14} {:>12} {:>12} {:>10}\n", "shape", "comp", "Data MiB", "raw MiB",
               "rows/s/core", "rows/s wall", "MB/s/core", "raw MB/s/core", "allocs/row");
    int rc = run(cfg, [&]() -> future<int> {
        auto s = scan_schema();
        int generation = 0;
        for (auto& sh : todo) {
            auto mt = std::make_shared<memtable>(s);
            std::string value(value_size, 'x');
            std::mt19937_64 rng(1);
            uint64_t row = 0;
            for (uint64_t p = 0; p < sh.partitions && row < rows; ++p) {
                mutation m(s, dht::decorated_key(partition_key(int_string(uint32_t(p)))));
                for (uint64_t j = 0; j < sh.rows_per_partition && row < rows; ++j, ++row) {
                    deletable_row r;
                    write_time::timestamp_type ts = write_time::timestamp_type(1'000'000 + row);
                    r.marker = row_marker{ts};
                    fill_value(value, rng);
                    r.cells.apply(0, atomic_cell::make_live(ts, value));
                    m.partition().apply_row(*s, clustering_key_prefix({int_bytes(uint32_t(j))}), r);
                }
                mt->apply(m);
            }
            for (auto& comp : compressors) {
                writer_options o;
                o.compression = comp;
                descriptor d{dir, sstable_version::me, std::to_string(++generation), "big"};
                auto in = make_memtable_reader(mt, s, read_options{});
                auto written = co_await write_sstable(in, s, d, o);
                co_await in.close();
                // Into memory before timing (a no-op on tmpfs; the page cache elsewhere).
                co_await read_entire_file(d.filename(component_type::data));
                std::vector<double> cpu, wall;
                uint64_t scanned = 0;
                std::optional<uint64_t> allocs;
                for (uint64_t i = 0; i < runs; ++i) {
                    auto r = co_await scan_once(d, s);
                    cpu.push_back(r.cpu);
                    wall.push_back(r.wall);
                    scanned = r.rows;
                    allocs = r.allocs;
                }
                if (scanned != row) {
                    throw std::runtime_error(fmt::format("scanned {} rows of {}", scanned, row));
                }
                double c = median(cpu), w = median(wall);
                fmt::print("{:<36} {:>6} {:>10.1f} {:>10.1f} {:>14.0f} {:>14.0f} {:>12.0f} {:>12.0f} {:>10}\n", sh.name,
                           comp ? "lz4" : "none", double(written.data_file_size) / (1 << 20),
                           double(written.data_length) / (1 << 20), double(row) / c, double(row) / w,
                           double(written.data_file_size) / 1e6 / c, double(written.data_length) / 1e6 / c,
                           allocs ? fmt::format("{:.2f}", double(*allocs) / double(row)) : std::string("-"));
                std::fflush(stdout);
                for (auto t : written.components) {
                    std::filesystem::remove(d.filename(t));
                }
            }
        }
        co_return 0;
    });
#ifdef REEF_HAVE_ROCKSDB
    if (rc == 0) {
        fmt::print("\nRocksDB {} (same rows; \"Data MiB\": its .sst files, \"raw MiB\": keys and values scanned)\n",
                   ROCKSDB_MAJOR * 100 + ROCKSDB_MINOR);
        for (auto& sh : todo) {
            for (auto& comp : compressors) {
                rocksdb_baseline(dir, sh, rows, value_size, bool(comp), runs);
            }
        }
    }
#else
    fmt::print("\n(no RocksDB baseline: built without librocksdb-dev)\n");
#endif
    std::filesystem::remove_all(dir);
    return rc;
}

} // namespace reef::perf
