// Random schemas, mutations and slices for tests. See random_mutation.hh.
#include "test/lib/random_mutation.hh"

#include "test/lib/simple_keys.hh"

#include <algorithm>
#include <cstdlib>
#include <set>
#include <string>

namespace reef::testing {

schema_ptr random_test_schema() {
    return schema_builder("ks", "t")
        .with_column("pk", int32_type(), column_kind::partition_key)
        .with_column("ck", int32_type(), column_kind::clustering_key)
        .with_column("s", int32_type(), column_kind::static_column)
        .with_column("v", int32_type(), column_kind::regular_column)
        .with_column("m", map_type(int32_type(), int32_type(), true), column_kind::regular_column)
        .build();
}

schema_ptr random_test_wide_schema() {
    return schema_builder("ks", "w")
        .with_column("pk", int32_type(), column_kind::partition_key)
        .with_column("c1", int32_type(), column_kind::clustering_key)
        .with_column("c2", int32_type(), column_kind::clustering_key, clustering_order::desc)
        .with_column("ss", set_type(int32_type(), true), column_kind::static_column)
        .with_column("v", int32_type(), column_kind::regular_column)
        .build();
}

std::vector<schema_ptr> random_test_schemas() { return {random_test_schema(), random_test_wide_schema()}; }

uint64_t pick_seed() {
    if (const char* s = std::getenv("REEF_SEED")) {
        return std::stoull(s);
    }
    return std::random_device{}();
}

mutation mutation_generator::make(const dht::decorated_key& k, int max_rows) {
    mutation m(_s, k);
    auto& p = m.partition();
    if (rnd(0, 3) == 0) {
        p.apply(tomb());
    }
    if (!_s->static_columns().empty() && rnd(0, 1)) {
        p.apply_static(*_s, 0, cell_for(_s->static_columns()[0]));
    }
    int rows = rnd(0, max_rows);
    for (int i = 0; i < rows; ++i) {
        deletable_row r;
        if (rnd(0, 1)) {
            r.marker = marker();
        }
        if (rnd(0, 4) == 0) {
            r.tomb = tomb();
        }
        auto& cols = _s->regular_columns();
        for (column_id id = 0; id < cols.size(); ++id) {
            if (rnd(0, 2)) {
                apply_cell(r.cells, id, cell_for(cols[id]), cols);
            }
        }
        p.apply_row(*_s, clustering_key(), r);
    }
    int rts = rnd(0, 4);
    for (int i = 0; i < rts; ++i) {
        auto a = bound(), b = bound();
        int c = position_in_partition_comparator(*_s)(a, b);
        if (c == 0) {
            continue;
        }
        if (c > 0) {
            std::swap(a, b);
        }
        p.apply_range_tombstone(a, b, tomb());
    }
    return m;
}

clustering_ranges mutation_generator::make_ranges() {
    if (rnd(0, 4) == 0) {
        return {position_range::full()};
    }
    position_in_partition_comparator cmp(*_s);
    std::vector<position_in_partition> bounds;
    int n = 2 * rnd(0, 3);
    for (int i = 0; i < n; ++i) {
        bounds.push_back(bound());
    }
    std::sort(bounds.begin(), bounds.end(), [&](auto& a, auto& b) { return cmp(a, b) < 0; });
    clustering_ranges out;
    for (size_t i = 0; i + 1 < bounds.size(); i += 2) {
        // Equal bounds make an empty range; touching ranges are allowed.
        if (cmp(bounds[i], bounds[i + 1]) < 0) {
            out.push_back({bounds[i], bounds[i + 1]});
        }
    }
    return out;
}

tombstone mutation_generator::tomb() { return tombstone{rnd(0, 5), rnd(0, 2)}; }

row_marker mutation_generator::marker() {
    row_marker m{rnd(0, 5)};
    if (rnd(0, 2) == 0) {
        m.ttl = rnd(1, 2);
        m.expiry = rnd(0, 3);
    }
    return m;
}

atomic_cell mutation_generator::cell() {
    write_time::timestamp_type ts = rnd(0, 5);
    switch (rnd(0, 3)) {
    case 0: return atomic_cell::make_dead(ts, rnd(0, 2));
    case 1: return atomic_cell::make_expiring(ts, std::string(1, char('a' + rnd(0, 2))), rnd(1, 2), rnd(0, 3));
    default: return atomic_cell::make_live(ts, std::string(1, char('a' + rnd(0, 2))));
    }
}

cell_or_collection mutation_generator::cell_for(const column_definition& c) {
    if (!c.is_complex()) {
        return cell();
    }
    collection_cells coll;
    if (rnd(0, 3) == 0) {
        coll.tomb = tomb();
    }
    std::set<int> paths;
    int n = rnd(0, 4);
    for (int i = 0; i < n; ++i) {
        paths.insert(rnd(0, 6));
    }
    // Non-negative ints: byte order is the type's order.
    for (int p : paths) {
        coll.cells.emplace_back(int_value(p), cell());
    }
    return coll;
}

clustering_key_prefix mutation_generator::clustering_key() {
    std::vector<bytes> v;
    for (size_t i = 0; i < _s->clustering_key().size(); ++i) {
        v.push_back(int_value(rnd(0, 6)));
    }
    return clustering_key_prefix(std::move(v));
}

position_in_partition mutation_generator::bound() {
    auto full = clustering_key().to_vector();
    full.resize(rnd(0, int(full.size())));
    clustering_key_prefix p(std::move(full));
    return rnd(0, 1) ? position_in_partition::before_key(std::move(p)) : position_in_partition::after_key(std::move(p));
}

} // namespace reef::testing
