// sstable_bounds_index: a table's sstables ordered by their first key, with a running maximum of last keys.
// It finds the sstables whose key bounds hold a key in O(log n + those found); a run's disjoint sstables give one.
#pragma once

#include "mutation/token.hh"
#include "utils/small_vector.hh"

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace reef {

// An sstable's first and last partition; none when it names none (it may then hold any key).
using sstable_key_bounds = std::optional<std::pair<dht::decorated_key, dht::decorated_key>>;

// Members are numbered by their position in the vector the index was built from. The index keeps pointers to the
// bounds it was given: they must outlive it (the table rebuilds it in the step that changes its sstables).
class sstable_bounds_index {
public:
    using positions = utils::small_vector<uint32_t, 4>;

    sstable_bounds_index() = default;
    explicit sstable_bounds_index(const std::vector<const sstable_key_bounds*>& members);

    // The members whose bounds hold k (first <= k <= last), and those without bounds, in ascending position.
    positions spanning(const dht::decorated_key& k) const;

    size_t size() const noexcept { return _bounded.size() + _unbounded.size(); }

private:
    struct entry {
        const dht::decorated_key* first;
        const dht::decorated_key* last;
        // The greatest last key among this entry and those before it: a backward scan stops below it.
        const dht::decorated_key* max_last;
        uint32_t position;
    };
    std::vector<entry> _bounded;  // by first key
    std::vector<uint32_t> _unbounded;
};

} // namespace reef
