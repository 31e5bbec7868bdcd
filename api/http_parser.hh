// http_parser: one connection's HTTP/1.1 requests parsed from the bytes it sent, and replies written as bytes.
// Promises: bounded memory (header and body limits), a request never half-built, and for any input either a
// request, "need more bytes", or the error reply (400, 413, 431) to send before closing; no Boost in this header.
#pragma once

#include "api/http_message.hh"

#include <cstddef>
#include <memory>
#include <string>

namespace reef::api {

struct http_limits {
    // The request line and header fields together; more is answered 431.
    size_t max_header_bytes = 16 * 1024;
    // The body after any chunked decoding; more is answered 413.
    size_t max_body_bytes = 1024 * 1024;
};

class request_parser {
public:
    enum class state { incomplete, complete, failed };

    explicit request_parser(http_limits limits = {});
    ~request_parser();
    request_parser(request_parser&&) noexcept;
    request_parser& operator=(request_parser&&) noexcept;

    // Parses the request at the front of `in`, removing the bytes it consumed (a pipelined next request stays).
    // incomplete: every byte was taken, send more; complete: request() and keep_alive() hold it until the next
    // parse, which starts a new request; failed: error_reply() is the answer, and the connection must close.
    state parse(std::string& in);

    http_request& request() noexcept { return _request; }
    // HTTP/1.1 without "Connection: close", or HTTP/1.0 with "Connection: keep-alive".
    bool keep_alive() const noexcept { return _keep_alive; }
    const http_reply& error_reply() const noexcept { return _error; }
    // True once some byte of the next request was taken (a timeout then means a partial request).
    bool in_progress() const noexcept { return _in_progress; }

private:
    struct impl;
    http_limits _limits;
    std::unique_ptr<impl> _impl;
    http_request _request;
    http_reply _error;
    bool _keep_alive = false;
    bool _in_progress = false;
};

// The HTTP/1.1 response for reply: status line, Content-Type, Content-Length, Connection, then the body.
std::string format_response(const http_reply& reply, bool keep_alive);

} // namespace reef::api
