// response_writer: the protocol's primitive types appended to a response body, and the bodies of the responses
// Reef sends (ERROR, READY, SUPPORTED, RESULT of every cql::result_message kind, EVENT). Pure: no I/O, no shard.
#pragma once

#include "cql/cql_error.hh"
#include "cql/result_message.hh"
#include "schema/bytes.hh"
#include "schema/types.hh"

#include <cstdint>
#include <exception>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace reef::transport {

class response_writer {
public:
    void write_byte(uint8_t v) { _out.push_back(v); }
    void write_short(uint16_t v);
    void write_int(int32_t v);
    void write_long(int64_t v);
    // [string]: throws std::length_error above 65535 bytes (a server bug, never input).
    void write_string(std::string_view s);
    void write_long_string(std::string_view s);
    void write_string_list(const std::vector<std::string>& l);
    void write_bytes(const std::optional<bytes>& b);
    void write_short_bytes(bytes_view b);
    void write_consistency(cql::consistency_level cl) { write_short(uint16_t(cl)); }
    void write_string_multimap(const std::map<std::string, std::vector<std::string>>& m);
    // [option]: a type's id and its parameters (FORMAT.md, "RESULT").
    void write_type_option(const data_type& t);
    void write_raw(bytes_view b) { _out.insert(_out.end(), b.begin(), b.end()); }

    bytes& data() noexcept { return _out; }
    bytes release() noexcept { return std::move(_out); }

private:
    bytes _out;
};

// The body of a RESULT for `m`. skip_metadata: Rows carry No_metadata (the client has it).
bytes encode_result(const cql::result_message& m, bool skip_metadata);
// ERROR for a cql_error, with its code's extra fields.
bytes encode_error(const cql::cql_error& e);
// ERROR for any exception: a cql_error as above, anything else a server_error with its what().
bytes encode_error(std::exception_ptr ex);
// SUPPORTED's body.
bytes encode_supported(const std::map<std::string, std::vector<std::string>>& options);
// EVENT SCHEMA_CHANGE's body (also a Schema_change RESULT's after its kind).
bytes encode_schema_change_event(const cql::schema_change& c);

} // namespace reef::transport
