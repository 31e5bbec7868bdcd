// The five fragments of the stream every reader produces: partition_start, static_row,
// clustering_row, range_tombstone_change, partition_end (see ARCHITECTURE.md, "The fragment stream").
#pragma once

#include "mutation/clustering_key.hh"
#include "mutation/position_in_partition.hh"
#include "mutation/row.hh"
#include "mutation/token.hh"
#include "mutation/tombstone.hh"

#include <variant>

namespace reef {

struct partition_start {
    dht::decorated_key key;
    tombstone partition_tombstone;
};

struct static_row {
    row cells;
};

struct clustering_row {
    clustering_key_prefix key;
    row_marker marker;
    tombstone row_tombstone;
    row cells;
};

// From `position` on, `tomb` is the range tombstone in force (an empty one
// ends the current range).
struct range_tombstone_change {
    position_in_partition position;
    tombstone tomb;
};

struct partition_end {};

using mutation_fragment = std::variant<partition_start, static_row, clustering_row, range_tombstone_change, partition_end>;

// The fragment's place in its partition (a row's key, a change's position).
position_in_partition position_of(const mutation_fragment& f);

// "partition_start", "static_row", ... for messages.
const char* kind_name(const mutation_fragment& f) noexcept;

} // namespace reef
