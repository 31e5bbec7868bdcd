// CREATE TYPE, ALTER TYPE (ADD, RENAME) and DROP TYPE, with IF [NOT] EXISTS, as Cassandra 5.0 answers them. ALTER
// TYPE also moves the types and tables that use the type to its new version.
#include "cql/ddl_statements.hh"

#include <fmt/format.h>

#include <set>

namespace reef::cql {

namespace {

schema_change type_change(schema_change::change_type type, const std::string& keyspace, const std::string& name) {
    schema_change c;
    c.change = type;
    c.target = schema_change::target_type::type;
    c.keyspace = keyspace;
    c.name = name;
    return c;
}

const user_type_impl& as_user_type(const data_type& t) { return dynamic_cast<const user_type_impl&>(*t); }

// Whether t is, or contains, the user type ks.name.
bool type_uses(const data_type& t, const std::string& ks, const std::string& name) {
    if (auto* ut = dynamic_cast<const user_type_impl*>(t.get()); ut && ut->keyspace() == ks && ut->type_name() == name) {
        return true;
    }
    return std::any_of(t->field_types().begin(), t->field_types().end(),
                       [&](const data_type& f) { return type_uses(f, ks, name); });
}

// The user types of `keyspace`, by name.
std::map<std::string, data_type> user_types_of(const database& db, const std::string& keyspace) {
    std::map<std::string, data_type> out;
    for (auto& t : db.types_of(keyspace)) {
        out.emplace(as_user_type(t).type_name(), t);
    }
    return out;
}

// ---- CREATE TYPE ----

class create_type_statement final : public cql_statement {
public:
    create_type_statement(create_type_syntax syntax, std::string keyspace)
        : _syntax(std::move(syntax)), _keyspace(std::move(keyspace)) {}

    future<result_message> execute(query_processor& qp, client_state&, const query_options&) const override {
        auto& db = qp.db();
        auto& name = _syntax.name.name;
        if (!db.find_keyspace(_keyspace)) {
            throw ddl::keyspace_missing(_keyspace);
        }
        ddl::refuse_system_keyspace(_keyspace);
        if (db.find_type(_keyspace, name)) {
            if (_syntax.if_not_exists) {
                co_return result_message(void_result{});
            }
            throw invalid_request(fmt::format("A user type with name '{}' already exists", name));
        }
        data_type t;
        try {
            t = build_user_type(_syntax, _keyspace, ddl::types_of(db, _keyspace));
        } catch (const cql_parse_error& e) {
            throw ddl::invalid_definition(e);
        }
        for (auto& f : as_user_type(t).declared_field_types()) {
            if (f->is_user_type() && f->is_multi_cell()) {
                throw invalid_request("A user type cannot contain non-frozen UDTs");
            }
            if (f->is_counter()) {
                throw invalid_request("A user type cannot contain counters");
            }
        }
        co_await ddl::run_change(db.create_type(t));
        co_return co_await ddl::announce(qp, type_change(schema_change::change_type::created, _keyspace, name));
    }

private:
    create_type_syntax _syntax;
    std::string _keyspace;
};

// ---- ALTER TYPE ----

struct alter_type_syntax {
    bool if_exists = false;
    cql_qualified_name name;
    bool alter_field_type = false;
    bool if_field_check = false;
    std::vector<field_syntax> added;
    std::vector<std::pair<std::string, std::string>> renamed;
};

class alter_type_statement final : public cql_statement {
public:
    alter_type_statement(alter_type_syntax syntax, std::string keyspace)
        : _syntax(std::move(syntax)), _keyspace(std::move(keyspace)) {}

    future<result_message> execute(query_processor& qp, client_state&, const query_options&) const override {
        auto& db = qp.db();
        auto& name = _syntax.name.name;
        auto old = db.find_type(_keyspace, name);
        if (!old) {
            if (_syntax.if_exists) {
                co_return result_message(void_result{});
            }
            throw ddl::type_missing(_keyspace, name);
        }
        ddl::refuse_system_keyspace(_keyspace);
        if (_syntax.alter_field_type) {
            throw invalid_request("Altering field types is no longer supported");
        }
        auto altered = altered_type(db, as_user_type(old));
        if (!altered) {
            co_return result_message(void_result{});
        }
        co_await ddl::run_change(db.create_type(altered, true));
        co_await move_users(db);
        co_return co_await ddl::announce(qp, type_change(schema_change::change_type::updated, _keyspace, name));
    }

private:
    data_type altered_type(const database& db, const user_type_impl& old) const {
        auto names = old.field_names();
        auto types = old.declared_field_types();
        bool changed = false;
        auto qualified = _keyspace + "." + old.type_name();
        for (auto& f : _syntax.added) {
            if (std::find(names.begin(), names.end(), f.name) != names.end()) {
                if (_syntax.if_field_check) {
                    continue;
                }
                throw invalid_request(fmt::format("Cannot add new field {} to type {}: a field with name {} already exists",
                                                  f.name, qualified, f.name));
            }
            data_type t;
            try {
                t = f.type.resolve(ddl::types_of(db, _keyspace));
            } catch (const cql_parse_error& e) {
                throw ddl::invalid_definition(e);
            }
            if (t->is_user_type() && t->is_multi_cell()) {
                throw invalid_request("A user type cannot contain non-frozen UDTs");
            }
            if (type_uses(t, _keyspace, old.type_name())) {
                throw invalid_request(fmt::format("Cannot add new field {} of type {} to user type {} as it would "
                                                  "create a circular reference",
                                                  f.name, t->cql_name(), qualified));
            }
            names.push_back(f.name);
            types.push_back(t);
            changed = true;
        }
        for (auto& [from, to] : _syntax.renamed) {
            auto it = std::find(names.begin(), names.end(), from);
            if (it == names.end()) {
                if (_syntax.if_field_check) {
                    continue;
                }
                throw invalid_request(fmt::format("Unkown field {} in user type {}", from, qualified));
            }
            if (std::find(names.begin(), names.end(), to) != names.end()) {
                throw invalid_request(fmt::format("Duplicate field name {} in type {}", to, qualified));
            }
            *it = to;
            changed = true;
        }
        if (!changed) {
            return nullptr;
        }
        return user_type(_keyspace, old.type_name(), std::move(names), std::move(types), true);
    }

    // The types and tables of the keyspace that name the altered type get its new version: each is rebuilt from
    // its CQL text against the keyspace's current types, dependents after what they depend on.
    future<> move_users(database& db) const {
        auto resolver = [&db, this](std::string_view ks, std::string_view n) -> data_type {
            auto t = db.find_type(ks.empty() ? _keyspace : std::string(ks), n);
            if (!t) {
                throw type_parse_error("unknown user type " + std::string(n));
            }
            return t;
        };
        std::set<std::string> changed{_syntax.name.name};
        bool more = true;
        while (more) {
            more = false;
            for (auto& [type_name, t] : user_types_of(db, _keyspace)) {
                if (changed.contains(type_name)) {
                    continue;
                }
                auto& ut = as_user_type(t);
                bool uses = std::any_of(changed.begin(), changed.end(), [&](auto& c) { return type_uses(t, _keyspace, c); });
                if (!uses) {
                    continue;
                }
                std::vector<data_type> fields;
                for (auto& f : ut.declared_field_types()) {
                    fields.push_back(parse_cql_type(f->cql_name(), resolver));
                }
                auto moved = user_type(_keyspace, type_name, ut.field_names(), std::move(fields), true);
                co_await ddl::run_change(db.create_type(moved, true));
                changed.insert(type_name);
                more = true;
            }
        }
        for (auto& s : db.tables_of(_keyspace)) {
            bool uses = false;
            for (auto* c : s->columns_in_declaration_order()) {
                uses |= std::any_of(changed.begin(), changed.end(), [&](auto& n) { return type_uses(c->type, _keyspace, n); });
            }
            if (!uses) {
                continue;
            }
            schema_builder b(_keyspace, s->table());
            b.with_id(s->id());
            for (auto* c : s->columns_in_declaration_order()) {
                b.with_column(c->name, parse_cql_type(c->type->cql_name(), resolver), c->kind, c->order);
            }
            b.with_options(s->options());
            auto moved = b.build();
            co_await ddl::run_change(db.alter_table(moved));
        }
    }

    alter_type_syntax _syntax;
    std::string _keyspace;
};

// ---- DROP TYPE ----

struct drop_type_syntax {
    bool if_exists = false;
    cql_qualified_name name;
};

class drop_type_statement final : public cql_statement {
public:
    drop_type_statement(drop_type_syntax syntax, std::string keyspace)
        : _syntax(std::move(syntax)), _keyspace(std::move(keyspace)) {}

    future<result_message> execute(query_processor& qp, client_state&, const query_options&) const override {
        auto& db = qp.db();
        auto& name = _syntax.name.name;
        if (!db.find_type(_keyspace, name)) {
            if (_syntax.if_exists) {
                co_return result_message(void_result{});
            }
            throw ddl::type_missing(_keyspace, name);
        }
        ddl::refuse_system_keyspace(_keyspace);
        std::vector<std::string> types, tables;
        for (auto& [other, t] : user_types_of(db, _keyspace)) {
            if (other != name && type_uses(t, _keyspace, name)) {
                types.push_back(other);
            }
        }
        for (auto& s : db.tables_of(_keyspace)) {
            auto cols = s->columns_in_declaration_order();
            if (std::any_of(cols.begin(), cols.end(), [&](auto* c) { return type_uses(c->type, _keyspace, name); })) {
                tables.push_back(s->table());
            }
        }
        auto refuse = [&](std::string_view what, const std::vector<std::string>& users) {
            throw invalid_request(fmt::format("Cannot drop user type '{}.{}' as it is still used by {} {}", _keyspace,
                                              name, what, fmt::join(users, ", ")));
        };
        if (!types.empty()) {
            refuse("user types", types);
        }
        if (!tables.empty()) {
            refuse("tables", tables);
        }
        co_await ddl::run_change(db.drop_type(_keyspace, name));
        co_return co_await ddl::announce(qp, type_change(schema_change::change_type::dropped, _keyspace, name));
    }

private:
    drop_type_syntax _syntax;
    std::string _keyspace;
};

} // namespace

std::unique_ptr<raw_statement> parse_create_type_statement(cql_token_stream& ts) {
    auto syntax = parse_create_type(ts);
    auto given = syntax.name.keyspace;
    return std::make_unique<ddl::keyspace_bound_raw<create_type_syntax, create_type_statement>>(std::move(syntax),
                                                                                                std::move(given));
}

std::unique_ptr<raw_statement> parse_alter_type_statement(cql_token_stream& ts) {
    alter_type_syntax s;
    s.if_exists = parse_if_exists(ts);
    s.name = parse_qualified_name(ts, "a type name");
    if (ts.accept_keyword("add")) {
        s.if_field_check = parse_if_not_exists(ts);
        field_syntax f;
        f.token = ts.peek();
        f.name = ts.expect_name("a field name");
        f.type = parse_type_syntax(ts);
        s.added.push_back(std::move(f));
    } else if (ts.accept_keyword("rename")) {
        s.if_field_check = parse_if_exists(ts);
        do {
            auto from = ts.expect_name("a field name");
            ts.expect_keyword("to");
            s.renamed.emplace_back(std::move(from), ts.expect_name("a field name"));
        } while (ts.accept_keyword("and"));
    } else if (ts.accept_keyword("alter")) {
        s.alter_field_type = true;
        ts.expect_name("a field name");
        ts.expect_keyword("type");
        parse_type_syntax(ts);
    } else {
        ts.fail("ADD, RENAME or ALTER");
    }
    auto given = s.name.keyspace;
    return std::make_unique<ddl::keyspace_bound_raw<alter_type_syntax, alter_type_statement>>(std::move(s),
                                                                                              std::move(given));
}

std::unique_ptr<raw_statement> parse_drop_type_statement(cql_token_stream& ts) {
    drop_type_syntax s;
    s.if_exists = parse_if_exists(ts);
    s.name = parse_qualified_name(ts, "a type name");
    auto given = s.name.keyspace;
    return std::make_unique<ddl::keyspace_bound_raw<drop_type_syntax, drop_type_statement>>(std::move(s),
                                                                                            std::move(given));
}

} // namespace reef::cql
