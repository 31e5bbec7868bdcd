// The body of the fuzz_cql_statement libFuzzer target (test/fuzz/fuzz_cql_statement.cc), also run by
// cql/statement_fuzz_test with g++: bytes as the text of one CQL statement through the lexer and
// cql::parse_statement. Only cql_error, the refusal a client gets, is "handled"; any other exception escapes and
// any crash, hang or sanitizer report is a finding. Preparation needs a running database, so it is not reached.
#pragma once

#include "cql/cql_error.hh"
#include "cql/statement_parser.hh"

#include <cstdint>
#include <span>
#include <string_view>

namespace reef::fuzz {

inline void cql_statement_input(std::span<const uint8_t> in) {
    std::string_view text(reinterpret_cast<const char*>(in.data()), in.size());
    try {
        if (!cql::parse_statement(text)) {
            __builtin_trap();  // parse_statement returns a statement or throws
        }
    } catch (const cql::cql_error&) {
    }
}

} // namespace reef::fuzz
