// libFuzzer target: arbitrary bytes as the text of one CQL statement, through the lexer and the statement parser;
// see fuzz_cql_statement_support.hh.
#include "test/fuzz/fuzz_cql_statement_support.hh"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    reef::fuzz::cql_statement_input({data, size});
    return 0;
}
