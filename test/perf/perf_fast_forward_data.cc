// reef perf-fast-forward: the datasets, their population through a table (memtables, flushes, one major
// compaction) and the one sstable each leaves, opened for the measuring runs. See perf_fast_forward.hh.
#include "test/perf/perf_fast_forward.hh"

#include "db/table.hh"
#include "mutation/mutation.hh"
#include "runtime/blocking.hh"
#include "sstables/index_pages.hh"
#include "sstables/sstable_reader.hh"
#include "sstables/statistics.hh"
#include "sstables/writer.hh"

#include <chrono>
#include <ctime>
#include <filesystem>
#include <fmt/core.h>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <stdexcept>

namespace reef::perf::pff {

namespace {

const char* config_file_name = "perf_fast_forward.conf";

std::string config_path(const std::string& data_dir) {
    return data_dir + "/" + config_file_name;
}

std::map<std::string, std::string> read_config_map(const std::string& data_dir) {
    auto path = config_path(data_dir);
    std::ifstream in(path);
    if (!in) {
        throw std::runtime_error(fmt::format("{}: no dataset configuration here (run with --populate first)", path));
    }
    std::map<std::string, std::string> m;
    std::string line;
    int n = 0;
    while (std::getline(in, line)) {
        ++n;
        if (line.empty()) {
            continue;
        }
        auto sp = line.find(' ');
        if (sp == std::string::npos) {
            throw std::runtime_error(fmt::format("{}:{}: expected \"name value\", got \"{}\"", path, n, line));
        }
        m[line.substr(0, sp)] = line.substr(sp + 1);
    }
    return m;
}

uint64_t config_number(const std::map<std::string, std::string>& m, const std::string& key, const std::string& path) {
    auto it = m.find(key);
    if (it == m.end()) {
        throw std::runtime_error(fmt::format("{}: no \"{}\"", path, key));
    }
    try {
        size_t used = 0;
        auto v = std::stoull(it->second, &used);
        if (used != it->second.size()) {
            throw std::invalid_argument("trailing characters");
        }
        return v;
    } catch (const std::exception&) {
        throw std::runtime_error(fmt::format("{}: \"{}\" is not a number: {}", path, key, it->second));
    }
}

dataset make_dataset(std::string name, std::string description, dataset_kind kind) {
    auto table = name;
    std::replace(table.begin(), table.end(), '-', '_');
    schema_builder b("ks", table);
    b.with_column("pk", int32_type(), column_kind::partition_key);
    if (kind == dataset_kind::large_partition) {
        b.with_column("ck", int32_type(), column_kind::clustering_key);
    }
    b.with_column("value", blob_type(), column_kind::regular_column);
    return dataset{std::move(name), std::move(description), kind, b.build()};
}

// The row's one cell (the blob, column 0), with its own timestamp: one mutation per row, as a client's writes.
mutation row_mutation(const schema_ptr& s, const dht::decorated_key& pk, const clustering_key_prefix& ck,
                      const std::string& value, write_time::timestamp_type ts) {
    mutation m(s, pk);
    deletable_row r;
    r.cells.apply(0, atomic_cell::make_live(ts, value));
    m.partition().apply_row(*s, ck, r);
    return m;
}

} // namespace

dataset_config read_config(const std::string& data_dir) {
    auto m = read_config_map(data_dir);
    auto path = config_path(data_dir);
    dataset_config cfg;
    cfg.rows = config_number(m, "rows", path);
    cfg.value_size = config_number(m, "value_size", path);
    cfg.compression = config_number(m, "compression", path) != 0;
    cfg.column_index_size_kb = config_number(m, "column_index_size_kb", path);
    cfg.flush_threshold_mb = config_number(m, "flush_threshold_mb", path);
    return cfg;
}

std::vector<std::string> populated_datasets(const std::string& data_dir) {
    auto m = read_config_map(data_dir);
    std::vector<std::string> out;
    std::istringstream in(m["datasets"]);
    std::string name;
    while (in >> name) {
        out.push_back(name);
    }
    return out;
}

void write_config(const std::string& data_dir, const dataset_config& cfg, const std::vector<std::string>& datasets) {
    auto path = config_path(data_dir);
    std::ofstream out(path, std::ios::trunc);
    out << "rows " << cfg.rows << "\n"
        << "value_size " << cfg.value_size << "\n"
        << "compression " << (cfg.compression ? 1 : 0) << "\n"
        << "column_index_size_kb " << cfg.column_index_size_kb << "\n"
        << "flush_threshold_mb " << cfg.flush_threshold_mb << "\n"
        << "datasets";
    for (auto& d : datasets) {
        out << " " << d;
    }
    out << "\n";
    if (!out) {
        throw std::runtime_error(path + ": cannot write");
    }
}

const std::vector<dataset>& all_datasets() {
    static const std::vector<dataset> sets = {
        make_dataset("large-part-ds1", "One large partition with many small rows (clustering keys 1, 3, 5, ...)",
                     dataset_kind::large_partition),
        make_dataset("small-part", "Many small partitions with no clustering key", dataset_kind::small_partition),
    };
    return sets;
}

const dataset& find_dataset(const std::string& name) {
    for (auto& d : all_datasets()) {
        if (d.name == name) {
            return d;
        }
    }
    throw std::invalid_argument(fmt::format("no dataset named \"{}\" (there are large-part-ds1 and small-part)", name));
}

bytes int_bytes(int32_t v) {
    auto u = uint32_t(v);
    return bytes{uint8_t(u >> 24), uint8_t(u >> 16), uint8_t(u >> 8), uint8_t(u)};
}

clustering_key_prefix present_ck(int64_t i) {
    return clustering_key_prefix({int_bytes(int32_t(i * 2 + 1))});
}

clustering_key_prefix missing_ck(int64_t i) {
    return clustering_key_prefix({int_bytes(int32_t(i * 2))});
}

dht::decorated_key int_pkey(int32_t pk) {
    auto b = int_bytes(pk);
    return dht::decorated_key(partition_key(std::string(b.begin(), b.end())));
}

future<> populate(const std::string& data_dir, const dataset& ds, const dataset_config& cfg) {
    auto dir = data_dir + "/" + ds.name;
    co_await run_blocking([&dir] { std::filesystem::remove_all(dir); });
    table_config tc;
    tc.directory = dir;
    tc.memtable_flush_threshold = size_t(cfg.flush_threshold_mb) << 20;
    bool compression = cfg.compression;
    uint64_t column_index_size = cfg.column_index_size_kb << 10;
    tc.write_sstable = [compression, column_index_size](mutation_reader& r, schema_ptr s, sstables::descriptor d,
                                                        sstables::writer_options o) {
        o.compression = compression ? std::optional(sstables::compression_algorithm::lz4) : std::nullopt;
        o.column_index_size = column_index_size;
        return sstables::write_sstable(r, std::move(s), std::move(d), std::move(o));
    };
    table t(ds.schema, tc);
    co_await t.start();
    std::exception_ptr err;
    try {
        std::mt19937_64 rng(42);
        std::string value(cfg.value_size, '\0');
        for (auto& c : value) {
            c = char(rng());
        }
        auto ts0 = write_time::timestamp_type(std::chrono::duration_cast<std::chrono::microseconds>(
                                           std::chrono::system_clock::now().time_since_epoch())
                                           .count());
        auto start = clock_type::now();
        auto last_progress = start;
        auto progress = [&](uint64_t done, bool last) {
            fmt::print(stderr, "\rpopulating {}: {}/{} rows, {} flushes, {:.1f} s{}", ds.name, done, cfg.rows,
                       t.flushes(), seconds_since(start), last ? "\n" : "");
            std::fflush(stderr);
        };
        auto pk0 = int_pkey(0);
        for (uint64_t i = 0; i < cfg.rows; ++i) {
            if (ds.kind == dataset_kind::large_partition) {
                t.apply(row_mutation(ds.schema, pk0, present_ck(int64_t(i)), value, ts0 + write_time::timestamp_type(i)));
            } else {
                t.apply(row_mutation(ds.schema, int_pkey(int32_t(i)), clustering_key_prefix{}, value,
                                     ts0 + write_time::timestamp_type(i)));
            }
            if ((i & 1023) == 0) {
                // Lets the background flush run, and waits for it when writes outrun it (memory stays bounded).
                co_await yield();
                while (t.sealed_memtable_count() > 1) {
                    co_await sleep(std::chrono::milliseconds(1));
                }
                if (clock_type::now() - last_progress > std::chrono::milliseconds(200)) {
                    last_progress = clock_type::now();
                    progress(i, false);
                }
            }
        }
        progress(cfg.rows, true);
        fmt::print(stderr, "flushing {}...\n", ds.name);
        co_await t.flush();
        fmt::print(stderr, "compacting {} ({} sstables)...\n", ds.name, t.sstable_count());
        co_await t.compact_all(deletion_time_type(std::time(nullptr)));
        if (t.sstable_count() != 1) {
            throw std::runtime_error(fmt::format("{}: {} sstables after compaction, expected one", dir, t.sstable_count()));
        }
        fmt::print(stderr, "{}: {} rows in one sstable, {:.1f} s\n", ds.name, cfg.rows, seconds_since(start));
    } catch (...) {
        err = std::current_exception();
    }
    co_await t.stop();
    if (err) {
        std::rethrow_exception(err);
    }
}

future<std::unique_ptr<dataset_sstable>> dataset_sstable::open(const std::string& data_dir, const dataset& ds) {
    auto dir = data_dir + "/" + ds.name;
    auto tocs = co_await run_blocking([&dir] {
        std::vector<std::string> out;
        if (std::filesystem::is_directory(dir)) {
            for (auto& e : std::filesystem::directory_iterator(dir)) {
                if (e.path().filename().string().ends_with("-TOC.txt")) {
                    out.push_back(e.path().string());
                }
            }
        }
        return out;
    });
    if (tocs.size() != 1) {
        throw std::runtime_error(fmt::format("{}: {} sstables, expected the one --populate leaves", dir, tocs.size()));
    }
    std::unique_ptr<dataset_sstable> o(new dataset_sstable());
    o->_schema = ds.schema;
    // The shard's shared index caches, so that drop_caches() makes the next read cold.
    o->_sst = co_await sstables::open_sstable(sstables::descriptor::from_path(tocs[0]), cache::shard_cache_tracker());
    o->_data_file_size = o->_sst->components().data_file_size;
    co_return o;
}

dataset_sstable::~dataset_sstable() = default;

mutation_reader dataset_sstable::make_reader(read_options opts) {
    if (_cache) {
        return _cache->make_reader(reader_permit(), std::move(opts));
    }
    return make_sstable_reader(reader_permit(), std::move(opts));
}

void dataset_sstable::enable_cache() {
    if (!_cache) {
        _cache = std::make_unique<row_cache>(
            _schema,
            [this](const dht::partition_range& pr, const clustering_ranges& slice, reader_permit permit) {
                return make_sstable_reader(std::move(permit), {.range = pr, .slice = slice});
            },
            cache::shard_cache_tracker());
    }
}

mutation_reader dataset_sstable::make_sstable_reader(reader_permit permit, read_options opts) {
    return sstables::make_sstable_reader(_schema, _sst->read_handles(), std::move(permit), std::move(opts));
}

future<> dataset_sstable::close() {
    _cache.reset();
    co_await _sst->close();
}

} // namespace reef::perf::pff
