// The clustering columns as comparisons use them. See clustering_columns.hh.
#include "schema/clustering_columns.hh"

namespace reef {

namespace {

clustering_compare_kind compare_kind_of(const abstract_type& t) {
    switch (t.is_reversed() ? type_kind::reversed : t.kind()) {
    case type_kind::bigint:
    case type_kind::int32:
    case type_kind::smallint:
    case type_kind::tinyint:
    case type_kind::counter:
    case type_kind::timestamp:
        return clustering_compare_kind::signed_integer;
    case type_kind::ascii:
    case type_kind::text:
    case type_kind::blob:
    case type_kind::inet:
    case type_kind::date:
    case type_kind::time:
    case type_kind::duration:
        return clustering_compare_kind::byte_order;
    default:
        return clustering_compare_kind::generic;
    }
}

} // namespace

std::shared_ptr<const clustering_columns> make_clustering_columns(std::vector<data_type> types) {
    auto c = std::make_shared<clustering_columns>();
    for (auto& t : types) {
        const abstract_type* base = t->is_reversed() ? t->underlying_type().get() : t.get();
        c->columns.push_back(clustering_column_compare{compare_kind_of(*base), t->is_reversed(), t.get()});
    }
    c->types = std::move(types);
    return c;
}

} // namespace reef
