// The REST API's client against scripted servers on 127.0.0.1: what it writes, responses with Content-Length,
// chunked and close-delimited bodies, keep-alive reuse and the one retry on a connection the server closed, the
// one-line errors (refused, no response in time, not HTTP), and make_target's encoding.
#include "api/http_client.hh"

#include "runtime/gate.hh"
#include "runtime/net.hh"
#include "runtime/reactor.hh"
#include "runtime/when_all.hh"
#include "test/lib/reef_test.hh"

#include <functional>

using namespace reef;
using namespace reef::api;
using namespace std::chrono_literals;

namespace {

socket_address loopback() { return socket_address("127.0.0.1", 0); }

// Reads until the request's head (and no body: the tests send none) is in; "" at end of stream.
future<std::string> read_request(connected_socket& s) {
    std::string got;
    while (got.find("\r\n\r\n") == std::string::npos) {
        auto buf = co_await s.read();
        if (buf.empty()) {
            co_return std::string();
        }
        got.append(buf.get(), buf.size());
    }
    co_return got;
}

// A server of one connection at a time; each accepted connection is given to serve with its index.
struct script_server {
    server_socket ss = listen(loopback());
    std::vector<std::string> requests;
    int connections = 0;

    socket_address address() const { return ss.local_address(); }

    future<> run(int n_connections, std::function<future<>(connected_socket&, script_server&, int)> serve) {
        for (int i = 0; i < n_connections; ++i) {
            auto ar = co_await ss.accept();
            ++connections;
            co_await serve(ar.connection, *this, i);
            co_await ar.connection.close();
        }
    }
};

http_client make_client(const script_server& s, http_client_options o = {}) {
    return http_client({s.address()}, "localhost:" + std::to_string(s.address().port()), o);
}

} // namespace

REEF_TEST_CASE(a_request_is_written_and_a_sized_response_read) {
    script_server srv;
    auto serve = [](connected_socket& c, script_server& s, int) -> future<> {
        s.requests.push_back(co_await read_request(c));
        co_await c.write(std::string_view("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                                          "Content-Length: 9\r\n\r\n[\"ks1\"]\n\n"));
    };
    auto client = make_client(srv);
    // Built outside the coroutine: no braced list inside a co_await expression (coroutine rule 7).
    const std::vector<std::pair<std::string, std::string>> query{{"cf", "t1,t2"}};
    const auto target = make_target("/storage_service/keyspace_flush/ks1", query);
    auto ask = [&]() -> future<http_response> {
        auto r = co_await client.request(http_method::post, target);
        co_return r;
    };
    auto [unused, r] = co_await when_all(srv.run(1, serve), ask());
    BOOST_CHECK_EQUAL(r.status, 200);
    BOOST_CHECK_EQUAL(r.content_type, "application/json");
    BOOST_CHECK_EQUAL(r.body, "[\"ks1\"]\n\n");
    BOOST_REQUIRE_EQUAL(srv.requests.size(), 1u);
    auto& req = srv.requests[0];
    BOOST_CHECK_MESSAGE(req.starts_with("POST /storage_service/keyspace_flush/ks1?cf=t1%2Ct2 HTTP/1.1\r\n"), req);
    BOOST_CHECK_MESSAGE(req.find("Host: localhost:") != std::string::npos, req);
    BOOST_CHECK_MESSAGE(req.find("Content-Length: 0\r\n") != std::string::npos, req);
    co_await client.close();
    co_await srv.ss.close();
}

REEF_TEST_CASE(a_kept_alive_connection_serves_the_next_request) {
    script_server srv;
    auto serve = [](connected_socket& c, script_server& s, int) -> future<> {
        for (int i = 0; i < 3; ++i) {
            s.requests.push_back(co_await read_request(c));
            // Chunked, split in the middle of a chunk, then a close-free end.
            co_await c.write(std::string_view("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\n12"));
            co_await c.write(std::string_view("3\r\n1\r\n4\r\n0\r\n\r\n"));
        }
    };
    auto client = make_client(srv);
    std::vector<std::string> bodies;
    auto ask = [&]() -> future<> {
        for (int i = 0; i < 3; ++i) {
            auto r = co_await client.request(http_method::get, "/system/uptime_ms");
            bodies.push_back(r.body);
        }
    };
    co_await when_all(srv.run(1, serve), ask());
    BOOST_CHECK_EQUAL(srv.connections, 1);
    BOOST_REQUIRE_EQUAL(bodies.size(), 3u);
    for (auto& b : bodies) {
        BOOST_CHECK_EQUAL(b, "1234");
    }
    co_await client.close();
    co_await srv.ss.close();
}

REEF_TEST_CASE(a_connection_the_server_closed_is_replaced_once) {
    script_server srv;
    auto serve = [](connected_socket& c, script_server& s, int conn) -> future<> {
        s.requests.push_back(co_await read_request(c));
        if (conn == 0) {
            co_await c.write(std::string_view("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\n1"));
            // Then the next request finds the connection closed, unanswered.
            co_await read_request(c);
            co_return;
        }
        co_await c.write(std::string_view("HTTP/1.1 404 Not Found\r\nContent-Length: 39\r\nConnection: close\r\n\r\n"
                                          "{\"message\": \"Not found\", \"code\": 404}\r\n"));
    };
    auto client = make_client(srv);
    http_response second;
    auto ask = [&]() -> future<> {
        co_await client.request(http_method::get, "/a");
        second = co_await client.request(http_method::get, "/b");
    };
    co_await when_all(srv.run(2, serve), ask());
    BOOST_CHECK_EQUAL(srv.connections, 2);
    BOOST_CHECK_EQUAL(second.status, 404);
    BOOST_CHECK_EQUAL(second.body, "{\"message\": \"Not found\", \"code\": 404}\r\n");
    co_await client.close();
    co_await srv.ss.close();
}

REEF_TEST_CASE(a_close_delimited_body_ends_at_end_of_stream) {
    script_server srv;
    auto serve = [](connected_socket& c, script_server& s, int) -> future<> {
        co_await read_request(c);
        co_await c.write(std::string_view("HTTP/1.0 200 OK\r\n\r\n\"3.0.8\""));
    };
    auto client = make_client(srv);
    auto ask = [&]() -> future<http_response> {
        auto r = co_await client.request(http_method::get, "/storage_service/release_version");
        co_return r;
    };
    auto [unused, r] = co_await when_all(srv.run(1, serve), ask());
    BOOST_CHECK_EQUAL(r.status, 200);
    BOOST_CHECK_EQUAL(r.body, "\"3.0.8\"");
    co_await client.close();
    co_await srv.ss.close();
}

namespace {

// Runs one request that must fail; returns the error's text.
future<std::string> failure_of(http_client& client) {
    std::string what;
    try {
        co_await client.request(http_method::get, "/x");
        what = "no error";
    } catch (const http_client_error& e) {
        what = e.what();
    }
    co_return what;
}

} // namespace

REEF_TEST_CASE(errors_are_one_line_naming_the_server) {
    // Refused: a port that was free a moment ago.
    auto ss = listen(loopback());
    auto addr = ss.local_address();
    co_await ss.close();
    http_client refused({addr}, "x");
    auto what = co_await failure_of(refused);
    BOOST_CHECK_EQUAL(what, "cannot connect to " + addr.to_string() + ": Connection refused");

    // No answer within the read timeout.
    script_server silent;
    auto hold = [](connected_socket& c, script_server&, int) -> future<> {
        co_await read_request(c);
        co_await sleep(500ms);
    };
    http_client_options o;
    o.read_timeout = 100ms;
    auto slow = make_client(silent, o);
    auto [u1, w1] = co_await when_all(silent.run(1, hold), failure_of(slow));
    BOOST_CHECK_EQUAL(w1, silent.address().to_string() + ": no response in 0.1 s");
    co_await silent.ss.close();

    // Not HTTP.
    script_server garbage;
    auto babble = [](connected_socket& c, script_server&, int) -> future<> {
        co_await read_request(c);
        co_await c.write(std::string_view("SSH-2.0-OpenSSH_9.2\r\n\r\n"));
    };
    auto confused = make_client(garbage);
    auto [u2, w2] = co_await when_all(garbage.run(1, babble), failure_of(confused));
    BOOST_CHECK_MESSAGE(w2.starts_with(garbage.address().to_string() + ": bad HTTP response: "), w2);
    BOOST_CHECK(w2.find('\n') == std::string::npos);
    co_await garbage.ss.close();
}

BOOST_AUTO_TEST_CASE(targets_are_percent_encoded) {
    BOOST_CHECK_EQUAL(make_target("/column_family/metrics/read/ks:t 1", {}), "/column_family/metrics/read/ks:t%201");
    BOOST_CHECK_EQUAL(make_target("/storage_service/snapshots", {{"tag", "a&b=c"}, {"kn", "ks1,ks2"}}),
                      "/storage_service/snapshots?tag=a%26b%3Dc&kn=ks1%2Cks2");
}

BOOST_AUTO_TEST_CASE(hosts_resolve_ipv4_first) {
    auto a = resolve_host("127.0.0.1", 10000);
    BOOST_REQUIRE_EQUAL(a.size(), 1u);
    BOOST_CHECK_EQUAL(a[0].to_string(), "127.0.0.1:10000");
    auto l = resolve_host("localhost", 7);
    BOOST_REQUIRE(!l.empty());
    BOOST_CHECK(l[0].is_ipv4());
    BOOST_CHECK_THROW(resolve_host("no-such-host.invalid", 1), http_client_error);
}
