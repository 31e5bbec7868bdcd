// clustering_restrictions: a CQL WHERE conjunction over clustering columns (`ck1 = 3 AND ck2 >= 'a' AND ck2 < 'f'`,
// `(ck1, ck2) > (1, 'x')`, `ck1 IN (1, 5)`) turned into the forward clustering ranges a query reads, as Cassandra
// selects them.
#pragma once

#include "reader/position_range.hh"
#include "schema/schema.hh"

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace reef::cql {

// A relation that is not valid, or not supported, named with its text.
class bad_restriction : public std::invalid_argument {
public:
    using std::invalid_argument::invalid_argument;
};

enum class restriction_op { eq, lt, le, gt, ge, in };

// One relation over clustering columns with its values bound: `columns` are clustering column indexes (consecutive
// for a tuple), `values` one per column (for IN: each tuple's values, one tuple after the other); `text` names it
// in errors.
struct clustering_relation {
    std::vector<size_t> columns;
    restriction_op o;
    std::vector<bytes> values;
    std::string text;
};

// The ranges of a conjunction of relations (the rules below; IN on a tuple allowed), for SELECT's WHERE.
clustering_ranges clustering_ranges_from_relations(const schema& s, const std::vector<clustering_relation>& relations);

// Relations: `col OP value` and `(col, ...) OP (value, ...)` with OP one of = < <= > >=, and `col IN (value, ...)`,
// values as CQL literals of the columns' types, joined by AND. Allowed, as in Cassandra: equalities (or INs, each the
// union of its values' equalities: several ranges) on a prefix of the clustering columns, then at most a lower and
// an upper bound on the next column, each of one column or of a tuple of consecutive columns starting there
// (compared as tuples, lexicographically; DESC columns are handled, a tuple bound over mixed orders becomes several
// ranges). Everything else throws bad_restriction naming the relation: a column that is not a clustering column, a
// column restricted twice, a gap (ck2 restricted, ck1 not), a restriction after a range, IN on a tuple, other
// operators (!=, CONTAINS ...). An empty text selects everything.
// The ranges are sorted and non-overlapping in s's clustering order (empty when nothing can match).
clustering_ranges clustering_ranges_from_cql(const schema& s, std::string_view where);

} // namespace reef::cql
