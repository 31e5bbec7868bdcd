#include "transport/frame.hh"

#include "utils/big_endian.hh"

#include <fmt/format.h>

namespace reef::transport {

std::string opcode_name(uint8_t op) {
    switch (opcode(op)) {
    case opcode::error: return "ERROR";
    case opcode::startup: return "STARTUP";
    case opcode::ready: return "READY";
    case opcode::authenticate: return "AUTHENTICATE";
    case opcode::options: return "OPTIONS";
    case opcode::supported: return "SUPPORTED";
    case opcode::query: return "QUERY";
    case opcode::result: return "RESULT";
    case opcode::prepare: return "PREPARE";
    case opcode::execute: return "EXECUTE";
    case opcode::register_: return "REGISTER";
    case opcode::event: return "EVENT";
    case opcode::batch: return "BATCH";
    case opcode::auth_challenge: return "AUTH_CHALLENGE";
    case opcode::auth_response: return "AUTH_RESPONSE";
    case opcode::auth_success: return "AUTH_SUCCESS";
    }
    return fmt::format("{:#04x}", op);
}

bool is_request_opcode(uint8_t op) noexcept {
    switch (opcode(op)) {
    case opcode::startup:
    case opcode::options:
    case opcode::query:
    case opcode::prepare:
    case opcode::execute:
    case opcode::register_:
    case opcode::batch:
    case opcode::auth_response:
        return true;
    default:
        return false;
    }
}

std::optional<frame_header> decode_frame_header(std::span<const uint8_t> in, uint32_t max_frame_size) {
    if (in.empty()) {
        return std::nullopt;
    }
    uint8_t version = in[0] & 0x7f;
    bool response = in[0] & response_direction;
    if (version != protocol_version || response) {
        // Versions 1 and 2 have a 1-byte stream at offset 2; later ones 2 bytes. Answer on that stream.
        size_t need = version < 3 ? 3 : 4;
        if (in.size() < need) {
            return std::nullopt;
        }
        int16_t stream = version < 3 ? int16_t(int8_t(in[2])) : utils::read_be_unchecked<int16_t>(in.data() + 2);
        if (response) {
            throw frame_error(stream, fmt::format("Invalid frame header at offset 0: the direction bit (0x80) of "
                                                  "version byte {:#04x} marks a response, not a request", in[0]),
                              true);
        }
        throw frame_error(stream,
                          fmt::format("Invalid or unsupported protocol version ({}); the lowest supported version "
                                      "is {} and the greatest is {}",
                                      version, protocol_version, protocol_version),
                          true);
    }
    if (in.size() < frame_header_size) {
        return std::nullopt;
    }
    frame_header h;
    h.version = version;
    h.flags = in[1];
    h.stream = utils::read_be_unchecked<int16_t>(in.data() + 2);
    h.op = in[4];
    h.length = utils::read_be_unchecked<uint32_t>(in.data() + 5);
    if (h.length > uint32_t(INT32_MAX)) {
        throw frame_error(h.stream,
                          fmt::format("Invalid frame header at offset 5: body length {} is negative",
                                      int32_t(h.length)),
                          true);
    }
    // Cassandra counts the header in the frame's length, and answers Invalid (not a protocol error).
    uint64_t frame_length = uint64_t(h.length) + frame_header_size;
    if (frame_length > max_frame_size) {
        throw frame_error(h.stream,
                          fmt::format("Request is too big: length {} exceeds maximum allowed length {}.",
                                      frame_length, max_frame_size),
                          false, h.length, cql::error_code::invalid);
    }
    if (!is_request_opcode(h.op)) {
        throw frame_error(h.stream, fmt::format("Unknown or unsupported opcode {} at offset 4 of the frame header",
                                                opcode_name(h.op)),
                          false, h.length);
    }
    return h;
}

std::array<uint8_t, frame_header_size> encode_frame_header(const frame_header& h) {
    std::array<uint8_t, frame_header_size> out{};
    out[0] = protocol_version | response_direction;
    out[1] = h.flags;
    utils::write_be_unchecked<int16_t>(out.data() + 2, h.stream);
    out[4] = h.op;
    utils::write_be_unchecked<uint32_t>(out.data() + 5, h.length);
    return out;
}

} // namespace reef::transport
