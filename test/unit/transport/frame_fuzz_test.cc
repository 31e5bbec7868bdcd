// The fuzz_cql_frame target's body (test/fuzz/fuzz_cql_support.hh) under g++: valid streams of frames of every
// request opcode, compressed and not, parse; 100000 random mutations of them (byte flips, insertions, cuts,
// spliced streams) end in protocol_errors only; and the committed findings under
// test/fuzz/regressions/fuzz_cql_frame/ (if any) replay cleanly.
#include "test/fuzz/fuzz_cql_support.hh"

#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>

using namespace reef;
using namespace reef::transport;

namespace {

bytes frame_of(uint8_t op, int16_t stream, bytes body, uint8_t flags = 0) {
    if (flags & frame_flags::compression) {
        body = compress_body((stream & 1) ? compression_algorithm::snappy : compression_algorithm::lz4, body);
    }
    bytes b{4, flags, uint8_t(uint16_t(stream) >> 8), uint8_t(stream), op, uint8_t(body.size() >> 24),
            uint8_t(body.size() >> 16), uint8_t(body.size() >> 8), uint8_t(body.size())};
    b.insert(b.end(), body.begin(), body.end());
    return b;
}

// One stream holding a frame of every request opcode, some compressed, one with a custom payload.
bytes valid_stream() {
    bytes out;
    auto add = [&](bytes f) { out.insert(out.end(), f.begin(), f.end()); };
    add(frame_of(uint8_t(opcode::options), 0, {}));
    {
        response_writer w;
        w.write_short(2);
        w.write_string("CQL_VERSION");
        w.write_string("3.0.0");
        w.write_string("COMPRESSION");
        w.write_string("lz4");
        add(frame_of(uint8_t(opcode::startup), 1, w.release()));
    }
    {
        response_writer w;
        w.write_string_list({"SCHEMA_CHANGE"});
        add(frame_of(uint8_t(opcode::register_), 2, w.release(), frame_flags::compression));
    }
    response_writer q;
    q.write_long_string("SELECT * FROM ks.t WHERE pk = ?");
    q.write_short(1);
    q.write_byte(0x3f);
    q.write_short(1);
    q.write_bytes(bytes{0, 0, 0, 1});
    q.write_int(100);
    q.write_bytes(bytes{1, 2});
    q.write_short(8);
    q.write_long(42);
    auto query = q.release();
    add(frame_of(uint8_t(opcode::query), 3, query, frame_flags::compression));
    add(frame_of(uint8_t(opcode::query), 4, query));
    {
        response_writer w;
        w.write_short(1);
        w.write_string("k");
        w.write_bytes(bytes{9});
        w.write_raw(query);
        add(frame_of(uint8_t(opcode::query), 5, w.release(), frame_flags::custom_payload));
    }
    {
        response_writer w;
        w.write_long_string("INSERT INTO t (a) VALUES (?)");
        add(frame_of(uint8_t(opcode::prepare), 6, w.release()));
    }
    {
        response_writer w;
        w.write_short_bytes(bytes(16, 7));
        bytes opts(query.begin() + 4 + 31, query.end());
        w.write_raw(opts);
        add(frame_of(uint8_t(opcode::execute), 7, w.release(), frame_flags::compression));
    }
    {
        response_writer w;
        w.write_byte(0);
        w.write_short(1);
        w.write_byte(0);
        w.write_long_string("INSERT INTO t (a) VALUES (1)");
        w.write_short(0);
        w.write_short(1);
        w.write_byte(0x20);
        w.write_long(5);
        add(frame_of(uint8_t(opcode::batch), 8, w.release()));
    }
    return out;
}

} // namespace

BOOST_AUTO_TEST_CASE(test_valid_streams_parse) {
    auto s = valid_stream();
    // Every frame parses: a protocol_error would have been swallowed, so parse each on its own and require success.
    size_t pos = 0, frames = 0;
    while (pos < s.size()) {
        auto h = decode_frame_header(bytes_view(s).subspan(pos), 1 << 16);
        BOOST_REQUIRE(h);
        BOOST_CHECK_NO_THROW(fuzz::cql_request_body(*h, bytes_view(s).subspan(pos + 9, h->length)));
        pos += 9 + h->length;
        ++frames;
    }
    BOOST_CHECK_EQUAL(frames, 9u);
    fuzz::cql_frame_input(s);
}

BOOST_AUTO_TEST_CASE(test_random_mutations_end_in_protocol_errors) {
    std::mt19937_64 rng(2024);
    auto seed = valid_stream();
    for (int iter = 0; iter < 100000; ++iter) {
        auto b = seed;
        switch (rng() % 4) {
        case 0:
            for (int k = 1 + rng() % 6; k > 0; --k) {
                b[rng() % b.size()] = uint8_t(rng());
            }
            break;
        case 1: {
            size_t at = rng() % b.size();
            b.insert(b.begin() + at, uint8_t(rng()));
            break;
        }
        case 2:
            b.resize(rng() % b.size());
            break;
        case 3: {
            size_t from = rng() % b.size();
            b.insert(b.begin() + rng() % b.size(), seed.begin() + from, seed.begin() + std::min(seed.size(), from + 40));
            break;
        }
        }
        fuzz::cql_frame_input(b);
    }
}

BOOST_AUTO_TEST_CASE(test_committed_findings_replay) {
    namespace fs = std::filesystem;
    std::optional<fs::path> dir;
    for (auto d = fs::current_path(); d != d.parent_path(); d = d.parent_path()) {
        if (fs::is_directory(d / "test" / "fuzz")) {
            dir = d / "test" / "fuzz" / "regressions" / "fuzz_cql_frame";
            break;
        }
    }
    BOOST_REQUIRE(dir);
    size_t n = 0;
    if (fs::is_directory(*dir)) {
        for (auto& e : fs::recursive_directory_iterator(*dir)) {
            if (e.is_regular_file()) {
                std::ifstream f(e.path(), std::ios::binary);
                std::string s((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
                fuzz::cql_frame_input({reinterpret_cast<const uint8_t*>(s.data()), s.size()});
                ++n;
            }
        }
    }
    BOOST_TEST_MESSAGE(n << " findings replayed");
}
