// reef perf-memtable: what the memtable costs: insert throughput (mutations/s, rows/s), bytes per row (as counted
// and as malloc sees them), full-scan read throughput and single-partition read latency, forward and reversed.
#include "test/perf/perf.hh"
#include "test/perf/perf_util.hh"

#include "db/memtable.hh"
#include "db/memtable_reader.hh"
#include "runtime/app.hh"
#include "runtime/app_options.hh"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fmt/core.h>
#include <malloc.h>
#include <memory>
#include <random>
#include <string>
#include <time.h>
#include <vector>

namespace reef::perf {

namespace {




bytes int_bytes(uint32_t v) {
    return bytes{uint8_t(v >> 24), uint8_t(v >> 16), uint8_t(v >> 8), uint8_t(v)};
}

dht::decorated_key partition_key_of(uint32_t pk) {
    auto b = int_bytes(pk);
    return dht::decorated_key(partition_key(std::string(b.begin(), b.end())));
}

// The j-th row of a partition has clustering value scramble(j): distinct
// for distinct j (an odd multiplier is a bijection mod 2^32), in random
// order, so inserts land all over each partition's row map.
uint32_t scramble(uint32_t j) { return (j * 2654435761u) & 0x7fffffff; }

column_id regular_column_id(const schema& s, std::string_view name) {
    auto& cols = s.regular_columns();
    for (column_id i = 0; i < cols.size(); ++i) {
        if (cols[i].name == name) {
            return i;
        }
    }
    throw std::logic_error("perf-memtable: no column " + std::string(name));
}

size_t malloc_in_use() { return mallinfo2().uordblks; }

struct workload {
    const char* name;
    size_t partitions;
    size_t rows;
};

struct insert_figures {
    size_t mutations = 0;
    size_t rows = 0;
    double seconds = 0;
    double cpu_seconds = 0;
    size_t occupancy = 0;
    size_t malloc_bytes = 0;  // the allocator's in-use bytes added while filling
};

// Fills mt with w.rows single-row INSERT-like mutations (marker, an int, a
// text of value_size bytes), spread over w.partitions partitions in random
// order. Mutations are built in batches off the clock; only apply() is timed.
insert_figures fill(memtable& mt, const workload& w, size_t value_size, uint64_t seed) {
    auto s = mt.schema();
    column_id v_id = regular_column_id(*s, "v"), t_id = regular_column_id(*s, "t");
    std::vector<dht::decorated_key> keys;
    keys.reserve(w.partitions);
    for (size_t p = 0; p < w.partitions; ++p) {
        keys.push_back(partition_key_of(uint32_t(p)));
    }
    std::mt19937_64 rng(seed);
    // Row i goes to partition order[i % partitions] as its (i / partitions)-th row.
    std::vector<uint32_t> order(w.partitions);
    for (size_t p = 0; p < w.partitions; ++p) {
        order[p] = uint32_t(p);
    }
    std::shuffle(order.begin(), order.end(), rng);
    std::string text(value_size, 'x');
    insert_figures out;
    constexpr size_t batch_size = 10'000;
    std::vector<mutation> batch;
    batch.reserve(batch_size);
    // Measured with the batch vector already allocated and each batch freed
    // before the next, so what is added is the memtable's.
    size_t malloc_before = malloc_in_use();
    for (size_t first = 0; first < w.rows; first += batch_size) {
        batch.clear();
        for (size_t i = first; i < std::min(w.rows, first + batch_size); ++i) {
            uint32_t p = order[i % w.partitions];
            uint32_t j = uint32_t(i / w.partitions);
            write_time::timestamp_type ts = write_time::timestamp_type(1'000'000 + i);
            mutation m(s, keys[p]);
            deletable_row r;
            r.marker = row_marker{ts};
            r.cells.apply(v_id, atomic_cell::make_live(ts, std::string(reinterpret_cast<const char*>(int_bytes(uint32_t(i)).data()), 4)));
            text[0] = char('a' + i % 26);
            r.cells.apply(t_id, atomic_cell::make_live(ts, text));
            m.partition().apply_row(*s, clustering_key_prefix({int_bytes(scramble(j))}), r);
            batch.push_back(std::move(m));
        }
        auto start = clock_type::now();
        double cpu_start = thread_cpu_seconds();
        for (auto& m : batch) {
            mt.apply(m);
        }
        out.cpu_seconds += thread_cpu_seconds() - cpu_start;
        out.seconds += seconds_since(start);
        out.mutations += batch.size();
        out.rows += batch.size();
    }
    batch.clear();
    size_t after = malloc_in_use();
    out.malloc_bytes = after > malloc_before ? after - malloc_before : 0;
    out.occupancy = mt.occupancy();
    return out;
}

struct scan_figures {
    size_t fragments = 0;
    size_t rows = 0;
    double seconds = 0;
    double cpu_seconds = 0;
};

// Reads a whole reader, popping fragments straight from its buffer (so the
// figure is the reader's, not a coroutine resume per fragment).
future<scan_figures> drain(mutation_reader& r) {
    scan_figures out;
    while (true) {
        if (r.is_buffer_empty()) {
            if (r.is_end_of_stream()) {
                break;
            }
            co_await r.fill_buffer();
            continue;
        }
        auto f = r.pop_mutation_fragment();
        ++out.fragments;
        out.rows += std::holds_alternative<clustering_row>(f);
    }
    co_return out;
}

future<scan_figures> full_scan(const std::shared_ptr<const memtable>& mt, bool reversed) {
    auto start = clock_type::now();
    double cpu_start = thread_cpu_seconds();
    auto r = make_memtable_reader(mt, mt->schema(), {.order = read_order_for(reversed)});
    auto out = co_await drain(r);
    co_await r.close();
    out.cpu_seconds = thread_cpu_seconds() - cpu_start;
    out.seconds = seconds_since(start);
    co_return out;
}

struct latency_figures {
    double mean_us = 0;
    double p50_us = 0;
    double p99_us = 0;
    double rows_per_read = 0;
};

// `reads` reads of one random partition each: the whole partition, or
// (one_row) a slice of one row that exists.
future<latency_figures> partition_reads(const std::shared_ptr<const memtable>& mt, const workload& w, bool reversed, bool one_row,
                                        size_t reads, uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::vector<double> us;
    us.reserve(reads);
    size_t rows = 0;
    size_t rows_per_partition = std::max<size_t>(1, w.rows / w.partitions);
    for (size_t i = 0; i < reads; ++i) {
        auto key = partition_key_of(uint32_t(rng() % w.partitions));
        clustering_ranges slice{position_range::full()};
        if (one_row) {
            slice = {position_range::for_prefix(clustering_key_prefix({int_bytes(scramble(uint32_t(rng() % rows_per_partition)))}))};
            if (reversed) {
                slice = reverse_ranges(slice);
            }
        }
        auto pr = dht::partition_range::singular(key);
        auto start = clock_type::now();
        auto r = make_memtable_reader(mt, mt->schema(),
                                      {.range = pr, .slice = std::move(slice), .order = read_order_for(reversed)});
        auto got = co_await drain(r);
        co_await r.close();
        us.push_back(seconds_since(start) * 1e6);
        rows += got.rows;
    }
    latency_figures out;
    if (us.empty()) {
        co_return out;
    }
    double sum = 0;
    for (double u : us) {
        sum += u;
    }
    std::sort(us.begin(), us.end());
    out.mean_us = sum / double(us.size());
    out.p50_us = us[us.size() / 2];
    out.p99_us = us[std::min(us.size() - 1, us.size() * 99 / 100)];
    out.rows_per_read = double(rows) / double(us.size());
    co_return out;
}

std::string si(double v) {
    if (v >= 1e9) {
        return fmt::format("{:.2f}G", v / 1e9);
    }
    if (v >= 1e6) {
        return fmt::format("{:.2f}M", v / 1e6);
    }
    if (v >= 1e3) {
        return fmt::format("{:.1f}k", v / 1e3);
    }
    return fmt::format("{:.0f}", v);
}

future<> run_workload(const workload& w, size_t value_size, size_t reads, uint64_t seed) {
    auto filled = std::make_shared<memtable>(int_text_schema("perf"));
    auto ins = fill(*filled, w, value_size, seed);
    std::shared_ptr<const memtable> mt = std::move(filled);
    fmt::print("\n== {}: {} rows in {} partitions, text values of {} bytes ==\n", w.name, ins.rows, mt->partition_count(),
               value_size);
    fmt::print("{:<44} {:>12} {:>12}\n", "", "wall", "thread cpu");
    fmt::print("{:<44} {:>12} {:>12}\n", "insert, mutations/s (one row each)", si(double(ins.mutations) / ins.seconds),
               si(double(ins.mutations) / ins.cpu_seconds));
    fmt::print("{:<44} {:>12} {:>12}\n", "insert, rows/s", si(double(ins.rows) / ins.seconds), si(double(ins.rows) / ins.cpu_seconds));
    fmt::print("{:<44} {:>12} {:>12}\n", "insert, ns per mutation", fmt::format("{:.0f}", ins.seconds * 1e9 / double(ins.mutations)),
               fmt::format("{:.0f}", ins.cpu_seconds * 1e9 / double(ins.mutations)));
    fmt::print("{:<44} {:>12}\n", "occupancy(), bytes", si(double(ins.occupancy)));
    fmt::print("{:<44} {:>12}\n", "occupancy(), bytes per row", fmt::format("{:.1f}", double(ins.occupancy) / double(ins.rows)));
    fmt::print("{:<44} {:>12}\n", "malloc in use added, bytes per row", fmt::format("{:.1f}", double(ins.malloc_bytes) / double(ins.rows)));
    fmt::print("{:<44} {:>12}\n", "occupancy() / malloc in use",
               ins.malloc_bytes ? fmt::format("{:.3f}", double(ins.occupancy) / double(ins.malloc_bytes)) : "n/a");

    fmt::print("\n{:<28} {:>12} {:>12} {:>10} {:>14} {:>12}\n", "full scan", "fragments/s", "rows/s", "seconds",
               "cpu frags/s", "cpu rows/s");
    for (bool reversed : {false, true}) {
        auto sc = co_await full_scan(mt, reversed);
        fmt::print("{:<28} {:>12} {:>12} {:>10} {:>14} {:>12}\n", reversed ? "reversed" : "forward",
                   si(double(sc.fragments) / sc.seconds), si(double(sc.rows) / sc.seconds), fmt::format("{:.3f}", sc.seconds),
                   si(double(sc.fragments) / sc.cpu_seconds), si(double(sc.rows) / sc.cpu_seconds));
    }

    fmt::print("\n{:<28} {:>10} {:>10} {:>10} {:>10}\n", "single-partition read", "mean us", "p50 us", "p99 us", "rows/read");
    for (bool one_row : {false, true}) {
        for (bool reversed : {false, true}) {
            auto lat = co_await partition_reads(mt, w, reversed, one_row, reads, seed + 1);
            auto name = fmt::format("{}, {}", one_row ? "one row" : "whole partition", reversed ? "reversed" : "forward");
            fmt::print("{:<28} {:>10.2f} {:>10.2f} {:>10.2f} {:>10.1f}\n", name, lat.mean_us, lat.p50_us, lat.p99_us,
                       lat.rows_per_read);
        }
    }
}

} // namespace

int perf_memtable_main(int argc, char** argv) {
    program_options::options opts("reef perf-memtable",
                                  "Measures memtable inserts, bytes per row, full scans and single-partition reads.");
    runtime_options rt;
    rt.add(opts);
    uint64_t rows = 0, partitions = 0, single_rows = 0, value_size = 0, reads = 0, seed = 0;
    opts.add("rows", "rows of the wide workload", &rows, uint64_t(1'000'000), uint64_t(1));
    opts.add("partitions", "partitions of the wide workload", &partitions, uint64_t(10'000), uint64_t(1));
    opts.add("single-rows", "rows of the single-row-partition workload (0: skip it)", &single_rows, uint64_t(1'000'000));
    opts.add("value-size", "bytes of each row's text value", &value_size, uint64_t(10), uint64_t(1), uint64_t(1 << 20));
    opts.add("reads", "single-partition reads per latency figure", &reads, uint64_t(20'000), uint64_t(1));
    opts.add("seed", "random seed", &seed, uint64_t(1));
    int exit_status = 0;
    auto parsed = parse_command_line("reef perf-memtable", opts, rt, argc, argv, exit_status);
    if (!parsed) {
        return exit_status;
    }
    runtime_config cfg = *parsed;
    cfg.smp = 1;  // one shard's memtable
    std::vector<workload> workloads{{"wide partitions", std::min(partitions, rows), rows}};
    if (single_rows) {
        workloads.push_back({"single-row partitions", single_rows, single_rows});
    }
    return run(cfg, [&]() -> future<int> {
        for (auto& w : workloads) {
            co_await run_workload(w, value_size, reads, seed);
        }
        co_return 0;
    });
}

} // namespace reef::perf
