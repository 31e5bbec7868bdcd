// delete_range_workload: RocksDB's DeleteRange blog workload in its wide-column form, exactly as
// ../shared/benchmarks/delete-range.md defines it (data, load order, range deletions, read streams), engine-neutral.
#pragma once

#include "runtime/app.hh"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace reef::perf {

// SplitMix64 (Steele, Lea, Flood), the workload's one generator.
struct splitmix64 {
    uint64_t s;
    explicit splitmix64(uint64_t seed) noexcept : s(seed) {}
    uint64_t next() noexcept {
        s += 0x9E3779B97F4A7C15ull;
        uint64_t z = s;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
};

// range: one range deletion each; scan: read the range and delete each live row; none: no deletions.
enum class delete_variant { range, scan, none };
const char* variant_name(delete_variant v) noexcept;
// Throws std::invalid_argument naming the value.
delete_variant parse_variant(const std::string& name);

inline constexpr uint64_t value_size = 100;

struct delete_range_workload {
    uint64_t rows = 1'000'000;       // N
    uint64_t partitions = 20;        // P
    uint64_t tombstones = 2'000;     // T
    uint64_t width = 100;            // W (0: the deletions are drawn but delete nothing, and are not issued)
    uint64_t ops = 100'000;          // get and scan10 operations
    uint64_t long_ops = 10'000;      // scan1000 operations
    delete_variant variant = delete_variant::range;
    // Reef's memtable flush threshold (table_config's default; tests make it small to spread the data over several
    // sstables, so that reads merge them and skip what newer range tombstones delete).
    uint64_t reef_memtable_bytes = 64 << 20;
    // After the load, a major compaction on both (Reef: table::compact_all; RocksDB: CompactRange): reads then
    // see one sorted run. Not part of delete-range.md's workload, which only lets background work settle.
    bool major_compaction = false;
    // Reef's sstable block: the promoted index block (column_index_size) and the CRC.db chunk of the uncompressed
    // Data.db, the units a read seeks to and checks; 4 KiB as RocksDB's block_size (Cassandra's default is 64 KiB).
    uint64_t reef_block_kb = 4;
    // Diagnostic, not the workload: Reef leaves what the load wrote in its memtables (no final flush; with a large
    // reef_memtable_bytes, no flush at all), so the reads measure the read path above the sstable reader.
    bool reef_no_flush = false;

    uint64_t rows_per_partition() const noexcept { return rows / partitions; }  // R
    uint64_t partition_of(uint64_t i) const noexcept { return i / rows_per_partition(); }
    uint64_t clustering_of(uint64_t i) const noexcept { return i % rows_per_partition(); }

    // Throws std::invalid_argument when the parameters do not make the workload (P divides N, W <= R, T <= N/10).
    void validate() const;
    // The write order: perm[w - 1] is the row written by write w.
    std::vector<uint32_t> load_order() const;
    // Whether these are the parameters delete-range.md gives the expected counts for (1M, 20, 2000, 100, 100k, 10k).
    bool is_documented_scale() const noexcept;
};

// Row i's 100-byte value: SplitMix64(i * 0x2545F4914F6CDD1D + 7), 8 little-endian bytes per next(), the last cut.
void row_value(uint64_t i, char* out);

// A range deletion: clustering keys [start, end) of partition `partition`.
struct range_deletion {
    uint64_t partition;
    uint64_t start;
    uint64_t end;
};

// The range deletions of a load: after_write(w) for w = 1..N in turn gives the deletion due after write w
// (drawn from one SplitMix64(2) for the whole load; W = 0 draws and returns an empty range).
class deletion_schedule {
public:
    explicit deletion_schedule(const delete_range_workload& wl);
    std::optional<range_deletion> after_write(uint64_t w);

private:
    const delete_range_workload& _wl;
    uint64_t _begin;  // B
    uint64_t _every;  // E
    splitmix64 _rng{2};
};

// The rows a read stream starts at: SplitMix64(seed) % N.
class read_stream {
public:
    read_stream(const delete_range_workload& wl, uint64_t seed) : _n(wl.rows), _rng(seed) {}
    uint64_t next() noexcept { return _rng.next() % _n; }

private:
    uint64_t _n;
    splitmix64 _rng;
};

inline constexpr uint64_t get_seed = 1001;
inline constexpr uint64_t scan10_seed = 1002;
inline constexpr uint64_t scan1000_seed = 1003;

// The 8-byte big-endian form both engines use for pk and ck (CQL bigint; RocksDB key halves).
inline void put_be64(uint64_t v, char* out) noexcept {
    for (int b = 7; b >= 0; --b) {
        out[7 - b] = char(v >> (8 * b));
    }
}

// What one phase did: its wall time and the counts that prove which operations ran.
struct phase_result {
    double seconds = 0;
    // The process's CPU time over the phase, every thread (RocksDB's flushes and compactions too): on a machine
    // shared with other work, the figure the wall clock inflates least.
    double cpu_seconds = 0;
    uint64_t ops = 0;          // operations (load: rows written)
    uint64_t found = 0;        // get: rows found
    uint64_t rows = 0;         // scans: rows returned
    uint64_t first_found = 0;  // scans: operations whose first row (the start key) was found
    // ops/s; rows/s for load and fullscan (their `ops` are rows).
    double ops_per_s() const noexcept { return seconds > 0 ? double(ops) / seconds : 0; }
    double cpu_ops_per_s() const noexcept { return cpu_seconds > 0 ? double(ops) / cpu_seconds : 0; }
};

// Wall and process CPU time from construction to finish().
class phase_timer {
public:
    phase_timer();
    void finish(phase_result& r) const;

private:
    std::chrono::steady_clock::time_point _wall;
    double _cpu;
};

struct engine_run {
    std::string engine;
    phase_result load, get, scan10, scan1000, fullscan;
    // Engine-specific facts printed after the run (sstables, skips, levels).
    std::vector<std::pair<std::string, std::string>> notes;
};

// Engines. The directory is created and left for the caller to remove.
// Reef runs in a runtime of its own, started from cfg (one shard).
engine_run run_reef(const delete_range_workload& wl, const std::string& directory, const runtime_config& cfg);
bool have_rocksdb() noexcept;
// Throws std::runtime_error when built without librocksdb-dev.
engine_run run_rocksdb(const delete_range_workload& wl, const std::string& directory);

} // namespace reef::perf
