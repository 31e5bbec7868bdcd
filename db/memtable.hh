// memtable: one table's recent writes on one shard, partitions by (token, key), each a merged
// mutation_partition; counts the bytes it holds and the timestamps it has seen. Read with make_memtable_reader.
#pragma once

#include "commitlog/replay_position.hh"
#include "mutation/mutation.hh"
#include "mutation/partition_range.hh"
#include "mutation/token.hh"
#include "schema/schema.hh"

#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>

namespace reef {

class dirty_memory_manager;

// A partition range's start, for looking partitions up in the memtable's
// map by range (a key sorts before it when the range starts after the key).
struct partition_range_start {
    const dht::partition_range* range;
};

// Orders partitions by (token, key bytes); also compares keys with a range's
// start, so that lower_bound(range) finds the range's first partition.
struct partition_key_less {
    using is_transparent = void;
    bool operator()(const dht::decorated_key& a, const dht::decorated_key& b) const noexcept { return a < b; }
    bool operator()(const dht::decorated_key& k, const partition_range_start& r) const noexcept { return r.range->before(k); }
    bool operator()(const partition_range_start& r, const dht::decorated_key& k) const noexcept { return !r.range->before(k); }
};

// One per table per shard, used from its shard only (no locking). Writes
// merge by mutation_partition::apply, so applying the same mutations in
// any order gives the same contents. Partitions and rows are never removed
// (a flush replaces the whole memtable), which is what lets readers keep
// map iterators across applies.
class memtable {
public:
    using partitions_type = std::map<dht::decorated_key, mutation_partition, partition_key_less>;

    explicit memtable(schema_ptr s);
    memtable(const memtable&) = delete;
    memtable& operator=(const memtable&) = delete;
    // Releases its dirty memory if still accounted.
    ~memtable();

    const schema_ptr& schema() const noexcept { return _schema; }
    // The schema's position order, forward or reversed, built once: a reader copies it without allocating
    // (building one copies the clustering types).
    const position_in_partition_comparator& position_order(bool reversed) const noexcept {
        return reversed ? _reversed_order : _forward_order;
    }

    // Merges m into its partition (created if missing). Throws
    // std::invalid_argument when m belongs to another table.
    void apply(const mutation& m);

    // Bytes held, kept up to date by apply(): for each partition its map
    // node, its key's heap bytes, the static row, the range tombstone list
    // (vector capacity and bound keys); for each row its map node, its
    // clustering key (component vector and bytes), its cells (cell vector
    // capacity, values stored out of line, collection element vectors and
    // paths); each heap block also counts an estimated malloc overhead
    // (memory_accounting in memtable.cc). What it leaves out: the map
    // headers and this object, a few hundred bytes per memtable. A flush
    // threshold can compare it with the shard's memory budget:
    // perf-memtable prints it next to glibc's in-use count, which it
    // matched to 0.1% for 1M small rows, wide or one per partition.
    size_t occupancy() const noexcept { return _occupancy; }
    // The same figure recomputed from the contents (tests check that
    // apply() keeps occupancy() equal to it).
    size_t compute_occupancy() const;
    // The row cache's row eviction: removes the last `n` rows (clustering order) of k's partition and returns the
    // key of the first one removed (none when there was no row or no partition). Only while no reader holds the
    // memtable: readers keep row iterators across applies, and rows are otherwise never removed.
    std::optional<clustering_key_prefix> erase_last_rows(const dht::decorated_key& k, size_t n) noexcept;

    // At most what apply(m) may add to occupancy() (a write reserves it before it is admitted): m's own
    // occupancy in an empty memtable, plus, for each of its rows, a row's cell vector at the most it can grow to
    // (twice the columns of its kind), and room for its range tombstones to split entries and grow the list's
    // vector. A partition's list far longer than the incoming ranges, reallocated, may still exceed it.
    static size_t apply_bound(const reef::schema& s, const mutation& m);

    // Dirty memory (db/dirty_memory_manager.hh): from set_dirty_memory on, occupancy() is accounted to `m`, as
    // an active memtable's until mark_sealed(), until release_dirty_memory() (the flush ended, or the memtable is
    // dropped) or the destructor. `m` must outlive the accounting.
    void set_dirty_memory(dirty_memory_manager* m) noexcept;
    void mark_sealed() noexcept;
    void release_dirty_memory() noexcept;

    size_t partition_count() const noexcept { return _partitions.size(); }
    bool empty() const noexcept { return _partitions.empty(); }

    // The least and greatest write timestamps of everything applied: cells
    // (live, expiring, dead, collection elements), row markers, and every
    // tombstone (partition, row, range, collection). max_timestamp() lets a
    // combined reader know that a range tombstone newer than it deletes
    // everything here. Empty memtable: min is the greatest timestamp and max
    // is write_time::missing_timestamp.
    write_time::timestamp_type min_timestamp() const noexcept { return _min_timestamp; }
    write_time::timestamp_type max_timestamp() const noexcept { return _max_timestamp; }

    // The commitlog entries this memtable holds (db/README.md, "Durability"): the table's write phase it takes
    // writes of, and the least and greatest replay positions applied (none when no write came through the log).
    uint64_t write_phase() const noexcept { return _write_phase; }
    void set_write_phase(uint64_t p) noexcept { _write_phase = p; }
    void note_replay_position(commitlog::replay_position rp) noexcept {
        if (!_max_rp || rp > *_max_rp) {
            _max_rp = rp;
        }
        if (!_min_rp || rp < *_min_rp) {
            _min_rp = rp;
        }
    }
    const std::optional<commitlog::replay_position>& min_replay_position() const noexcept { return _min_rp; }
    const std::optional<commitlog::replay_position>& max_replay_position() const noexcept { return _max_rp; }

    // Bumped by every apply(): a reader that kept positions across a
    // suspension re-seeks when it changed.
    uint64_t generation() const noexcept { return _generation; }

    const partitions_type& partitions() const noexcept { return _partitions; }
    // The first partition that is not before the range's start (it may be
    // after the range's end).
    partitions_type::const_iterator lower_bound(const dht::partition_range& pr) const {
        return _partitions.lower_bound(partition_range_start{&pr});
    }

private:
    void note_timestamps(const mutation_partition& p) noexcept;
    void note_timestamp(write_time::timestamp_type ts) noexcept;
    void account_growth() noexcept;

    schema_ptr _schema;
    position_in_partition_comparator _forward_order;
    position_in_partition_comparator _reversed_order;
    partitions_type _partitions;
    size_t _occupancy = 0;
    write_time::timestamp_type _min_timestamp = std::numeric_limits<write_time::timestamp_type>::max();
    write_time::timestamp_type _max_timestamp = write_time::missing_timestamp;
    uint64_t _write_phase = 0;
    std::optional<commitlog::replay_position> _min_rp, _max_rp;
    uint64_t _generation = 0;
    dirty_memory_manager* _dirty = nullptr;
    size_t _accounted = 0;
    bool _sealed = false;
};

} // namespace reef
