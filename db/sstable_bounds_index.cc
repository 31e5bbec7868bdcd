// The key-bounds index of a table's sstables. See sstable_bounds_index.hh.
#include "db/sstable_bounds_index.hh"

#include <algorithm>

namespace reef {

sstable_bounds_index::sstable_bounds_index(const std::vector<const sstable_key_bounds*>& members) {
    for (uint32_t i = 0; i < members.size(); ++i) {
        if (auto& b = *members[i]) {
            _bounded.push_back({&b->first, &b->second, nullptr, i});
        } else {
            _unbounded.push_back(i);
        }
    }
    std::stable_sort(_bounded.begin(), _bounded.end(), [](const entry& a, const entry& b) { return *a.first < *b.first; });
    const dht::decorated_key* max_last = nullptr;
    for (auto& e : _bounded) {
        if (!max_last || *max_last < *e.last) {
            max_last = e.last;
        }
        e.max_last = max_last;
    }
}

sstable_bounds_index::positions sstable_bounds_index::spanning(const dht::decorated_key& k) const {
    positions out;
    // Entries past `it` start after k; scanning back, none at or before an entry whose max_last is below k ends at k.
    auto it = std::upper_bound(_bounded.begin(), _bounded.end(), k,
                               [](const dht::decorated_key& key, const entry& e) { return key < *e.first; });
    while (it != _bounded.begin()) {
        --it;
        if (*it->max_last < k) {
            break;
        }
        if (!(*it->last < k)) {
            out.push_back(it->position);
        }
    }
    out.insert(out.end(), _unbounded.begin(), _unbounded.end());
    std::sort(out.begin(), out.end());
    return out;
}

} // namespace reef
