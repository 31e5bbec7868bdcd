// statement_parser: CQL text to one raw_statement. Dispatches on the first keyword(s) to the parser of that
// statement kind; an error is a cql_error with code syntax_error naming the line, column and offending token.
#pragma once

#include "cql/cql_lexer.hh"
#include "cql/cql_statement.hh"

#include <memory>
#include <string_view>

namespace reef::cql {

// One statement (a trailing ';' is allowed). Throws cql_error(syntax_error).
std::unique_ptr<raw_statement> parse_statement(std::string_view text);

// The parser of one statement kind: called with the stream at the statement's first token; consumes the
// statement (not the trailing ';').
using statement_kind_parser = std::unique_ptr<raw_statement> (*)(cql_token_stream& ts);

} // namespace reef::cql
