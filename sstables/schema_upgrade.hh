// Data written under an older version of a table's schema (before ALTER TABLE added or dropped columns), read
// under the current one: each cell moves to the column of the same name and type; cells of columns the current
// schema lacks (dropped, or re-added with another type) are left out. Keys, tombstones and markers are unchanged.
#pragma once

#include "mutation/mutation.hh"
#include "reader/mutation_reader.hh"
#include "schema/schema.hh"
#include "sstables/serialization_header.hh"

#include <optional>
#include <vector>

namespace reef {

// For each column of `from`, its index in `to` (same name and type), or nothing.
std::vector<std::optional<column_id>> column_mapping(const std::vector<column_definition>& from,
                                                     const std::vector<column_definition>& to);

// r's cells (indices into `from`'s columns) as a row of `to`'s columns, by `mapping` (column_mapping(from, to)).
row upgrade_row(const row& r, const std::vector<std::optional<column_id>>& mapping,
                const std::vector<column_definition>& to);

// m as a mutation of `to` (the same table: same key and clustering columns). m itself when its schema is `to`.
mutation upgrade_mutation(const mutation& m, const schema_ptr& to);

// Whether an sstable with header h can be read with s directly: the same key types and the same static and regular
// columns (names and types, in the header's order).
bool header_matches(const schema& s, const sstables::serialization_header& h);

// r's stream (of r.schema(), with the same keys as `to`) as a stream of `to`. Passes every call through.
mutation_reader make_upgrading_reader(mutation_reader r, schema_ptr to);

} // namespace reef
