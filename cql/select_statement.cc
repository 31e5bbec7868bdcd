// SELECT prepared: names resolved, the WHERE clause sorted by what it restricts, ORDER BY, DISTINCT and limits
// checked with Cassandra 5.0's messages. Execution is in select_execute.cc.
#include "cql/cql_error.hh"
#include "cql/select_prepared.hh"
#include "db/database.hh"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace reef::cql {

cql_error filtering_required() {
    return invalid_request("Cannot execute this query as it might involve data filtering and thus may have "
                           "unpredictable performance. If you want to execute this query despite the performance "
                           "unpredictability, use ALLOW FILTERING");
}

std::vector<bytes> relation_values::bind(const query_options& o, const std::string& what) const {
    std::vector<bytes> out;
    auto one = [&](const term_ptr& t) {
        auto v = t->bind(o);
        if (v.is_null()) {
            throw invalid_request(fmt::format("Invalid null value in condition for column {}", what));
        }
        if (v.is_unset()) {
            throw invalid_request(fmt::format("Invalid unset value for column {}", what));
        }
        return std::move(v.data);
    };
    if (!in) {
        out.push_back(one(single));
        return out;
    }
    if (single) {
        // IN ?: a list.
        for (auto e : split_collection(one(single))) {
            out.emplace_back(e.begin(), e.end());
        }
        return out;
    }
    for (auto& t : list) {
        out.push_back(one(t));
    }
    return out;
}

namespace {

column_spec spec_of(const schema& s, const column_definition& c) {
    return column_spec{s.keyspace(), s.table(), c.name, c.type};
}

class preparer {
public:
    preparer(const raw_select_statement& raw, schema_ptr s) : _raw(raw), _s(std::move(s)), _specs(raw.ctx) {}

    std::unique_ptr<select_statement> prepare() {
        auto st = std::make_unique<select_statement>();
        st->schema = _s;
        st->selectors = _raw.selectors;
        st->json = _raw.json;
        st->distinct = _raw.distinct;
        selection sel(_s, _raw.selectors, _raw.json);
        st->result = sel.result_columns();
        st->aggregate = sel.is_aggregate();
        if (_raw.distinct) {
            check_distinct(sel);
        }
        if (!_raw.group_by.empty()) {
            throw invalid_request("GROUP BY is not supported");
        }
        st->allow_filtering = _raw.allow_filtering;
        st->bypass_cache = _raw.bypass_cache;
        st->timeout = _raw.timeout;
        where(*st);
        order_by(*st);
        if (_raw.limit) {
            st->limit = _raw.limit->prepare(column_spec{_s->keyspace(), _s->table(), "[limit]", int32_type()}, _specs);
        }
        if (_raw.per_partition_limit) {
            st->per_partition_limit = _raw.per_partition_limit->prepare(
                column_spec{_s->keyspace(), _s->table(), "[per_partition_limit]", int32_type()}, _specs);
        }
        st->bind_vars = _specs.specs();
        return st;
    }

private:
    void check_distinct(const selection& sel) {
        std::vector<bool> has(_s->partition_key().size());
        for (auto* c : sel.columns_read()) {
            if (c->kind == column_kind::partition_key) {
                has[c->position] = true;
            } else if (!c->is_static()) {
                throw invalid_request(fmt::format("SELECT DISTINCT queries must only request partition key columns "
                                                  "and/or static columns (not {})",
                                                  c->name));
            }
        }
        for (size_t i = 0; i < has.size(); ++i) {
            if (!has[i]) {
                throw invalid_request(fmt::format("SELECT DISTINCT queries must request all the partition key "
                                                  "columns (missing {})",
                                                  _s->partition_key()[i].name));
            }
        }
    }

    const column_definition& column(const std::string& name) {
        auto* c = _s->find_column(name);
        if (!c) {
            throw invalid_request(fmt::format("Undefined column name {} in table {}.{}", maybe_quote_identifier(name),
                                              _s->keyspace(), _s->table()));
        }
        return *c;
    }

    // The relation's values prepared against the receiver (a column or a tuple of them).
    relation_values values_of(const raw_relation& r, const column_spec& receiver) {
        relation_values v;
        v.in = r.op == "in";
        if (!v.in) {
            v.single = r.value->prepare(receiver, _specs);
            return v;
        }
        if (r.value) {
            auto list_spec = column_spec{receiver.keyspace, receiver.table, "in(" + receiver.name + ")",
                                         list_type(receiver.type, false)};
            v.single = r.value->prepare(list_spec, _specs);
            return v;
        }
        for (auto& t : r.in_values) {
            v.list.push_back(t->prepare(receiver, _specs));
        }
        return v;
    }

    column_spec tuple_spec(const std::vector<const column_definition*>& cols) {
        std::vector<data_type> types;
        std::string name = "(";
        for (size_t i = 0; i < cols.size(); ++i) {
            types.push_back(cols[i]->type);
            name += (i ? "," : "") + cols[i]->name;
        }
        return column_spec{_s->keyspace(), _s->table(), name + ")", tuple_type(types)};
    }

    void token_relation(select_statement& st, const raw_relation& r) {
        auto& pk = _s->partition_key();
        bool in_order = r.columns.size() == pk.size();
        for (size_t i = 0; in_order && i < pk.size(); ++i) {
            in_order = column(r.columns[i]).name == pk[i].name;
        }
        if (!in_order) {
            std::string names;
            for (auto& c : pk) {
                names += (names.empty() ? "" : ", ") + c.name;
            }
            throw invalid_request(fmt::format("The token() function must be applied to all partition key components "
                                              "or none of them: {}",
                                              names));
        }
        token_bound b;
        if (r.token_args) {
            if (r.token_args->size() != pk.size()) {
                throw invalid_request(fmt::format("Invalid number of arguments in call to function system.token: {} "
                                                  "required but {} provided",
                                                  pk.size(), r.token_args->size()));
            }
            for (size_t i = 0; i < pk.size(); ++i) {
                b.key.push_back((*r.token_args)[i]->prepare(spec_of(*_s, pk[i]), _specs));
            }
        } else {
            b.value = r.value->prepare(column_spec{_s->keyspace(), _s->table(), "partition key token", bigint_type()},
                                       _specs);
        }
        auto set = [&](std::optional<token_bound>& slot, bool inclusive) {
            if (slot) {
                throw invalid_request(fmt::format("More than one restriction was found for the {} bound on {}",
                                                  &slot == &st.token_start ? "start" : "end", r.text));
            }
            slot = b;
            slot->inclusive = inclusive;
        };
        if (r.op == "=") {
            set(st.token_start, true);
            set(st.token_end, true);
        } else if (r.op == ">" || r.op == ">=") {
            set(st.token_start, r.op == ">=");
        } else if (r.op == "<" || r.op == "<=") {
            set(st.token_end, r.op == "<=");
        } else {
            throw invalid_request(fmt::format("Unsupported restriction: {}", r.text));
        }
    }

    void where(select_statement& st) {
        auto& pk = _s->partition_key();
        std::vector<std::optional<relation_values>> pk_values(pk.size());
        std::vector<const raw_relation*> pk_relations(pk.size());
        std::vector<const raw_relation*> pk_other;
        bool has_token = false;
        bool needs_filtering = false;
        bool regular_restricted = false;
        for (auto& r : _raw.where) {
            if (r.op == "!=") {
                throw invalid_request(fmt::format("Unsupported \"!=\" relation: {}", r.text));
            }
            if (r.op == "like" || r.op == "is not") {
                throw invalid_request(fmt::format("Unsupported restriction: {}", r.text));
            }
            if (r.lhs == raw_relation::lhs_kind::token) {
                token_relation(st, r);
                has_token = true;
                continue;
            }
            std::vector<const column_definition*> cols;
            for (auto& n : r.columns) {
                cols.push_back(&column(n));
            }
            if (r.lhs == raw_relation::lhs_kind::tuple) {
                for (auto* c : cols) {
                    if (c->kind != column_kind::clustering_key) {
                        throw invalid_request(fmt::format("Multi-column relations can only be applied to clustering "
                                                          "columns but was applied to: {}",
                                                          c->name));
                    }
                }
                clustering_restriction cr;
                for (auto* c : cols) {
                    cr.columns.push_back(c->position);
                }
                cr.op = op_of(r);
                cr.values = values_of(r, tuple_spec(cols));
                cr.text = r.text;
                cr.tuple = true;
                st.clustering.push_back(std::move(cr));
                continue;
            }
            auto& c = *cols[0];
            if (r.op == "contains" || r.op == "contains key") {
                if (!c.type->is_collection()) {
                    throw invalid_request(fmt::format("Cannot use {} on non-collection column {}",
                                                      r.op == "contains" ? "CONTAINS" : "CONTAINS KEY", c.name));
                }
                auto spec = r.op == "contains key" ? map_key_receiver(spec_of(*_s, c)) : element_receiver(spec_of(*_s, c));
                filter_relation f{{&c}, r.op, values_of(r, spec), r.text};
                st.filters.push_back(std::move(f));
                needs_filtering = true;
                regular_restricted = regular_restricted || !c.is_primary_key();
                continue;
            }
            if (c.kind == column_kind::partition_key && (r.op == "=" || r.op == "in") && !pk_relations[c.position]) {
                pk_relations[c.position] = &r;
                pk_values[c.position] = values_of(r, spec_of(*_s, c));
                continue;
            }
            if (c.kind == column_kind::partition_key) {
                pk_other.push_back(&r);
                continue;
            }
            if (c.kind == column_kind::clustering_key) {
                clustering_restriction cr{{c.position}, op_of(r), values_of(r, spec_of(*_s, c)), r.text};
                st.clustering.push_back(std::move(cr));
                continue;
            }
            if (c.type->is_multi_cell() && r.op != "contains" && r.op != "contains key") {
                throw invalid_request(fmt::format("Collection column '{}' ({}) cannot be restricted by a '{}' "
                                                  "relation",
                                                  c.name, c.type->cql_name(), r.op));
            }
            filter_relation f{{&c}, r.op, values_of(r, spec_of(*_s, c)), r.text};
            st.filters.push_back(std::move(f));
            needs_filtering = true;
            regular_restricted = regular_restricted || !c.is_static();
        }
        bool all_pk = std::all_of(pk_values.begin(), pk_values.end(), [](auto& v) { return v.has_value(); });
        if (all_pk && pk_other.empty() && !has_token) {
            st.partition_keys.emplace();
            for (size_t i = 0; i < pk.size(); ++i) {
                if (auto idx = pk_relations[i]->value ? pk_relations[i]->value->bind_index() : std::nullopt;
                    idx && pk_relations[i]->op == "=") {
                    st.pk_bind_indexes.push_back(uint16_t(*idx));
                }
                st.partition_keys->push_back(std::move(*pk_values[i]));
            }
            if (st.pk_bind_indexes.size() != pk.size()) {
                st.pk_bind_indexes.clear();
            }
        } else {
            // Partition key columns not all restricted by = or IN: each relation filters.
            for (size_t i = 0; i < pk.size(); ++i) {
                if (pk_relations[i]) {
                    filter_relation f{{&pk[i]}, pk_relations[i]->op, std::move(*pk_values[i]), pk_relations[i]->text};
                    st.filters.push_back(std::move(f));
                    needs_filtering = true;
                }
            }
            for (auto* r : pk_other) {
                auto& c = column(r->columns[0]);
                if (r->op == "in") {
                    throw invalid_request(fmt::format("Unsupported restriction: {}", r->text));
                }
                filter_relation f{{&c}, r->op, values_of(*r, spec_of(*_s, c)), r->text};
                st.filters.push_back(std::move(f));
                needs_filtering = true;
            }
            if (!st.clustering.empty()) {
                needs_filtering = true;
            }
        }
        if (!clustering_structure_ok(st.clustering)) {
            needs_filtering = true;
            st.clustering_filters = true;
        }
        if (needs_filtering && !_raw.allow_filtering) {
            throw filtering_required();
        }
        st.static_only_rows = st.clustering.empty() && !regular_restricted;
    }

    static restriction_op op_of(const raw_relation& r) {
        if (r.op == "=") {
            return restriction_op::eq;
        }
        if (r.op == "<") {
            return restriction_op::lt;
        }
        if (r.op == "<=") {
            return restriction_op::le;
        }
        if (r.op == ">") {
            return restriction_op::gt;
        }
        if (r.op == ">=") {
            return restriction_op::ge;
        }
        if (r.op == "in") {
            return restriction_op::in;
        }
        throw invalid_request(fmt::format("Unsupported restriction: {}", r.text));
    }

    // Whether the clustering relations select ranges (equalities or INs on a prefix, then bounds on the next
    // column); otherwise they can only filter.
    bool clustering_structure_ok(const std::vector<clustering_restriction>& rels) const {
        size_t n = _s->clustering_key().size();
        std::vector<int> eq(n, 0);
        std::optional<size_t> slice_first;
        for (auto& r : rels) {
            if (r.op == restriction_op::eq || r.op == restriction_op::in) {
                for (auto c : r.columns) {
                    if (eq[c]++) {
                        return false;
                    }
                }
            } else {
                if (slice_first && *slice_first != r.columns[0]) {
                    return false;
                }
                slice_first = r.columns[0];
            }
        }
        size_t k = 0;
        while (k < n && eq[k]) {
            ++k;
        }
        for (size_t i = k; i < n; ++i) {
            if (eq[i]) {
                return false;
            }
        }
        return !slice_first || *slice_first == k;
    }

    void order_by(select_statement& st) {
        if (_raw.order_by.empty()) {
            return;
        }
        if (!st.partition_keys) {
            throw invalid_request("ORDER BY is only supported when the partition key is restricted by an EQ or an IN.");
        }
        auto& ck = _s->clustering_key();
        std::optional<bool> reversed;
        for (size_t i = 0; i < _raw.order_by.size(); ++i) {
            auto& o = _raw.order_by[i];
            auto& c = column(o.column);
            if (c.kind != column_kind::clustering_key) {
                throw invalid_request(fmt::format("Order by is currently only supported on the clustered columns of "
                                                  "the PRIMARY KEY, got {}",
                                                  c.name));
            }
            if (c.position != i || i >= ck.size()) {
                throw invalid_request("Order by currently only supports the ordering of columns following their "
                                      "declared order in the PRIMARY KEY");
            }
            bool rev = o.descending != (c.order == clustering_order::desc);
            if (reversed && *reversed != rev) {
                throw invalid_request("Unsupported order by relation");
            }
            reversed = rev;
        }
        st.reversed = *reversed;
        st.ordered = true;
    }

    const raw_select_statement& _raw;
    schema_ptr _s;
    bind_specs _specs;
};

} // namespace

std::unique_ptr<cql_statement> raw_select_statement::prepare(const database& db, std::string_view ks) const {
    std::string k = keyspace.empty() ? std::string(ks) : keyspace;
    if (k.empty()) {
        throw invalid_request("No keyspace has been specified. USE a keyspace, or explicitly specify keyspace.tablename");
    }
    if (!db.find_keyspace(k)) {
        throw invalid_request(fmt::format("keyspace {} does not exist", k));
    }
    auto s = db.find_schema(k, table);
    if (!s) {
        throw invalid_request(fmt::format("table {} does not exist", table));
    }
    return preparer(*this, s).prepare();
}

} // namespace reef::cql
