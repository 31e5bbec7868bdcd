// Merging cells into a row. See row.hh.
#include "mutation/row.hh"

#include "mutation/counter.hh"

#include <algorithm>
#include <stdexcept>

namespace reef {

const cell_or_collection* row::find(column_id id) const noexcept {
    auto it = std::lower_bound(_cells.begin(), _cells.end(), id, [](auto& e, column_id v) { return e.first < v; });
    return it != _cells.end() && it->first == id ? &it->second : nullptr;
}

atomic_cell* row::existing_or_insert(column_id id, atomic_cell& c, const char* who) {
    auto it = std::lower_bound(_cells.begin(), _cells.end(), id, [](auto& e, column_id v) { return e.first < v; });
    if (it == _cells.end() || it->first != id) {
        _cells.emplace(it, id, std::move(c));
        return nullptr;
    }
    auto* existing = std::get_if<atomic_cell>(&it->second);
    if (!existing) {
        throw std::logic_error(std::string(who) + ": simple cell for collection column " + std::to_string(id));
    }
    return existing;
}

void row::apply(column_id id, atomic_cell c) {
    auto* existing = existing_or_insert(id, c, "row::apply");
    if (existing && !reconcile_wins(*existing, c)) {
        *existing = std::move(c);
    }
}

void row::apply_counter(column_id id, atomic_cell c) {
    if (auto* existing = existing_or_insert(id, c, "row::apply_counter")) {
        *existing = reconcile_counter(*existing, c);
    }
}

void row::apply(column_id id, collection_cells c, const std::function<int(bytes_view, bytes_view)>& path_compare) {
    auto it = std::lower_bound(_cells.begin(), _cells.end(), id, [](auto& e, column_id v) { return e.first < v; });
    if (it == _cells.end() || it->first != id) {
        _cells.emplace(it, id, std::move(c));
        return;
    }
    auto* existing = std::get_if<collection_cells>(&it->second);
    if (!existing) {
        throw std::logic_error("row::apply: collection for simple column " + std::to_string(id));
    }
    existing->tomb.apply(c.tomb);
    // Merge the two sorted element lists; equal paths reconcile.
    std::vector<std::pair<bytes, atomic_cell>> merged;
    merged.reserve(existing->cells.size() + c.cells.size());
    auto a = existing->cells.begin(), ae = existing->cells.end();
    auto b = c.cells.begin(), be = c.cells.end();
    while (a != ae || b != be) {
        int cmp = a == ae ? 1 : b == be ? -1 : path_compare(a->first, b->first);
        if (cmp < 0) {
            merged.push_back(std::move(*a++));
        } else if (cmp > 0) {
            merged.push_back(std::move(*b++));
        } else {
            merged.push_back(reconcile_wins(a->second, b->second) ? std::move(*a) : std::move(*b));
            ++a;
            ++b;
        }
    }
    existing->cells = std::move(merged);
}

} // namespace reef
