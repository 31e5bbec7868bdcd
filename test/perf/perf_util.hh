// What every `reef perf-*` benchmark shares: command-line parsing into a runtime configuration, clocks
// (wall and this thread's CPU time), and the small table most of them measure on.
#pragma once

#include "runtime/app_options.hh"
#include "runtime/future.hh"
#include "runtime/input_stream.hh"
#include "runtime/program_options.hh"
#include "schema/schema.hh"
#include "sstables/compression_info.hh"

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace reef::perf {

using clock_type = std::chrono::steady_clock;

// Wall-clock seconds since start.
double seconds_since(clock_type::time_point start);

// This thread's CPU time in seconds: on a machine shared with other work the wall clock also counts the
// time the shard waited for a CPU; this does not.
double thread_cpu_seconds();

// Parses argv into opts (which already has rt's options added) and returns the runtime configuration; or,
// for --help or a bad option, prints help or the error (prefixed with the command's name) and sets
// `exit_status` (0 or 2) and returns nothing.
std::optional<runtime_config> parse_command_line(const std::string& command, program_options::options& opts,
                                                 runtime_options& rt, int argc, char** argv, int& exit_status);

// Reads src to its end and closes it; returns the bytes read.
future<uint64_t> drain(data_source src);

// ks.<table> (pk int, ck int, v int, t text, PRIMARY KEY (pk, ck)).
schema_ptr int_text_schema(const std::string& table);

// The median of v (the mean of the middle two for an even count; 0 when empty).
double median(std::vector<double> v);

// The sstables the scan and write benchmarks compare: `wide` (rows_per_partition rows per partition) and
// `narrow` (one row per partition), each uncompressed (nullopt) or LZ4.
struct sstable_shape {
    std::string name;
    uint64_t partitions;
    uint64_t rows_per_partition;
};
struct sstable_matrix {
    std::vector<sstable_shape> shapes;
    std::vector<std::optional<sstables::compression_algorithm>> compressors;
};
// What --shape (wide, narrow or both) and --compression (none, lz4 or both) select for `rows` rows; nothing (after
// printing the error prefixed with command) when either selects nothing.
std::optional<sstable_matrix> select_sstable_matrix(const std::string& command, const std::string& shapes,
                                                    const std::string& compression, uint64_t rows,
                                                    uint64_t rows_per_partition);

} // namespace reef::perf
