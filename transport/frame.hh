// frame: the native protocol v4 frame header (9 bytes: version, flags, stream, opcode, length), its opcodes and
// flags. decode_frame_header never reads past the 9 bytes and reports every refusal as a frame_error.
#pragma once

#include "cql/cql_error.hh"

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

namespace reef::transport {

inline constexpr uint8_t protocol_version = 4;
inline constexpr uint8_t response_direction = 0x80;
inline constexpr size_t frame_header_size = 9;
// native_transport_max_frame_size_in_mb's default (ScyllaDB, Cassandra 3).
inline constexpr uint32_t default_max_frame_size = 256u << 20;

enum class opcode : uint8_t {
    error = 0x00,
    startup = 0x01,
    ready = 0x02,
    authenticate = 0x03,
    options = 0x05,
    supported = 0x06,
    query = 0x07,
    result = 0x08,
    prepare = 0x09,
    execute = 0x0A,
    register_ = 0x0B,
    event = 0x0C,
    batch = 0x0D,
    auth_challenge = 0x0E,
    auth_response = 0x0F,
    auth_success = 0x10,
};

// "QUERY", "EXECUTE", ...; "0x2a" for a byte that is no opcode.
std::string opcode_name(uint8_t op);
// True for the opcodes a client may send.
bool is_request_opcode(uint8_t op) noexcept;

namespace frame_flags {
inline constexpr uint8_t compression = 0x01;
inline constexpr uint8_t tracing = 0x02;
inline constexpr uint8_t custom_payload = 0x04;
inline constexpr uint8_t warning = 0x08;
inline constexpr uint8_t beta = 0x10;
} // namespace frame_flags

struct frame_header {
    uint8_t version = protocol_version;
    uint8_t flags = 0;
    int16_t stream = 0;
    uint8_t op = 0;
    uint32_t length = 0;
};

// A request the server refuses with an ERROR (protocol_error, or invalid for a frame too big, as Cassandra) on
// `stream`. `fatal`: the byte stream cannot be framed any further (bad version, insane length), so the connection
// closes once the error is written.
class frame_error : public cql::cql_error {
public:
    frame_error(int16_t stream, const std::string& message, bool fatal, uint32_t skip = 0,
                cql::error_code code = cql::error_code::protocol_error)
        : cql::cql_error(code, message), _stream(stream), _fatal(fatal), _skip(skip) {}
    int16_t stream() const noexcept { return _stream; }
    bool fatal() const noexcept { return _fatal; }
    // Not fatal: the body bytes after the header to read and drop before the next frame.
    uint32_t skip() const noexcept { return _skip; }

private:
    int16_t _stream;
    bool _fatal;
    uint32_t _skip;
};

// Decodes a request header from its first 9 bytes (fewer: std::nullopt, wait for more; a version-1/2 header is
// judged on its first 3 bytes). Throws frame_error: fatal for a version other than 4 or the response direction
// bit, or a length with bit 31 set; not fatal for a frame (header and body) above max_frame_size (an invalid
// request, its body skipped) or an opcode a client may not send. The texts are Cassandra's (FORMAT.md).
std::optional<frame_header> decode_frame_header(std::span<const uint8_t> in, uint32_t max_frame_size);

// The 9 bytes of a response header (version 0x84).
std::array<uint8_t, frame_header_size> encode_frame_header(const frame_header& h);

} // namespace reef::transport
