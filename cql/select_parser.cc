// SELECT's grammar (Cassandra 5.0's Parser.g selectStatement, with ScyllaDB's BYPASS CACHE and USING TIMEOUT):
//   SELECT [JSON] [DISTINCT] (* | selector [AS name], ...) FROM [ks.]table [WHERE relation AND ...]
//   [GROUP BY col, ...] [ORDER BY col [ASC|DESC], ...] [PER PARTITION LIMIT n] [LIMIT n] [ALLOW FILTERING]
//   [BYPASS CACHE] [USING TIMEOUT duration]
#include "cql/cql_error.hh"
#include "cql/select_statement.hh"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace reef::cql {

namespace {

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
    return s;
}

bool is_name(const cql_token& t) {
    return t.kind == cql_token_kind::identifier || t.kind == cql_token_kind::quoted_identifier;
}

bool adjacent(const cql_token& a, const cql_token& b) {
    return a.line == b.line && b.column == a.column + a.source.size() && b.kind != cql_token_kind::end;
}

// The words that end a selector list or a clause (they are not column names there).
bool is_clause_word(const cql_token& t) {
    static const char* words[] = {"from", "where", "order", "group", "per", "limit", "allow", "bypass", "using", "as"};
    if (t.kind != cql_token_kind::identifier) {
        return false;
    }
    auto w = lower(t.text);
    return std::any_of(std::begin(words), std::end(words), [&](const char* x) { return w == x; });
}

class select_parser {
public:
    explicit select_parser(cql_token_stream& ts) : _ts(ts) {}

    std::unique_ptr<raw_select_statement> parse() {
        auto st = std::make_unique<raw_select_statement>();
        _ts.expect_keyword("select");
        if (_ts.peek_keyword("json") && !_ts.peek_keyword("from", 1) && !_ts.peek_symbol(',', 1)) {
            _ts.next();
            st->json = true;
        }
        if (_ts.peek_keyword("distinct") && !_ts.peek_keyword("from", 1) && !_ts.peek_symbol(',', 1)) {
            _ts.next();
            st->distinct = true;
        }
        if (!_ts.accept_symbol('*')) {
            do {
                auto sel = selector(*st);
                if (_ts.accept_keyword("as")) {
                    sel.alias = _ts.expect_name("an alias");
                }
                st->selectors.push_back(std::move(sel));
            } while (_ts.accept_symbol(','));
        }
        _ts.expect_keyword("from");
        auto first = _ts.expect_name("a table name");
        if (_ts.accept_symbol('.')) {
            st->keyspace = first;
            st->table = _ts.expect_name("a table name");
        } else {
            st->table = first;
        }
        if (_ts.accept_keyword("where")) {
            do {
                st->where.push_back(relation(*st));
            } while (_ts.accept_keyword("and"));
        }
        if (_ts.peek_keyword("group") && _ts.peek_keyword("by", 1)) {
            _ts.next();
            _ts.next();
            do {
                st->group_by.push_back(_ts.expect_name("a column"));
            } while (_ts.accept_symbol(','));
        }
        if (_ts.peek_keyword("order") && _ts.peek_keyword("by", 1)) {
            _ts.next();
            _ts.next();
            do {
                raw_ordering o;
                o.column = _ts.expect_name("a column");
                if (_ts.accept_keyword("desc")) {
                    o.descending = true;
                } else {
                    _ts.accept_keyword("asc");
                }
                st->order_by.push_back(std::move(o));
            } while (_ts.accept_symbol(','));
        }
        if (_ts.peek_keyword("per") && _ts.peek_keyword("partition", 1)) {
            _ts.next();
            _ts.next();
            _ts.expect_keyword("limit");
            st->per_partition_limit = limit_value(*st);
        }
        if (_ts.accept_keyword("limit")) {
            st->limit = limit_value(*st);
        }
        if (_ts.peek_keyword("allow") && _ts.peek_keyword("filtering", 1)) {
            _ts.next();
            _ts.next();
            st->allow_filtering = true;
        }
        if (_ts.peek_keyword("bypass") && _ts.peek_keyword("cache", 1)) {
            _ts.next();
            _ts.next();
            st->bypass_cache = true;
        }
        if (_ts.accept_keyword("using")) {
            _ts.expect_keyword("timeout");
            st->timeout = duration();
        }
        return st;
    }

private:
    [[noreturn]] void no_viable(const cql_token& t) {
        throw cql_parse_error(t.line, t.column, t.source, fmt::format("no viable alternative at input '{}'", t.source));
    }

    // An integer literal (a leading '-' allowed: the value is checked at execution) or a bind marker.
    raw_term_ptr limit_value(raw_select_statement& st) {
        const cql_token t = _ts.peek();
        if (t.kind == cql_token_kind::number || t.kind == cql_token_kind::symbol) {
            if (t.kind == cql_token_kind::symbol && t.text != "-" && t.text != "?" && t.text != ":") {
                no_viable(t);
            }
            if (t.kind == cql_token_kind::number && t.text.find_first_of(".eE") != std::string::npos) {
                no_viable(t);
            }
            return parse_term(_ts, st.ctx);
        }
        no_viable(t);
    }

    // USING TIMEOUT 500ms, 2s, 1m30s: number-unit pairs written together.
    std::chrono::milliseconds duration() {
        const cql_token first = _ts.peek();
        if (first.kind != cql_token_kind::number) {
            no_viable(first);
        }
        double ms = 0;
        cql_token last = first;
        bool any = false;
        while (_ts.peek().kind == cql_token_kind::number && (!any || adjacent(last, _ts.peek()))) {
            auto n = _ts.next();
            auto& u = _ts.peek();
            if (u.kind != cql_token_kind::identifier || !adjacent(n, u)) {
                no_viable(u);
            }
            // The lexer keeps letters and digits together: "1m30s" is 1, "m30s".
            std::string rest = lower(u.text);
            _ts.next();
            last = u;
            double value = std::stod(n.text);
            while (true) {
                size_t i = 0;
                while (i < rest.size() && std::isalpha(static_cast<unsigned char>(rest[i]))) {
                    ++i;
                }
                auto unit = rest.substr(0, i);
                double scale = unit == "h" ? 3600000.0 : unit == "m" ? 60000.0 : unit == "s" ? 1000.0
                             : unit == "ms" ? 1.0 : unit == "us" ? 0.001 : unit == "ns" ? 1e-6 : unit == "d" ? 86400000.0
                                                                                                      : -1;
                if (scale < 0) {
                    no_viable(u);
                }
                ms += value * scale;
                rest = rest.substr(i);
                if (rest.empty()) {
                    break;
                }
                size_t j = 0;
                while (j < rest.size() && std::isdigit(static_cast<unsigned char>(rest[j]))) {
                    ++j;
                }
                if (j == 0) {
                    no_viable(u);
                }
                value = std::stod(rest.substr(0, j));
                rest = rest.substr(j);
                if (rest.empty()) {
                    no_viable(u);
                }
            }
            any = true;
        }
        return std::chrono::milliseconds(int64_t(ms));
    }

    raw_selector selector(raw_select_statement& st) {
        cql_token_stream::nesting_guard nested(_ts);
        const cql_token t = _ts.peek();
        raw_selector sel;
        if (t.kind == cql_token_kind::number || t.kind == cql_token_kind::string || t.kind == cql_token_kind::hex ||
            t.kind == cql_token_kind::uuid || (t.kind == cql_token_kind::symbol && (t.text == "-" || t.text == "?" ||
                                                                                    t.text == ":"))) {
            // A constant: a function's argument (count(1), minTimeuuid('2013-01-01')).
            sel.k = raw_selector::kind::term;
            sel.element = parse_term(_ts, st.ctx);
            return sel;
        }
        if (!is_name(t) || (t.kind == cql_token_kind::identifier && is_clause_word(t) && !_ts.peek_symbol('(', 1))) {
            _ts.fail("a selector");
        }
        if (t.kind == cql_token_kind::identifier && _ts.peek_symbol('(', 1)) {
            auto fname = lower(t.text);
            _ts.next();
            _ts.next();
            if (fname == "cast") {
                sel.k = raw_selector::kind::cast;
                sel.args.push_back(selector(st));
                _ts.expect_keyword("as");
                auto& ty = _ts.next();
                if (!is_name(ty)) {
                    _ts.fail(ty, "a type");
                }
                sel.cast_type = lower(ty.text);
                _ts.expect_symbol(')');
                return sel;
            }
            if (fname == "writetime" || fname == "ttl") {
                sel.k = fname == "ttl" ? raw_selector::kind::ttl : raw_selector::kind::writetime;
                sel.name = _ts.expect_name("a column");
                if (_ts.accept_symbol('[')) {
                    // An element's: writetime(s[1]), ttl(m['k']).
                    sel.element = parse_term(_ts, st.ctx);
                    _ts.expect_symbol(']');
                }
                _ts.expect_symbol(')');
                return sel;
            }
            if (fname == "count" && _ts.accept_symbol('*')) {
                _ts.expect_symbol(')');
                sel.k = raw_selector::kind::count_star;
                return sel;
            }
            sel.k = raw_selector::kind::function;
            sel.name = fname;
            if (!_ts.peek_symbol(')')) {
                do {
                    sel.args.push_back(selector(st));
                } while (_ts.accept_symbol(','));
            }
            _ts.expect_symbol(')');
            if (fname == "count" && sel.args.size() == 1 && sel.args[0].k == raw_selector::kind::term &&
                sel.args[0].element->to_string() == "1") {
                sel.k = raw_selector::kind::count_star;
                sel.args.clear();
            }
            return sel;
        }
        sel.k = raw_selector::kind::column;
        sel.name = _ts.expect_name("a column");
        while (true) {
            if (_ts.accept_symbol('[')) {
                // [key], [from..to], [..to], [from..]
                raw_selector el;
                el.args.push_back(std::move(sel));
                bool range = false;
                if (!(_ts.peek_symbol('.') && _ts.peek_symbol('.', 1))) {
                    el.element = parse_term(_ts, st.ctx);
                }
                if (_ts.peek_symbol('.') && _ts.peek_symbol('.', 1)) {
                    _ts.next();
                    _ts.next();
                    range = true;
                    if (!_ts.peek_symbol(']')) {
                        el.slice_end = parse_term(_ts, st.ctx);
                    }
                }
                _ts.expect_symbol(']');
                el.k = range ? raw_selector::kind::slice : raw_selector::kind::element;
                sel = std::move(el);
                continue;
            }
            if (_ts.peek_symbol('.') && is_name(_ts.peek(1))) {
                _ts.next();
                raw_selector f;
                f.k = raw_selector::kind::field;
                f.field = _ts.expect_name("a field");
                f.args.push_back(std::move(sel));
                sel = std::move(f);
                continue;
            }
            return sel;
        }
    }

    std::string op() {
        const cql_token t = _ts.peek();
        if (_ts.accept_symbol('=')) {
            return "=";
        }
        if (_ts.accept_symbol('<')) {
            return _ts.accept_symbol('=') ? "<=" : "<";
        }
        if (_ts.accept_symbol('>')) {
            return _ts.accept_symbol('=') ? ">=" : ">";
        }
        if (t.kind == cql_token_kind::symbol && t.text == "!" ) {
            _ts.next();
            _ts.expect_symbol('=');
            return "!=";
        }
        if (_ts.accept_keyword("in")) {
            return "in";
        }
        if (_ts.accept_keyword("contains")) {
            return _ts.accept_keyword("key") ? "contains key" : "contains";
        }
        if (_ts.accept_keyword("like")) {
            return "like";
        }
        if (_ts.peek_keyword("is") && _ts.peek_keyword("not", 1)) {
            _ts.next();
            _ts.next();
            return "is not";
        }
        no_viable(t);
    }

    static std::string op_text(const std::string& o) {
        if (o == "in") {
            return "IN";
        }
        if (o == "contains") {
            return "CONTAINS";
        }
        if (o == "contains key") {
            return "CONTAINS KEY";
        }
        if (o == "like") {
            return "LIKE";
        }
        if (o == "is not") {
            return "IS NOT";
        }
        return o;
    }

    static std::string names_text(const std::vector<std::string>& cols) {
        std::string s;
        for (auto& c : cols) {
            s += (s.empty() ? "" : ", ") + maybe_quote_identifier(c);
        }
        return s;
    }

    raw_select_relation relation(raw_select_statement& st) {
        raw_select_relation r;
        if (_ts.peek_keyword("token") && _ts.peek_symbol('(', 1)) {
            _ts.next();
            _ts.next();
            r.lhs = raw_select_relation::lhs_kind::token;
            do {
                r.columns.push_back(_ts.expect_name("a partition key column"));
            } while (_ts.accept_symbol(','));
            _ts.expect_symbol(')');
            r.op = op();
            if (_ts.peek_keyword("token") && _ts.peek_symbol('(', 1)) {
                _ts.next();
                _ts.next();
                std::vector<raw_term_ptr> args;
                do {
                    args.push_back(parse_term(_ts, st.ctx));
                } while (_ts.accept_symbol(','));
                _ts.expect_symbol(')');
                r.token_args = std::move(args);
                std::string a;
                for (auto& t : *r.token_args) {
                    a += (a.empty() ? "" : ", ") + t->to_string();
                }
                r.text = fmt::format("token({}) {} token({})", names_text(r.columns), op_text(r.op), a);
            } else {
                r.value = parse_term(_ts, st.ctx);
                r.text = fmt::format("token({}) {} {}", names_text(r.columns), op_text(r.op), r.value->to_string());
            }
            return r;
        }
        if (_ts.peek_symbol('(')) {
            _ts.next();
            r.lhs = raw_select_relation::lhs_kind::tuple;
            do {
                r.columns.push_back(_ts.expect_name("a clustering column"));
            } while (_ts.accept_symbol(','));
            _ts.expect_symbol(')');
        } else {
            r.columns.push_back(_ts.expect_name("a column"));
        }
        r.op = op();
        auto lhs_text = r.lhs == raw_select_relation::lhs_kind::tuple ? "(" + names_text(r.columns) + ")"
                                                               : maybe_quote_identifier(r.columns[0]);
        if (r.op == "in" && _ts.peek_symbol('(')) {
            _ts.next();
            if (!_ts.peek_symbol(')')) {
                do {
                    r.in_values.push_back(parse_term(_ts, st.ctx));
                } while (_ts.accept_symbol(','));
            }
            _ts.expect_symbol(')');
            std::string v;
            for (auto& t : r.in_values) {
                v += (v.empty() ? "" : ", ") + t->to_string();
            }
            r.text = fmt::format("{} IN ({})", lhs_text, v);
            return r;
        }
        if (r.op == "is not") {
            _ts.expect_keyword("null");
            r.text = lhs_text + " IS NOT NULL";
            return r;
        }
        r.value = parse_term(_ts, st.ctx);
        r.text = fmt::format("{} {} {}", lhs_text, op_text(r.op), r.value->to_string());
        return r;
    }

    cql_token_stream& _ts;
};

} // namespace

std::unique_ptr<raw_statement> parse_select_statement(cql_token_stream& ts) {
    return select_parser(ts).parse();
}

} // namespace reef::cql
