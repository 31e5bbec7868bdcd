// multiget_workload: RocksDB's MultiGet experiment (its PR 5011; ../shared/benchmarks/multiget.md, db_bench's
// fillrandom then multireadrandom), engine-neutral: the keys, the load, each cell's batches of keys, and what a run
// of one engine measures.
#pragma once

#include "runtime/future.hh"

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace reef::perf {

namespace mg {

inline constexpr size_t key_size = 16;
inline constexpr size_t value_size = 100;

// SplitMix64, the workload's one generator.
struct rng {
    uint64_t s;
    explicit rng(uint64_t seed) noexcept : s(seed) {}
    uint64_t next() noexcept {
        s += 0x9E3779B97F4A7C15ull;
        uint64_t z = s;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
};

// Key n as db_bench makes it: 8 bytes big-endian, padded with '0' to 16.
inline void key_bytes(uint64_t n, char* out) noexcept {
    for (int i = 0; i < 8; ++i) {
        out[i] = char(n >> (56 - 8 * i));
    }
    for (size_t i = 8; i < key_size; ++i) {
        out[i] = '0';
    }
}

// The value of the w-th write (1-based): 100 pseudo-random bytes.
inline void value_bytes(uint64_t w, char* out) noexcept {
    rng r(w);
    for (size_t i = 0; i < value_size; i += 8) {
        uint64_t v = r.next();
        for (size_t j = 0; j < 8 && i + j < value_size; ++j) {
            out[i + j] = char(v >> (8 * j));
        }
    }
}

} // namespace mg

// The methods, in the order each cell runs them (cell_batches' `method`).
inline const char* const multiget_methods[] = {"get", "multiget_loop", "multiget"};

struct multiget_workload {
    uint64_t keys = 2'000'000;   // db_bench's -num: the load writes this many random keys of [0, keys)
    uint64_t reads = 200'000;    // keys read per cell (whole batches)
    std::vector<uint64_t> batches = {1, 2, 4, 8, 16, 32};
    std::vector<uint64_t> strides = {0, 16, 256, 4096};
    uint64_t cache_mb = 40;      // RocksDB's block cache; Reef's shard cache budget (row cache and index caches)
    uint64_t reef_memtable_mb = 40;  // Reef's flush threshold (occupancy), about 8.6 MB sstables
    // Reef's row cache in front of its sstables (off: the cache budget holds only the index caches, as RocksDB's
    // block cache holds blocks and its table readers the index).
    bool reef_row_cache = false;
    // Reef reads its flushed sstables as they are (overlapping), without the major compaction RocksDB's run has.
    bool reef_flat = false;
    // The size of the major compaction's sstables (LCS's sstable_size_in_mb): 8 MiB, about 8.6 MB of Data.db.
    uint64_t reef_sstable_mb = 8;
    // The table's bloom_filter_fp_chance: 0.1, what Cassandra gives a table created with LeveledCompactionStrategy;
    // 1 writes no filter, as RocksDB's run here has none (db_bench's default).
    double reef_bloom_fp_chance = 0.1;
    // Reef's batches of stride S are keys S apart in ring order (by token: where Reef stores them, as RocksDB's are S
    // apart in its key order) instead of the same batches RocksDB reads, whose keys Murmur3 scatters over the ring.
    bool reef_ring_order = false;
    // The methods run (indexes into multiget_methods).
    std::vector<unsigned> methods = {0, 1, 2};

    // The key of the load's w-th write (1-based).
    uint64_t load_key(mg::rng& r) const noexcept { return r.next() % keys; }
    // Each cell is measured this many times per engine, the engines taking turns cell by cell, and reported as the
    // median: the two engines' figures of a cell are taken seconds apart, so that a slow drift of the machine (other
    // tenants of its cores) moves both.
    unsigned rounds = 3;

    // The batches one method reads in one cell and round: reads / batch batches of `batch` keys, random (stride 0)
    // or a random start and then `stride` apart, as db_bench's multireadrandom draws them. The same for every
    // engine; each method (0: get, 1: multiget_loop, 2: multiget) and round its own, so that no read finds what
    // another just brought into a cache.
    std::vector<std::vector<uint64_t>> cell_batches(uint64_t batch, uint64_t stride, unsigned method,
                                                    unsigned round = 0) const;
};

// What one method measured on one cell.
struct multiget_cell {
    std::string method;  // get, multiget_loop, multiget
    uint64_t batch = 0;
    uint64_t stride = 0;
    double us_per_key = 0;
    double cpu_us_per_key = 0;
    // User-space instructions and operator new calls per key, where this build and kernel count them: steadier
    // than the times on a shared machine, so that small changes to a read show.
    std::optional<double> insns_per_key;
    std::optional<double> allocs_per_key;
    uint64_t keys = 0;
    uint64_t found = 0;
};

// Measures one cell on this thread: started at construction, written into the cell (whose keys are counted) by
// finish.
class cell_meter {
public:
    cell_meter();
    void finish(multiget_cell& c) const;

private:
    std::chrono::steady_clock::time_point _wall;
    double _cpu;
    std::optional<uint64_t> _insns;
    std::optional<uint64_t> _allocs;
};

struct multiget_run {
    std::string engine;
    double load_seconds = 0;
    std::vector<multiget_cell> cells;
    std::vector<std::pair<std::string, std::string>> notes;
};

// One engine's side of the experiment, loaded once, then read cell by cell. Both engines live in one reactor
// session, so that their cells can take turns: Reef's table on the shard, RocksDB's calls blocking it (the shard has
// nothing else to do). directory: empty, the engine's.
class multiget_engine {
public:
    virtual ~multiget_engine() = default;
    // Loads (fillrandom), settles and warms (one unmeasured pass of single gets over keys no cell reads).
    virtual future<> start() = 0;
    // Reads one cell's batches for `round` (multiget_workload::cell_batches) by method multiget_methods[method], timed.
    virtual future<multiget_cell> measure(uint64_t batch, uint64_t stride, unsigned method, unsigned round) = 0;
    // Closes it, after start() or after start() failed.
    virtual future<> stop() = 0;
    // Its name, load time and notes (cells are the caller's).
    const multiget_run& run() const noexcept { return _run; }

protected:
    multiget_run _run;
};

std::unique_ptr<multiget_engine> make_reef_multiget(const multiget_workload& wl, std::string directory);
bool have_rocksdb_multiget() noexcept;
// Throws std::runtime_error when built without librocksdb-dev.
std::unique_ptr<multiget_engine> make_rocksdb_multiget(const multiget_workload& wl, std::string directory);

} // namespace reef::perf
