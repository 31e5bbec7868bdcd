// Preparing INSERT, UPDATE and DELETE: names resolved against the table, terms checked against their columns, and
// Cassandra's refusals (ModificationStatement, UpdateStatement, DeleteStatement, Operation, ColumnCondition) with
// its messages.

#include "cql/modification_impl.hh"

#include "cql/cql_error.hh"
#include "cql/query_processor.hh"
#include "db/database.hh"

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <set>

namespace reef::cql {

namespace {

column_spec spec_of(const schema& s, const column_definition& c) {
    return column_spec{s.keyspace(), s.table(), c.name, c.type};
}

column_spec spec_named(const schema& s, std::string name, data_type t) {
    return column_spec{s.keyspace(), s.table(), std::move(name), std::move(t)};
}

std::string qualified(const schema& s) { return s.keyspace() + "." + s.table(); }

const column_definition& find_column(const schema& s, const std::string& name) {
    auto* c = s.find_column(name);
    if (!c) {
        throw invalid_request(fmt::format("Undefined column name {} in table {}", maybe_quote_identifier(name),
                                          qualified(s)));
    }
    return *c;
}

// The index of a static or regular column in its kind's list (the row's column_id).
column_id id_of(const schema& s, const column_definition& c) {
    auto& cols = c.is_static() ? s.static_columns() : s.regular_columns();
    for (size_t i = 0; i < cols.size(); ++i) {
        if (cols[i].name == c.name) {
            return column_id(i);
        }
    }
    throw std::logic_error("id_of: not a static or regular column: " + c.name);
}

bool is_list(const data_type& t) { return t->kind() == type_kind::list; }
bool is_set(const data_type& t) { return t->kind() == type_kind::set; }
bool is_map(const data_type& t) { return t->kind() == type_kind::map; }

std::string join_names(const std::vector<std::string>& names) {
    std::string s;
    for (size_t i = 0; i < names.size(); ++i) {
        s += (i ? ", " : "") + names[i];
    }
    return s;
}

prepared_operation base_op(const schema& s, const column_definition& c, op_kind k) {
    prepared_operation op;
    op.column = &c;
    op.is_static = c.is_static();
    op.id = id_of(s, c);
    op.kind = k;
    return op;
}

size_t field_index(const column_definition& c, const std::string& field) {
    auto& u = static_cast<const user_type_impl&>(*c.type);
    auto it = std::find(u.field_names().begin(), u.field_names().end(), field);
    if (it == u.field_names().end()) {
        throw invalid_request(fmt::format("UDT column {} does not have a field named {}", c.name, field));
    }
    return size_t(it - u.field_names().begin());
}

// One SET assignment (Operation.RawUpdate.prepare).
prepared_operation prepare_operation(const schema& s, const raw_operation& raw, bind_specs& specs) {
    auto& c = find_column(s, raw.column);
    if (c.is_primary_key()) {
        throw invalid_request(fmt::format("PRIMARY KEY part {} found in SET part", c.name));
    }
    auto spec = spec_of(s, c);
    const auto& t = c.type;
    switch (raw.kind) {
    case operation_kind::set: {
        if (t->is_counter()) {
            throw invalid_request(fmt::format("Cannot set the value of counter column {} (counters can only be "
                                              "incremented/decremented, not set)",
                                              c.name));
        }
        auto op = base_op(s, c, op_kind::assign);
        op.value = raw.value->prepare(spec, specs);
        return op;
    }
    case operation_kind::add:
    case operation_kind::subtract: {
        bool add = raw.kind == operation_kind::add;
        if (t->is_counter()) {
            auto op = base_op(s, c, op_kind::counter_add);
            op.value = raw.value->prepare(spec, specs);
            op.negate = !add;
            return op;
        }
        if (!t->is_collection()) {
            throw invalid_request(fmt::format("Invalid operation ({}) for non counter column {}", raw.text, c.name));
        }
        if (!t->is_multi_cell()) {
            throw invalid_request(fmt::format("Invalid operation ({}) for frozen collection column {}", raw.text,
                                              c.name));
        }
        if (is_list(t)) {
            auto op = base_op(s, c, add ? op_kind::list_append : op_kind::list_remove);
            op.value = raw.value->prepare(spec, specs);
            return op;
        }
        if (is_set(t)) {
            auto op = base_op(s, c, add ? op_kind::set_add : op_kind::set_remove);
            op.value = raw.value->prepare(spec, specs);
            return op;
        }
        if (add) {
            auto op = base_op(s, c, op_kind::map_put);
            op.value = raw.value->prepare(spec, specs);
            return op;
        }
        // m = m - {keys}: a set of the key type.
        auto op = base_op(s, c, op_kind::map_remove);
        op.value = raw.value->prepare(spec_named(s, c.name, set_type(t->key_type(), false)), specs);
        return op;
    }
    case operation_kind::prepend: {
        if (!t->is_collection() || t->is_counter()) {
            throw invalid_request(fmt::format("Invalid operation ({}) for non list column {}", raw.text, c.name));
        }
        if (!t->is_multi_cell()) {
            throw invalid_request(fmt::format("Invalid operation ({}) for frozen collection column {}", raw.text,
                                              c.name));
        }
        if (!is_list(t)) {
            throw invalid_request(fmt::format("Invalid operation ({}) for non list column {}", raw.text, c.name));
        }
        auto op = base_op(s, c, op_kind::list_prepend);
        op.value = raw.value->prepare(spec, specs);
        return op;
    }
    case operation_kind::set_element: {
        if (!is_list(t) && !is_map(t)) {
            throw invalid_request(fmt::format("Invalid operation ({}) for non collection column {}", raw.text,
                                              c.name));
        }
        if (!t->is_multi_cell()) {
            throw invalid_request(fmt::format("Invalid operation ({}) for frozen collection column {}", raw.text,
                                              c.name));
        }
        auto op = base_op(s, c, is_list(t) ? op_kind::list_set_index : op_kind::map_set_key);
        op.key = raw.key->prepare(is_list(t) ? list_index_receiver(spec) : map_key_receiver(spec), specs);
        op.value = raw.value->prepare(element_receiver(spec), specs);
        return op;
    }
    case operation_kind::set_field: {
        if (!t->is_user_type()) {
            throw invalid_request(fmt::format("Invalid operation ({}) for non-UDT column {}", raw.text, c.name));
        }
        if (!t->is_multi_cell()) {
            throw invalid_request(fmt::format("Invalid operation ({}) for frozen UDT column {}", raw.text, c.name));
        }
        auto op = base_op(s, c, op_kind::udt_set_field);
        op.field = field_index(c, raw.field);
        op.value = raw.value->prepare(udt_field_receiver(spec, op.field), specs);
        return op;
    }
    }
    throw std::logic_error("prepare_operation: unknown kind");
}

prepared_operation prepare_deletion(const schema& s, const raw_deletion& raw, bind_specs& specs) {
    auto& c = find_column(s, raw.column);
    if (c.is_primary_key()) {
        throw invalid_request(fmt::format("Invalid identifier {} for deletion (should not be a PRIMARY KEY part)",
                                          c.name));
    }
    auto spec = spec_of(s, c);
    if (raw.key) {
        if (!c.type->is_collection()) {
            throw invalid_request(fmt::format("Invalid deletion operation for non collection column {}", c.name));
        }
        if (!c.type->is_multi_cell()) {
            throw invalid_request(fmt::format("Invalid deletion operation for frozen collection column {}", c.name));
        }
        if (is_list(c.type)) {
            auto op = base_op(s, c, op_kind::del_list_index);
            op.key = raw.key->prepare(list_index_receiver(spec), specs);
            return op;
        }
        auto op = base_op(s, c, op_kind::del_key);
        op.key = raw.key->prepare(is_set(c.type) ? element_receiver(spec) : map_key_receiver(spec), specs);
        return op;
    }
    if (!raw.field.empty()) {
        if (!c.type->is_user_type()) {
            throw invalid_request(fmt::format("Invalid field deletion operation for non-UDT column {}", c.name));
        }
        if (!c.type->is_multi_cell()) {
            throw invalid_request(fmt::format("Frozen UDT column {} does not support field deletions", c.name));
        }
        auto op = base_op(s, c, op_kind::del_field);
        op.field = field_index(c, raw.field);
        return op;
    }
    return base_op(s, c, op_kind::del_column);
}

// The type a tuple relation's value has: a tuple of the columns' types.
data_type tuple_of(const std::vector<const column_definition*>& cols) {
    std::vector<data_type> types;
    for (auto* c : cols) {
        types.push_back(c->type);
    }
    return tuple_type(std::move(types));
}

std::string tuple_name(const std::vector<const column_definition*>& cols) {
    std::string s = "(";
    for (size_t i = 0; i < cols.size(); ++i) {
        s += (i ? "," : "") + cols[i]->name;
    }
    return s + ")";
}

key_restriction prepare_relation(const schema& s, const raw_key_relation& r, bind_specs& specs, const char* stmt) {
    key_restriction k;
    k.tuple = r.tuple;
    for (auto& name : r.columns) {
        k.columns.push_back(&find_column(s, name));
    }
    auto* first = k.columns.front();
    if (!first->is_primary_key()) {
        throw invalid_request(fmt::format("Non PRIMARY KEY columns found in where clause: {}", first->name));
    }
    if (first->kind == column_kind::partition_key) {
        if (r.tuple) {
            throw invalid_request("Multi-column relations can only be applied to clustering columns but was applied "
                                  "to: " + first->name);
        }
        if (r.op != "=" && r.op != "IN") {
            throw invalid_request(fmt::format("Only EQ and IN relation are supported on the partition key (unless you "
                                              "use the token() function) for {} statements",
                                              stmt));
        }
    }
    if (r.op.starts_with("CONTAINS")) {
        throw invalid_request(fmt::format("Cannot use {} on non-collection column {}", r.op, first->name));
    }
    for (size_t i = 0; i < k.columns.size(); ++i) {
        auto* c = k.columns[i];
        if (c->kind != column_kind::clustering_key && r.tuple) {
            throw invalid_request("Multi-column relations can only be applied to clustering columns but was applied "
                                  "to: " + c->name);
        }
        if (r.tuple && c->position != first->position + i) {
            throw invalid_request(fmt::format("Clustering columns must appear in the PRIMARY KEY order in "
                                              "multi-column relations: {}",
                                              tuple_name(k.columns)));
        }
    }
    k.op = r.op;
    column_spec receiver = r.tuple ? spec_named(s, tuple_name(k.columns), tuple_of(k.columns))
                                   : spec_of(s, *first);
    if (r.op == "IN") {
        if (r.in_marker) {
            auto list = list_type(receiver.type->freeze(), false);
            k.in_marker = r.value->prepare(spec_named(s, "in(" + receiver.name + ")", list), specs);
        } else {
            for (auto& v : r.in_values) {
                k.values.push_back(v->prepare(receiver, specs));
            }
        }
    } else {
        k.values.push_back(r.value->prepare(receiver, specs));
        if (r.op == "=" && !r.tuple) {
            k.marker = r.value->bind_index();
        }
    }
    return k;
}

prepared_condition prepare_condition(const schema& s, const raw_condition& r, bind_specs& specs) {
    auto& c = find_column(s, r.column);
    if (c.is_primary_key()) {
        throw invalid_request(fmt::format("PRIMARY KEY column '{}' cannot have IF conditions", c.name));
    }
    prepared_condition pc;
    pc.column = &c;
    pc.is_static = c.is_static();
    pc.id = id_of(s, c);
    pc.op = r.op;
    auto spec = spec_of(s, c);
    column_spec value_spec = spec;
    if (r.key) {
        if (!is_list(c.type) && !is_map(c.type)) {
            throw invalid_request(fmt::format("Invalid element access syntax for non-collection column {}", c.name));
        }
        pc.key = r.key->prepare(is_list(c.type) ? list_index_receiver(spec) : map_key_receiver(spec), specs);
        value_spec = element_receiver(spec);
    } else if (!r.field.empty()) {
        if (!c.type->is_user_type()) {
            throw invalid_request(fmt::format("Invalid field selection: {} of type {} is not a user type", c.name,
                                              receiver_type_name(c.type)));
        }
        pc.field = field_index(c, r.field);
        value_spec = udt_field_receiver(spec, *pc.field);
    }
    pc.value_type = value_spec.type->freeze();
    if (r.op.starts_with("CONTAINS")) {
        throw invalid_request(fmt::format("Unsupported operator {} in condition on {}", r.op, c.name));
    }
    if (r.op == "IN") {
        if (r.in_marker) {
            pc.in_marker = r.value->prepare(spec_named(s, "in(" + value_spec.name + ")",
                                                       list_type(pc.value_type, false)),
                                            specs);
        } else {
            for (auto& v : r.in_values) {
                pc.in_values.push_back(v->prepare(value_spec, specs));
            }
        }
    } else {
        pc.value = r.value->prepare(value_spec, specs);
    }
    return pc;
}

// Checks the partition key and clustering restrictions of an UPDATE or DELETE (or the columns of an INSERT).
void check_key_restrictions(const schema& s, modification_impl& st, const char* stmt_name, bool deletion) {
    std::vector<std::string> missing;
    std::vector<key_restriction> pk(s.partition_key().size());
    std::vector<bool> seen(s.partition_key().size());
    std::vector<key_restriction> clustering;
    std::vector<key_restriction> all = std::move(st.clustering);
    st.clustering.clear();
    for (auto& k : all) {
        auto* c = k.columns.front();
        if (c->kind == column_kind::partition_key) {
            if (seen[c->position]) {
                throw invalid_request(fmt::format("{} cannot be restricted by more than one relation if it includes an "
                                                  "Equal",
                                                  c->name));
            }
            seen[c->position] = true;
            pk[c->position] = std::move(k);
        } else {
            clustering.push_back(std::move(k));
        }
    }
    for (size_t i = 0; i < seen.size(); ++i) {
        if (!seen[i]) {
            missing.push_back(s.partition_key()[i].name);
        }
    }
    if (!missing.empty()) {
        throw invalid_request("Some partition key parts are missing: " + join_names(missing));
    }
    st.partition_key = std::move(pk);
    // Clustering: equalities (or INs) covering a prefix; a DELETE may end in slices.
    std::vector<int> restricted(s.clustering_key().size(), 0);
    bool slice = false;
    for (auto& k : clustering) {
        bool eq = k.op == "=" || k.op == "IN";
        if (!eq) {
            if (!deletion) {
                throw invalid_request(fmt::format("Slice restrictions are not supported on the clustering columns in "
                                                  "{} statements",
                                                  stmt_name));
            }
            slice = true;
        }
        for (auto* c : k.columns) {
            restricted[c->position] = eq ? 1 : 2;
        }
    }
    size_t prefix = 0;
    while (prefix < restricted.size() && restricted[prefix] == 1) {
        ++prefix;
    }
    st.full_clustering = prefix == restricted.size() && !slice;
    st.clustering_range = deletion && !clustering.empty() && !st.full_clustering;
    if (!st.full_clustering) {
        missing.clear();
        bool any = std::any_of(restricted.begin(), restricted.end(), [](int r) { return r != 0; });
        if (!deletion || !any) {
            for (size_t i = 0; i < restricted.size(); ++i) {
                if (!restricted[i]) {
                    missing.push_back(s.clustering_key()[i].name);
                }
            }
        }
        st.clustering_missing = join_names(missing);
    }
    st.clustering = std::move(clustering);
}

} // namespace

bool modification_impl::static_only() const {
    return !operations.empty() &&
           std::all_of(operations.begin(), operations.end(), [](auto& op) { return op.is_static; });
}

int64_t next_server_timestamp() {
    thread_local int64_t last = 0;
    int64_t now = std::chrono::duration_cast<std::chrono::microseconds>(
                      std::chrono::system_clock::now().time_since_epoch())
                      .count();
    last = std::max(now, last + 1);
    return last;
}

std::shared_ptr<const modification_impl> raw_modification_statement::prepare_with(const database& db,
                                                                                 std::string_view current,
                                                                                 bind_specs& specs) const {
    std::string ks = keyspace.empty() ? std::string(current) : keyspace;
    if (ks.empty()) {
        throw invalid_request("No keyspace has been specified. USE a keyspace, or explicitly specify keyspace.tablename");
    }
    if (!db.find_keyspace(ks)) {
        throw invalid_request(fmt::format("keyspace {} does not exist", ks));
    }
    auto s = db.find_schema(ks, table);
    if (!s) {
        throw invalid_request(fmt::format("table {} does not exist", table));
    }
    auto st = std::make_shared<modification_impl>();
    st->schema = s;
    st->type = type;
    st->counter = std::any_of(s->regular_columns().begin(), s->regular_columns().end(),
                              [](auto& c) { return c.type->is_counter(); }) ||
                  std::any_of(s->static_columns().begin(), s->static_columns().end(),
                              [](auto& c) { return c.type->is_counter(); });
    const char* stmt_name = type == statement_type::insert ? "INSERT" : type == statement_type::update ? "UPDATE" : "DELETE";
    if (type == statement_type::insert && st->counter) {
        throw invalid_request("INSERT statements are not allowed on counter tables, use UPDATE instead");
    }
    // USING
    if (attrs.timestamp) {
        st->timestamp = attrs.timestamp->prepare(spec_named(*s, "[timestamp]", bigint_type()), specs);
    }
    if (attrs.ttl) {
        st->ttl = attrs.ttl->prepare(spec_named(*s, "[ttl]", int32_type()), specs);
    }
    if (type == statement_type::insert) {
        if (json) {
            st->json = json_value->prepare(spec_named(*s, "[json]", text_type()), specs);
            st->json_default_unset = json_default_unset;
            for (auto& c : s->partition_key()) {
                key_restriction k;
                k.columns.push_back(&c);
                k.op = "=";
                st->clustering.push_back(std::move(k));
            }
            for (auto& c : s->clustering_key()) {
                key_restriction k;
                k.columns.push_back(&c);
                k.op = "=";
                st->clustering.push_back(std::move(k));
            }
            for (auto* c : s->columns_in_declaration_order()) {
                if (!c->is_primary_key()) {
                    st->operations.push_back(base_op(*s, *c, op_kind::assign));
                }
            }
        } else {
            if (insert_columns.size() != insert_values.size()) {
                throw invalid_request("Unmatched column names/values");
            }
            std::set<std::string> seen;
            for (size_t i = 0; i < insert_columns.size(); ++i) {
                auto& c = find_column(*s, insert_columns[i]);
                if (!seen.insert(c.name).second) {
                    throw invalid_request(fmt::format("Multiple definitions found for column {}", c.name));
                }
                if (c.is_primary_key()) {
                    key_restriction k;
                    k.columns.push_back(&c);
                    k.op = "=";
                    k.values.push_back(insert_values[i]->prepare(spec_of(*s, c), specs));
                    k.marker = insert_values[i]->bind_index();
                    st->clustering.push_back(std::move(k));
                } else {
                    auto op = base_op(*s, c, op_kind::assign);
                    op.value = insert_values[i]->prepare(spec_of(*s, c), specs);
                    st->operations.push_back(std::move(op));
                }
            }
        }
        check_key_restrictions(*s, *st, stmt_name, false);
    } else {
        for (auto& r : where) {
            st->clustering.push_back(prepare_relation(*s, r, specs, stmt_name));
        }
        if (type == statement_type::update) {
            for (auto& o : operations) {
                st->operations.push_back(prepare_operation(*s, o, specs));
            }
        } else {
            for (auto& d : deletions) {
                st->operations.push_back(prepare_deletion(*s, d, specs));
            }
        }
        check_key_restrictions(*s, *st, stmt_name, type == statement_type::del);
    }
    // What the clustering restrictions allow.
    bool has_regular = std::any_of(st->operations.begin(), st->operations.end(), [](auto& op) { return !op.is_static; });
    if (!st->full_clustering && !s->clustering_key().empty()) {
        if (type == statement_type::del) {
            if (!st->operations.empty() && has_regular) {
                if (st->clustering_range) {
                    throw invalid_request("Range deletions are not supported for specific columns");
                }
                throw invalid_request("Some clustering keys are missing: " + st->clustering_missing);
            }
        } else if (has_regular || st->operations.empty() || !st->clustering.empty()) {
            throw invalid_request("Some clustering keys are missing: " + st->clustering_missing);
        }
    }
    // IF
    st->if_exists = if_exists;
    st->if_not_exists = if_not_exists;
    for (auto& c : conditions) {
        st->conditions.push_back(prepare_condition(*s, c, specs));
    }
    if (st->has_conditions()) {
        if (attrs.timestamp) {
            throw invalid_request("Cannot provide custom timestamp for conditional updates");
        }
        if (st->counter) {
            throw invalid_request("Conditional updates are not supported on counter tables");
        }
        for (auto& k : st->partition_key) {
            if (k.op == "IN") {
                throw invalid_request(fmt::format("IN on the partition key is not supported with conditional {}",
                                                  type == statement_type::del ? "deletions" : "updates"));
            }
        }
        for (auto& k : st->clustering) {
            if (k.op == "IN") {
                throw invalid_request(fmt::format("IN on the clustering key columns is not supported with conditional "
                                                  "{}",
                                                  type == statement_type::del ? "deletions" : "updates"));
            }
        }
        if (st->clustering_range) {
            throw invalid_request("DELETE statements must restrict all PRIMARY KEY columns with equality relations in "
                                  "order to use IF conditions");
        }
    }
    if (st->counter) {
        if (attrs.timestamp) {
            throw invalid_request("Cannot provide custom timestamp for counter updates");
        }
        if (attrs.ttl) {
            throw invalid_request("Cannot provide custom TTL for counter updates");
        }
    }
    for (auto& op : st->operations) {
        if (op.kind == op_kind::counter_add || op.kind == op_kind::list_remove || op.kind == op_kind::list_set_index ||
            op.kind == op_kind::del_list_index) {
            st->reads = true;
        }
    }
    return st;
}

std::unique_ptr<cql_statement> raw_modification_statement::prepare(const database& db, std::string_view ks) const {
    bind_specs specs(markers);
    auto impl = prepare_with(db, ks, specs);
    auto mutable_impl = std::const_pointer_cast<modification_impl>(impl);
    mutable_impl->bind_variables = specs.specs();
    // partition_key_bind_indexes: each partition key column given by a marker of its own (`k = ?`).
    std::vector<uint16_t> indexes;
    for (auto& k : impl->partition_key) {
        if (!k.marker) {
            indexes.clear();
            break;
        }
        indexes.push_back(uint16_t(*k.marker));
    }
    mutable_impl->partition_key_bind_indexes = std::move(indexes);
    return std::make_unique<modification_statement>(impl);
}

modification_statement::modification_statement(std::shared_ptr<const modification_impl> i) : _impl(std::move(i)) {}
modification_statement::~modification_statement() = default;

std::vector<column_spec> modification_statement::bind_variables() const { return _impl->bind_variables; }
std::vector<uint16_t> modification_statement::partition_key_bind_indexes() const {
    return _impl->partition_key_bind_indexes;
}
const schema_ptr& modification_statement::schema() const noexcept { return _impl->schema; }
statement_type modification_statement::type() const noexcept { return _impl->type; }
bool modification_statement::is_counter() const noexcept { return _impl->counter; }
bool modification_statement::has_conditions() const noexcept { return _impl->has_conditions(); }
bool modification_statement::has_timestamp() const noexcept { return bool(_impl->timestamp); }

future<result_message> modification_statement::execute(query_processor& qp, client_state&,
                                                       const query_options& options) const {
    std::vector<modification_execution> writes;
    writes.push_back(modification_execution{_impl, positional_options(_impl->bind_variables, options)});
    co_return co_await execute_modifications(qp, std::move(writes), std::nullopt, false);
}

} // namespace reef::cql
