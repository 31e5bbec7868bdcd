// The HTTP server over real sockets: keep-alive and pipelined requests answered in order (also when the bytes
// arrive in random pieces, compared with the answers to the same requests sent one by one), chunked bodies,
// 404/405/400/413/431 as JSON with the connection closed after bad input, truncated requests, slow clients cut
// off, the connection cap, many concurrent clients, and stop() with a request in flight.
#include "api/http_server.hh"

#include "runtime/reactor.hh"
#include "runtime/when_all.hh"
#include "runtime/with_timeout.hh"
#include "test/lib/reef_test.hh"

#include <map>
#include <optional>
#include <random>

using namespace reef;
using namespace reef::api;
using namespace std::chrono_literals;

namespace {

struct response {
    int status = 0;
    std::map<std::string, std::string> headers;
    std::string body;
};

// Reads one response, keeping the bytes after it in buf; nullopt when the server closes first. A reply to HEAD
// has no body whatever its Content-Length.
future<std::optional<response>> read_response(connected_socket& s, std::string& buf, bool head = false) {
    for (;;) {
        auto end = buf.find("\r\n\r\n");
        if (end != std::string::npos) {
            response r;
            BOOST_REQUIRE(buf.starts_with("HTTP/1.1 "));
            r.status = std::stoi(buf.substr(9, 3));
            size_t pos = buf.find("\r\n") + 2;
            while (pos < end) {
                auto eol = buf.find("\r\n", pos);
                auto line = buf.substr(pos, eol - pos);
                auto colon = line.find(':');
                std::string name = line.substr(0, colon);
                for (auto& c : name) {
                    c = char(std::tolower(static_cast<unsigned char>(c)));
                }
                r.headers[name] = line.substr(line.find_first_not_of(' ', colon + 1));
                pos = eol + 2;
            }
            size_t len = head ? 0 : std::stoul(r.headers.at("content-length"));
            if (buf.size() >= end + 4 + len) {
                r.body = buf.substr(end + 4, len);
                buf.erase(0, end + 4 + len);
                co_return r;
            }
        }
        auto got = co_await with_timeout(5s, s.read());
        if (got.empty()) {
            co_return std::nullopt;
        }
        buf.append(got.get(), got.size());
    }
}

// True when the server closed the connection (within 5 s) without sending anything more.
future<bool> closed_by_server(connected_socket& s, std::string& buf) {
    if (!buf.empty()) {
        co_return false;
    }
    try {
        auto got = co_await with_timeout(5s, s.read());
        co_return got.empty();
    } catch (const std::system_error&) {
        co_return true; // reset
    }
}

std::string get(std::string_view target, std::string_view extra = "") {
    return fmt::format("GET {} HTTP/1.1\r\nHost: x\r\n{}\r\n", target, extra);
}

std::string post(std::string_view target, std::string_view body) {
    return fmt::format("POST {} HTTP/1.1\r\nHost: x\r\nContent-Length: {}\r\n\r\n{}", target, body.size(), body);
}

struct test_server {
    route_table routes;
    std::unique_ptr<http_server> server;
    socket_address addr;
    int slow_started = 0;

    explicit test_server(http_server_config cfg = small_config()) {
        routes.add_module("t", "test routes");
        routes.add(http_method::get, "/t/echo/{x}", {"echo", "echo", "string", {{"x", "x", true, "string", "path"}}},
                   [](http_request& req) -> future<http_reply> {
                       std::string q;
                       for (auto& [k, v] : req.query) {
                           q += "&" + k + "=" + v;
                       }
                       co_return http_reply::json(req.path_param("x") + q);
                   });
        routes.add(http_method::post, "/t/body", {"body", "body"}, [](http_request& req) -> future<http_reply> {
            co_return http_reply::json(std::to_string(req.body.size()) + ":" + req.body);
        });
        routes.add(http_method::get, "/t/slow", {"slow", "slow"}, [this](http_request&) -> future<http_reply> {
            ++slow_started;
            co_await sleep(300ms);
            co_return http_reply::json("\"slow\"");
        });
        server = std::make_unique<http_server>(routes, cfg);
        addr = server->listen(socket_address("127.0.0.1", 0));
    }

    static http_server_config small_config() {
        http_server_config c;
        c.limits.max_header_bytes = 1024;
        c.limits.max_body_bytes = 4096;
        c.idle_timeout = 2s;
        c.request_timeout = 2s;
        c.max_connections = 64;
        return c;
    }
};

future<std::vector<response>> exchange(socket_address addr, std::string bytes, size_t expected) {
    auto s = co_await connect(addr);
    co_await s.write(std::string_view(bytes));
    std::string buf;
    std::vector<response> out;
    for (size_t i = 0; i < expected; ++i) {
        auto r = co_await read_response(s, buf);
        BOOST_REQUIRE(r);
        out.push_back(std::move(*r));
    }
    co_await s.close();
    co_return out;
}

} // namespace

BOOST_AUTO_TEST_SUITE(http_server_test)

REEF_TEST_CASE(test_keep_alive) {
    test_server t;
    auto s = co_await connect(t.addr);
    std::string buf;
    for (int i = 0; i < 3; ++i) {
        auto req = get("/t/echo/a" + std::to_string(i) + "?k=v%20w");
        co_await s.write(std::string_view(req));
        auto r = co_await read_response(s, buf);
        BOOST_REQUIRE(r);
        BOOST_CHECK_EQUAL(r->status, 200);
        BOOST_CHECK_EQUAL(r->body, "a" + std::to_string(i) + "&k=v w");
        BOOST_CHECK_EQUAL(r->headers["content-type"], "application/json");
        BOOST_CHECK(r->headers.count("connection") == 0 || r->headers["connection"] == "keep-alive");
    }
    // Connection: close is honoured: the reply says so and the server closes.
    auto req = get("/t/echo/last", "Connection: close\r\n");
    co_await s.write(std::string_view(req));
    auto r = co_await read_response(s, buf);
    BOOST_REQUIRE(r);
    BOOST_CHECK_EQUAL(r->headers["connection"], "close");
    BOOST_CHECK(co_await closed_by_server(s, buf));
    co_await s.close();
    BOOST_CHECK_EQUAL(t.server->stats().requests, 4u);
    co_await t.server->stop();
}

REEF_TEST_CASE(test_pipelined_in_order) {
    test_server t;
    std::string bytes;
    std::vector<std::pair<int, std::string>> expect;
    for (int i = 0; i < 30; ++i) {
        switch (i % 5) {
        case 0: bytes += get("/t/echo/p" + std::to_string(i)); expect.emplace_back(200, "p" + std::to_string(i)); break;
        case 1: {
            auto body = "b" + std::to_string(i);
            bytes += post("/t/body", body);
            expect.emplace_back(200, std::to_string(body.size()) + ":" + body);
            break;
        }
        case 2: bytes += get("/nowhere"); expect.emplace_back(404, R"({"message":"Not found","code":404})"); break;
        case 3: bytes += post("/t/echo/x", ""); expect.emplace_back(405, R"({"message":"Method POST not allowed","code":405})"); break;
        case 4: bytes += get("/t/slow"); expect.emplace_back(200, "\"slow\""); break;
        }
    }
    auto got = co_await exchange(t.addr, bytes, expect.size());
    for (size_t i = 0; i < expect.size(); ++i) {
        BOOST_CHECK_EQUAL(got[i].status, expect[i].first);
        BOOST_CHECK_EQUAL(got[i].body, expect[i].second);
    }
    co_await t.server->stop();
}

// The same pipelined stream cut at random places and sent piece by piece gets the same answers as requests sent
// one at a time (the model).
REEF_TEST_CASE(test_random_pieces_match_one_by_one) {
    test_server t;
    std::mt19937 rng(12345);
    for (int round = 0; round < 8; ++round) {
        std::vector<std::string> reqs;
        int n = 1 + int(rng() % 8);
        for (int i = 0; i < n; ++i) {
            switch (rng() % 4) {
            case 0: reqs.push_back(get("/t/echo/r" + std::to_string(rng() % 1000) + "?a=" + std::to_string(rng() % 9))); break;
            case 1: reqs.push_back(post("/t/body", std::string(rng() % 100, char('a' + rng() % 26)))); break;
            case 2: reqs.push_back(get("/t/echo/" + std::string(1 + rng() % 5, 'z') + "/")); break;
            case 3:
                reqs.push_back("POST /t/body HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n" +
                               std::string("2\r\nde\r\n0\r\n\r\n"));
                break;
            }
        }
        std::vector<response> model;
        for (auto& r : reqs) {
            auto one = co_await exchange(t.addr, r, 1);
            model.push_back(one[0]);
        }
        std::string all;
        for (auto& r : reqs) {
            all += r;
        }
        auto s = co_await connect(t.addr);
        size_t pos = 0;
        while (pos < all.size()) {
            size_t len = std::min<size_t>(all.size() - pos, 1 + rng() % 40);
            co_await s.write(std::string_view(all).substr(pos, len));
            pos += len;
            if (rng() % 3 == 0) {
                co_await sleep(1ms);
            }
        }
        std::string buf;
        for (size_t i = 0; i < reqs.size(); ++i) {
            auto r = co_await read_response(s, buf);
            BOOST_REQUIRE(r);
            BOOST_CHECK_EQUAL(r->status, model[i].status);
            BOOST_CHECK_EQUAL(r->body, model[i].body);
        }
        co_await s.close();
    }
    co_await t.server->stop();
}

REEF_TEST_CASE(test_chunked_body) {
    test_server t;
    std::string req = "POST /t/body HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                      "5\r\nhello\r\n1;ext=1\r\n \r\n5\r\nworld\r\n0\r\n\r\n";
    auto got = co_await exchange(t.addr, req + get("/t/echo/after"), 2);
    BOOST_CHECK_EQUAL(got[0].status, 200);
    BOOST_CHECK_EQUAL(got[0].body, "11:hello world");
    BOOST_CHECK_EQUAL(got[1].body, "after");
    // Chunks adding up past the body limit: 413, then the connection closes.
    std::string big = "POST /t/body HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n";
    for (int i = 0; i < 5; ++i) {
        big += "3e8\r\n" + std::string(1000, 'x') + "\r\n";
    }
    big += "0\r\n\r\n";
    auto s = co_await connect(t.addr);
    co_await s.write(std::string_view(big));
    std::string buf;
    auto r = co_await read_response(s, buf);
    BOOST_REQUIRE(r);
    BOOST_CHECK_EQUAL(r->status, 413);
    BOOST_CHECK(r->body.starts_with(R"({"message":"Request body too large)"));
    BOOST_CHECK(r->body.ends_with(R"("code":413})"));
    BOOST_CHECK(co_await closed_by_server(s, buf));
    co_await s.close();
    co_await t.server->stop();
}

// Bad input: one JSON error, then the server closes the connection (what follows is never read as a request).
REEF_TEST_CASE(test_bad_input_answered_then_closed) {
    test_server t;
    struct bad_case {
        std::string bytes;
        int status;
    };
    std::vector<bad_case> cases = {
        {"GARBAGE\r\n\r\n", 400},
        {"GET /t/echo/x HTTP/9.9\r\n\r\n", 400},
        {"GET /t/echo/x HTTP/1.1\r\nBad Header\r\n\r\n", 400},
        {"GET /t/echo/%zz HTTP/1.1\r\n\r\n", 400},
        {"POST /t/body HTTP/1.1\r\nContent-Length: 99999999\r\n\r\n", 413},
        {"POST /t/body HTTP/1.1\r\nContent-Length: 12x\r\n\r\n", 400},
        {"POST /t/body HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 400},
        {"GET /t/echo/x HTTP/1.1\r\nX-Big: " + std::string(2000, 'h') + "\r\n\r\n", 431},
        {"GET /" + std::string(3000, 'u') + " HTTP/1.1\r\n\r\n", 431},
    };
    for (auto& c : cases) {
        BOOST_TEST_CONTEXT("request " << c.bytes.substr(0, 60)) {
            auto s = co_await connect(t.addr);
            auto bytes = c.bytes + get("/t/echo/never");
            co_await s.write(std::string_view(bytes));
            std::string buf;
            auto r = co_await read_response(s, buf);
            BOOST_REQUIRE(r);
            BOOST_CHECK_EQUAL(r->status, c.status);
            BOOST_CHECK_EQUAL(r->headers["content-type"], "application/json");
            BOOST_CHECK(r->body.starts_with(R"({"message":")"));
            BOOST_CHECK(r->body.ends_with(fmt::format(R"("code":{}}})", c.status)));
            BOOST_CHECK_EQUAL(r->headers["connection"], "close");
            BOOST_CHECK(co_await closed_by_server(s, buf));
            co_await s.close();
        }
    }
    // A method we do not route: 405 on a known path, 404 elsewhere; the connection stays usable.
    auto got = co_await exchange(t.addr, "BREW /t/slow HTTP/1.1\r\n\r\n" + get("/t/echo/ok") + "PUT /x HTTP/1.1\r\n\r\n", 3);
    BOOST_CHECK_EQUAL(got[0].status, 405);
    BOOST_CHECK_EQUAL(got[1].body, "ok");
    BOOST_CHECK_EQUAL(got[2].status, 404);
    BOOST_CHECK_EQUAL(t.server->stats().malformed, cases.size());
    co_await t.server->stop();
}

// HEAD: the header fields only, so that the next reply on the connection is read right.
REEF_TEST_CASE(test_head_has_no_body) {
    test_server t;
    auto s = co_await connect(t.addr);
    auto bytes = std::string("HEAD /t/echo/x HTTP/1.1\r\n\r\n") + get("/t/echo/next");
    co_await s.write(std::string_view(bytes));
    std::string buf;
    auto r = co_await read_response(s, buf, true);
    BOOST_REQUIRE(r);
    BOOST_CHECK_EQUAL(r->status, 405);
    BOOST_CHECK_NE(r->headers["content-length"], "0");
    r = co_await read_response(s, buf);
    BOOST_REQUIRE(r);
    BOOST_CHECK_EQUAL(r->status, 200);
    BOOST_CHECK_EQUAL(r->body, "next");
    co_await s.close();
    co_await t.server->stop();
}

// A client that stops half-way is closed without an answer; one too slow is cut off; the server goes on.
REEF_TEST_CASE(test_truncated_and_slow_clients) {
    auto cfg = test_server::small_config();
    cfg.request_timeout = 300ms;
    cfg.idle_timeout = 500ms;
    test_server t(cfg);
    {
        auto s = co_await connect(t.addr);
        co_await s.write(std::string_view("POST /t/body HTTP/1.1\r\nContent-Length: 10\r\n\r\nabc"));
        s.shutdown_output();
        std::string buf;
        BOOST_CHECK(co_await closed_by_server(s, buf));
        co_await s.close();
    }
    {
        // Slowloris: a header trickling in byte by byte never completes within the request timeout.
        auto s = co_await connect(t.addr);
        auto start = steady_clock_type::now();
        std::string head = "GET /t/echo/x HTTP/1.1\r\nX-A: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
        bool cut = false;
        for (char c : head) {
            try {
                co_await s.write(std::string_view(&c, 1));
            } catch (const std::system_error&) {
                cut = true;
                break;
            }
            co_await sleep(20ms);
        }
        std::string buf;
        BOOST_CHECK(cut || co_await closed_by_server(s, buf));
        auto took = steady_clock_type::now() - start;
        BOOST_CHECK(took < 3s);
        co_await s.close();
    }
    {
        // An idle keep-alive connection closes after the idle timeout.
        auto s = co_await connect(t.addr);
        std::string buf;
        co_await s.write(std::string_view(get("/t/echo/idle")));
        auto r = co_await read_response(s, buf);
        BOOST_REQUIRE(r);
        BOOST_CHECK(co_await closed_by_server(s, buf));
        co_await s.close();
    }
    BOOST_CHECK_GE(t.server->stats().timeouts, 2u);
    auto got = co_await exchange(t.addr, get("/t/echo/still"), 1);
    BOOST_CHECK_EQUAL(got[0].body, "still");
    co_await t.server->stop();
}

future<> one_client(socket_address addr, int id, int& ok) {
    std::string bytes;
    for (int i = 0; i < 5; ++i) {
        bytes += get(fmt::format("/t/echo/c{}-{}", id, i));
    }
    auto got = co_await exchange(addr, bytes, 5);
    for (int i = 0; i < 5; ++i) {
        if (got[i].status == 200 && got[i].body == fmt::format("c{}-{}", id, i)) {
            ++ok;
        }
    }
}

REEF_TEST_CASE(test_many_concurrent_clients) {
    test_server t;
    int ok = 0;
    std::vector<future<>> clients;
    for (int i = 0; i < 50; ++i) {
        clients.push_back(one_client(t.addr, i, ok));
    }
    co_await when_all(std::move(clients));
    BOOST_CHECK_EQUAL(ok, 250);
    co_await t.server->stop();
}

REEF_TEST_CASE(test_connection_cap) {
    auto cfg = test_server::small_config();
    cfg.max_connections = 3;
    test_server t(cfg);
    std::vector<connected_socket> held;
    std::string buf;
    for (int i = 0; i < 3; ++i) {
        held.push_back(co_await connect(t.addr));
        // A reply proves the server has taken the connection.
        co_await held.back().write(std::string_view(get("/t/echo/h")));
        auto r = co_await read_response(held.back(), buf);
        BOOST_REQUIRE(r);
    }
    auto extra = co_await connect(t.addr);
    auto r = co_await read_response(extra, buf);
    BOOST_REQUIRE(r);
    BOOST_CHECK_EQUAL(r->status, 503);
    BOOST_CHECK(co_await closed_by_server(extra, buf));
    co_await extra.close();
    co_await held.back().close();
    held.pop_back();
    // Room again once one closes (the server notices the close on its next read).
    bool served = false;
    for (int attempt = 0; attempt < 50 && !served; ++attempt) {
        auto again = co_await connect(t.addr);
        co_await again.write(std::string_view(get("/t/echo/again")));
        std::string b;
        auto rr = co_await read_response(again, b);
        served = rr && rr->status == 200;
        co_await again.close();
        if (!served) {
            co_await sleep(20ms);
        }
    }
    BOOST_CHECK(served);
    for (auto& h : held) {
        co_await h.close();
    }
    BOOST_CHECK_GE(t.server->stats().refused, 1u);
    co_await t.server->stop();
}

future<> stop_after_slow_started(test_server& t) {
    while (t.slow_started == 0) {
        co_await sleep(1ms);
    }
    co_await t.server->stop();
}

// stop(): the request in flight is answered (with Connection: close), idle connections close, accept stops.
REEF_TEST_CASE(test_stop_with_request_in_flight) {
    test_server t;
    auto idle = co_await connect(t.addr);
    auto busy = co_await connect(t.addr);
    co_await busy.write(std::string_view(get("/t/slow") + get("/t/echo/after")));
    std::string buf;
    auto [r, stopped] = co_await when_all(read_response(busy, buf), stop_after_slow_started(t));
    BOOST_REQUIRE(r);
    BOOST_CHECK_EQUAL(r->status, 200);
    BOOST_CHECK_EQUAL(r->body, "\"slow\"");
    BOOST_CHECK_EQUAL(r->headers["connection"], "close");
    BOOST_CHECK(co_await closed_by_server(busy, buf));
    std::string ibuf;
    BOOST_CHECK(co_await closed_by_server(idle, ibuf));
    BOOST_CHECK_EQUAL(t.server->connection_count(), 0u);
    bool refused = false;
    try {
        auto s = co_await connect(t.addr);
        co_await s.close();
    } catch (const std::system_error&) {
        refused = true;
    }
    BOOST_CHECK(refused);
    co_await busy.close();
    co_await idle.close();
    co_await t.server->stop();
}

REEF_TEST_CASE(test_port_in_use) {
    test_server t;
    route_table other;
    http_server second(other, {});
    bool threw = false;
    try {
        second.listen(t.addr);
    } catch (const std::system_error& e) {
        threw = std::string(e.what()).find(t.addr.to_string()) != std::string::npos;
    }
    BOOST_CHECK(threw);
    co_await second.stop();
    co_await t.server->stop();
}

BOOST_AUTO_TEST_SUITE_END()
