// A fragment's position and kind name. See fragment.hh.
#include "mutation/fragment.hh"

namespace reef {

position_in_partition position_of(const mutation_fragment& f) {
    struct visitor {
        position_in_partition operator()(const partition_start&) const { return position_in_partition::for_partition_start(); }
        position_in_partition operator()(const static_row&) const { return position_in_partition::for_static_row(); }
        position_in_partition operator()(const clustering_row& r) const { return position_in_partition::for_key(r.key); }
        position_in_partition operator()(const range_tombstone_change& c) const { return c.position; }
        position_in_partition operator()(const partition_end&) const { return position_in_partition::for_partition_end(); }
    };
    return std::visit(visitor{}, f);
}

const char* kind_name(const mutation_fragment& f) noexcept {
    static const char* names[] = {"partition_start", "static_row", "clustering_row", "range_tombstone_change",
                                  "partition_end"};
    return names[f.index()];
}

} // namespace reef
