// request_reader: the protocol's primitive types read from a request body, and the request messages (STARTUP,
// REGISTER, QUERY, PREPARE, EXECUTE, BATCH) decoded into the cql/ seam's types. Every read is bounds-checked;
// malformed input throws cql_error(protocol_error) naming the message, the field and its offset in the body.
#pragma once

#include "cql/query_handler.hh"
#include "cql/query_options.hh"
#include "schema/bytes.hh"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace reef::transport {

class request_reader {
public:
    // `message` names the request in errors ("QUERY").
    request_reader(bytes_view body, std::string_view message) : _in(body), _message(message) {}

    size_t offset() const noexcept { return _pos; }
    size_t remaining() const noexcept { return _in.size() - _pos; }

    uint8_t read_byte(std::string_view field);
    uint16_t read_short(std::string_view field);
    int32_t read_int(std::string_view field);
    int64_t read_long(std::string_view field);
    std::string read_string(std::string_view field);
    std::string read_long_string(std::string_view field);
    std::vector<std::string> read_string_list(std::string_view field);
    // [bytes]: std::nullopt for a negative length.
    std::optional<bytes> read_bytes(std::string_view field);
    bytes read_short_bytes(std::string_view field);
    // [value]: -1 null, -2 unset; below -2 refused.
    cql::raw_value read_value(std::string_view field);
    cql::consistency_level read_consistency(std::string_view field);
    std::map<std::string, std::string> read_string_map(std::string_view field);
    std::map<std::string, std::vector<std::string>> read_string_multimap(std::string_view field);
    std::map<std::string, std::optional<bytes>> read_bytes_map(std::string_view field);

    // A protocol_error naming the message, `field` and the offset `at`.
    [[noreturn]] void fail(std::string_view field, size_t at, std::string_view why) const;

private:
    const uint8_t* need(std::string_view field, size_t n);
    // A count read at `at` whose elements take at least `min_each` bytes: refused when they cannot fit.
    void check_count(std::string_view field, size_t at, size_t count, size_t min_each) const;

    bytes_view _in;
    size_t _pos = 0;
    std::string_view _message;
};

struct query_request {
    std::string query;
    cql::query_options options;
};

struct execute_request {
    bytes id;
    cql::query_options options;
};

struct batch_request {
    cql::batch_type type = cql::batch_type::logged;
    std::vector<cql::batch_entry> entries;
    cql::query_options options;
};

// The request bodies (after a custom payload, which the caller skips with read_bytes_map).
std::map<std::string, std::string> read_startup(request_reader& in);
std::vector<std::string> read_register(request_reader& in);
query_request read_query(request_reader& in);
std::string read_prepare(request_reader& in);
execute_request read_execute(request_reader& in);
batch_request read_batch(request_reader& in);

// The query parameters of QUERY and EXECUTE.
cql::query_options read_query_options(request_reader& in);

} // namespace reef::transport
