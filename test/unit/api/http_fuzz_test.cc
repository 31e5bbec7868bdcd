// fuzz_http_request's body run with g++ (the libFuzzer build needs clang): valid request streams and thousands of
// random corruptions of them (bytes flipped, cut, repeated, spliced, piece sizes varied) go through the parser,
// the route table and the response writer without a crash, an escaping exception or a broken reply.
#include "test/fuzz/fuzz_http_support.hh"

#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>

using namespace reef;

namespace {

std::vector<std::string> seeds() {
    return {
        "GET /api-doc HTTP/1.1\r\nHost: localhost:10000\r\n\r\nGET /api-doc/system/ HTTP/1.1\r\n\r\n",
        "POST /storage_service/keyspace_flush/ks1?cf=t1%2Ct2 HTTP/1.1\r\nContent-Length: 0\r\n\r\n"
        "POST /storage_service/keyspace_flush/nosuch HTTP/1.1\r\n\r\n",
        "GET /system/logger/n%C3%A9 HTTP/1.1\r\n\r\nPOST /system/logger/x?level=debug&flag=true HTTP/1.1\r\n\r\n"
        "POST /system/logger/x?level=loud HTTP/1.1\r\n\r\n",
        "DELETE /system/boom HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nabcd\r\n0\r\n\r\n",
        "GET /metrics?__name__=scylla_cache*&__help__=false&shard=1 HTTP/1.1\r\n\r\n"
        "GET /metrics?kind=(Q|E)UERY HTTP/1.0\r\nConnection: keep-alive\r\n\r\nGET /metrics?kind=( HTTP/1.1\r\n\r\n",
        "GET /nowhere HTTP/1.1\r\n\r\nPUT /system/boom HTTP/1.1\r\n\r\nBREW /api-doc HTTP/1.1\r\n\r\n",
        "GET / HTTP/1.1\r\nX: " + std::string(3000, 'x') + "\r\n\r\n",
        "POST /system/boom HTTP/1.1\r\nContent-Length: 5000\r\n\r\n",
    };
}

void run(std::string_view bytes, uint8_t piece) {
    std::vector<uint8_t> in;
    in.push_back(piece);
    in.insert(in.end(), bytes.begin(), bytes.end());
    fuzz::http_request_input(in);
}

// test/fuzz/regressions/fuzz_http_request/all, found above the working directory.
std::filesystem::path regressions_dir() {
    for (auto dir = std::filesystem::current_path(); !dir.empty(); dir = dir.parent_path()) {
        auto d = dir / "test" / "fuzz" / "regressions" / "fuzz_http_request" / "all";
        if (std::filesystem::is_directory(d)) {
            return d;
        }
        if (dir == dir.parent_path()) {
            break;
        }
    }
    return {};
}

} // namespace

BOOST_AUTO_TEST_SUITE(http_fuzz_test)

// The committed findings (each file: the piece-size byte, then the stream), as run_fuzzers.py replays them.
BOOST_AUTO_TEST_CASE(test_regressions) {
    auto dir = regressions_dir();
    BOOST_REQUIRE_MESSAGE(!dir.empty(), "test/fuzz/regressions/fuzz_http_request/all not found");
    size_t n = 0;
    for (auto& e : std::filesystem::directory_iterator(dir)) {
        std::ifstream in(e.path(), std::ios::binary);
        std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        BOOST_TEST_MESSAGE("replaying " << e.path());
        fuzz::http_request_input(bytes);
        ++n;
    }
    BOOST_CHECK_GE(n, 1u);
}

// Found by the random corruptions: Beast buffers a chunk's size line without bound (it limits only the header).
BOOST_AUTO_TEST_CASE(test_chunk_size_line_is_bounded) {
    api::http_limits limits;
    limits.max_header_bytes = 1024;
    api::request_parser p(limits);
    std::string in = "POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n";
    BOOST_CHECK(p.parse(in) == api::request_parser::state::incomplete);
    auto st = api::request_parser::state::incomplete;
    size_t sent = 0;
    while (st == api::request_parser::state::incomplete && sent < 100'000) {
        in += std::string(100, '0');
        sent += 100;
        st = p.parse(in);
        BOOST_REQUIRE_LE(in.size(), limits.max_header_bytes + 100);
    }
    BOOST_CHECK(st == api::request_parser::state::failed);
    BOOST_CHECK_EQUAL(p.error_reply().status, 400);
}

BOOST_AUTO_TEST_CASE(test_seeds_every_piece_size) {
    for (auto& s : seeds()) {
        for (int piece : {0, 1, 2, 6, 16, 255}) {
            run(s, uint8_t(piece));
        }
    }
}

BOOST_AUTO_TEST_CASE(test_random_corruptions) {
    std::mt19937 rng(20261126);
    auto all = seeds();
    for (int i = 0; i < 20000; ++i) {
        std::string s = all[rng() % all.size()];
        int edits = 1 + int(rng() % 4);
        for (int e = 0; e < edits && !s.empty(); ++e) {
            size_t at = rng() % s.size();
            switch (rng() % 6) {
            case 0: s[at] = char(rng()); break;
            case 1: s.resize(at); break;
            case 2: s.insert(at, s.substr(at, rng() % 64)); break;
            case 3: s.insert(at, all[rng() % all.size()]); break;
            case 4: s.erase(at, rng() % 8); break;
            case 5: s.insert(at, std::string(rng() % 3000, char(rng()))); break;
            }
        }
        run(s, uint8_t(rng()));
    }
}

BOOST_AUTO_TEST_SUITE_END()
