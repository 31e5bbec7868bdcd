// Shared benchmark helpers. See perf_util.hh.
#include "test/perf/perf_util.hh"

#include <algorithm>
#include <fmt/core.h>
#include <time.h>

namespace reef::perf {

double seconds_since(clock_type::time_point start) {
    return std::chrono::duration<double>(clock_type::now() - start).count();
}

double thread_cpu_seconds() {
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

std::optional<runtime_config> parse_command_line(const std::string& command, program_options::options& opts,
                                                 runtime_options& rt, int argc, char** argv, int& exit_status) {
    try {
        opts.parse(argc, argv);
        if (opts.help_requested()) {
            fmt::print("{}", opts.help());
            exit_status = 0;
            return std::nullopt;
        }
        return rt.to_config();
    } catch (const std::exception& e) {
        fmt::print(stderr, "{}: {}\n", command, e.what());
        exit_status = 2;
        return std::nullopt;
    }
}

future<uint64_t> drain(data_source src) {
    uint64_t n = 0;
    while (true) {
        auto b = co_await src.get();
        if (b.empty()) {
            break;
        }
        n += b.size();
    }
    co_await src.close();
    co_return n;
}

schema_ptr int_text_schema(const std::string& table) {
    return schema_builder("ks", table)
        .with_column("pk", int32_type(), column_kind::partition_key)
        .with_column("ck", int32_type(), column_kind::clustering_key)
        .with_column("v", int32_type(), column_kind::regular_column)
        .with_column("t", text_type(), column_kind::regular_column)
        .build();
}

double median(std::vector<double> v) {
    if (v.empty()) {
        return 0;
    }
    std::sort(v.begin(), v.end());
    return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

std::optional<sstable_matrix> select_sstable_matrix(const std::string& command, const std::string& shapes,
                                                    const std::string& compression, uint64_t rows,
                                                    uint64_t rows_per_partition) {
    sstable_matrix m;
    if (shapes == "wide" || shapes == "both") {
        uint64_t rpp = std::min(rows_per_partition, rows);
        m.shapes.push_back({fmt::format("wide ({} rows/partition)", rpp), (rows + rpp - 1) / rpp, rpp});
    }
    if (shapes == "narrow" || shapes == "both") {
        m.shapes.push_back({"narrow (1 row/partition)", rows, 1});
    }
    if (compression == "none" || compression == "both") {
        m.compressors.push_back(std::nullopt);
    }
    if (compression == "lz4" || compression == "both") {
        m.compressors.push_back(sstables::compression_algorithm::lz4);
    }
    if (m.shapes.empty() || m.compressors.empty()) {
        fmt::print(stderr, "{}: --shape must be wide, narrow or both and --compression none, lz4 or both\n", command);
        return std::nullopt;
    }
    return m;
}

} // namespace reef::perf
