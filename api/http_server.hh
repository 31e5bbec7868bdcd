// http_server: an HTTP/1.1 server on shard 0's sockets serving one route_table (the REST API, or /metrics).
// Promises: requests on a connection answered in order (keep-alive, pipelining); bounded headers, bodies, time
// and connections; bad input answered with a JSON error then closed, never a crash; stop() lets requests in
// flight finish.
#pragma once

#include "api/http_parser.hh"
#include "api/route_table.hh"
#include "runtime/gate.hh"
#include "runtime/net.hh"
#include "runtime/timer.hh"

#include <chrono>
#include <cstdint>
#include <list>
#include <memory>
#include <string>

namespace reef::api {

struct http_server_config {
    // Names the server in logs ("REST API", "metrics").
    std::string name = "REST API";
    http_limits limits;
    // A keep-alive connection with no request under way closes after this long.
    std::chrono::milliseconds idle_timeout{60'000};
    // From a request's first byte to its last, and for writing a reply: a slow client is cut off after this long.
    std::chrono::milliseconds request_timeout{10'000};
    // Connections beyond this many are answered 503 and closed at once.
    size_t max_connections = 100;
};

struct http_server_stats {
    uint64_t connections = 0;
    uint64_t requests = 0;
    // Replies with a status >= 400 (404s, bad parameters, bad input ...).
    uint64_t errors = 0;
    // Connections closed for bad input (400, 413, 431), a timeout, or the connection cap.
    uint64_t malformed = 0;
    uint64_t timeouts = 0;
    uint64_t refused = 0;
};

class http_server {
public:
    // `routes` must outlive the server.
    http_server(const route_table& routes, http_server_config cfg);
    ~http_server();

    // Binds addr (no SO_REUSEPORT: a port in use throws std::system_error naming the address) and accepts in the
    // background. Returns the bound address (port 0 picks one). On the shard that will call stop().
    socket_address listen(socket_address addr);

    // Stops accepting; idle connections close now, the others once their request is answered. Idempotent.
    future<> stop();

    const http_server_stats& stats() const noexcept { return _stats; }
    size_t connection_count() const noexcept { return _connections.size(); }
    const http_server_config& config() const noexcept { return _cfg; }

private:
    class connection;
    future<> accept_loop();
    future<> serve(std::shared_ptr<connection> c, gate::holder in_gate);

    const route_table& _routes;
    http_server_config _cfg;
    http_server_stats _stats;
    server_socket _listener;
    std::list<std::shared_ptr<connection>> _connections;
    gate _gate;
    bool _stopping = false;
};

} // namespace reef::api
