// cql_error: a request refused or failed, with the native protocol's error code (protocol v4, section 9) and the
// code's extra fields. Every statement and the transport throw this; transport/ maps it to an ERROR frame.
#pragma once

#include "schema/bytes.hh"

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

namespace reef::cql {

// The codes of protocol v4's ERROR message.
enum class error_code : int32_t {
    server_error = 0x0000,
    protocol_error = 0x000A,
    bad_credentials = 0x0100,
    unavailable = 0x1000,
    overloaded = 0x1001,
    is_bootstrapping = 0x1002,
    truncate_error = 0x1003,
    write_timeout = 0x1100,
    read_timeout = 0x1200,
    read_failure = 0x1300,
    function_failure = 0x1400,
    write_failure = 0x1500,
    syntax_error = 0x2000,
    unauthorized = 0x2100,
    invalid = 0x2200,
    config_error = 0x2300,
    already_exists = 0x2400,
    unprepared = 0x2500,
};

// The consistency levels of the protocol ([consistency], a [short]). One node satisfies them all.
enum class consistency_level : uint16_t {
    any = 0x0000,
    one = 0x0001,
    two = 0x0002,
    three = 0x0003,
    quorum = 0x0004,
    all = 0x0005,
    local_quorum = 0x0006,
    each_quorum = 0x0007,
    serial = 0x0008,
    local_serial = 0x0009,
    local_one = 0x000A,
};

// The write_type of a write timeout.
enum class write_type { simple, batch, unlogged_batch, counter, batch_log, cas, view, cdc };

// The extra fields some codes carry; only those of `code` are read.
struct error_details {
    consistency_level consistency = consistency_level::one;
    int32_t received = 0;
    int32_t block_for = 1;
    bool data_present = false;                       // read_timeout
    write_type wtype = write_type::simple;          // write_timeout
    std::string keyspace;                            // already_exists
    std::string table;                               // already_exists ("" for a keyspace)
    bytes unprepared_id;                             // unprepared
};

class cql_error : public std::runtime_error {
public:
    cql_error(error_code code, const std::string& message, error_details details = {})
        : std::runtime_error(message), _code(code), _details(std::move(details)) {}
    error_code code() const noexcept { return _code; }
    const error_details& details() const noexcept { return _details; }

private:
    error_code _code;
    error_details _details;
};

// The common refusals, each naming the offending part in its message.
inline cql_error syntax_error(const std::string& message) { return cql_error(error_code::syntax_error, message); }
inline cql_error invalid_request(const std::string& message) { return cql_error(error_code::invalid, message); }

} // namespace reef::cql
