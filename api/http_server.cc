// The HTTP server: shard 0 accepts; each connection is one fiber reading, parsing, routing and writing in turn,
// with one timer bounding how long a client may take to send a request or read a reply.
#include "api/http_server.hh"

#include "runtime/log.hh"
#include "runtime/reactor.hh"

#include <system_error>

namespace reef::api {

namespace {
logger hlog("http_server");
}

class http_server::connection {
public:
    connection(http_server& server, connected_socket socket, socket_address remote)
        : _server(server), _socket(std::move(socket)), _remote(remote), _parser(server._cfg.limits) {
        _deadline.set_callback([this] { on_timeout(); });
    }

    future<> run();
    // The server is stopping: a connection waiting for a request ends now, one serving a request after its reply.
    void stop() {
        if (!_busy) {
            cut_off();
        }
    }
    // Answers reply (the connection cap's 503) without reading, for a connection that is then closed.
    future<> refuse(const http_reply& reply) { co_await send(reply, false); }
    future<> close() { co_await _socket.close(); }
    const socket_address& remote() const noexcept { return _remote; }

private:
    void on_timeout() {
        _timed_out = true;
        cut_off();
    }
    // Wakes a pending read (end of stream) or write (EPIPE): the fiber then ends and closes the socket.
    void cut_off() noexcept {
        try {
            if (_socket) {
                _socket.shutdown_input();
                _socket.shutdown_output();
            }
        } catch (...) {
            // Already closed or reset by the peer: the fiber is ending anyway.
        }
    }
    future<> send(const http_reply& reply, bool keep_alive, bool head = false);
    future<> linger();

    http_server& _server;
    connected_socket _socket;
    socket_address _remote;
    request_parser _parser;
    std::string _in;
    timer _deadline;
    bool _busy = false;
    bool _timed_out = false;
};

future<> http_server::connection::send(const http_reply& reply, bool keep_alive, bool head) {
    ++_server._stats.requests;
    if (reply.status >= 400) {
        ++_server._stats.errors;
    }
    auto bytes = format_response(reply, keep_alive);
    if (head) {
        // A reply to HEAD has the header fields only (Content-Length still says what GET would send).
        bytes.resize(bytes.find("\r\n\r\n") + 4);
    }
    _deadline.arm(_server._cfg.request_timeout);
    co_await _socket.write(std::string_view(bytes));
    _deadline.cancel();
}

// After an error reply to a request the client may still be sending (a body past the limit): closing with unread
// bytes would make the kernel reset the connection, and the client could lose the reply. So the reply is followed
// by FIN, and what still arrives is read and dropped for a short while.
future<> http_server::connection::linger() {
    constexpr size_t max_discard = 4u << 20;
    _socket.shutdown_output();
    _deadline.arm(std::chrono::milliseconds(std::min<int64_t>(2000, _server._cfg.request_timeout.count())));
    size_t dropped = 0;
    while (dropped < max_discard && !_timed_out) {
        auto buf = co_await _socket.read();
        if (buf.empty()) {
            break;
        }
        dropped += buf.size();
    }
    _deadline.cancel();
    _timed_out = false;
}

future<> http_server::connection::run() {
    auto& cfg = _server._cfg;
    // Set when a request's first byte arrives: the whole request must be in by then.
    std::optional<steady_clock_type::time_point> request_deadline;
    for (;;) {
        auto st = _parser.parse(_in);
        if (st == request_parser::state::complete) {
            request_deadline.reset();
            _busy = true;
            auto& req = _parser.request();
            http_reply reply = co_await _server._routes.handle(req);
            bool keep = _parser.keep_alive() && !_server._stopping;
            co_await send(reply, keep, req.method == http_method::head);
            _busy = false;
            if (!keep || _server._stopping) {
                break;
            }
            if (!_in.empty()) {
                request_deadline = steady_clock_type::now() + cfg.request_timeout;
            }
            continue;
        }
        if (st == request_parser::state::failed) {
            ++_server._stats.malformed;
            hlog.debug("{}: {} from {}: {}", cfg.name, _parser.error_reply().status, _remote,
                       _parser.error_reply().body);
            co_await send(_parser.error_reply(), false);
            co_await linger();
            break;
        }
        if (_server._stopping && !_parser.in_progress() && _in.empty()) {
            break;
        }
        if (_timed_out) {
            break;
        }
        if (request_deadline) {
            _deadline.arm(*request_deadline);
        } else {
            _deadline.arm(cfg.idle_timeout);
        }
        auto buf = co_await _socket.read();
        _deadline.cancel();
        if (buf.empty()) {
            break;
        }
        if (!request_deadline) {
            request_deadline = steady_clock_type::now() + cfg.request_timeout;
        }
        _in.append(buf.get(), buf.size());
    }
    if (_timed_out) {
        ++_server._stats.timeouts;
        hlog.debug("{}: connection from {} timed out", cfg.name, _remote);
    }
}

http_server::http_server(const route_table& routes, http_server_config cfg) : _routes(routes), _cfg(std::move(cfg)) {}

http_server::~http_server() = default;

socket_address http_server::listen(socket_address addr) {
    listen_options opts;
    opts.reuse_port = false;
    _listener = reef::listen(addr, opts);
    auto bound = _listener.local_address();
    spawn(accept_loop());
    return bound;
}

future<> http_server::accept_loop() {
    auto in_gate = _gate.hold();
    for (;;) {
        accept_result ar;
        std::exception_ptr failed;
        try {
            ar = co_await _listener.accept();
        } catch (...) {
            failed = std::current_exception();
        }
        if (failed) {
            if (_stopping) {
                co_return;
            }
            try {
                std::rethrow_exception(failed);
            } catch (const std::exception& e) {
                hlog.warn("{}: accept failed: {}; retrying in 100 ms", _cfg.name, e.what());
            }
            co_await sleep(std::chrono::milliseconds(100));
            continue;
        }
        ++_stats.connections;
        auto c = std::make_shared<connection>(*this, std::move(ar.connection), ar.remote_address);
        if (_connections.size() >= _cfg.max_connections) {
            ++_stats.refused;
            spawn([this, c, in_gate = _gate.hold()]() -> future<> {
                auto reply = error_reply(503, "Too many connections: the limit is " +
                                                  std::to_string(_cfg.max_connections));
                try {
                    co_await c->refuse(reply);
                } catch (...) {
                    // The client is gone already.
                }
                co_await c->close();
            });
            continue;
        }
        _connections.push_back(c);
        spawn(serve(std::move(c), _gate.hold()));
    }
}

future<> http_server::serve(std::shared_ptr<connection> c, gate::holder in_gate) {
    try {
        co_await c->run();
    } catch (const std::exception& e) {
        // A reset or a cut-off write: the client is gone.
        hlog.debug("{}: connection from {}: {}", _cfg.name, c->remote(), e.what());
    }
    co_await c->close();
    _connections.remove(c);
}

future<> http_server::stop() {
    if (_stopping) {
        co_return;
    }
    _stopping = true;
    co_await _listener.close();
    for (auto& c : _connections) {
        c->stop();
    }
    co_await _gate.close();
}

} // namespace reef::api
