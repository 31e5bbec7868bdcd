// cql_conformance: reading ../shared/cql-conformance cases (statements, @fetch_size directives, expected outcomes)
// and comparing a Rows result with Cassandra's recorded one by the runner's canonical value forms
// (../shared/tools/cql-conformance/README.md, "Value canonicalization"), for C++ tests before a server exists.
#pragma once

#include "cql/result_message.hh"
#include "utils/json_reader.hh"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace reef::testing {

struct conformance_statement {
    std::string text;  // with {ks}
    int fetch_size = 0;  // 0: none given (the runner's driver pages by 5000)
};

struct conformance_case {
    std::string name;
    std::vector<conformance_statement> statements;
    // One per statement.
    std::vector<utils::json_value> expected;
};

// ../shared/cql-conformance/cases, found above the working directory or the binary; none when absent.
std::optional<std::filesystem::path> conformance_cases_dir();

// The case NAME (NAME.cql and NAME.expected.json). Throws std::runtime_error on unreadable files.
conformance_case read_conformance_case(const std::filesystem::path& dir, const std::string& name);

// The protocol's name of an error code ("invalid", "syntax_error", ...).
std::string error_class_name(int32_t code);

// The canonical JSON text of a value of type t (null: "null").
std::string canonical_value(const data_type& t, const std::optional<bytes>& v);
// A result column's type as the runner writes it (no frozen<>).
std::string canonical_type_name(const data_type& t);

// "" when `got` (columns and rows, keyspace name `ks` written {ks}) is the expected outcome, else what differs.
std::string compare_rows(const utils::json_value& expected, const std::vector<cql::column_spec>& columns,
                         const std::vector<std::vector<std::optional<bytes>>>& rows, const std::string& ks);

} // namespace reef::testing
