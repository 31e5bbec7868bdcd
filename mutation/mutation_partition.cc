// Merging partitions by the reconciliation rules. See mutation_partition.hh.
#include "mutation/mutation_partition.hh"

#include <algorithm>
#include <optional>
#include <stdexcept>

namespace reef {

bool marker_supersedes(const row_marker& a, const row_marker& b) noexcept {
    // LivenessInfo.supersedes: the later timestamp; on a tie the expiring
    // one over the plain one (as a TTL cell beats a plain one), and between
    // two of the same kind the later expiry. Cassandra's "expired" marker
    // (materialized views only) has no counterpart here.
    if (a.timestamp != b.timestamp) {
        return a.timestamp > b.timestamp;
    }
    if (a.is_expiring() != b.is_expiring()) {
        return a.is_expiring();
    }
    if (a.expiry != b.expiry) {
        return a.expiry > b.expiry;
    }
    // Cassandra keeps either one here (mergeWith returns `other`); the
    // greater TTL makes the merge independent of the order.
    return a.ttl > b.ttl;
}

void apply_row_marker(row_marker& into, const row_marker& from) noexcept {
    if (marker_supersedes(from, into)) {
        into = from;
    }
}

void apply_cell(row& into, column_id id, const cell_or_collection& c, const std::vector<column_definition>& columns) {
    if (auto* cell = std::get_if<atomic_cell>(&c)) {
        if (id < columns.size() && columns[id].type->is_counter()) {
            into.apply_counter(id, *cell);
        } else {
            into.apply(id, *cell);
        }
        return;
    }
    if (id >= columns.size()) {
        throw std::out_of_range("apply_cell: no column " + std::to_string(id));
    }
    data_type paths = columns[id].type->name_comparator();
    into.apply(id, std::get<collection_cells>(c), [&paths](bytes_view a, bytes_view b) { return paths->compare(a, b); });
}

void apply_cells(row& into, const row& from, const std::vector<column_definition>& columns) {
    for (auto& [id, c] : from.cells()) {
        apply_cell(into, id, c, columns);
    }
}

mutation_partition::mutation_partition(const schema& s)
    : _rows(clustering_key_less{clustering_comparator(s)}), _range_tombstones(s) {}

void mutation_partition::apply_static(const schema& s, column_id id, const cell_or_collection& c) {
    apply_cell(_static_row, id, c, s.static_columns());
}

deletable_row& mutation_partition::clustered_row(const clustering_key_prefix& key) {
    auto [it, inserted] = _rows.try_emplace(key);
    if (inserted) {
        _index.invalidate();
    }
    return it->second;
}

namespace {

// Merges r's marker, tombstone and cells into `into`.
void merge_row(const schema& s, deletable_row& into, const deletable_row& r) {
    apply_row_marker(into.marker, r.marker);
    into.tomb.apply(r.tomb);
    apply_cells(into.cells, r.cells, s.regular_columns());
}

} // namespace

void mutation_partition::apply_row(const schema& s, const clustering_key_prefix& key, const deletable_row& r) {
    merge_row(s, clustered_row(key), r);
}

void mutation_partition::apply_row(const schema& s, clustering_key_prefix&& key, deletable_row&& r) {
    auto [it, inserted] = _rows.try_emplace(std::move(key));
    if (inserted) {
        // Merging into an empty row gives r itself: its cells are already one per column, in column order.
        _index.invalidate();
        it->second = std::move(r);
        return;
    }
    merge_row(s, it->second, r);
}

void mutation_partition::apply(const schema& s, const mutation_partition& o) {
    _tomb.apply(o._tomb);
    apply_cells(_static_row, o._static_row, s.static_columns());
    for (auto& [key, r] : o._rows) {
        apply_row(s, key, r);
    }
    _range_tombstones.apply(o._range_tombstones);
}

namespace {

// Whether drop_shadowed_cells changes anything in r: most rows are not
// shadowed at all, and are then left as they are, not rebuilt.
bool has_shadowed_cells(const row& r, tombstone t) {
    for (auto& [id, c] : r.cells()) {
        if (auto* cell = std::get_if<atomic_cell>(&c)) {
            if (t.deletes(cell->timestamp())) {
                return true;
            }
            continue;
        }
        auto& coll = std::get<collection_cells>(c);
        if (coll.tomb && !coll.tomb.supersedes(t)) {
            return true;
        }
        tombstone covering = t;
        covering.apply(coll.tomb);
        if (!coll.tomb && coll.cells.empty()) {
            return true;
        }
        for (auto& e : coll.cells) {
            if (covering.deletes(e.second.timestamp())) {
                return true;
            }
        }
    }
    return false;
}

} // namespace

bool drop_shadowed_cells(row& r, tombstone t) {
    if (!has_shadowed_cells(r, t)) {
        return !r.empty();
    }
    row kept;
    for (auto& [id, c] : r.cells()) {
        if (auto* cell = std::get_if<atomic_cell>(&c)) {
            if (!t.deletes(cell->timestamp())) {
                kept.apply(id, *cell);
            }
            continue;
        }
        auto coll = std::get<collection_cells>(c);
        if (!coll.tomb.supersedes(t)) {
            coll.tomb = {};
        }
        tombstone covering = t;
        covering.apply(coll.tomb);
        std::erase_if(coll.cells, [&](auto& e) { return covering.deletes(e.second.timestamp()); });
        if (coll.tomb || !coll.cells.empty()) {
            // Into an empty column: the path order is already right.
            kept.apply(id, std::move(coll), [](bytes_view, bytes_view) { return 0; });
        }
    }
    r = std::move(kept);
    return !r.empty();
}

bool drop_shadowed_row(row_marker& marker, tombstone& tomb, row& cells, tombstone outer) {
    if (!tomb.supersedes(outer)) {
        tomb = {};
    }
    tombstone active = outer;
    active.apply(tomb);
    if (active.deletes(marker.timestamp)) {
        marker = {};
    }
    bool has_cells = drop_shadowed_cells(cells, active);
    return has_cells || !marker.empty() || tomb;
}

bool drop_shadowed_row(deletable_row& r, tombstone outer) {
    return drop_shadowed_row(r.marker, r.tomb, r.cells, outer);
}

void mutation_partition::drop_shadowed() {
    drop_shadowed_cells(_static_row, _tomb);
    // Range tombstones that the partition tombstone covers add nothing.
    if (_tomb) {
        range_tombstone_list kept(_range_tombstones.comparator());
        for (auto& r : _range_tombstones) {
            if (r.tomb.supersedes(_tomb)) {
                kept.apply(r);
            }
        }
        _range_tombstones = std::move(kept);
    }
    for (auto it = _rows.begin(); it != _rows.end();) {
        tombstone outer = _tomb;
        outer.apply(_range_tombstones.search(position_in_partition::for_key(it->first)));
        if (!drop_shadowed_row(it->second, outer)) {
            _index.invalidate();
            it = _rows.erase(it);
        } else {
            ++it;
        }
    }
}

std::optional<atomic_cell> deletion_purger::purge(const atomic_cell& c) const {
    if (c.is_live(now)) {
        return c;
    }
    if (should_purge(c.timestamp(), c.local_deletion_time())) {
        return std::nullopt;
    }
    // Cassandra 4.0+ purges the tombstone an expired cell becomes in the
    // same pass (AbstractCell.purge calls purge on it): dated expiry - ttl,
    // it may be purgeable when the expiry is not.
    atomic_cell dead = c.expired_to_dead(now);
    if (should_purge(dead.timestamp(), dead.local_deletion_time())) {
        return std::nullopt;
    }
    return dead;
}

bool deletion_purger::purge(row& r) const {
    // Rows with nothing dead or expired (the most) are left as they are.
    auto untouched = [&](const atomic_cell& c) { return c.is_live(now); };
    bool changes = false;
    for (auto& [id, c] : r.cells()) {
        if (auto* cell = std::get_if<atomic_cell>(&c)) {
            changes = !untouched(*cell);
        } else {
            auto& coll = std::get<collection_cells>(c);
            changes = should_purge(coll.tomb) || (!coll.tomb && coll.cells.empty()) ||
                      !std::all_of(coll.cells.begin(), coll.cells.end(), [&](auto& e) { return untouched(e.second); });
        }
        if (changes) {
            break;
        }
    }
    if (!changes) {
        return !r.empty();
    }
    row kept;
    for (auto& [id, c] : r.cells()) {
        if (auto* cell = std::get_if<atomic_cell>(&c)) {
            if (auto p = purge(*cell)) {
                kept.apply(id, std::move(*p));
            }
            continue;
        }
        auto& coll = std::get<collection_cells>(c);
        collection_cells out;
        out.tomb = purged(coll.tomb);
        for (auto& [path, cell] : coll.cells) {
            if (auto p = purge(cell)) {
                out.cells.emplace_back(path, std::move(*p));
            }
        }
        if (out.tomb || !out.cells.empty()) {
            kept.apply(id, std::move(out), [](bytes_view, bytes_view) { return 0; });
        }
    }
    r = std::move(kept);
    return !r.empty();
}

bool deletion_purger::purge(deletable_row& r) const {
    r.tomb = purged(r.tomb);
    // DeletionPurger.shouldPurge(LivenessInfo, now): an expired marker
    // goes when its expiry is purgeable.
    if (!r.marker.empty() && !r.marker.is_live(now) && should_purge(r.marker.timestamp, r.marker.expiry)) {
        r.marker = {};
    }
    bool has_cells = purge(r.cells);
    return has_cells || !r.marker.empty() || r.tomb;
}

void mutation_partition::purge(deletion_time_type now, deletion_time_type gc_before, write_time::timestamp_type max_purgeable) {
    // Shadowed data goes first: a tombstone may only go once nothing it
    // deletes is left to come back.
    drop_shadowed();
    deletion_purger p{now, gc_before, max_purgeable};
    _tomb = p.purged(_tomb);
    range_tombstone_list kept(_range_tombstones.comparator());
    for (auto& r : _range_tombstones) {
        if (!p.should_purge(r.tomb)) {
            kept.apply(r);
        }
    }
    _range_tombstones = std::move(kept);
    p.purge(_static_row);
    for (auto it = _rows.begin(); it != _rows.end();) {
        if (!p.purge(it->second)) {
            _index.invalidate();
            it = _rows.erase(it);
        } else {
            ++it;
        }
    }
}

tombstone mutation_partition::tombstone_for_row(const clustering_key_prefix& key) const {
    tombstone t = _tomb;
    t.apply(_range_tombstones.search(position_in_partition::for_key(key)));
    if (auto it = _rows.find(key); it != _rows.end()) {
        t.apply(it->second.tomb);
    }
    return t;
}

bool mutation_partition::operator==(const mutation_partition& o) const {
    // Keys equal by bytes; the maps share the schema's order.
    return _tomb == o._tomb && _static_row == o._static_row && _rows.size() == o._rows.size() &&
           std::equal(_rows.begin(), _rows.end(), o._rows.begin()) && _range_tombstones == o._range_tombstones;
}

} // namespace reef
