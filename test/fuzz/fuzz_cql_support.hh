// The body of the fuzz_cql_frame libFuzzer target (test/fuzz/fuzz_cql_frame.cc), also run by
// transport/frame_fuzz_test with g++: bytes read as a client's stream of frames, each decoded, decompressed and
// parsed as the server would. Only cql_error(protocol_error), the server's answer to bad input, is "handled"; any
// other exception escapes and any crash or sanitizer report is a finding.
#pragma once

#include "transport/compression.hh"
#include "transport/frame.hh"
#include "transport/request_reader.hh"
#include "transport/response_writer.hh"

#include <cstdint>
#include <span>

namespace reef::fuzz {

// One frame's body, as connection::respond reads it.
inline void cql_request_body(const transport::frame_header& h, bytes_view body) {
    using namespace transport;
    bytes plain;
    if (h.flags & frame_flags::compression) {
        // The stream id's low bit picks the algorithm, so both decompressors see every input.
        auto algo = (h.stream & 1) ? compression_algorithm::snappy : compression_algorithm::lz4;
        plain = decompress_body(algo, body, 1 << 20);
        body = plain;
    }
    auto name = opcode_name(h.op);
    request_reader in(body, name);
    if (h.flags & frame_flags::custom_payload) {
        in.read_bytes_map("[bytes map] custom payload");
    }
    switch (opcode(h.op)) {
    case opcode::startup: {
        auto m = read_startup(in);
        std::map<std::string, std::vector<std::string>> mm;
        for (auto& [k, v] : m) {
            mm[k].push_back(v);
        }
        auto b = encode_supported(mm);
        request_reader back(b, "SUPPORTED");
        if (back.read_string_multimap("m") != mm) {
            __builtin_trap();
        }
        break;
    }
    case opcode::register_: read_register(in); break;
    case opcode::query: read_query(in); break;
    case opcode::prepare: read_prepare(in); break;
    case opcode::execute: read_execute(in); break;
    case opcode::batch: read_batch(in); break;
    default: break;
    }
}

inline void cql_frame_input(std::span<const uint8_t> in) {
    using namespace transport;
    constexpr uint32_t max_frame = 1 << 16;
    size_t pos = 0;
    while (pos < in.size()) {
        auto rest = in.subspan(pos);
        std::optional<frame_header> h;
        try {
            h = decode_frame_header(rest, max_frame);
        } catch (const frame_error& e) {
            if (e.fatal()) {
                return;
            }
            pos += frame_header_size + e.skip();
            continue;
        }
        if (!h) {
            return;
        }
        size_t len = std::min<size_t>(h->length, rest.size() - frame_header_size);
        try {
            cql_request_body(*h, rest.subspan(frame_header_size, len));
        } catch (const cql::cql_error& e) {
            if (e.code() != cql::error_code::protocol_error) {
                throw;
            }
        }
        pos += frame_header_size + len;
    }
}

} // namespace reef::fuzz
