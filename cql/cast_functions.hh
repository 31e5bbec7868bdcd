// cast_functions: CQL's CAST(x AS type) as Cassandra's CastFcts convert: numbers as Java's Number methods do
// (integers wrap, a float or double truncates and saturates), any value to its string form, times into each other.
#pragma once

#include "schema/bytes.hh"
#include "schema/types.hh"

#include <optional>

namespace reef::cql {

// Whether CAST(a value of `from` AS `to`) exists.
bool castable(const data_type& from, const data_type& to);
// The value converted. Throws cql_error(invalid) for a cast that does not exist.
std::optional<bytes> cast_value(const data_type& from, const data_type& to, const bytes& v);

} // namespace reef::cql
