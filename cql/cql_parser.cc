// A recursive-descent parser of the schema statements, over cql_lexer's tokens. Names are lowercased unless
// quoted, keywords are case-insensitive, as in Cassandra.

#include "cql/cql_parser.hh"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>

namespace reef {

data_type cql_catalog::find_user_type(std::string_view keyspace, std::string_view name) const {
    auto it = user_types.find({std::string(keyspace), std::string(name)});
    return it == user_types.end() ? nullptr : it->second;
}

schema_ptr cql_catalog::find_table(std::string_view keyspace, std::string_view name) const {
    for (auto& t : tables) {
        if (t->keyspace() == keyspace && t->table() == name) {
            return t;
        }
    }
    return nullptr;
}

namespace {

std::string lower(std::string_view s) {
    std::string r(s);
    for (auto& c : r) {
        c = char(std::tolower(static_cast<unsigned char>(c)));
    }
    return r;
}

class statement_parser {
    cql_token_stream& _ts;
    cql_catalog& _catalog;
    // The keyspace of the statement being parsed: unqualified user types in it are looked up there.
    std::string _statement_keyspace;

    // [keyspace.]name, the keyspace defaulting to the current one.
    std::pair<std::string, std::string> qualified_name(std::string_view what) {
        auto& at = _ts.peek();
        std::string first = _ts.expect_name(what);
        if (_ts.accept_symbol('.')) {
            return {first, _ts.expect_name(what)};
        }
        if (_catalog.current_keyspace.empty()) {
            _ts.fail(at, fmt::format("a keyspace-qualified {} (no USE before it)", what));
        }
        return {_catalog.current_keyspace, first};
    }

    void if_not_exists() {
        if (_ts.accept_keyword("if")) {
            _ts.expect_keyword("not");
            _ts.expect_keyword("exists");
        }
    }

    // A constant option value as text: strings unquoted, numbers and words as written.
    std::string constant() {
        auto& t = _ts.peek();
        switch (t.kind) {
        case cql_token_kind::string:
        case cql_token_kind::number:
        case cql_token_kind::uuid:
        case cql_token_kind::hex:
        case cql_token_kind::identifier:
            _ts.next();
            return t.text;
        default:
            _ts.fail("a constant");
        }
    }

    std::map<std::string, std::string> map_literal() {
        std::map<std::string, std::string> m;
        _ts.expect_symbol('{');
        if (_ts.accept_symbol('}')) {
            return m;
        }
        do {
            auto k = constant();
            _ts.expect_symbol(':');
            m[k] = constant();
        } while (_ts.accept_symbol(','));
        _ts.expect_symbol('}');
        return m;
    }

    int32_t int_option(const cql_token& at, const std::string& text, std::string_view name) {
        int32_t v = 0;
        auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
        if (ec != std::errc() || p != text.data() + text.size() || v < 0) {
            _ts.fail(at, fmt::format("a non-negative integer for {}", name));
        }
        return v;
    }

    data_type type() {
        return parse_cql_type(_ts, [this](std::string_view ks, std::string_view name) {
            return _catalog.find_user_type(ks.empty() ? _statement_keyspace : ks, name);
        });
    }

    void create_keyspace() {
        if_not_exists();
        keyspace_definition ks;
        ks.name = _ts.expect_name("a keyspace name");
        if (_ts.accept_keyword("with")) {
            do {
                auto& at = _ts.peek();
                auto prop = lower(_ts.expect_name("a keyspace property"));
                _ts.expect_symbol('=');
                if (prop == "replication") {
                    ks.replication = map_literal();
                } else if (prop == "durable_writes") {
                    auto& vt = _ts.peek();
                    auto v = lower(constant());
                    if (v != "true" && v != "false") {
                        _ts.fail(vt, "true or false");
                    }
                    ks.durable_writes = v == "true";
                } else {
                    _ts.fail(at, "replication or durable_writes");
                }
            } while (_ts.accept_keyword("and"));
        }
        _catalog.keyspaces[ks.name] = std::move(ks);
    }

    void create_type() {
        if_not_exists();
        auto [ks, name] = qualified_name("type name");
        _statement_keyspace = ks;
        std::vector<std::string> field_names;
        std::vector<data_type> field_types;
        _ts.expect_symbol('(');
        do {
            auto& at = _ts.peek();
            auto field = _ts.expect_name("a field name");
            if (std::find(field_names.begin(), field_names.end(), field) != field_names.end()) {
                _ts.fail(at, fmt::format("a new field name ({} is declared twice)", field));
            }
            field_names.push_back(field);
            field_types.push_back(type());
        } while (_ts.accept_symbol(','));
        _ts.expect_symbol(')');
        _catalog.user_types[{ks, name}] = user_type(ks, name, std::move(field_names), std::move(field_types), true);
    }

    struct column_decl {
        std::string name;
        data_type type;
        bool is_static = false;
        cql_token token;
    };

    // The names inside PRIMARY KEY ( ... ): a partition key (one name or a parenthesized list), then clustering.
    void primary_key_clause(std::vector<cql_token>& pk, std::vector<cql_token>& ck) {
        _ts.expect_symbol('(');
        if (_ts.accept_symbol('(')) {
            do {
                pk.push_back(_ts.peek());
                _ts.expect_name("a partition key column");
            } while (_ts.accept_symbol(','));
            _ts.expect_symbol(')');
        } else {
            pk.push_back(_ts.peek());
            _ts.expect_name("a partition key column");
        }
        while (_ts.accept_symbol(',')) {
            ck.push_back(_ts.peek());
            _ts.expect_name("a clustering column");
        }
        _ts.expect_symbol(')');
    }

    static std::string name_of(const cql_token& t) {
        return t.kind == cql_token_kind::quoted_identifier ? t.text : lower(t.text);
    }

    void create_table(const cql_token& start) {
        if_not_exists();
        auto [ks, table] = qualified_name("table name");
        _statement_keyspace = ks;
        std::vector<column_decl> columns;
        std::vector<cql_token> pk, ck;
        bool have_pk = false;
        _ts.expect_symbol('(');
        do {
            if (_ts.peek_symbol(')')) {
                // A trailing comma before ')' is accepted, as by cqlsh's DESCRIBE output.
                break;
            }
            if (_ts.peek_keyword("primary") && _ts.peek_keyword("key", 1)) {
                auto& at = _ts.peek();
                _ts.next();
                _ts.next();
                if (have_pk) {
                    _ts.fail(at, "one PRIMARY KEY only");
                }
                have_pk = true;
                primary_key_clause(pk, ck);
                continue;
            }
            column_decl c;
            c.token = _ts.peek();
            c.name = _ts.expect_name("a column name");
            c.type = type();
            if (_ts.accept_keyword("static")) {
                c.is_static = true;
            }
            if (_ts.peek_keyword("primary")) {
                auto& at = _ts.next();
                _ts.expect_keyword("key");
                if (have_pk) {
                    _ts.fail(at, "one PRIMARY KEY only");
                }
                have_pk = true;
                pk.push_back(c.token);
            }
            columns.push_back(std::move(c));
        } while (_ts.accept_symbol(','));
        _ts.expect_symbol(')');
        if (!have_pk) {
            _ts.fail(start, "a PRIMARY KEY in the CREATE TABLE");
        }

        table_options options;
        std::vector<std::pair<cql_token, clustering_order>> orders;
        std::optional<table_id> id;
        if (_ts.accept_keyword("with")) {
            do {
                auto& at = _ts.peek();
                if (_ts.accept_keyword("compact")) {
                    _ts.expect_keyword("storage");
                    options.compact_storage = true;
                    continue;
                }
                if (_ts.accept_keyword("clustering")) {
                    _ts.expect_keyword("order");
                    _ts.expect_keyword("by");
                    _ts.expect_symbol('(');
                    do {
                        auto col = _ts.peek();
                        _ts.expect_name("a clustering column");
                        auto o = clustering_order::asc;
                        if (_ts.accept_keyword("desc")) {
                            o = clustering_order::desc;
                        } else {
                            _ts.accept_keyword("asc");
                        }
                        orders.emplace_back(col, o);
                    } while (_ts.accept_symbol(','));
                    _ts.expect_symbol(')');
                    continue;
                }
                auto prop = lower(_ts.expect_name("a table property"));
                _ts.expect_symbol('=');
                auto& vt = _ts.peek();
                if (vt.kind == cql_token_kind::symbol && vt.text == "{") {
                    auto m = map_literal();
                    if (prop == "compression") {
                        options.compression = std::move(m);
                    } else {
                        std::string text = "{";
                        for (auto& [k, v] : m) {
                            text += fmt::format("{}'{}': '{}'", text.size() > 1 ? ", " : "", k, v);
                        }
                        options.other[prop] = text + "}";
                    }
                    continue;
                }
                auto value = constant();
                if (prop == "gc_grace_seconds") {
                    options.gc_grace_seconds = int_option(vt, value, prop);
                } else if (prop == "default_time_to_live") {
                    options.default_time_to_live = int_option(vt, value, prop);
                } else if (prop == "id") {
                    if (vt.kind != cql_token_kind::uuid) {
                        _ts.fail(vt, "a uuid for the table id");
                    }
                    auto b = uuid_type()->from_string(value);
                    table_id tid;
                    std::copy(b.begin(), b.end(), tid.begin());
                    id = tid;
                } else if (prop == "compression") {
                    _ts.fail(vt, "a map for compression");
                } else {
                    options.other[prop] = vt.kind == cql_token_kind::string ? "'" + value + "'" : value;
                }
                (void)at;
            } while (_ts.accept_keyword("and"));
        }

        auto find = [&](const cql_token& t) -> column_decl& {
            auto n = name_of(t);
            for (auto& c : columns) {
                if (c.name == n) {
                    return c;
                }
            }
            _ts.fail(t, fmt::format("a declared column (no column named {})", n));
        };
        std::vector<std::string> key_names;
        for (auto* group : {&pk, &ck}) {
            for (auto& t : *group) {
                auto& c = find(t);
                if (std::find(key_names.begin(), key_names.end(), c.name) != key_names.end()) {
                    _ts.fail(t, fmt::format("a column not already in the primary key ({})", c.name));
                }
                if (c.is_static) {
                    _ts.fail(t, fmt::format("a non-static primary key column ({} is static)", c.name));
                }
                key_names.push_back(c.name);
            }
        }
        std::vector<clustering_order> ck_order(ck.size(), clustering_order::asc);
        for (size_t i = 0; i < orders.size(); ++i) {
            auto n = name_of(orders[i].first);
            // Cassandra wants the clustering columns in their key order here.
            if (i >= ck.size() || name_of(ck[i]) != n) {
                _ts.fail(orders[i].first, fmt::format("clustering column {} in CLUSTERING ORDER BY",
                                                      i < ck.size() ? name_of(ck[i]) : std::string("(none left)")));
            }
            ck_order[i] = orders[i].second;
        }

        schema_builder b(ks, table);
        if (id) {
            b.with_id(*id);
        }
        for (auto& c : columns) {
            auto in = [&](const std::vector<cql_token>& g) {
                for (size_t i = 0; i < g.size(); ++i) {
                    if (name_of(g[i]) == c.name) {
                        return int(i);
                    }
                }
                return -1;
            };
            if (in(pk) >= 0 || in(ck) >= 0) {
                continue;
            }
            b.with_column(c.name, c.type, c.is_static ? column_kind::static_column : column_kind::regular_column);
        }
        // Key columns go in key order, whatever their declaration order.
        for (auto& t : pk) {
            auto& c = find(t);
            b.with_column(c.name, c.type, column_kind::partition_key);
        }
        for (size_t i = 0; i < ck.size(); ++i) {
            auto& c = find(ck[i]);
            b.with_column(c.name, c.type, column_kind::clustering_key, ck_order[i]);
        }
        b.with_options(std::move(options));
        try {
            _catalog.tables.push_back(b.build());
        } catch (const std::invalid_argument& e) {
            throw cql_parse_error(start.line, start.column, start.source,
                                  fmt::format("line {}, column {}: {}", start.line, start.column, e.what()));
        }
    }

public:
    statement_parser(cql_token_stream& ts, cql_catalog& catalog) : _ts(ts), _catalog(catalog) {}

    void statement() {
        auto& start = _ts.peek();
        if (_ts.accept_keyword("use")) {
            auto name = _ts.expect_name("a keyspace name");
            _catalog.current_keyspace = name;
        } else if (_ts.accept_keyword("create")) {
            if (_ts.accept_keyword("keyspace") || _ts.accept_keyword("schema")) {
                create_keyspace();
            } else if (_ts.accept_keyword("type")) {
                create_type();
            } else if (_ts.accept_keyword("table") || _ts.accept_keyword("columnfamily")) {
                create_table(start);
            } else {
                _ts.fail("KEYSPACE, TYPE or TABLE after CREATE");
            }
        } else {
            _ts.fail("CREATE or USE");
        }
        if (!_ts.accept_symbol(';') && !_ts.at_end()) {
            _ts.fail("';'");
        }
    }
};

} // namespace

void parse_cql(std::string_view text, cql_catalog& catalog) {
    cql_token_stream ts(tokenize_cql(text));
    statement_parser p(ts, catalog);
    while (true) {
        while (ts.accept_symbol(';')) {
        }
        if (ts.at_end()) {
            return;
        }
        p.statement();
    }
}

schema_ptr parse_create_table(std::string_view text) {
    cql_catalog catalog;
    parse_cql(text, catalog);
    if (catalog.tables.empty()) {
        auto tokens = tokenize_cql(text);
        auto& end = tokens.back();
        throw cql_parse_error(end.line, end.column, end.source,
                              fmt::format("line {}, column {}: no CREATE TABLE statement", end.line, end.column));
    }
    return catalog.tables.back();
}

} // namespace reef
