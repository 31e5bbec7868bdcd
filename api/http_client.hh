// http_client: an HTTP/1.1 client on the runtime's sockets, for `reef nodetool` (and tests) to speak the REST API.
// Promises: a request ends in a whole parsed response or an http_client_error whose what() is one line naming the server; no wait outlasts its timeout.
#pragma once

#include "api/http_message.hh"
#include "runtime/future.hh"
#include "runtime/net.hh"

#include <chrono>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace reef::api {

struct http_response {
    int status = 0;
    std::string content_type;
    std::string body;
};

struct http_client_options {
    // Per address tried.
    std::chrono::milliseconds connect_timeout{5000};
    // The longest silence while a response is awaited: a flush or a major compaction answers only when done.
    std::chrono::milliseconds read_timeout{600000};
    // A response body larger than this is an error.
    size_t max_body = size_t(64) << 20;
};

// The server could not be reached, did not answer in time, or answered something that is not HTTP:
// "cannot connect to 127.0.0.1:10000: Connection refused", "127.0.0.1:10000: no response in 5 s".
class http_client_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// host (a name or a numeric IPv4/IPv6 address) and port as the addresses to try, in getaddrinfo's order.
// Blocking (getaddrinfo): call it before the runtime starts. Throws http_client_error naming the host.
std::vector<socket_address> resolve_host(const std::string& host, uint16_t port);

// path plus its query parameters, each percent-encoded ("/a b", {{"cf","t1,t2"}} gives "/a%20b?cf=t1%2Ct2").
std::string make_target(std::string_view path, const std::vector<std::pair<std::string, std::string>>& query);

// One server, one connection at a time, kept alive between requests. Used on the shard that made it.
class http_client {
public:
    // host_header: the Host field ("localhost:10000").
    http_client(std::vector<socket_address> servers, std::string host_header, http_client_options opts = {});
    http_client(http_client&&) noexcept;
    ~http_client();

    // Sends method target (already encoded, see make_target) with body and reads the whole response. A kept-alive
    // connection the server closed meanwhile is replaced once, transparently.
    future<http_response> request(http_method method, std::string target, std::string body = {});
    // Closes the connection, if any.
    future<> close();

private:
    struct impl;
    std::unique_ptr<impl> _impl;
};

} // namespace reef::api
