// with_typed_values: a random mutation made writable to an sstable (fixed-length values padded to their type's
// length, expiry times moved past their TTLs), for every test that writes random data to sstables.
#pragma once

#include "mutation/mutation.hh"
#include "schema/schema.hh"

#include <algorithm>

namespace reef::testing {

// The random generator's values ignore their column's type (one byte for an int); a fixed-length type's value
// is padded to its length so that the sstable can hold it (the writer refuses a value of the wrong length).
// Its expiry times are below their TTLs too, which no real write makes and readers take for an overflowed
// expiry (FORMAT.md, "Expiry decoding"): those move past the TTL.
inline deletion_time_type fixed_expiry(int32_t ttl, deletion_time_type expiry) {
    return expiry < ttl ? expiry + 8 : expiry;
}

inline atomic_cell fixed_cell(const atomic_cell& c, const column_definition* col) {
    auto fixed = col ? col->type->value_length_if_fixed() : std::nullopt;
    std::string v(c.value());
    if (fixed && !v.empty() && v.size() != *fixed) {
        v.assign(*fixed, '\0');
        auto n = std::min<size_t>(*fixed, c.value().size());
        std::copy(c.value().end() - long(n), c.value().end(), v.end() - long(n));
    }
    if (c.is_expiring()) {
        return atomic_cell::make_expiring(c.timestamp(), v, c.ttl(), fixed_expiry(c.ttl(), c.local_deletion_time()));
    }
    return c.local_deletion_time() == no_deletion_time ? atomic_cell::make_live(c.timestamp(), v) : c;
}

inline row fixed_row(const row& r, const std::vector<column_definition>& columns) {
    row out;
    for (auto& [id, c] : r.cells()) {
        if (auto* cell = std::get_if<atomic_cell>(&c)) {
            out.apply(id, fixed_cell(*cell, &columns.at(id)));
        } else {
            auto cmp = columns.at(id).type->name_comparator();
            auto coll = std::get<collection_cells>(c);
            for (auto& [path, cell] : coll.cells) {
                cell = fixed_cell(cell, nullptr);
            }
            out.apply(id, std::move(coll), [cmp](bytes_view a, bytes_view b) { return cmp->compare(a, b); });
        }
    }
    return out;
}

inline mutation with_typed_values(const schema_ptr& s, const mutation& m) {
    auto fs = to_fragments(m);
    for (auto& f : fs) {
        if (auto* sr = std::get_if<static_row>(&f)) {
            sr->cells = fixed_row(sr->cells, s->static_columns());
        } else if (auto* cr = std::get_if<clustering_row>(&f)) {
            cr->cells = fixed_row(cr->cells, s->regular_columns());
            if (cr->marker.is_expiring()) {
                cr->marker.expiry = fixed_expiry(cr->marker.ttl, cr->marker.expiry);
            }
        }
    }
    return mutations_from_fragments(s, fs).at(0);
}

} // namespace reef::testing
