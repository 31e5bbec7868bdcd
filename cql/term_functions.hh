// term_functions: the native scalar functions a term may call (now(), uuid(), currentTimestamp(), toTimestamp(),
// minTimeuuid(), textAsBlob() ..., fromJson()), Cassandra's system functions of the same names and results.
#pragma once

#include "cql/query_options.hh"
#include "schema/types.hh"

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace reef::cql {

struct native_function {
    // Lower case, without "system.".
    std::string name;
    std::vector<data_type> arg_types;
    // nullptr: the receiver's type (fromJson).
    data_type return_type;
    // Pure functions of terminal arguments could run at prepare; now() and friends run at every bind.
    bool pure = true;
    // The arguments' values (null ones included: most functions return null for a null argument). `result` is
    // the type the result must have. Throws cql_error (function_failure) on bad input.
    std::function<raw_value(const std::vector<raw_value>& args, const data_type& result)> call;
};

// Every overload named `name` (lower case, "system." stripped). Empty when there is none.
std::vector<const native_function*> find_native_functions(std::string_view name);

} // namespace reef::cql
