// DESCRIBE: the statement's forms, their rows (keyspace_name, type, name[, create_statement] as text, in the
// result columns system.describe gives them), and the CREATE statements Cassandra 5.0 writes.
#include "cql/describe_statement.hh"

#include "cql/cql_error.hh"
#include "cql/query_processor.hh"
#include "cql/schema_grammar.hh"
#include "db/database.hh"
#include "db/schema_tables.hh"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace reef::cql {

namespace {

std::string q(std::string_view id) { return maybe_quote_identifier(id); }

struct describe_syntax {
    enum class form { keyspaces, tables, types, functions, aggregates, keyspace, table, type, schema, cluster, name,
                      missing_kind };
    form what = form::keyspaces;
    // SCHEMA: FULL (system keyspaces too); KEYSPACE: ONLY (the keyspace's own statement).
    bool full = false;
    bool only = false;
    cql_qualified_name name;
    std::string kind_word;  // INDEX, MATERIALIZED VIEW, FUNCTION, AGGREGATE: what was asked for
};

bool lower_less(const std::string& a, const std::string& b) {
    return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end(), [](char x, char y) {
        return std::tolower(uint8_t(x)) < std::tolower(uint8_t(y));
    });
}

std::vector<std::string> sorted(std::vector<std::string> v) {
    std::stable_sort(v.begin(), v.end(), lower_less);
    return v;
}

const user_type_impl& as_user_type(const data_type& t) { return dynamic_cast<const user_type_impl&>(*t); }

bool type_uses(const data_type& t, const std::string& ks, const std::string& name) {
    if (auto* ut = dynamic_cast<const user_type_impl*>(t.get()); ut && ut->keyspace() == ks && ut->type_name() == name) {
        return true;
    }
    return std::any_of(t->field_types().begin(), t->field_types().end(),
                       [&](const data_type& f) { return type_uses(f, ks, name); });
}

// A keyspace's types, each after the types it uses (then by name), so the statements run in order.
std::vector<data_type> types_in_order(const database& db, const std::string& keyspace) {
    auto left = db.types_of(keyspace);
    std::stable_sort(left.begin(), left.end(),
                     [](auto& a, auto& b) { return lower_less(as_user_type(a).type_name(), as_user_type(b).type_name()); });
    std::vector<data_type> out;
    while (!left.empty()) {
        for (auto it = left.begin(); it != left.end(); ++it) {
            auto& ut = as_user_type(*it);
            bool waits = std::any_of(left.begin(), left.end(), [&](auto& other) {
                auto& o = as_user_type(other);
                return o.type_name() != ut.type_name() &&
                       std::any_of(ut.field_types().begin(), ut.field_types().end(),
                                   [&](auto& f) { return type_uses(f, keyspace, o.type_name()); });
            });
            if (!waits) {
                out.push_back(*it);
                left.erase(it);
                break;
            }
        }
    }
    return out;
}

std::vector<schema_ptr> tables_in_order(const database& db, const std::string& keyspace) {
    auto tables = db.tables_of(keyspace);
    std::stable_sort(tables.begin(), tables.end(), [](auto& a, auto& b) { return lower_less(a->table(), b->table()); });
    return tables;
}

column_spec text_column(std::string name) { return column_spec{"system", "describe", std::move(name), text_type()}; }

std::optional<bytes> cell(std::string_view s) { return to_bytes(s); }

class describe_statement final : public cql_statement {
public:
    explicit describe_statement(describe_syntax syntax) : _syntax(std::move(syntax)) {}

    std::vector<column_spec> result_columns() const override {
        using form = describe_syntax::form;
        switch (_syntax.what) {
        case form::cluster:
            return {text_column("cluster"), text_column("partitioner"), text_column("snitch")};
        case form::keyspaces:
        case form::tables:
        case form::types:
        case form::functions:
        case form::aggregates:
            return {text_column("keyspace_name"), text_column("type"), text_column("name")};
        default:
            return {text_column("keyspace_name"), text_column("type"), text_column("name"),
                    text_column("create_statement")};
        }
    }

    future<result_message> execute(query_processor& qp, client_state& state, const query_options&) const override {
        result_metadata md;
        md.columns = result_columns();
        result_set rs(std::move(md));
        fill(qp.db(), state, rs);
        co_return result_message(std::move(rs));
    }

private:
    using form = describe_syntax::form;

    std::string keyspace_for(const client_state& state) const {
        if (!_syntax.name.keyspace.empty()) {
            return _syntax.name.keyspace;
        }
        if (state.keyspace.empty()) {
            throw invalid_request("No keyspace specified and no current keyspace");
        }
        return state.keyspace;
    }

    static void element(result_set& rs, const std::string& ks, std::string_view type, const std::string& name,
                        const std::string& statement) {
        rs.add_row({cell(q(ks)), cell(type), cell(q(name)), cell(statement)});
    }

    static void whole_keyspace(const database& db, result_set& rs, const std::string& ks, bool only) {
        element(rs, ks, "keyspace", ks, describe_keyspace(*db.find_keyspace(ks)));
        if (only) {
            return;
        }
        for (auto& t : types_in_order(db, ks)) {
            element(rs, ks, "type", as_user_type(t).type_name(), describe_type(as_user_type(t)));
        }
        for (auto& s : tables_in_order(db, ks)) {
            element(rs, ks, "table", s->table(), describe_table(*s));
        }
    }

    // Keyspaces in name order; system ones only when asked (and never the virtual one, which CQL cannot create).
    static std::vector<std::string> keyspaces(const database& db, bool with_system) {
        std::vector<std::string> out;
        for (auto& ks : sorted(db.keyspace_names())) {
            if (with_system ? ks != schema_tables::system_virtual_schema_keyspace
                            : !schema_tables::is_system_keyspace(ks)) {
                out.push_back(ks);
            }
        }
        return out;
    }

    void fill(const database& db, const client_state& state, result_set& rs) const {
        auto& name = _syntax.name.name;
        switch (_syntax.what) {
        case form::keyspaces:
            for (auto& ks : sorted(db.keyspace_names())) {
                rs.add_row({cell(q(ks)), cell("keyspace"), cell(q(ks))});
            }
            return;
        case form::tables:
            for (auto& ks : sorted(db.keyspace_names())) {
                for (auto& s : tables_in_order(db, ks)) {
                    rs.add_row({cell(q(ks)), cell("table"), cell(q(s->table()))});
                }
            }
            return;
        case form::types:
            for (auto& ks : sorted(db.keyspace_names())) {
                for (auto& t : types_in_order(db, ks)) {
                    rs.add_row({cell(q(ks)), cell("type"), cell(q(as_user_type(t).type_name()))});
                }
            }
            return;
        case form::functions:
        case form::aggregates:
            return;
        case form::cluster:
            rs.add_row({cell(db.config().cluster_name), cell("org.apache.cassandra.dht.Murmur3Partitioner"),
                        cell("org.apache.cassandra.locator.SimpleSnitch")});
            return;
        case form::schema:
            for (auto& ks : keyspaces(db, _syntax.full)) {
                whole_keyspace(db, rs, ks, false);
            }
            return;
        case form::keyspace: {
            auto ks = name.empty() ? keyspace_for(state) : name;
            if (!db.find_keyspace(ks)) {
                throw invalid_request(fmt::format("'{}' not found in keyspaces", ks));
            }
            whole_keyspace(db, rs, ks, _syntax.only);
            return;
        }
        case form::table: {
            auto ks = keyspace_for(state);
            auto s = db.find_schema(ks, name);
            if (!s) {
                throw invalid_request(fmt::format("Table '{}' not found in keyspace '{}'", name, ks));
            }
            element(rs, ks, "table", name, describe_table(*s));
            return;
        }
        case form::type: {
            auto ks = keyspace_for(state);
            auto t = db.find_type(ks, name);
            if (!t) {
                throw invalid_request(fmt::format("User defined type '{}' not found in '{}'", name, ks));
            }
            element(rs, ks, "type", name, describe_type(as_user_type(t)));
            return;
        }
        case form::name: {
            // A keyspace first, then a table of the named (or current) keyspace.
            if (_syntax.name.keyspace.empty() && db.find_keyspace(name)) {
                whole_keyspace(db, rs, name, false);
                return;
            }
            auto ks = keyspace_for(state);
            if (auto s = db.find_schema(ks, name)) {
                element(rs, ks, "table", name, describe_table(*s));
                return;
            }
            throw invalid_request(fmt::format("'{}' not found in keyspace '{}'", name, ks));
        }
        case form::missing_kind:
            throw invalid_request(fmt::format("{} '{}' not found in keyspace '{}'", _syntax.kind_word, name,
                                              keyspace_for(state)));
        }
    }

    describe_syntax _syntax;
};

class describe_raw final : public raw_statement {
public:
    explicit describe_raw(describe_syntax syntax) : _syntax(std::move(syntax)) {}
    std::unique_ptr<cql_statement> prepare(const database&, std::string_view) const override {
        return std::make_unique<describe_statement>(_syntax);
    }

private:
    describe_syntax _syntax;
};

} // namespace

std::unique_ptr<raw_statement> parse_describe_statement(cql_token_stream& ts) {
    using form = describe_syntax::form;
    ts.next();
    describe_syntax s;
    auto name = [&] { s.name = parse_qualified_name(ts, "a name"); };
    if (ts.accept_keyword("keyspaces")) {
        s.what = form::keyspaces;
    } else if (ts.accept_keyword("tables") || ts.accept_keyword("columnfamilies")) {
        s.what = form::tables;
    } else if (ts.accept_keyword("types")) {
        s.what = form::types;
    } else if (ts.accept_keyword("functions")) {
        s.what = form::functions;
    } else if (ts.accept_keyword("aggregates")) {
        s.what = form::aggregates;
    } else if (ts.accept_keyword("cluster")) {
        s.what = form::cluster;
    } else if (ts.peek_keyword("full") || ts.peek_keyword("schema")) {
        s.full = ts.accept_keyword("full");
        ts.expect_keyword("schema");
        s.what = form::schema;
    } else if (ts.peek_keyword("only") || ts.peek_keyword("keyspace")) {
        s.only = ts.accept_keyword("only");
        ts.expect_keyword("keyspace");
        s.what = form::keyspace;
        if (!ts.at_end() && !ts.peek_symbol(';') && !ts.peek_keyword("with")) {
            s.name.token = ts.peek();
            s.name.name = ts.expect_name("a keyspace name");
        }
    } else if (ts.accept_keyword("table") || ts.accept_keyword("columnfamily")) {
        s.what = form::table;
        name();
    } else if (ts.accept_keyword("type")) {
        s.what = form::type;
        name();
    } else if (ts.peek_keyword("index") || ts.peek_keyword("materialized") || ts.peek_keyword("function") ||
               ts.peek_keyword("aggregate")) {
        s.kind_word = ts.next().text;
        if (ts.accept_keyword("view")) {
            s.kind_word += " VIEW";
        }
        s.what = form::missing_kind;
        name();
        if (ts.accept_symbol('(')) {
            while (!ts.accept_symbol(')')) {
                if (ts.at_end()) {
                    ts.fail("')'");
                }
                ts.next();
            }
        }
    } else {
        s.what = form::name;
        name();
    }
    // ScyllaDB's WITH INTERNALS (roles, service levels): nothing more to show here.
    if (ts.accept_keyword("with")) {
        ts.expect_keyword("internals");
        if (ts.accept_keyword("and")) {
            ts.expect_keyword("passwords");
        }
    }
    return std::make_unique<describe_raw>(std::move(s));
}

} // namespace reef::cql
