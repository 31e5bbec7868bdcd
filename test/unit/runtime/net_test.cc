// Tests of runtime/net: addresses, an echo server on 127.0.0.1 under every
// I/O backend (many connections, multi-megabyte transfers checked byte by
// byte), end of stream, refused connections, close() cancelling a pending
// accept or read, SO_REUSEPORT across shards, IPv6.
#include "runtime/gate.hh"
#include "runtime/net.hh"
#include "runtime/reactor.hh"
#include "runtime/smp.hh"
#include "runtime/when_all.hh"
#include "test/lib/reef_test.hh"

#include <cerrno>
#include <cstdlib>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

using namespace reef;
using namespace std::chrono_literals;

namespace {

// Runs body in a fresh runtime once per I/O backend this machine allows
// (only REEF_IO_BACKEND's, when that is set).
void for_each_backend(const std::function<future<>()>& body) {
    std::vector<io_backend_kind> kinds;
    if (const char* forced = std::getenv("REEF_IO_BACKEND")) {
        kinds.push_back(parse_io_backend_kind(forced));
    } else {
        kinds = testing::available_io_backends();
    }
    BOOST_REQUIRE(!kinds.empty());
    for (auto k : kinds) {
        BOOST_TEST_CONTEXT("io backend " << to_string(k)) {
            BOOST_TEST_MESSAGE("io backend " << to_string(k));
            auto cfg = testing::test_runtime_config();
            cfg.io_backend = k;
            testing::run_in_runtime(cfg, body);
        }
    }
}

char pattern_byte(uint64_t seed, size_t pos) { return char(((pos + seed * 7919) * 2654435761u) >> 13); }

std::string pattern(uint64_t seed, size_t pos, size_t len) {
    std::string s(len, '\0');
    for (size_t i = 0; i < len; ++i) {
        s[i] = pattern_byte(seed, pos + i);
    }
    return s;
}

// Failures inside background fibers, checked by the test at the end (a
// spawned fiber's exception would otherwise only be logged).
struct fiber_errors {
    std::vector<std::string> list;
    void record(std::exception_ptr ep) {
        try {
            std::rethrow_exception(ep);
        } catch (const std::exception& e) {
            list.push_back(e.what());
        }
    }
    void check() const {
        for (auto& e : list) {
            BOOST_ERROR("background fiber failed: " << e);
        }
    }
};

bool is_errno(const std::system_error& e, int err) { return e.code().value() == err; }

future<> echo(connected_socket s) {
    for (;;) {
        auto buf = co_await s.read();
        if (buf.empty()) {
            break;
        }
        co_await s.write(std::move(buf));
    }
    co_await s.close();
}

// Accepts until ss is closed; each connection is served by handler in its
// own fiber, held by g.
template <typename Handler>
future<> accept_loop(server_socket& ss, gate& g, fiber_errors& errors, Handler handler) {
    for (;;) {
        accept_result ar;
        try {
            ar = co_await ss.accept();
        } catch (const std::system_error& e) {
            if (is_errno(e, ECANCELED)) {
                co_return;
            }
            throw;
        }
        spawn([h = g.hold(), &errors, handler, c = std::move(ar.connection)]() mutable -> future<> {
            try {
                co_await handler(std::move(c));
            } catch (...) {
                errors.record(std::current_exception());
            }
        });
    }
}

// Reads exactly n bytes (fewer only at end of stream).
future<std::string> read_exactly(connected_socket& s, size_t n) {
    std::string out;
    while (out.size() < n) {
        auto buf = co_await s.read();
        if (buf.empty()) {
            break;
        }
        out.append(buf.get(), buf.size());
    }
    co_return out;
}

future<std::string> read_to_eof(connected_socket& s) {
    std::string out;
    for (;;) {
        auto buf = co_await s.read();
        if (buf.empty()) {
            co_return out;
        }
        out.append(buf.get(), buf.size());
    }
}

socket_address loopback() { return socket_address("127.0.0.1", 0); }

} // namespace

BOOST_AUTO_TEST_CASE(test_socket_address) {
    auto a = socket_address::parse("127.0.0.1:9042");
    BOOST_CHECK(a.is_ipv4());
    BOOST_CHECK_EQUAL(a.port(), 9042);
    BOOST_CHECK_EQUAL(a.host(), "127.0.0.1");
    BOOST_CHECK_EQUAL(a.to_string(), "127.0.0.1:9042");
    BOOST_CHECK(a == socket_address("127.0.0.1", 9042));
    BOOST_CHECK(!(a == socket_address("127.0.0.1", 9043)));

    auto b = socket_address::parse("[::1]:9042");
    BOOST_CHECK(b.is_ipv6());
    BOOST_CHECK_EQUAL(b.port(), 9042);
    BOOST_CHECK_EQUAL(b.host(), "::1");
    BOOST_CHECK_EQUAL(b.to_string(), "[::1]:9042");
    BOOST_CHECK_EQUAL(socket_address::parse("[2001:db8::7]:0").to_string(), "[2001:db8::7]:0");
    BOOST_CHECK_EQUAL(socket_address::parse("0.0.0.0:65535").to_string(), "0.0.0.0:65535");
    BOOST_CHECK_EQUAL(fmt::format("{}", b), "[::1]:9042");
    b.set_port(7000);
    BOOST_CHECK_EQUAL(b.to_string(), "[::1]:7000");
    BOOST_CHECK_EQUAL(socket_address().to_string(), "unspecified");

    // A copy through sockaddr keeps everything.
    BOOST_CHECK(socket_address(a.as_sockaddr(), a.length()) == a);

    for (const char* bad : {"127.0.0.1", "127.0.0.1:", "127.0.0.1:99999", "127.0.0.1:12x", "localhost:9042",
                            "::1:9042", "[::1", "[::1]9042", "[127.0.0.1]:1", "300.1.1.1:1", ":9042", ""}) {
        BOOST_TEST_CONTEXT("parsing '" << bad << "'") {
            BOOST_CHECK_THROW(socket_address::parse(bad), std::invalid_argument);
        }
    }
    try {
        socket_address::parse("localhost:9042");
    } catch (const std::invalid_argument& e) {
        BOOST_CHECK(std::string(e.what()).find("localhost:9042") != std::string::npos);
    }
}

BOOST_AUTO_TEST_CASE(test_echo_one_connection) {
    for_each_backend([]() -> future<> {
        auto ss = listen(loopback());
        auto addr = ss.local_address();
        BOOST_REQUIRE_NE(addr.port(), 0);
        BOOST_CHECK_EQUAL(addr.host(), "127.0.0.1");

        // Accept and connect at once: neither may wait for the other.
        auto [ar, client] = co_await when_all(ss.accept(), connect(addr));
        BOOST_REQUIRE(client);
        BOOST_CHECK(ar.remote_address == client.local_address());
        BOOST_CHECK(client.remote_address() == addr);
        BOOST_CHECK(ar.connection.remote_address() == ar.remote_address);

        co_await client.write("hello");
        auto got = co_await read_exactly(ar.connection, 5);
        BOOST_CHECK_EQUAL(got, "hello");
        co_await ar.connection.write(std::string_view("world!"));
        BOOST_CHECK_EQUAL(co_await read_exactly(client, 6), "world!");

        // Half-close: the server sees end of stream and can still answer.
        client.shutdown_output();
        auto rest = co_await ar.connection.read();
        BOOST_CHECK(rest.empty());
        co_await ar.connection.write(temporary_buffer::copy_of("after eof"));
        co_await ar.connection.close();
        BOOST_CHECK(!ar.connection);
        BOOST_CHECK_EQUAL(co_await read_to_eof(client), "after eof");
        // End of stream stays end of stream.
        BOOST_CHECK((co_await client.read()).empty());
        co_await client.close();
        co_await client.close();  // idempotent
        co_await ss.close();
    });
}

BOOST_AUTO_TEST_CASE(test_many_connections) {
    for_each_backend([]() -> future<> {
        auto ss = listen(loopback());
        auto addr = ss.local_address();
        gate g;
        fiber_errors errors;
        constexpr unsigned clients = 64, rounds = 12;
        unsigned finished = 0;
        auto client = [&](unsigned id) -> future<> {
            auto s = co_await connect(addr);
            for (unsigned r = 0; r < rounds; ++r) {
                size_t len = 1 + (id * 977 + r * 6151) % 20000;
                auto msg = pattern(id * 100 + r, 0, len);
                co_await s.write(msg);
                auto back = co_await read_exactly(s, len);
                BOOST_REQUIRE(back == msg);
            }
            s.shutdown_output();
            BOOST_CHECK((co_await s.read()).empty());
            co_await s.close();
            ++finished;
        };
        auto all_clients = [&]() -> future<> {
            std::vector<future<>> fs;
            for (unsigned i = 0; i < clients; ++i) {
                fs.push_back(client(i));
            }
            co_await when_all(std::move(fs));
            co_await ss.close();
        };
        co_await when_all(accept_loop(ss, g, errors, echo), all_clients());
        co_await g.close();
        errors.check();
        BOOST_CHECK_EQUAL(finished, clients);
    });
}

BOOST_AUTO_TEST_CASE(test_large_transfer) {
    for_each_backend([]() -> future<> {
        auto ss = listen(loopback());
        auto addr = ss.local_address();
        gate g;
        fiber_errors errors;
        constexpr size_t total = 8 << 20;
        auto client = [&]() -> future<> {
            auto s = co_await connect(addr);
            // Writer and reader run together, or both ends' buffers fill up.
            auto writer = [&]() -> future<> {
                size_t pos = 0;
                for (unsigned i = 0; pos < total; ++i) {
                    size_t len = std::min(total - pos, size_t(1 + (i * 104729) % 300000));
                    co_await s.write(pattern(1, pos, len));
                    pos += len;
                }
                s.shutdown_output();
            };
            auto reader = [&]() -> future<> {
                size_t pos = 0;
                for (;;) {
                    auto buf = co_await s.read();
                    if (buf.empty()) {
                        break;
                    }
                    for (size_t i = 0; i < buf.size(); ++i) {
                        if (buf[i] != pattern_byte(1, pos + i)) {
                            BOOST_FAIL("wrong byte at offset " << pos + i);
                        }
                    }
                    pos += buf.size();
                }
                BOOST_CHECK_EQUAL(pos, total);
            };
            co_await when_all(writer(), reader());
            co_await s.close();
            co_await ss.close();
        };
        co_await when_all(accept_loop(ss, g, errors, echo), client());
        co_await g.close();
        errors.check();
    });
}

BOOST_AUTO_TEST_CASE(test_server_pushes_then_closes) {
    for_each_backend([]() -> future<> {
        auto ss = listen(loopback());
        auto addr = ss.local_address();
        gate g;
        fiber_errors errors;
        constexpr size_t total = 5 << 20;
        auto push = [](connected_socket s) -> future<> {
            co_await s.write(pattern(2, 0, total));
            co_await s.close();
        };
        auto client = [&]() -> future<> {
            auto s = co_await connect(addr);
            auto got = co_await read_to_eof(s);
            BOOST_CHECK_EQUAL(got.size(), total);
            BOOST_CHECK(got == pattern(2, 0, total));
            BOOST_CHECK((co_await s.read()).empty());
            co_await s.close();
            co_await ss.close();
        };
        co_await when_all(accept_loop(ss, g, errors, push), client());
        co_await g.close();
        errors.check();
    });
}

BOOST_AUTO_TEST_CASE(test_connection_refused) {
    for_each_backend([]() -> future<> {
        // A port that was just free and has no listener now.
        auto ss = listen(loopback());
        auto addr = ss.local_address();
        co_await ss.close();
        try {
            co_await connect(addr);
            BOOST_ERROR("connect to a closed port succeeded");
        } catch (const std::system_error& e) {
            BOOST_CHECK_EQUAL(e.code().value(), ECONNREFUSED);
            std::string what = e.what();
            BOOST_CHECK_MESSAGE(what.find("connect to " + addr.to_string()) != std::string::npos, what);
        }
    });
}

// A listener whose accept queue is full drops further SYNs, so a connect to it hangs until the timeout.
BOOST_AUTO_TEST_CASE(test_connect_timeout) {
    for_each_backend([]() -> future<> {
        listen_options opts;
        opts.backlog = 0;
        auto ss = listen(loopback(), opts);
        auto addr = ss.local_address();
        // Plain nonblocking sockets fill the queue (nobody accepts); the kernel completes their handshakes.
        std::vector<int> fillers;
        for (int i = 0; i < 8; ++i) {
            int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
            BOOST_REQUIRE(fd >= 0);
            (void)::connect(fd, addr.as_sockaddr(), addr.length());
            fillers.push_back(fd);
        }
        auto start = steady_clock_type::now();
        bool timed_out = false;
        try {
            auto s = co_await connect(addr, 300ms);
            co_await s.close();
        } catch (const std::system_error& e) {
            timed_out = e.code().value() == ETIMEDOUT;
            BOOST_CHECK_MESSAGE(timed_out, e.what());
            std::string what = e.what();
            BOOST_CHECK_MESSAGE(what.find("connect to " + addr.to_string()) != std::string::npos, what);
        }
        auto took = steady_clock_type::now() - start;
        BOOST_CHECK(timed_out);
        BOOST_CHECK(took >= 250ms);
        BOOST_CHECK(took < 5s);
        for (int fd : fillers) {
            ::close(fd);
        }
        co_await ss.close();
    });
}

// A timeout that does not expire changes nothing.
BOOST_AUTO_TEST_CASE(test_connect_with_timeout_connects) {
    for_each_backend([]() -> future<> {
        auto ss = listen(loopback());
        auto addr = ss.local_address();
        auto [ar, client] = co_await when_all(ss.accept(), connect(addr, 5s));
        co_await client.write(std::string_view("hi"));
        auto got = co_await read_exactly(ar.connection, 2);
        BOOST_CHECK_EQUAL(got, "hi");
        co_await client.close();
        co_await ar.connection.close();
        co_await ss.close();
    });
}

BOOST_AUTO_TEST_CASE(test_close_cancels_pending_accept) {
    for_each_backend([]() -> future<> {
        auto ss = listen(loopback());
        bool cancelled = false;
        auto acceptor = [&]() -> future<> {
            try {
                co_await ss.accept();
                BOOST_ERROR("accept returned a connection nobody made");
            } catch (const std::system_error& e) {
                cancelled = is_errno(e, ECANCELED);
                BOOST_CHECK_MESSAGE(cancelled, e.what());
            }
        };
        auto closer = [&]() -> future<> {
            co_await sleep(20ms);
            co_await ss.close();
            BOOST_CHECK(!ss);
        };
        co_await when_all(acceptor(), closer());
        BOOST_CHECK(cancelled);
        // A closed server socket refuses new accepts at once.
        try {
            co_await ss.accept();
            BOOST_ERROR("accept on a closed socket succeeded");
        } catch (const std::system_error& e) {
            BOOST_CHECK_EQUAL(e.code().value(), EBADF);
        }
    });
}

BOOST_AUTO_TEST_CASE(test_close_cancels_pending_read) {
    for_each_backend([]() -> future<> {
        auto ss = listen(loopback());
        auto [ar, client] = co_await when_all(ss.accept(), connect(ss.local_address()));
        auto& server_side = ar.connection;
        bool cancelled = false;
        auto reader = [&]() -> future<> {
            try {
                co_await server_side.read();
                BOOST_ERROR("read returned without data or close");
            } catch (const std::system_error& e) {
                cancelled = is_errno(e, ECANCELED);
                BOOST_CHECK_MESSAGE(cancelled, e.what());
            }
        };
        auto closer = [&]() -> future<> {
            co_await sleep(20ms);
            co_await server_side.close();
        };
        co_await when_all(reader(), closer());
        BOOST_CHECK(cancelled);
        // The peer sees the connection end.
        BOOST_CHECK((co_await client.read()).empty());
        co_await client.close();
        co_await ss.close();
    });
}

BOOST_AUTO_TEST_CASE(test_destroying_a_socket_with_a_read_in_flight) {
    for_each_backend([]() -> future<> {
        auto ss = listen(loopback());
        auto [ar, client] = co_await when_all(ss.accept(), connect(ss.local_address()));
        auto owned = std::make_unique<connected_socket>(std::move(ar.connection));
        bool ended = false;
        auto reader = [&]() -> future<> {
            try {
                co_await owned->read();
            } catch (const std::system_error& e) {
                BOOST_CHECK_EQUAL(e.code().value(), ECANCELED);
            }
            ended = true;
        };
        auto destroyer = [&]() -> future<> {
            co_await sleep(10ms);
            owned.reset();
        };
        co_await when_all(reader(), destroyer());
        BOOST_CHECK(ended);
        BOOST_CHECK((co_await client.read()).empty());
        co_await client.close();
        co_await ss.close();
    });
}

namespace {

// The server socket shard 1 listens on in test_reuse_port_on_every_shard.
thread_local std::unique_ptr<server_socket> shard_listener;

struct serve_report {
    unsigned served = 0;
    std::vector<std::string> errors;
};

// Answers each connection on ss with this shard's number until ss is closed.
// Reports back instead of checking: Boost.Test runs on shard 0 only.
future<serve_report> serve_shard_id(server_socket& ss) {
    gate g;
    fiber_errors errors;
    serve_report report;
    auto answer = [&report](connected_socket s) -> future<> {
        ++report.served;
        co_await s.write(std::to_string(this_shard_id()));
        co_await s.close();
    };
    try {
        co_await accept_loop(ss, g, errors, answer);
    } catch (...) {
        errors.record(std::current_exception());
    }
    co_await g.close();
    report.errors = std::move(errors.list);
    co_return report;
}

} // namespace

BOOST_AUTO_TEST_CASE(test_reuse_port_on_every_shard) {
    for_each_backend([]() -> future<> {
        if (smp::count() < 2) {
            BOOST_TEST_MESSAGE("needs 2 shards (REEF_TEST_SMP); skipped");
            co_return;
        }
        auto ss0 = listen(loopback());
        auto addr = ss0.local_address();
        // Without SO_REUSEPORT the port is taken, and the error says where.
        try {
            (void)listen(addr, listen_options{.reuse_port = false});
            BOOST_ERROR("a second listen on the same port succeeded without SO_REUSEPORT");
        } catch (const std::system_error& e) {
            BOOST_CHECK_EQUAL(e.code().value(), EADDRINUSE);
            BOOST_CHECK_MESSAGE(std::string(e.what()).find("bind to " + addr.to_string()) != std::string::npos,
                                e.what());
        }
        // Shard 1 listens on the same port before any client connects.
        co_await smp::submit_to(1, [addr] { shard_listener = std::make_unique<server_socket>(listen(addr)); });

        constexpr unsigned connections = 40;
        std::vector<unsigned> answers(smp::count());
        auto clients = [&]() -> future<> {
            for (unsigned i = 0; i < connections; ++i) {
                auto s = co_await connect(addr);
                auto who = co_await read_to_eof(s);
                co_await s.close();
                unsigned shard = std::stoul(who);
                BOOST_REQUIRE_LT(shard, answers.size());
                ++answers[shard];
            }
            co_await smp::submit_to(1, [] { return shard_listener->close(); });
            co_await ss0.close();
        };
        auto [r1, r0, done] = co_await when_all(
            smp::submit_to(1, [] { return serve_shard_id(*shard_listener); }), serve_shard_id(ss0), clients());
        co_await smp::submit_to(1, [] { shard_listener.reset(); });
        for (auto* r : {&r0, &r1}) {
            for (auto& e : r->errors) {
                BOOST_ERROR("server fiber failed: " << e);
            }
        }
        BOOST_CHECK_EQUAL(r0.served + r1.served, connections);
        BOOST_CHECK_EQUAL(answers[0], r0.served);
        BOOST_CHECK_EQUAL(answers[1], r1.served);
        // The kernel spreads connections over the shards' sockets by a hash
        // of the addresses; 40 all landing on one shard would mean it does not.
        BOOST_CHECK_GT(r0.served, 0u);
        BOOST_CHECK_GT(r1.served, 0u);
    });
}

BOOST_AUTO_TEST_CASE(test_ipv6_loopback) {
    for_each_backend([]() -> future<> {
        server_socket ss;
        try {
            ss = listen(socket_address("::1", 0));
        } catch (const std::system_error& e) {
            if (is_errno(e, EADDRNOTAVAIL) || is_errno(e, EAFNOSUPPORT)) {
                BOOST_TEST_MESSAGE("no IPv6 loopback here; skipped: " << e.what());
                co_return;
            }
            throw;
        }
        auto addr = ss.local_address();
        BOOST_CHECK(addr.is_ipv6());
        BOOST_CHECK_EQUAL(addr.to_string(), "[::1]:" + std::to_string(addr.port()));
        auto [ar, client] = co_await when_all(ss.accept(), connect(addr));
        BOOST_CHECK(ar.remote_address.is_ipv6());
        co_await client.write("six");
        BOOST_CHECK_EQUAL(co_await read_exactly(ar.connection, 3), "six");
        co_await ar.connection.close();
        BOOST_CHECK((co_await client.read()).empty());
        co_await client.close();
        co_await ss.close();
    });
}

// An accepted connection handed to the last shard by its fd (how the CQL server spreads connections): that shard
// reads and writes it, and release_fd refuses a closed socket.
BOOST_AUTO_TEST_CASE(test_release_fd_moves_a_connection_to_another_shard) {
    for_each_backend([]() -> future<> {
        auto ss = listen(socket_address("127.0.0.1", 0));
        auto [ar, client] = co_await when_all(ss.accept(), connect(ss.local_address()));
        int fd = ar.connection.release_fd();
        BOOST_CHECK(!ar.connection);
        BOOST_CHECK_THROW(ar.connection.release_fd(), std::system_error);
        auto remote = ar.remote_address;
        shard_id target = smp::count() - 1;
        auto serve = [fd, remote]() -> future<shard_id> {
            connected_socket s(fd, remote);
            auto got = co_await read_exactly(s, 4);
            co_await s.write(got + "@" + std::to_string(this_shard_id()));
            co_await s.close();
            co_return this_shard_id();
        };
        co_await client.write("ping");
        auto served_on = co_await smp::submit_to(target, serve);
        BOOST_CHECK_EQUAL(served_on, target);
        auto expected = "ping@" + std::to_string(target);
        BOOST_CHECK_EQUAL(co_await read_exactly(client, expected.size()), expected);
        co_await client.close();
        co_await ss.close();
    });
}
