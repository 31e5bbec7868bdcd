// Tokens of CQL text for the schema parser: identifiers, strings, numbers, uuids and symbols, each with its line
// and column; comments (--, //, /* */) are dropped. Also the CQL type grammar over those tokens.
#pragma once

#include "schema/types.hh"

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace reef {

// A syntax error at a place in the text, naming the offending token.
class cql_parse_error : public std::runtime_error {
    size_t _line;
    size_t _column;
    std::string _token;
public:
    cql_parse_error(size_t line, size_t column, std::string token, const std::string& message);
    size_t line() const { return _line; }
    size_t column() const { return _column; }
    const std::string& token() const { return _token; }
};

enum class cql_token_kind {
    // An unquoted word; text is as written (keywords compare case-insensitively, names are lowercased).
    identifier,
    // "Name": text without the quotes, case kept.
    quoted_identifier,
    // '...' or $$...$$: text without quotes, '' unescaped.
    string,
    number,
    // 0x...: text keeps the prefix.
    hex,
    uuid,
    // One of ( ) < > , ; . = { } : [ ] + - ?
    symbol,
    end,
};

struct cql_token {
    cql_token_kind kind;
    std::string text;
    // 1-based.
    size_t line;
    size_t column;
    // The token as written in the source, for error messages.
    std::string source;
};

std::vector<cql_token> tokenize_cql(std::string_view text);

class cql_token_stream {
    std::vector<cql_token> _tokens;
    size_t _pos = 0;
    int _depth = 0;
public:
    // How deep terms, selectors and types may nest: a parser recursing deeper would overflow the stack on
    // hostile input (a client's 100000 '('s), so it fails with a syntax error instead. Cassandra's own statements
    // need a handful of levels.
    static constexpr int max_nesting = 100;
    // Held by each recursive parse step; its constructor fails (cql_parse_error at the current token) past
    // max_nesting.
    class nesting_guard {
        cql_token_stream& _ts;
    public:
        explicit nesting_guard(cql_token_stream& ts);
        ~nesting_guard() { --_ts._depth; }
        nesting_guard(const nesting_guard&) = delete;
        nesting_guard& operator=(const nesting_guard&) = delete;
    };

    explicit cql_token_stream(std::vector<cql_token> tokens) : _tokens(std::move(tokens)) {}
    const cql_token& peek(size_t ahead = 0) const;
    const cql_token& next();
    bool at_end() const { return peek().kind == cql_token_kind::end; }
    bool peek_keyword(std::string_view kw, size_t ahead = 0) const;
    bool peek_symbol(char c, size_t ahead = 0) const;
    bool accept_keyword(std::string_view kw);
    bool accept_symbol(char c);
    void expect_keyword(std::string_view kw);
    void expect_symbol(char c);
    // An identifier (unquoted: lowercased) or a quoted identifier (as written).
    std::string expect_name(std::string_view what);
    [[noreturn]] void fail(const cql_token& at, std::string_view expected) const;
    [[noreturn]] void fail(std::string_view expected) const { fail(peek(), expected); }
};

// Parses a CQL type from the stream: native names, frozen<...>, list/set/map/tuple<...>, user type names
// ([keyspace.]name, through the resolver), and 'custom class name' strings.
data_type parse_cql_type(cql_token_stream& ts, const user_type_resolver& resolve);

} // namespace reef
