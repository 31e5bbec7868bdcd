// A row's contents: its marker (liveness info) and its cells by column, simple cells or
// collections (cells by path plus a collection tombstone), merged by the reconciliation rules.
#pragma once

#include "mutation/atomic_cell.hh"
#include "mutation/tombstone.hh"
#include "schema/bytes.hh"
#include "utils/small_vector.hh"

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace reef {

// Index of a column within its kind: schema::static_columns() for a static
// row, schema::regular_columns() for a clustering row.
using column_id = uint32_t;

// The row marker (Cassandra's LivenessInfo): the row exists from `timestamp`
// (an INSERT writes one), until `expiry` when written with a TTL.
struct row_marker {
    write_time::timestamp_type timestamp = write_time::missing_timestamp;
    int32_t ttl = no_ttl;
    deletion_time_type expiry = no_deletion_time;

    bool empty() const noexcept { return timestamp == write_time::missing_timestamp; }
    bool is_expiring() const noexcept { return ttl != no_ttl; }
    bool is_live(deletion_time_type now) const noexcept {
        return !empty() && (!is_expiring() || now < expiry);
    }
    bool operator==(const row_marker&) const = default;
};

// The cells of a non-frozen collection or UDT column: a tombstone for the
// whole collection and one cell per element, sorted by path with the
// column's name comparator (the caller keeps them sorted).
struct collection_cells {
    tombstone tomb;
    std::vector<std::pair<bytes, atomic_cell>> cells;
    bool operator==(const collection_cells&) const = default;
};

using cell_or_collection = std::variant<atomic_cell, collection_cells>;

// Cells by column id, kept sorted by id. Applying a cell that is already
// there keeps the reconciliation winner. The first cells live inside the
// row (most rows have a column or two): a row read or copied costs no
// allocation of its own, only its values'.
class row {
public:
    static constexpr size_t inline_cells = 1;
    using cells_type = utils::small_vector<std::pair<column_id, cell_or_collection>, inline_cells>;

    bool empty() const noexcept { return _cells.empty(); }
    size_t size() const noexcept { return _cells.size(); }
    const cells_type& cells() const noexcept { return _cells; }
    const cell_or_collection* find(column_id id) const noexcept;

    void apply(column_id id, atomic_cell c);
    // A cell of a counter column: reconciled by the counter rules
    // (reconcile_counter in counter.hh), which may merge the two.
    void apply_counter(column_id id, atomic_cell c);
    void apply(column_id id, collection_cells c, const std::function<int(bytes_view, bytes_view)>& path_compare);

    bool operator==(const row&) const = default;

private:
    // The simple cell already at id, or nullptr after inserting c there (so
    // there is nothing to reconcile). `who` names the caller in the error
    // thrown when id holds a collection.
    atomic_cell* existing_or_insert(column_id id, atomic_cell& c, const char* who);

    cells_type _cells;
};

} // namespace reef
