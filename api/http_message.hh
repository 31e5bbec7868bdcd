// http_message: an HTTP request and reply as the REST API's handlers see them, as plain structs (no Boost here).
// The server fills a request with its path and query already percent-decoded; a handler fills a reply or throws.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace reef::api {

enum class http_method { get, post, put, del, head, other };

// "GET", "POST", ... ("DELETE" for del); and back (other for any word we do not route).
std::string_view to_string(http_method m) noexcept;
http_method parse_http_method(std::string_view word) noexcept;

struct http_request {
    http_method method = http_method::get;
    // The target's path, percent-decoded, without the query; one trailing '/' is ignored by the route table.
    std::string path;
    // The query's parameters, percent-decoded ('+' is a space), in their order; a name may repeat.
    std::vector<std::pair<std::string, std::string>> query;
    // The header fields, names lower-cased, in their order.
    std::vector<std::pair<std::string, std::string>> headers;
    std::string body;
    // Filled by the route table: the values of the path's `{name}` segments.
    std::vector<std::pair<std::string, std::string>> path_params;

    // The first value of query parameter `name`, or null.
    const std::string* query_param(std::string_view name) const noexcept;
    // Every value of query parameter `name`, in order.
    std::vector<std::string> query_params(std::string_view name) const;
    // The value of path parameter `name`; throws std::logic_error when the route has none (a programming error).
    const std::string& path_param(std::string_view name) const;
    // The first header named `name` (lower case), or null.
    const std::string* header(std::string_view name) const noexcept;
};

struct http_reply {
    int status = 200;
    std::string content_type = "application/json";
    // A `void` operation answers 200 with an empty body, as ScyllaDB does.
    std::string body;

    static http_reply json(std::string body) { return http_reply{200, "application/json", std::move(body)}; }
    static http_reply text(std::string body, std::string content_type = "text/plain; charset=utf-8") {
        return http_reply{200, std::move(content_type), std::move(body)};
    }
};

// Thrown by a handler (or the route table) to answer `status` with the JSON body {"message": what(), "code": status}.
class http_error : public std::runtime_error {
    int _status;

public:
    http_error(int status, const std::string& message) : std::runtime_error(message), _status(status) {}
    int status() const noexcept { return _status; }
};

// A bad parameter or an unknown keyspace or table: 400, as ScyllaDB answers them.
inline http_error bad_request(const std::string& message) { return http_error(400, message); }
inline http_error not_found(const std::string& message) { return http_error(404, message); }

// The JSON error body: {"message": "...", "code": N}.
std::string error_body(std::string_view message, int status);
// A reply carrying error_body.
http_reply error_reply(int status, std::string_view message);

// Percent-decodes s ('+' becomes a space when plus_is_space); throws bad_request naming s on a bad escape.
std::string percent_decode(std::string_view s, bool plus_is_space);
// Splits a target ("/a/b?x=1&y") into its decoded path and query parameters; throws bad_request on bad escapes.
void split_target(std::string_view target, std::string& path, std::vector<std::pair<std::string, std::string>>& query);

} // namespace reef::api
