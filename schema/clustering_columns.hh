// The clustering columns as comparisons use them: each column's fast kind, order and type, worked out once per
// schema. Immutable once made; copies of the pointer share it across comparators and shards.
#pragma once

#include "schema/types.hh"

#include <cstdint>
#include <memory>
#include <vector>

namespace reef {

// How one clustering column's values compare: inline for fixed-size signed integers and byte-order types,
// through abstract_type::compare otherwise.
enum class clustering_compare_kind : uint8_t { generic, signed_integer, byte_order };

struct clustering_column_compare {
    clustering_compare_kind kind;
    bool reversed;              // a DESC column (fast kinds; generic types reverse themselves)
    const abstract_type* type;  // the column's type as compared (reversed(...) for DESC)
};

struct clustering_columns {
    std::vector<data_type> types;  // keeps the types alive
    std::vector<clustering_column_compare> columns;
};

// The comparison of clustering columns of these types (as compared: reversed for DESC).
std::shared_ptr<const clustering_columns> make_clustering_columns(std::vector<data_type> types);

} // namespace reef
