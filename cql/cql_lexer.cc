// The lexer follows the token rules of Cassandra's Lexer.g for the subset a schema needs.

#include "cql/cql_lexer.hh"
#include "cql/cql_error.hh"

#include <fmt/format.h>

#include <cctype>
#include <charconv>

namespace reef {

cql_parse_error::cql_parse_error(size_t line, size_t column, std::string token, const std::string& message)
    : std::runtime_error(message), _line(line), _column(column), _token(std::move(token)) {}

namespace {

bool is_hex(char c) {
    return std::isxdigit(static_cast<unsigned char>(c));
}

// 8-4-4-4-12 hex digits at p, not followed by a word character.
bool uuid_at(std::string_view s, size_t p) {
    static constexpr size_t groups[] = {8, 4, 4, 4, 12};
    for (size_t g = 0; g < 5; ++g) {
        for (size_t i = 0; i < groups[g]; ++i, ++p) {
            if (p >= s.size() || !is_hex(s[p])) {
                return false;
            }
        }
        if (g < 4) {
            if (p >= s.size() || s[p] != '-') {
                return false;
            }
            ++p;
        }
    }
    return p >= s.size() || !(std::isalnum(static_cast<unsigned char>(s[p])) || s[p] == '_');
}

std::string lower(std::string_view s) {
    std::string r(s);
    for (auto& c : r) {
        c = char(std::tolower(static_cast<unsigned char>(c)));
    }
    return r;
}

} // namespace

std::vector<cql_token> tokenize_cql(std::string_view s) {
    std::vector<cql_token> out;
    size_t pos = 0, line = 1, line_start = 0;
    auto advance = [&](size_t to) {
        for (; pos < to; ++pos) {
            if (s[pos] == '\n') {
                ++line;
                line_start = pos + 1;
            }
        }
    };
    while (true) {
        // Blanks and comments.
        while (pos < s.size()) {
            if (std::isspace(static_cast<unsigned char>(s[pos]))) {
                advance(pos + 1);
            } else if (s.substr(pos).starts_with("--") || s.substr(pos).starts_with("//")) {
                auto end = s.find('\n', pos);
                advance(end == std::string_view::npos ? s.size() : end);
            } else if (s.substr(pos).starts_with("/*")) {
                auto end = s.find("*/", pos + 2);
                if (end == std::string_view::npos) {
                    throw cql_parse_error(line, pos - line_start + 1, "/*",
                                          fmt::format("line {}, column {}: unterminated comment", line,
                                                      pos - line_start + 1));
                }
                advance(end + 2);
            } else {
                break;
            }
        }
        size_t col = pos - line_start + 1, tok_line = line, start = pos;
        if (pos >= s.size()) {
            out.push_back({cql_token_kind::end, "", tok_line, col, "end of input"});
            return out;
        }
        char c = s[pos];
        auto unterminated = [&](std::string_view what) {
            throw cql_parse_error(tok_line, col, std::string(s.substr(start, std::min<size_t>(20, s.size() - start))),
                                  fmt::format("line {}, column {}: unterminated {}", tok_line, col, what));
        };
        cql_token t{cql_token_kind::symbol, "", tok_line, col, ""};
        if (uuid_at(s, pos)) {
            t.kind = cql_token_kind::uuid;
            t.text = lower(s.substr(pos, 36));
            advance(pos + 36);
        } else if (c == '0' && pos + 1 < s.size() && (s[pos + 1] == 'x' || s[pos + 1] == 'X')) {
            size_t e = pos + 2;
            while (e < s.size() && is_hex(s[e])) {
                ++e;
            }
            t.kind = cql_token_kind::hex;
            t.text = std::string(s.substr(pos, e - pos));
            advance(e);
        } else if (std::isdigit(static_cast<unsigned char>(c)) ||
                   (c == '-' && pos + 1 < s.size() && std::isdigit(static_cast<unsigned char>(s[pos + 1])))) {
            size_t e = pos + 1;
            while (e < s.size() && std::isdigit(static_cast<unsigned char>(s[e]))) {
                ++e;
            }
            if (e + 1 < s.size() && s[e] == '.' && std::isdigit(static_cast<unsigned char>(s[e + 1]))) {
                ++e;
                while (e < s.size() && std::isdigit(static_cast<unsigned char>(s[e]))) {
                    ++e;
                }
            }
            if (e < s.size() && (s[e] == 'e' || s[e] == 'E')) {
                size_t x = e + 1;
                if (x < s.size() && (s[x] == '+' || s[x] == '-')) {
                    ++x;
                }
                if (x < s.size() && std::isdigit(static_cast<unsigned char>(s[x]))) {
                    e = x;
                    while (e < s.size() && std::isdigit(static_cast<unsigned char>(s[e]))) {
                        ++e;
                    }
                }
            }
            t.kind = cql_token_kind::number;
            t.text = std::string(s.substr(pos, e - pos));
            advance(e);
        } else if (std::isalpha(static_cast<unsigned char>(c))) {
            size_t e = pos + 1;
            while (e < s.size() && (std::isalnum(static_cast<unsigned char>(s[e])) || s[e] == '_')) {
                ++e;
            }
            t.kind = cql_token_kind::identifier;
            t.text = std::string(s.substr(pos, e - pos));
            advance(e);
        } else if (c == '"') {
            std::string text;
            size_t e = pos + 1;
            while (true) {
                if (e >= s.size()) {
                    unterminated("quoted identifier");
                }
                if (s[e] == '"') {
                    if (e + 1 < s.size() && s[e + 1] == '"') {
                        text += '"';
                        e += 2;
                        continue;
                    }
                    ++e;
                    break;
                }
                text += s[e++];
            }
            t.kind = cql_token_kind::quoted_identifier;
            t.text = std::move(text);
            advance(e);
        } else if (c == '\'') {
            std::string text;
            size_t e = pos + 1;
            while (true) {
                if (e >= s.size()) {
                    unterminated("string");
                }
                if (s[e] == '\'') {
                    if (e + 1 < s.size() && s[e + 1] == '\'') {
                        text += '\'';
                        e += 2;
                        continue;
                    }
                    ++e;
                    break;
                }
                text += s[e++];
            }
            t.kind = cql_token_kind::string;
            t.text = std::move(text);
            advance(e);
        } else if (s.substr(pos).starts_with("$$")) {
            auto end = s.find("$$", pos + 2);
            if (end == std::string_view::npos) {
                unterminated("$$ string");
            }
            t.kind = cql_token_kind::string;
            t.text = std::string(s.substr(pos + 2, end - pos - 2));
            advance(end + 2);
        } else if (std::string_view("()<>,;.={}:[]+-?*!").find(c) != std::string_view::npos) {
            t.text = std::string(1, c);
            advance(pos + 1);
        } else {
            throw cql_parse_error(tok_line, col, std::string(1, c),
                                  fmt::format("line {}, column {}: unexpected character '{}'", tok_line, col, c));
        }
        t.source = std::string(s.substr(start, pos - start));
        out.push_back(std::move(t));
    }
}

const cql_token& cql_token_stream::peek(size_t ahead) const {
    size_t i = std::min(_pos + ahead, _tokens.size() - 1);
    return _tokens[i];
}

const cql_token& cql_token_stream::next() {
    const cql_token& t = peek();
    if (_pos + 1 < _tokens.size()) {
        ++_pos;
    }
    return t;
}

bool cql_token_stream::peek_keyword(std::string_view kw, size_t ahead) const {
    auto& t = peek(ahead);
    return t.kind == cql_token_kind::identifier && lower(t.text) == kw;
}

bool cql_token_stream::peek_symbol(char c, size_t ahead) const {
    auto& t = peek(ahead);
    return t.kind == cql_token_kind::symbol && t.text[0] == c;
}

bool cql_token_stream::accept_keyword(std::string_view kw) {
    if (peek_keyword(kw)) {
        next();
        return true;
    }
    return false;
}

bool cql_token_stream::accept_symbol(char c) {
    if (peek_symbol(c)) {
        next();
        return true;
    }
    return false;
}

void cql_token_stream::expect_keyword(std::string_view kw) {
    if (!accept_keyword(kw)) {
        fail(fmt::format("{}", lower(kw) == kw ? std::string(kw) : std::string(kw)));
    }
}

void cql_token_stream::expect_symbol(char c) {
    if (!accept_symbol(c)) {
        fail(fmt::format("'{}'", c));
    }
}

std::string cql_token_stream::expect_name(std::string_view what) {
    auto& t = peek();
    if (t.kind == cql_token_kind::identifier) {
        next();
        return lower(t.text);
    }
    if (t.kind == cql_token_kind::quoted_identifier) {
        next();
        return t.text;
    }
    fail(what);
}

void cql_token_stream::fail(const cql_token& at, std::string_view expected) const {
    auto shown = at.kind == cql_token_kind::end ? at.source : "'" + at.source + "'";
    throw cql_parse_error(at.line, at.column, at.source,
                          fmt::format("line {}, column {}: unexpected {} (expected {})", at.line, at.column, shown,
                                      expected));
}

cql_token_stream::nesting_guard::nesting_guard(cql_token_stream& ts) : _ts(ts) {
    if (_ts._depth >= max_nesting) {
        auto& at = _ts.peek();
        throw cql_parse_error(at.line, at.column, at.source,
                              fmt::format("line {}, column {}: nested more than {} levels deep", at.line, at.column,
                                          max_nesting));
    }
    ++_ts._depth;
}

data_type parse_cql_type(cql_token_stream& ts, const user_type_resolver& resolve) {
    cql_token_stream::nesting_guard nested(ts);
    auto& t = ts.peek();
    if (t.kind == cql_token_kind::string) {
        // A custom type: its class name in quotes.
        ts.next();
        try {
            return parse_class_name(t.text);
        } catch (const type_parse_error& e) {
            throw cql_parse_error(t.line, t.column, t.source,
                                  fmt::format("line {}, column {}: bad custom type '{}': {}", t.line, t.column, t.text,
                                              e.what()));
        }
    }
    if (t.kind != cql_token_kind::identifier && t.kind != cql_token_kind::quoted_identifier) {
        ts.fail("a type");
    }
    const cql_token name_token = t;
    std::string name = ts.expect_name("a type");
    if (name_token.kind == cql_token_kind::identifier) {
        auto one_param = [&] {
            ts.expect_symbol('<');
            auto p = parse_cql_type(ts, resolve);
            ts.expect_symbol('>');
            return p;
        };
        if (name == "frozen") {
            return one_param()->freeze();
        }
        if (name == "list") {
            return list_type(one_param(), true);
        }
        if (name == "set") {
            return set_type(one_param(), true);
        }
        if (name == "map") {
            ts.expect_symbol('<');
            auto k = parse_cql_type(ts, resolve);
            ts.expect_symbol(',');
            auto v = parse_cql_type(ts, resolve);
            ts.expect_symbol('>');
            return map_type(k, v, true);
        }
        if (name == "vector" && ts.peek_symbol('<')) {
            // vector<T, N> (Cassandra 5.0): N a positive integer literal.
            ts.expect_symbol('<');
            auto element = parse_cql_type(ts, resolve);
            ts.expect_symbol(',');
            const cql_token n = ts.peek();
            int64_t dimension = 0;
            auto [p, ec] = std::from_chars(n.text.data(), n.text.data() + n.text.size(), dimension);
            if (n.kind != cql_token_kind::number || ec != std::errc() || p != n.text.data() + n.text.size() ||
                dimension > INT32_MAX) {
                ts.fail(n, "an integer dimension");
            }
            if (dimension <= 0) {
                // An INTEGER to Cassandra's grammar; VectorType refuses it as invalid (typo included).
                throw cql::invalid_request(
                    fmt::format("vectors may only have positive dimentions; given {}", dimension));
            }
            ts.next();
            ts.expect_symbol('>');
            return vector_type(element, uint32_t(dimension));
        }
        if (name == "tuple") {
            ts.expect_symbol('<');
            std::vector<data_type> fields;
            do {
                fields.push_back(parse_cql_type(ts, resolve));
            } while (ts.accept_symbol(','));
            ts.expect_symbol('>');
            return tuple_type(std::move(fields));
        }
        static const std::pair<std::string_view, type_kind> natives[] = {
            {"ascii", type_kind::ascii}, {"bigint", type_kind::bigint}, {"blob", type_kind::blob},
            {"boolean", type_kind::boolean}, {"counter", type_kind::counter}, {"date", type_kind::date},
            {"decimal", type_kind::decimal}, {"double", type_kind::double_}, {"duration", type_kind::duration},
            {"float", type_kind::float_}, {"inet", type_kind::inet}, {"int", type_kind::int32},
            {"smallint", type_kind::smallint}, {"text", type_kind::text}, {"varchar", type_kind::text},
            {"time", type_kind::time}, {"timestamp", type_kind::timestamp}, {"timeuuid", type_kind::timeuuid},
            {"tinyint", type_kind::tinyint}, {"uuid", type_kind::uuid}, {"varint", type_kind::varint},
        };
        for (auto& [n, k] : natives) {
            if (name == n) {
                return native_type(k);
            }
        }
    }
    std::string keyspace;
    if (ts.accept_symbol('.')) {
        keyspace = std::move(name);
        name = ts.expect_name("a type name");
    }
    data_type udt = resolve ? resolve(keyspace, name) : nullptr;
    if (!udt) {
        ts.fail(name_token, fmt::format("a known type (no type named {}{})", keyspace.empty() ? "" : keyspace + ".",
                                        name));
    }
    return udt;
}

data_type parse_cql_type(std::string_view s, const user_type_resolver& resolve) {
    try {
        cql_token_stream ts(tokenize_cql(s));
        auto t = parse_cql_type(ts, resolve);
        if (!ts.at_end()) {
            ts.fail("end of the type");
        }
        return t;
    } catch (const cql_parse_error& e) {
        throw type_parse_error(e.what());
    } catch (const cql::cql_error& e) {
        throw type_parse_error(e.what());
    }
}

} // namespace reef
