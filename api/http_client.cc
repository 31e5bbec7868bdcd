// The REST API's client: requests written and responses parsed by Boost.Beast, bytes moved by runtime/net.
#include "api/http_client.hh"

#include "runtime/with_timeout.hh"

#include <boost/beast/http.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <netdb.h>
#include <sstream>
#include <system_error>

namespace reef::api {

namespace bhttp = boost::beast::http;

namespace {

bool unreserved(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
           c == '_' || c == '~';
}

void percent_encode(std::string& out, std::string_view s, std::string_view also_plain) {
    static constexpr char hex[] = "0123456789ABCDEF";
    for (char c : s) {
        if (unreserved(c) || also_plain.find(c) != std::string_view::npos) {
            out += c;
        } else {
            auto u = static_cast<unsigned char>(c);
            out += '%';
            out += hex[u >> 4];
            out += hex[u & 15];
        }
    }
}

bhttp::verb to_verb(http_method m) {
    switch (m) {
    case http_method::get: return bhttp::verb::get;
    case http_method::post: return bhttp::verb::post;
    case http_method::put: return bhttp::verb::put;
    case http_method::del: return bhttp::verb::delete_;
    case http_method::head: return bhttp::verb::head;
    case http_method::other: break;
    }
    throw std::invalid_argument("http_client: no such method");
}

// A kept-alive connection that turned out closed before any byte of the response: the request is sent again.
struct stale_connection {};

} // namespace

std::vector<socket_address> resolve_host(const std::string& host, uint16_t port) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* res = nullptr;
    int rc = ::getaddrinfo(host.c_str(), nullptr, &hints, &res);
    if (rc != 0) {
        throw http_client_error(fmt::format("cannot resolve {}: {}", host, ::gai_strerror(rc)));
    }
    std::vector<socket_address> out;
    for (auto* ai = res; ai; ai = ai->ai_next) {
        if (ai->ai_family != AF_INET && ai->ai_family != AF_INET6) {
            continue;
        }
        socket_address a(ai->ai_addr, ai->ai_addrlen);
        a.set_port(port);
        if (std::find(out.begin(), out.end(), a) == out.end()) {
            out.push_back(a);
        }
    }
    ::freeaddrinfo(res);
    if (out.empty()) {
        throw http_client_error(fmt::format("cannot resolve {}: no IPv4 or IPv6 address", host));
    }
    // IPv4 first: "localhost" is 127.0.0.1 to the node's default api_address, and the first failure is reported.
    std::stable_partition(out.begin(), out.end(), [](const socket_address& a) { return a.is_ipv4(); });
    return out;
}

std::string make_target(std::string_view path, const std::vector<std::pair<std::string, std::string>>& query) {
    std::string out;
    percent_encode(out, path, "/:@");
    char sep = '?';
    for (auto& [k, v] : query) {
        out += sep;
        sep = '&';
        percent_encode(out, k, "");
        out += '=';
        percent_encode(out, v, "");
    }
    return out;
}

struct http_client::impl {
    std::vector<socket_address> servers;
    std::string host_header;
    http_client_options opts;
    connected_socket conn;
    bool connected = false;
    socket_address peer;

    future<> drop() {
        if (!connected) {
            co_return;
        }
        connected = false;
        auto c = std::move(conn);
        co_await c.close();
    }

    future<> connect_any() {
        std::string first_error;
        for (auto& a : servers) {
            bool ok = false;
            try {
                conn = co_await connect(a, opts.connect_timeout);
                ok = true;
            } catch (const std::system_error& e) {
                if (first_error.empty()) {
                    first_error = fmt::format("cannot connect to {}: {}", a, e.code().message());
                }
            }
            if (ok) {
                connected = true;
                peer = a;
                co_return;
            }
        }
        throw http_client_error(first_error);
    }

    // One read, bounded by the read timeout; an empty buffer at end of stream.
    future<temporary_buffer> read_some(bool reused, bool got_any) {
        bool timed_out = false;
        std::string error;
        temporary_buffer buf;
        try {
            buf = co_await with_timeout(steady_clock_type::duration(opts.read_timeout), conn.read());
        } catch (const timed_out_error&) {
            timed_out = true;
        } catch (const std::system_error& e) {
            error = e.code().message();
        }
        if (timed_out) {
            co_await drop();
            throw http_client_error(fmt::format("{}: no response in {} s", peer, opts.read_timeout.count() / 1000.0));
        }
        if (!error.empty() || (buf.empty() && !got_any)) {
            co_await drop();
            if (reused && !got_any) {
                throw stale_connection{};
            }
            throw http_client_error(fmt::format("{}: {}", peer, error.empty() ? "the connection closed before a response" : error));
        }
        co_return buf;
    }

    future<http_response> read_response(bool reused) {
        bhttp::response_parser<bhttp::string_body> parser;
        parser.eager(true);
        parser.body_limit(opts.max_body);
        std::string pending;
        bool got_any = false;
        while (!parser.is_done()) {
            auto buf = co_await read_some(reused, got_any);
            boost::beast::error_code ec;
            if (buf.empty()) {
                parser.put_eof(ec);
                if (ec) {
                    co_await drop();
                    throw http_client_error(fmt::format("{}: truncated response: {}", peer, ec.message()));
                }
                break;
            }
            got_any = true;
            pending.append(buf.get(), buf.size());
            size_t off = 0;
            while (off < pending.size() && !parser.is_done()) {
                size_t n = parser.put(boost::asio::buffer(pending.data() + off, pending.size() - off), ec);
                off += n;
                if (ec == bhttp::error::need_more) {
                    ec = {};
                    break;
                }
                if (ec) {
                    break;
                }
                if (n == 0) {
                    break;
                }
            }
            pending.erase(0, off);
            if (ec) {
                co_await drop();
                throw http_client_error(fmt::format("{}: bad HTTP response: {}", peer, ec.message()));
            }
        }
        auto& msg = parser.get();
        http_response r;
        r.status = int(msg.result_int());
        r.content_type = std::string(msg[bhttp::field::content_type]);
        r.body = std::move(msg.body());
        if (!msg.keep_alive()) {
            co_await drop();
        }
        co_return r;
    }
};

http_client::http_client(std::vector<socket_address> servers, std::string host_header, http_client_options opts)
    : _impl(std::make_unique<impl>()) {
    if (servers.empty()) {
        throw std::invalid_argument("http_client: no server address");
    }
    _impl->servers = std::move(servers);
    _impl->host_header = std::move(host_header);
    _impl->opts = opts;
}

http_client::http_client(http_client&&) noexcept = default;
http_client::~http_client() = default;

future<http_response> http_client::request(http_method method, std::string target, std::string body) {
    bhttp::request<bhttp::string_body> req{to_verb(method), target, 11};
    req.set(bhttp::field::host, _impl->host_header);
    req.set(bhttp::field::user_agent, "reef-nodetool");
    req.set(bhttp::field::accept, "application/json");
    if (!body.empty()) {
        req.set(bhttp::field::content_type, "application/json");
    }
    req.body() = std::move(body);
    req.prepare_payload();
    std::ostringstream os;
    os << req;
    const std::string wire = os.str();
    for (int attempt = 0;; ++attempt) {
        bool reused = _impl->connected;
        if (!_impl->connected) {
            co_await _impl->connect_any();
        }
        bool stale = false;
        std::string write_error;
        try {
            co_await _impl->conn.write(std::string_view(wire));
        } catch (const std::system_error& e) {
            write_error = e.code().message();
        }
        if (!write_error.empty()) {
            co_await _impl->drop();
            if (reused && attempt == 0) {
                continue;
            }
            throw http_client_error(fmt::format("{}: {}", _impl->peer, write_error));
        }
        http_response r;
        try {
            r = co_await _impl->read_response(reused && attempt == 0);
        } catch (const stale_connection&) {
            stale = true;
        }
        if (!stale) {
            co_return r;
        }
    }
}

future<> http_client::close() {
    return _impl->drop();
}

} // namespace reef::api
