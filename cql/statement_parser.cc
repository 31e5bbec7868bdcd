#include "cql/statement_parser.hh"

#include "cql/cql_error.hh"
#include "cql/ddl_statements.hh"
#include "cql/describe_statement.hh"
#include "cql/select_statement.hh"
#include "cql/batch_statement.hh"
#include "cql/modification_statement.hh"

#include <fmt/core.h>
#include <utility>

namespace reef::cql {

namespace {

// The first keyword of each statement kind and its parser; each statement kind's file adds its line.
struct statement_kind {
    std::string_view keyword;
    statement_kind_parser parse;
};

const statement_kind statement_kinds[] = {
    {"use", parse_use_statement},
    {"create", parse_create_statement},
    {"alter", parse_alter_statement},
    {"drop", parse_drop_statement},
    {"truncate", parse_truncate_statement},
    {"describe", parse_describe_statement},
    {"desc", parse_describe_statement},
    {"select", parse_select_statement},
    {"insert", parse_insert_statement},
    {"update", parse_update_statement},
    {"delete", parse_delete_statement},
    {"begin", parse_batch_statement},
};

} // namespace

std::unique_ptr<raw_statement> parse_statement(std::string_view text) {
    try {
        cql_token_stream ts(tokenize_cql(text));
        if (ts.at_end()) {
            throw syntax_error("line 1:0 no viable alternative: empty statement");
        }
        for (const auto& kind : statement_kinds) {
            if (kind.parse && ts.peek_keyword(kind.keyword)) {
                auto st = kind.parse(ts);
                ts.accept_symbol(';');
                if (!ts.at_end()) {
                    ts.fail("end of statement");
                }
                return st;
            }
        }
        ts.fail("a statement");
    } catch (const cql_parse_error& e) {
        // Cassandra's form: "line L:C <message>" (the parser's own "line L, column C: " prefix dropped).
        std::string message = e.what();
        if (auto prefix = fmt::format("line {}, column {}: ", e.line(), e.column()); message.starts_with(prefix)) {
            message.erase(0, prefix.size());
        }
        throw syntax_error(fmt::format("line {}:{} {}", e.line(), e.column() > 0 ? e.column() - 1 : 0, message));
    }
}

} // namespace reef::cql
