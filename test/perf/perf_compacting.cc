// reef perf-compacting: what the compacting reader costs over an in-memory source, per workload (live rows, rows
// under tombstones, expiring cells) and mode (no compaction, query, compaction): input fragments per second.
#include "test/perf/perf.hh"
#include "test/perf/perf_util.hh"

#include "reader/compacting_reader.hh"
#include "reader/mutation_reader.hh"
#include "runtime/app.hh"
#include "runtime/app_options.hh"

#include <algorithm>
#include <chrono>
#include <fmt/core.h>
#include <string>
#include <time.h>
#include <vector>

namespace reef::perf {

namespace {



std::string int_string(uint32_t v) {
    return std::string{char(v >> 24), char(v >> 16), char(v >> 8), char(v)};
}

enum class shape { live, tombstones, expiring };

const char* name_of(shape w) {
    switch (w) {
    case shape::live: return "live rows";
    case shape::tombstones: return "half the rows under a range tombstone, 1 in 10 row-deleted";
    case shape::expiring: return "expiring cells, half expired";
    }
    return "";
}

constexpr deletion_time_type now = 1000;

// The stream of `partitions` partitions of `rows` rows each (marker, an int,
// a text of value_size bytes), in token order.
[[gnu::noinline]] std::vector<mutation_fragment> make_stream(const schema_ptr& s, shape w, size_t partitions, size_t rows, size_t value_size) {
    std::vector<dht::decorated_key> keys;
    for (size_t p = 0; p < partitions; ++p) {
        keys.push_back(dht::decorated_key(partition_key(int_string(uint32_t(p)))));
    }
    std::sort(keys.begin(), keys.end());
    std::string text(value_size, 'x');
    std::vector<mutation_fragment> out;
    for (auto& k : keys) {
        out.push_back(partition_start{k, {}});
        for (size_t r = 0; r < rows; ++r) {
            auto key = clustering_key_prefix({to_bytes(int_string(uint32_t(r)))});
            if (w == shape::tombstones && r == rows / 4) {
                out.push_back(range_tombstone_change{position_in_partition::before_key(key), tombstone{10, now - 10}});
            }
            if (w == shape::tombstones && r == rows / 4 + rows / 2) {
                out.push_back(range_tombstone_change{position_in_partition::before_key(key), {}});
            }
            clustering_row cr{key, row_marker{5}, {}, {}};
            if (w == shape::tombstones && r % 10 == 0) {
                cr.row_tombstone = tombstone{7, now - 10};
            }
            if (w == shape::expiring) {
                deletion_time_type expiry = r % 2 ? now - 1 : now + 1000;
                cr.marker = row_marker{5, 100, expiry};
                cr.cells.apply(0, atomic_cell::make_expiring(5, int_string(uint32_t(r)), 100, expiry));
                cr.cells.apply(1, atomic_cell::make_expiring(5, text, 100, expiry));
            } else {
                cr.cells.apply(0, atomic_cell::make_live(5, int_string(uint32_t(r))));
                cr.cells.apply(1, atomic_cell::make_live(5, text));
            }
            out.push_back(std::move(cr));
        }
        if (w == shape::tombstones && rows / 4 + rows / 2 >= rows && rows / 4 < rows) {
            out.push_back(range_tombstone_change{position_in_partition::after_all_clustered_rows(), {}});
        }
        out.emplace_back(std::in_place_type<partition_end>);
    }
    return out;
}

struct figures {
    size_t out_fragments = 0;
    double seconds = 0;
    double cpu_seconds = 0;
};

// Reads everything, buffer by buffer; the source copies each fragment it
// pushes, so the "none" line is the cost of the source alone.
future<figures> scan(const schema_ptr& s, const std::vector<mutation_fragment>& stream, std::optional<compaction_mode> mode) {
    auto source = make_fragment_vector_reader(s, stream);
    auto r = mode ? make_compacting_reader(std::move(source), now, *mode, now - 100) : std::move(source);
    figures f;
    auto start = clock_type::now();
    double cpu_start = thread_cpu_seconds();
    while (true) {
        if (r.is_buffer_empty()) {
            if (r.is_end_of_stream()) {
                break;
            }
            co_await r.fill_buffer();
            continue;
        }
        r.pop_mutation_fragment();
        ++f.out_fragments;
    }
    f.cpu_seconds = thread_cpu_seconds() - cpu_start;
    f.seconds = seconds_since(start);
    co_await r.close();
    co_return f;
}

std::string si(double v) {
    if (v >= 1e6) {
        return fmt::format("{:.2f}M", v / 1e6);
    }
    if (v >= 1e3) {
        return fmt::format("{:.1f}k", v / 1e3);
    }
    return fmt::format("{:.0f}", v);
}

future<> run_shape(shape w, size_t partitions, size_t rows, size_t value_size, size_t repeat) {
    auto s = int_text_schema("perf_compacting");
    auto stream = make_stream(s, w, partitions, rows, value_size);
    fmt::print("\n== {}: {} partitions x {} rows, {} input fragments ==\n", name_of(w), partitions, rows, stream.size());
    fmt::print("{:<14} {:>14} {:>14} {:>14} {:>10}\n", "mode", "in frags/s", "cpu frags/s", "out fragments", "seconds");
    std::vector<std::pair<const char*, std::optional<compaction_mode>>> modes{
        {"none", std::nullopt}, {"query", compaction_mode::query}, {"compaction", compaction_mode::compaction}};
    for (auto& [name, mode] : modes) {
        figures best;
        for (size_t i = 0; i < repeat; ++i) {
            auto f = co_await scan(s, stream, mode);
            if (i == 0 || f.cpu_seconds < best.cpu_seconds) {
                best = f;
            }
        }
        fmt::print("{:<14} {:>14} {:>14} {:>14} {:>10.3f}\n", name, si(double(stream.size()) / best.seconds),
                   si(double(stream.size()) / best.cpu_seconds), best.out_fragments, best.seconds);
    }
}

} // namespace

int perf_compacting_main(int argc, char** argv) {
    program_options::options opts("reef perf-compacting",
                                  "Measures the compacting reader (query and compaction modes) over an in-memory source.");
    runtime_options rt;
    rt.add(opts);
    uint64_t partitions = 0, rows = 0, value_size = 0, repeat = 0;
    opts.add("partitions", "partitions per workload", &partitions, uint64_t(1000), uint64_t(1));
    opts.add("rows", "rows per partition", &rows, uint64_t(200), uint64_t(1));
    opts.add("value-size", "bytes of each row's text value", &value_size, uint64_t(10), uint64_t(1), uint64_t(1 << 20));
    opts.add("repeat", "runs per figure (the fastest is shown)", &repeat, uint64_t(3), uint64_t(1));
    int exit_status = 0;
    auto parsed = parse_command_line("reef perf-compacting", opts, rt, argc, argv, exit_status);
    if (!parsed) {
        return exit_status;
    }
    runtime_config cfg = *parsed;
    cfg.smp = 1;
    return run(cfg, [&]() -> future<int> {
        for (auto w : {shape::live, shape::tombstones, shape::expiring}) {
            co_await run_shape(w, partitions, rows, value_size, repeat);
        }
        co_return 0;
    });
}

} // namespace reef::perf
