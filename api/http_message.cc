// The plain parts of HTTP messages: methods, parameters, percent-decoding and the JSON error body.
#include "api/http_message.hh"

#include "utils/json_writer.hh"

namespace reef::api {

std::string_view to_string(http_method m) noexcept {
    switch (m) {
    case http_method::get: return "GET";
    case http_method::post: return "POST";
    case http_method::put: return "PUT";
    case http_method::del: return "DELETE";
    case http_method::head: return "HEAD";
    case http_method::other: break;
    }
    return "OTHER";
}

http_method parse_http_method(std::string_view word) noexcept {
    for (auto m : {http_method::get, http_method::post, http_method::put, http_method::del, http_method::head}) {
        if (word == to_string(m)) {
            return m;
        }
    }
    return http_method::other;
}

const std::string* http_request::query_param(std::string_view name) const noexcept {
    for (auto& [k, v] : query) {
        if (k == name) {
            return &v;
        }
    }
    return nullptr;
}

std::vector<std::string> http_request::query_params(std::string_view name) const {
    std::vector<std::string> out;
    for (auto& [k, v] : query) {
        if (k == name) {
            out.push_back(v);
        }
    }
    return out;
}

const std::string& http_request::path_param(std::string_view name) const {
    for (auto& [k, v] : path_params) {
        if (k == name) {
            return v;
        }
    }
    throw std::logic_error("route has no path parameter " + std::string(name));
}

const std::string* http_request::header(std::string_view name) const noexcept {
    for (auto& [k, v] : headers) {
        if (k == name) {
            return &v;
        }
    }
    return nullptr;
}

std::string error_body(std::string_view message, int status) {
    utils::json_writer w(false);
    w.begin_object().member("message", message).member("code", int32_t(status)).end_object();
    return w.take();
}

http_reply error_reply(int status, std::string_view message) {
    return http_reply{status, "application/json", error_body(message, status)};
}

namespace {

int hex_digit(char c) noexcept {
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
        return c - 'a' + 10;
    }
    if (c >= 'A' && c <= 'F') {
        return c - 'A' + 10;
    }
    return -1;
}

} // namespace

std::string percent_decode(std::string_view s, bool plus_is_space) {
    std::string out;
    out.reserve(s.size());
    for (size_t i = 0; i < s.size(); ++i) {
        char c = s[i];
        if (c == '%') {
            int hi = i + 1 < s.size() ? hex_digit(s[i + 1]) : -1;
            int lo = i + 2 < s.size() ? hex_digit(s[i + 2]) : -1;
            if (hi < 0 || lo < 0) {
                throw bad_request("bad percent-encoding at offset " + std::to_string(i) + " of '" + std::string(s) +
                                  "'");
            }
            out.push_back(char(hi * 16 + lo));
            i += 2;
        } else if (c == '+' && plus_is_space) {
            out.push_back(' ');
        } else {
            out.push_back(c);
        }
    }
    return out;
}

void split_target(std::string_view target, std::string& path,
                  std::vector<std::pair<std::string, std::string>>& query) {
    auto q = target.find('?');
    path = percent_decode(target.substr(0, q), false);
    query.clear();
    if (q == std::string_view::npos) {
        return;
    }
    auto rest = target.substr(q + 1);
    while (!rest.empty()) {
        auto amp = rest.find('&');
        auto part = rest.substr(0, amp);
        rest = amp == std::string_view::npos ? std::string_view() : rest.substr(amp + 1);
        if (part.empty()) {
            continue;
        }
        auto eq = part.find('=');
        auto name = percent_decode(part.substr(0, eq), true);
        auto value = eq == std::string_view::npos ? std::string() : percent_decode(part.substr(eq + 1), true);
        query.emplace_back(std::move(name), std::move(value));
    }
}

} // namespace reef::api
