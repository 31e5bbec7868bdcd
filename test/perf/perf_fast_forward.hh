// reef perf-fast-forward, shared between its files: the datasets (populated through a table, read back through
// the sstable reader), the per-iteration metrics, the result table (text or JSON) and the test groups.
#pragma once

#include "cache/cached_file.hh"
#include "index/index_reader.hh"
#include "reader/mutation_reader.hh"
#include "reader/read_options.hh"
#include "runtime/file.hh"
#include "runtime/future.hh"
#include "runtime/reactor.hh"
#include "cache/tracker.hh"
#include "db/row_cache.hh"
#include "sstables/components.hh"
#include "test/perf/perf_counters.hh"
#include "sstables/serialization_header.hh"
#include "sstables/sstable.hh"
#include "test/perf/perf_util.hh"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace reef::perf::pff {

// What --populate was given; saved beside the data and read back by the measuring runs.
struct dataset_config {
    uint64_t rows = 1'000'000;
    uint64_t value_size = 100;
    bool compression = false;                  // LZ4 (Cassandra's LZ4Compressor), else plain Data.db with CRC.db
    uint64_t column_index_size_kb = 64;        // promoted index block size
    uint64_t flush_threshold_mb = 64;          // memtable occupancy that seals it (several flushes, then compaction)
};

// The config file in the data directory ("name value" lines); throws naming the file when absent or malformed.
dataset_config read_config(const std::string& data_dir);
void write_config(const std::string& data_dir, const dataset_config& cfg, const std::vector<std::string>& datasets);
std::vector<std::string> populated_datasets(const std::string& data_dir);

enum class dataset_kind { large_partition, small_partition };

struct dataset {
    std::string name;
    std::string description;
    dataset_kind kind;
    schema_ptr schema;
};

// large-part-ds1 and small-part, in that order.
const std::vector<dataset>& all_datasets();
const dataset& find_dataset(const std::string& name);  // throws naming the unknown dataset

// int32 as Int32Type serializes it.
bytes int_bytes(int32_t v);
// large-part-ds1's row i: clustering key 2i + 1 (present); 2i is its sure miss.
clustering_key_prefix present_ck(int64_t i);
clustering_key_prefix missing_ck(int64_t i);
dht::decorated_key int_pkey(int32_t pk);

// Writes ds into <data_dir>/<name>: rows applied one mutation per row into a table (memtables flushed at the
// threshold), flushed, then major-compacted into one sstable. A progress line on stderr.
future<> populate(const std::string& data_dir, const dataset& ds, const dataset_config& cfg);

// The one sstable of a populated dataset, open for reading through sstables::make_sstable_reader with the
// shard's shared index caches (so drop_caches() makes the next read cold).
class dataset_sstable {
public:
    static future<std::unique_ptr<dataset_sstable>> open(const std::string& data_dir, const dataset& ds);
    ~dataset_sstable();

    // Through the row cache once enable_cache() was called (as ScyllaDB's --enable-cache reads), else the
    // sstable reader itself; without limits (reader_permit()).
    mutation_reader make_reader(read_options opts);
    // Puts a row cache (on the shard's cache tracker, so drop_caches() empties it) in front of the sstable.
    void enable_cache();
    bool cache_enabled() const noexcept { return bool(_cache); }
    const schema_ptr& schema() const noexcept { return _schema; }
    uint64_t data_file_size() const noexcept { return _data_file_size; }
    future<> close();

private:
    dataset_sstable() = default;
    schema_ptr _schema;
    sstables::shared_sstable _sst;
    uint64_t _data_file_size = 0;
    std::unique_ptr<row_cache> _cache;

    mutation_reader make_sstable_reader(reader_permit permit, read_options opts);
};

// Counters of the calling shard, read before and after each read.
struct metrics_snapshot {
    clock_type::time_point time;
    io_stats io;
    cache::index_cache_stats index;
    cache::cached_file_stats pages;
    uint64_t allocs = 0;
    uint64_t tasks = 0;
    std::optional<uint64_t> instructions;
    double cpu_seconds = 0;  // this shard's thread CPU time (the "cpu" column: its share of the wall time)

    static metrics_snapshot take();
};

// One read of a test case: its fragments, the counters around it, and what the case expected.
struct test_result {
    uint64_t fragments = 0;
    metrics_snapshot before;
    metrics_snapshot after;
    std::vector<std::string> params;
    std::optional<std::string> error;

    test_result() = default;
    test_result(metrics_snapshot b, uint64_t frags) : fragments(frags), before(b), after(metrics_snapshot::take()) {}
    double seconds() const { return std::chrono::duration<double>(after.time - before.time).count(); }
    double fragment_rate() const { return seconds() > 0 ? double(fragments) / seconds() : 0; }
    void expect_fragments(uint64_t expected);
    // With the row cache: the read was a hit (ScyllaDB's check_no_disk_reads).
    void expect_no_disk_reads();
};

// The columns every case prints after its parameters, and one printed row.
struct param_column {
    std::string name;  // "" for the "->" marker of multi-read cases (text only)
    int width;
};

class report {
public:
    enum class format { text, json };
    explicit report(format f) : _format(f) {}

    // A group starts (or is skipped, with why); its parameter columns.
    void group(const std::string& name, const std::string& description, const dataset& ds,
               std::vector<param_column> params);
    void skipped_group(const std::string& name, const dataset& ds, const std::string& why);
    // The median of a case's iterations, per read of the case (`all[i][j]`: iteration i, read j).
    void add_case(std::vector<std::vector<test_result>> all);
    // A case whose reads threw (what), reported as an error with no figures.
    void failed_case(const std::string& what);
    // A message for the reader of the table (stderr in JSON mode).
    void note(const std::string& text);
    uint64_t errors() const noexcept { return _errors; }

private:
    format _format;
    std::string _group;
    std::vector<param_column> _params;
    uint64_t _case = 0;
    uint64_t _errors = 0;
};

// What a test group gets: the open dataset, its config, the report, the run's options.
struct run_context {
    dataset_sstable& sst;
    const dataset& ds;
    const dataset_config& cfg;
    report& out;
    double test_case_duration = 1;
    bool keep_cache = false;
};

struct test_group {
    std::string name;
    std::string description;
    dataset_kind kind;
    bool needs_cache;  // ScyllaDB runs it with --enable-cache only (the second read of each pair hits the row cache)
    std::function<future<>(run_context&)> run;
};

const std::vector<test_group>& all_test_groups();
// A group's parameter columns (names as printed; "" is the text-only "->" marking a case's first read).
std::vector<param_column> group_params(const std::string& group);

// Runs fn (one iteration: the reads of the case) once to time it, then again until --test-case-duration is
// used (at least 3 more); the caches are dropped before each iteration unless keep_cache. Reports the median.
future<> run_test_case(run_context& ctx, std::function<future<std::vector<test_result>>()> fn);

} // namespace reef::perf::pff
