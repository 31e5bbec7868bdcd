// parse_cql: a script of schema statements run against a cql_catalog, through schema_grammar's parsers and
// builders (the grammar the server's statements use too).

#include "cql/cql_parser.hh"

#include "cql/schema_grammar.hh"

#include <fmt/format.h>

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

class script_runner {
    cql_token_stream& _ts;
    cql_catalog& _catalog;

    // The keyspace of a name: its own, else the current one (USE).
    std::string keyspace_of(const cql_qualified_name& n, std::string_view what) {
        if (!n.keyspace.empty()) {
            return n.keyspace;
        }
        if (_catalog.current_keyspace.empty()) {
            _ts.fail(n.token, fmt::format("a keyspace-qualified {} (no USE before it)", what));
        }
        return _catalog.current_keyspace;
    }

    user_type_resolver resolver_in(std::string keyspace) {
        return [this, keyspace](std::string_view ks, std::string_view name) {
            return _catalog.find_user_type(ks.empty() ? keyspace : ks, name);
        };
    }

public:
    script_runner(cql_token_stream& ts, cql_catalog& catalog) : _ts(ts), _catalog(catalog) {}

    void statement() {
        auto start = _ts.peek();
        if (_ts.accept_keyword("use")) {
            _catalog.current_keyspace = _ts.expect_name("a keyspace name");
        } else if (_ts.accept_keyword("create")) {
            if (_ts.accept_keyword("keyspace") || _ts.accept_keyword("schema")) {
                auto ks = build_keyspace(parse_create_keyspace(_ts));
                _catalog.keyspaces[ks.name] = std::move(ks);
            } else if (_ts.accept_keyword("type")) {
                auto syntax = parse_create_type(_ts);
                auto ks = keyspace_of(syntax.name, "type name");
                _catalog.user_types[{ks, syntax.name.name}] = build_user_type(syntax, ks, resolver_in(ks));
            } else if (_ts.accept_keyword("table") || _ts.accept_keyword("columnfamily")) {
                auto syntax = parse_create_table(_ts, start);
                auto ks = keyspace_of(syntax.name, "table name");
                _catalog.tables.push_back(build_table(syntax, ks, resolver_in(ks)));
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
    script_runner p(ts, catalog);
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
