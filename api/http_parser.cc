// Requests parsed by Boost.Beast's request_parser fed with put() (no Asio streams), replies written by Beast.
#include "api/http_parser.hh"

#include <boost/beast/core/error.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>

#include <cctype>
#include <sstream>

namespace reef::api {

namespace http = boost::beast::http;

struct request_parser::impl {
    http::request_parser<http::string_body> p;
};

request_parser::request_parser(http_limits limits) : _limits(limits) {}
request_parser::~request_parser() = default;
request_parser::request_parser(request_parser&&) noexcept = default;
request_parser& request_parser::operator=(request_parser&&) noexcept = default;

namespace {

std::string lower(std::string_view s) {
    std::string out(s);
    for (auto& c : out) {
        c = char(std::tolower(static_cast<unsigned char>(c)));
    }
    return out;
}

} // namespace

request_parser::state request_parser::parse(std::string& in) {
    if (!_impl) {
        _impl = std::make_unique<impl>();
        _impl->p.header_limit(uint32_t(std::min<size_t>(_limits.max_header_bytes, UINT32_MAX)));
        _impl->p.body_limit(uint64_t(_limits.max_body_bytes));
        _impl->p.eager(true);
        _in_progress = false;
    }
    auto fail = [&](int status, std::string message) {
        _impl.reset();
        _error = api::error_reply(status, message);
        return state::failed;
    };
    while (!in.empty()) {
        boost::beast::error_code ec;
        size_t used = _impl->p.put(boost::asio::buffer(in.data(), in.size()), ec);
        in.erase(0, std::min(used, in.size()));
        _in_progress = true;
        if (ec == http::error::need_more) {
            // The header is incomplete (Beast takes it only whole) or the body wants more bytes.
            if (used == 0) {
                // Beast bounds the header, but not a chunk's size line (extensions may make it long): a line
                // that fills the header limit without ending is refused too, so memory stays bounded.
                if (in.size() > _limits.max_header_bytes) {
                    if (_impl->p.is_header_done()) {
                        return fail(400, "Bad request: a chunk header longer than " +
                                             std::to_string(_limits.max_header_bytes) + " bytes");
                    }
                    return fail(431, "Request header fields too large: the limit is " +
                                         std::to_string(_limits.max_header_bytes) + " bytes");
                }
                return state::incomplete;
            }
            continue;
        }
        if (ec == http::error::header_limit) {
            return fail(431, "Request header fields too large: the limit is " +
                                 std::to_string(_limits.max_header_bytes) + " bytes");
        }
        if (ec == http::error::body_limit) {
            return fail(413, "Request body too large: the limit is " + std::to_string(_limits.max_body_bytes) +
                                 " bytes");
        }
        if (ec) {
            return fail(400, "Bad request: " + ec.message());
        }
        if (_impl->p.is_done()) {
            break;
        }
        if (used == 0) {
            return state::incomplete;
        }
    }
    if (!_impl->p.is_done()) {
        return state::incomplete;
    }
    auto& msg = _impl->p.get();
    http_request req;
    req.method = parse_http_method(std::string_view(msg.method_string().data(), msg.method_string().size()));
    try {
        split_target(std::string_view(msg.target().data(), msg.target().size()), req.path, req.query);
    } catch (const http_error& e) {
        return fail(e.status(), e.what());
    }
    for (auto& f : msg) {
        req.headers.emplace_back(lower(std::string_view(f.name_string().data(), f.name_string().size())),
                                 std::string(f.value().data(), f.value().size()));
    }
    req.body = std::move(msg.body());
    _keep_alive = msg.keep_alive();
    _request = std::move(req);
    _impl.reset();
    _in_progress = false;
    return state::complete;
}

std::string format_response(const http_reply& reply, bool keep_alive) {
    http::response<http::string_body> res;
    res.version(11);
    res.result(unsigned(reply.status));
    res.set(http::field::server, "Reef");
    res.set(http::field::content_type, reply.content_type);
    res.keep_alive(keep_alive);
    res.body() = reply.body;
    res.prepare_payload();
    std::ostringstream os;
    os << res;
    return std::move(os).str();
}

} // namespace reef::api
