// The grammar of INSERT, UPDATE and DELETE as Cassandra's Parser.g has it (insertStatement, updateStatement,
// deleteStatement, usingClause, updateConditions, relations on key columns).

#include "cql/modification_statement.hh"

#include <fmt/core.h>

namespace reef::cql {

namespace {

void table_name(cql_token_stream& ts, raw_modification_statement& st) {
    auto first = ts.expect_name("a table name");
    if (ts.accept_symbol('.')) {
        st.keyspace = std::move(first);
        st.table = ts.expect_name("a table name");
    } else {
        st.table = std::move(first);
    }
}

// USING TTL n | TIMESTAMP n [AND ...]: an integer literal or a bind marker.
raw_term_ptr integer_or_marker(cql_token_stream& ts, term_parse_context& ctx) {
    auto& t = ts.peek();
    bool marker = ts.peek_symbol('?') || (ts.peek_symbol(':') && ts.peek(1).kind == cql_token_kind::identifier);
    bool integer = t.kind == cql_token_kind::number && t.text.find_first_of(".eE") == std::string::npos;
    if (!marker && !integer) {
        throw cql_parse_error(t.line, t.column, t.source, fmt::format("no viable alternative at input '{}'", t.source));
    }
    return parse_term(ts, ctx);
}

void using_clause(cql_token_stream& ts, term_parse_context& ctx, raw_attributes& attrs, bool ttl_allowed) {
    if (!ts.accept_keyword("using")) {
        return;
    }
    do {
        if (ts.accept_keyword("timestamp")) {
            attrs.timestamp = integer_or_marker(ts, ctx);
        } else if (ttl_allowed && ts.accept_keyword("ttl")) {
            attrs.ttl = integer_or_marker(ts, ctx);
        } else {
            auto& t = ts.peek();
            throw cql_parse_error(t.line, t.column, t.source,
                                  fmt::format("mismatched input '{}' expecting {}", t.source,
                                              ttl_allowed ? "K_TTL or K_TIMESTAMP" : "K_TIMESTAMP"));
        }
    } while (ts.accept_keyword("and"));
}

bool peek_name(cql_token_stream& ts, size_t ahead = 0) {
    auto k = ts.peek(ahead).kind;
    return k == cql_token_kind::identifier || k == cql_token_kind::quoted_identifier;
}

// '<' '<=' '>' '>=' '=' '!=' are single symbols in the lexer: join them.
std::string comparison(cql_token_stream& ts) {
    if (ts.accept_symbol('=')) {
        return "=";
    }
    if (ts.peek_symbol('<') || ts.peek_symbol('>')) {
        std::string op = ts.next().text;
        auto& t = ts.peek();
        if (t.kind == cql_token_kind::symbol && t.text == "=") {
            ts.next();
            op += "=";
        }
        return op;
    }
    if (ts.peek_keyword("in")) {
        ts.next();
        return "IN";
    }
    if (ts.peek_keyword("contains")) {
        ts.next();
        return ts.accept_keyword("key") ? "CONTAINS KEY" : "CONTAINS";
    }
    auto& t = ts.peek();
    throw cql_parse_error(t.line, t.column, t.source, fmt::format("no viable alternative at input '{}'", t.source));
}

// After IN: (t, ...) or a marker.
void in_values(cql_token_stream& ts, term_parse_context& ctx, std::vector<raw_term_ptr>& values, raw_term_ptr& marker,
               bool& is_marker) {
    if (ts.peek_symbol('?') || ts.peek_symbol(':')) {
        is_marker = true;
        marker = parse_term(ts, ctx);
        return;
    }
    ts.expect_symbol('(');
    if (!ts.accept_symbol(')')) {
        do {
            values.push_back(parse_term(ts, ctx));
        } while (ts.accept_symbol(','));
        ts.expect_symbol(')');
    }
}

void where_clause(cql_token_stream& ts, term_parse_context& ctx, std::vector<raw_key_relation>& out) {
    ts.expect_keyword("where");
    do {
        raw_key_relation r;
        if (ts.accept_symbol('(')) {
            r.tuple = true;
            do {
                r.columns.push_back(ts.expect_name("a column name"));
            } while (ts.accept_symbol(','));
            ts.expect_symbol(')');
        } else {
            r.columns.push_back(ts.expect_name("a column name"));
        }
        r.op = comparison(ts);
        if (r.op == "IN") {
            in_values(ts, ctx, r.in_values, r.value, r.in_marker);
        } else {
            r.value = parse_term(ts, ctx);
        }
        out.push_back(std::move(r));
    } while (ts.accept_keyword("and"));
}

// IF EXISTS | IF NOT EXISTS (insert) | IF cond AND ...
void if_clause(cql_token_stream& ts, term_parse_context& ctx, raw_modification_statement& st) {
    if (!ts.accept_keyword("if")) {
        return;
    }
    if (st.type == statement_type::insert) {
        ts.expect_keyword("not");
        ts.expect_keyword("exists");
        st.if_not_exists = true;
        return;
    }
    if (ts.accept_keyword("exists")) {
        st.if_exists = true;
        return;
    }
    do {
        raw_condition c;
        c.column = ts.expect_name("a column name");
        if (ts.accept_symbol('[')) {
            c.key = parse_term(ts, ctx);
            ts.expect_symbol(']');
        } else if (ts.accept_symbol('.')) {
            c.field = ts.expect_name("a field name");
        }
        if (ts.peek_symbol('!') ) {
            ts.next();
            ts.expect_symbol('=');
            c.op = "!=";
        } else {
            c.op = comparison(ts);
        }
        if (c.op == "IN") {
            in_values(ts, ctx, c.in_values, c.value, c.in_marker);
        } else {
            c.value = parse_term(ts, ctx);
        }
        st.conditions.push_back(std::move(c));
    } while (ts.accept_keyword("and"));
}

std::string column_text(const raw_operation& op) {
    return maybe_quote_identifier(op.column);
}

// One SET assignment.
raw_operation assignment(cql_token_stream& ts, term_parse_context& ctx) {
    raw_operation op;
    op.column = ts.expect_name("a column name");
    auto name = column_text(op);
    if (ts.accept_symbol('[')) {
        op.key = parse_term(ts, ctx);
        ts.expect_symbol(']');
        ts.expect_symbol('=');
        op.kind = operation_kind::set_element;
        op.value = parse_term(ts, ctx);
        op.text = fmt::format("{}[{}] = {}", name, op.key->to_string(), op.value->to_string());
        return op;
    }
    if (ts.accept_symbol('.')) {
        op.field = ts.expect_name("a field name");
        ts.expect_symbol('=');
        op.kind = operation_kind::set_field;
        op.value = parse_term(ts, ctx);
        op.text = fmt::format("{}.{} = {}", name, maybe_quote_identifier(op.field), op.value->to_string());
        return op;
    }
    // c += t, c -= t
    if ((ts.peek_symbol('+') || ts.peek_symbol('-')) && ts.peek_symbol('=', 1)) {
        bool plus = ts.next().text == "+";
        ts.next();
        op.kind = plus ? operation_kind::add : operation_kind::subtract;
        op.value = parse_term(ts, ctx);
        op.text = fmt::format("{} {}= {}", name, plus ? '+' : '-', op.value->to_string());
        return op;
    }
    ts.expect_symbol('=');
    // c = c + t, c = c - t
    if (peek_name(ts) && (ts.peek_symbol('+', 1) || ts.peek_symbol('-', 1)) && !ts.peek_symbol('(', 1)) {
        auto save = ts.peek();
        auto other = ts.expect_name("a column name");
        if (other != op.column) {
            throw cql_parse_error(save.line, save.column, save.source,
                                  fmt::format("Only expressions of the form X = X +<value> are supported."));
        }
        bool plus = ts.next().text == "+";
        op.kind = plus ? operation_kind::add : operation_kind::subtract;
        op.value = parse_term(ts, ctx);
        op.text = fmt::format("{} = {} {} {}", name, name, plus ? '+' : '-', op.value->to_string());
        return op;
    }
    op.value = parse_term(ts, ctx);
    // c = t + c (prepend)
    if (ts.peek_symbol('+') && peek_name(ts, 1)) {
        ts.next();
        auto save = ts.peek();
        auto other = ts.expect_name("a column name");
        if (other != op.column) {
            throw cql_parse_error(save.line, save.column, save.source,
                                  fmt::format("Only expressions of the form X = <value> + X are supported."));
        }
        op.kind = operation_kind::prepend;
        op.text = fmt::format("{} = {} + {}", name, op.value->to_string(), name);
        return op;
    }
    op.kind = operation_kind::set;
    op.text = fmt::format("{} = {}", name, op.value->to_string());
    return op;
}

} // namespace

std::unique_ptr<raw_modification_statement> parse_insert(cql_token_stream& ts, term_parse_context& ctx) {
    auto st = std::make_unique<raw_modification_statement>();
    st->type = statement_type::insert;
    ts.expect_keyword("insert");
    ts.expect_keyword("into");
    table_name(ts, *st);
    if (ts.accept_keyword("json")) {
        st->json = true;
        auto& t = ts.peek();
        if (t.kind != cql_token_kind::string && !ts.peek_symbol('?') && !ts.peek_symbol(':')) {
            throw cql_parse_error(t.line, t.column, t.source, fmt::format("no viable alternative at input '{}'", t.source));
        }
        st->json_value = parse_term(ts, ctx);
        if (ts.accept_keyword("default")) {
            if (ts.accept_keyword("unset")) {
                st->json_default_unset = true;
            } else {
                ts.expect_keyword("null");
            }
        }
    } else {
        if (!ts.peek_symbol('(')) {
            auto& t = ts.peek();
            throw cql_parse_error(t.line, t.column, t.source, fmt::format("no viable alternative at input '{}'", t.source));
        }
        ts.expect_symbol('(');
        do {
            st->insert_columns.push_back(ts.expect_name("a column name"));
        } while (ts.accept_symbol(','));
        ts.expect_symbol(')');
        ts.expect_keyword("values");
        ts.expect_symbol('(');
        do {
            st->insert_values.push_back(parse_term(ts, ctx));
        } while (ts.accept_symbol(','));
        ts.expect_symbol(')');
    }
    if_clause(ts, ctx, *st);
    using_clause(ts, ctx, st->attrs, true);
    return st;
}

std::unique_ptr<raw_modification_statement> parse_update(cql_token_stream& ts, term_parse_context& ctx) {
    auto st = std::make_unique<raw_modification_statement>();
    st->type = statement_type::update;
    ts.expect_keyword("update");
    table_name(ts, *st);
    using_clause(ts, ctx, st->attrs, true);
    if (!ts.peek_keyword("set")) {
        auto& t = ts.peek();
        throw cql_parse_error(t.line, t.column, t.source, fmt::format("mismatched input '{}' expecting K_SET", t.source));
    }
    ts.next();
    do {
        st->operations.push_back(assignment(ts, ctx));
    } while (ts.accept_symbol(','));
    where_clause(ts, ctx, st->where);
    if_clause(ts, ctx, *st);
    return st;
}

std::unique_ptr<raw_modification_statement> parse_delete(cql_token_stream& ts, term_parse_context& ctx) {
    auto st = std::make_unique<raw_modification_statement>();
    st->type = statement_type::del;
    ts.expect_keyword("delete");
    if (!ts.peek_keyword("from") || ts.peek_keyword("from", 1) || ts.peek_symbol(',', 1) || ts.peek_symbol('[', 1) ||
        ts.peek_symbol('.', 1)) {
        do {
            raw_deletion d;
            d.column = ts.expect_name("a column name");
            if (ts.accept_symbol('[')) {
                d.key = parse_term(ts, ctx);
                ts.expect_symbol(']');
            } else if (ts.accept_symbol('.')) {
                d.field = ts.expect_name("a field name");
            }
            st->deletions.push_back(std::move(d));
        } while (ts.accept_symbol(','));
    }
    ts.expect_keyword("from");
    table_name(ts, *st);
    using_clause(ts, ctx, st->attrs, false);
    where_clause(ts, ctx, st->where);
    if_clause(ts, ctx, *st);
    return st;
}

// The entries of statement_kinds: each statement numbers its own markers.
std::unique_ptr<raw_statement> parse_insert_statement(cql_token_stream& ts) {
    term_parse_context ctx;
    auto st = parse_insert(ts, ctx);
    st->markers = std::move(ctx);
    return st;
}

std::unique_ptr<raw_statement> parse_update_statement(cql_token_stream& ts) {
    term_parse_context ctx;
    auto st = parse_update(ts, ctx);
    st->markers = std::move(ctx);
    return st;
}

std::unique_ptr<raw_statement> parse_delete_statement(cql_token_stream& ts) {
    term_parse_context ctx;
    auto st = parse_delete(ts, ctx);
    st->markers = std::move(ctx);
    return st;
}

} // namespace reef::cql
