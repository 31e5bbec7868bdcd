// mutation_partition: one partition in memory (partition tombstone, static row, rows by clustering key,
// range tombstones), merged with another version by Cassandra's reconciliation rules (mutation/README.md).
#pragma once

#include "mutation/clustering_key.hh"
#include "mutation/range_tombstone_list.hh"
#include "mutation/row_lookup_index.hh"
#include "mutation/row.hh"
#include "mutation/tombstone.hh"
#include "schema/schema.hh"

#include <limits>
#include <map>
#include <optional>

namespace reef {

// Which of two row markers wins (Cassandra's LivenessInfo.supersedes; see
// mutation/README.md). Returns true if `a` wins over `b`.
bool marker_supersedes(const row_marker& a, const row_marker& b) noexcept;

// A clustering row's contents: its marker, its row tombstone, its cells.
struct deletable_row {
    row_marker marker;
    tombstone tomb;
    row cells;
    bool operator==(const deletable_row&) const = default;
};

// Orders clustering keys in the map with the schema's clustering order.
struct clustering_key_less {
    clustering_comparator cmp;
    bool operator()(const clustering_key_prefix& a, const clustering_key_prefix& b) const { return cmp(a, b) < 0; }
};

// Merging keeps every version's winner and drops nothing: data shadowed by
// a tombstone stays until a compaction (or a query) applies the tombstone,
// so apply() is commutative and associative and merging in any order gives
// the same partition.
class mutation_partition {
public:
    using rows_type = std::map<clustering_key_prefix, deletable_row, clustering_key_less>;

    explicit mutation_partition(const schema& s);

    const tombstone& partition_tombstone() const noexcept { return _tomb; }
    const row& static_row() const noexcept { return _static_row; }
    const rows_type& rows() const noexcept { return _rows; }
    // rows().lower_bound(key), for reads: through the partition's row lookup index once the partition has
    // been read enough since its rows last changed (row_lookup_index.hh), else through the map. `s` is the
    // schema the partition was made with. Not for callers that hold the answer across a change of the rows
    // other than as a map iterator (which the index never invalidates).
    rows_type::const_iterator rows_lower_bound(const schema& s, const clustering_key_prefix& key) const {
        return _index.lower_bound(s, _rows, key);
    }
    // Builds the row lookup index now (a partition that will be read many times before it changes, as a row
    // cache entry just populated), if it has enough rows and its keys have a form. Returns whether it is built.
    bool build_row_lookup_index(const schema& s) const noexcept { return _index.build(s, _rows); }
    bool has_row_lookup_index() const noexcept { return _index.built(); }
    // Heap bytes the row lookup index holds (not in a memtable's occupancy).
    size_t row_lookup_index_memory() const noexcept { return _index.memory_usage(); }
    const range_tombstone_list& range_tombstones() const noexcept { return _range_tombstones; }

    void apply(tombstone t) { _tomb.apply(t); }
    // Cells of a static column (schema::static_columns() index).
    void apply_static(const schema& s, column_id id, const cell_or_collection& c);
    // The row at `key`, created empty if missing.
    deletable_row& clustered_row(const clustering_key_prefix& key);
    // Merges a row's contents (marker, tombstone, cells) into the row at key.
    void apply_row(const schema& s, const clustering_key_prefix& key, const deletable_row& r);
    // The same, taking key and r: a row new to the partition is moved in whole, not merged cell by cell.
    void apply_row(const schema& s, clustering_key_prefix&& key, deletable_row&& r);
    void apply_range_tombstone(const position_in_partition& start, const position_in_partition& end, tombstone t) {
        _range_tombstones.apply(start, end, t);
    }
    // Merges another version of the same partition into this one.
    void apply(const schema& s, const mutation_partition& o);
    // Removes the rows [first, last) (the row cache's row eviction). Invalidates iterators to them.
    void erase_rows(rows_type::const_iterator first, rows_type::const_iterator last) noexcept {
        _index.invalidate();
        _rows.erase(first, last);
    }

    // Removes what a tombstone here deletes (DeletionTime.deletes: written
    // at or before it): row markers, cells, collection elements, and the
    // row, collection and range tombstones that a covering tombstone makes
    // redundant. Tombstones themselves stay (purging them is compaction's).
    // What a read of the partition returns does not change.
    void drop_shadowed();

    // Compaction's purge (Cassandra's DeletionPurger with AbstractCell.purge,
    // Row.purge): first drop_shadowed(); then a tombstone, an expired cell
    // or an expired marker goes when written before `max_purgeable` and its
    // deletion (or expiry) time is before `gc_before` (now - gc_grace);
    // an expired cell that stays becomes a cell tombstone.
    void purge(deletion_time_type now, deletion_time_type gc_before,
               write_time::timestamp_type max_purgeable = std::numeric_limits<write_time::timestamp_type>::max());

    // The tombstone that covers the row at key: the greatest of the
    // partition tombstone, the range tombstones there and the row's own.
    tombstone tombstone_for_row(const clustering_key_prefix& key) const;

    bool operator==(const mutation_partition& o) const;

private:
    tombstone _tomb;
    row _static_row;
    // Built by reads, dropped by every change of _rows' key set (clustered_row inserting, erases). Before
    // _rows, so that an assignment drops it before the map changes (even when that throws half-way).
    mutable row_lookup_index<rows_type> _index;
    rows_type _rows;
    range_tombstone_list _range_tombstones;
};

// The row-level steps of drop_shadowed() and purge(), shared with the
// streaming compaction of readers (reader/compacting_reader.hh).

// Drops the cells of r that t deletes, and collection tombstones t makes
// redundant (it supersedes or equals them); returns whether anything is left.
bool drop_shadowed_cells(row& r, tombstone t);
// drop_shadowed() for one row under `outer`, the greatest of the partition
// tombstone and the range tombstones over its key: drops the row tombstone
// if outer supersedes or equals it, and the marker and cells the greater
// of the two deletes. Returns whether anything is left.
bool drop_shadowed_row(deletable_row& r, tombstone outer);
// The same on a row's parts where they are (a clustering_row's fields).
bool drop_shadowed_row(row_marker& marker, tombstone& tomb, row& cells, tombstone outer);

// Cassandra's DeletionPurger with AbstractCell.purge and Row.purge: what
// compaction may forget. gc_before = now - gc_grace_seconds; max_purgeable
// is the oldest timestamp of overlapping data not being compacted.
struct deletion_purger {
    deletion_time_type now;
    deletion_time_type gc_before;
    write_time::timestamp_type max_purgeable = std::numeric_limits<write_time::timestamp_type>::max();

    // DeletionPurger.shouldPurge(timestamp, localDeletionTime).
    bool should_purge(write_time::timestamp_type ts, deletion_time_type ldt) const noexcept {
        return ts < max_purgeable && ldt < gc_before;
    }
    bool should_purge(tombstone t) const noexcept { return t && should_purge(t.timestamp, t.deletion_time); }
    // t, or the empty tombstone when t is purgeable.
    tombstone purged(tombstone t) const noexcept { return should_purge(t) ? tombstone{} : t; }
    // A live cell stays; a dead or expired one goes when purgeable by its
    // deletion time (an expired cell's is its expiry), else an expired one
    // becomes a tombstone dated expiry - ttl, which goes if that is
    // purgeable (AbstractCell.purge, Cassandra 4.0+).
    std::optional<atomic_cell> purge(const atomic_cell& c) const;
    // Purges every cell and collection tombstone; returns whether anything is left.
    bool purge(row& r) const;
    // The row tombstone, an expired marker and the cells; returns whether
    // anything is left.
    bool purge(deletable_row& r) const;
};

// Keeps the winning marker of the two in `into`.
void apply_row_marker(row_marker& into, const row_marker& from) noexcept;
// Merges one column's cells into `into` (see apply_cells); a counter
// column's cells reconcile by the counter rules (counter.hh).
void apply_cell(row& into, column_id id, const cell_or_collection& c, const std::vector<column_definition>& columns);
// Merges row `from` into `into`; columns are indices into `columns`, which
// give the path order of collection cells (the type's name_comparator()).
void apply_cells(row& into, const row& from, const std::vector<column_definition>& columns);

} // namespace reef
