// position_range: a half-open range [start, end) of positions in a partition, the form
// clustering slices and forwarding windows take inside readers.
#pragma once

#include "mutation/position_in_partition.hh"

#include <vector>

namespace reef {

struct position_range {
    position_in_partition start;
    position_in_partition end;

    // Everything clustered: [before all rows, after all rows).
    static position_range full() {
        return {position_in_partition::before_all_clustered_rows(), position_in_partition::after_all_clustered_rows()};
    }
    // The range of one clustering prefix: every key that starts with it.
    static position_range for_prefix(const clustering_key_prefix& p) {
        return {position_in_partition::before_key(p), position_in_partition::after_key(p)};
    }
    // The same range as a reversed reader sees it: bounds swapped and reversed().
    position_range reversed() const { return {end.reversed(), start.reversed()}; }

    bool operator==(const position_range&) const = default;
};

// The query's clustering ranges, sorted and non-overlapping in the read's
// order (for a reversed read: each range reversed(), in reversed order).
using clustering_ranges = std::vector<position_range>;

// Turns forward ranges into what a reversed read walks.
clustering_ranges reverse_ranges(const clustering_ranges& forward);

} // namespace reef
