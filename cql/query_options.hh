// query_options: what a QUERY, EXECUTE or BATCH frame says about how to run its statement(s): the bound values,
// consistency, paging and the default timestamp. transport/ decodes it; statements read it.
#pragma once

#include "cql/cql_error.hh"
#include "schema/bytes.hh"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace reef::cql {

// A bound value as the protocol sends it: bytes, null ([bytes] length -1) or, in v4, unset (length -2: the
// statement behaves as if that part was not written).
struct raw_value {
    enum class state : uint8_t { value, null, unset };
    state st = state::null;
    bytes data;

    static raw_value of(bytes b) { return {state::value, std::move(b)}; }
    static raw_value null_value() { return {state::null, {}}; }
    static raw_value unset_value() { return {state::unset, {}}; }
    bool is_value() const noexcept { return st == state::value; }
    bool is_null() const noexcept { return st == state::null; }
    bool is_unset() const noexcept { return st == state::unset; }
};

struct query_options {
    consistency_level consistency = consistency_level::one;
    // Positional values, in bind-marker order; with names (flag 0x40), `names[i]` names `values[i]` and the statement
    // orders them by its bind variables' names.
    std::vector<raw_value> values;
    std::vector<std::string> names;
    // The client already has the result metadata: Rows results carry the No_metadata flag and no column specs.
    bool skip_metadata = false;
    // Rows per page; <= 0 means no paging (everything at once).
    int32_t page_size = -1;
    // The paging_state of the previous page's result (opaque to the client: cql/ encodes it).
    std::optional<bytes> paging_state;
    consistency_level serial_consistency = consistency_level::serial;
    // Microseconds since the epoch (flag 0x20); otherwise the server's clock.
    std::optional<int64_t> timestamp;
};

} // namespace reef::cql
