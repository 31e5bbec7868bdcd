// json_reader. See json_reader.hh.
#include "utils/json_reader.hh"

#include <cctype>

namespace reef::utils {

json_value::json_value() = default;
json_value::json_value(const json_value&) = default;
json_value::json_value(json_value&&) noexcept = default;
json_value& json_value::operator=(const json_value&) = default;
json_value& json_value::operator=(json_value&&) noexcept = default;
json_value::~json_value() = default;

namespace {

// Deep enough for any dump (values nest a few levels), shallow enough that recursion cannot exhaust the stack.
constexpr int max_depth = 256;

class parser {
public:
    parser(std::string_view s, size_t pos) : _s(s), _pos(pos) {}

    json_value value(int depth) {
        if (depth > max_depth) {
            fail("nesting deeper than 256 levels");
        }
        blank();
        if (_pos >= _s.size()) {
            fail("expected a value, found the end of the text");
        }
        json_value v;
        v.offset = _pos;
        char c = _s[_pos];
        if (c == '{') {
            v.type = json_value::kind::object;
            ++_pos;
            blank();
            if (eat('}')) {
                return v;
            }
            do {
                blank();
                if (_pos >= _s.size() || _s[_pos] != '"') {
                    fail("expected a member name (a string)");
                }
                auto name = string();
                blank();
                if (!eat(':')) {
                    fail("expected ':' after a member name");
                }
                v.members.emplace_back(std::move(name), value(depth + 1));
                blank();
            } while (eat(','));
            if (!eat('}')) {
                fail("expected ',' or '}' in an object");
            }
            return v;
        }
        if (c == '[') {
            v.type = json_value::kind::array;
            ++_pos;
            blank();
            if (eat(']')) {
                return v;
            }
            do {
                v.items.push_back(value(depth + 1));
                blank();
            } while (eat(','));
            if (!eat(']')) {
                fail("expected ',' or ']' in an array");
            }
            return v;
        }
        if (c == '"') {
            v.type = json_value::kind::string;
            v.text = string();
            return v;
        }
        for (auto [word, k] : {std::pair{std::string_view("null"), json_value::kind::null},
                               std::pair{std::string_view("true"), json_value::kind::boolean},
                               std::pair{std::string_view("false"), json_value::kind::boolean}}) {
            if (_s.substr(_pos, word.size()) == word) {
                v.type = k;
                v.text = std::string(word);
                _pos += word.size();
                return v;
            }
        }
        v.type = json_value::kind::number;
        v.text = number();
        return v;
    }

    size_t pos() const noexcept { return _pos; }

    void blank() {
        while (_pos < _s.size() && (_s[_pos] == ' ' || _s[_pos] == '\n' || _s[_pos] == '\r' || _s[_pos] == '\t')) {
            ++_pos;
        }
    }

private:
    [[noreturn]] void fail(const std::string& what) { throw json_parse_error("invalid JSON: " + what, _pos); }

    bool eat(char c) {
        if (_pos < _s.size() && _s[_pos] == c) {
            ++_pos;
            return true;
        }
        return false;
    }

    bool digits() {
        size_t start = _pos;
        while (_pos < _s.size() && std::isdigit(static_cast<unsigned char>(_s[_pos]))) {
            ++_pos;
        }
        return _pos > start;
    }

    // JSON's number grammar, kept as text.
    std::string number() {
        size_t start = _pos;
        eat('-');
        if (eat('0')) {
            // No leading zeros.
        } else if (!digits()) {
            fail("expected a value");
        }
        if (eat('.') && !digits()) {
            fail("expected digits after '.'");
        }
        if (_pos < _s.size() && (_s[_pos] == 'e' || _s[_pos] == 'E')) {
            ++_pos;
            if (!eat('+')) {
                eat('-');
            }
            if (!digits()) {
                fail("expected exponent digits");
            }
        }
        return std::string(_s.substr(start, _pos - start));
    }

    unsigned hex4() {
        if (_pos + 4 > _s.size()) {
            fail("expected 4 hex digits after \\u");
        }
        unsigned v = 0;
        for (int i = 0; i < 4; ++i) {
            char c = _s[_pos++];
            v <<= 4;
            if (c >= '0' && c <= '9') {
                v |= unsigned(c - '0');
            } else if (c >= 'a' && c <= 'f') {
                v |= unsigned(c - 'a' + 10);
            } else if (c >= 'A' && c <= 'F') {
                v |= unsigned(c - 'A' + 10);
            } else {
                --_pos;
                fail("expected a hex digit after \\u");
            }
        }
        return v;
    }

    static void append_utf8(std::string& out, unsigned cp) {
        if (cp < 0x80) {
            out += char(cp);
        } else if (cp < 0x800) {
            out += char(0xC0 | (cp >> 6));
            out += char(0x80 | (cp & 0x3F));
        } else if (cp < 0x10000) {
            out += char(0xE0 | (cp >> 12));
            out += char(0x80 | ((cp >> 6) & 0x3F));
            out += char(0x80 | (cp & 0x3F));
        } else {
            out += char(0xF0 | (cp >> 18));
            out += char(0x80 | ((cp >> 12) & 0x3F));
            out += char(0x80 | ((cp >> 6) & 0x3F));
            out += char(0x80 | (cp & 0x3F));
        }
    }

    std::string string() {
        ++_pos;  // the opening quote
        std::string out;
        while (true) {
            if (_pos >= _s.size()) {
                fail("unterminated string");
            }
            char c = _s[_pos];
            if (c == '"') {
                ++_pos;
                return out;
            }
            if (static_cast<unsigned char>(c) < 0x20) {
                fail("a control character inside a string");
            }
            ++_pos;
            if (c != '\\') {
                out += c;
                continue;
            }
            if (_pos >= _s.size()) {
                fail("unterminated string");
            }
            char e = _s[_pos++];
            switch (e) {
            case '"': out += '"'; break;
            case '\\': out += '\\'; break;
            case '/': out += '/'; break;
            case 'b': out += '\b'; break;
            case 'f': out += '\f'; break;
            case 'n': out += '\n'; break;
            case 'r': out += '\r'; break;
            case 't': out += '\t'; break;
            case 'u': {
                unsigned cp = hex4();
                if (cp >= 0xD800 && cp <= 0xDBFF && _s.substr(_pos, 2) == "\\u") {
                    size_t save = _pos;
                    _pos += 2;
                    unsigned lo = hex4();
                    if (lo >= 0xDC00 && lo <= 0xDFFF) {
                        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                    } else {
                        _pos = save;
                    }
                }
                // A lone surrogate is kept as its 3-byte form (Java strings may hold one).
                append_utf8(out, cp);
                break;
            }
            default:
                --_pos;
                fail(std::string("unknown escape \\") + e);
            }
        }
    }

    std::string_view _s;
    size_t _pos;
};

} // namespace

const json_value* json_value::get(std::string_view name) const noexcept {
    for (auto& [k, v] : members) {
        if (k == name) {
            return &v;
        }
    }
    return nullptr;
}

const char* kind_name(json_value::kind k) noexcept {
    switch (k) {
    case json_value::kind::null: return "null";
    case json_value::kind::boolean: return "a boolean";
    case json_value::kind::number: return "a number";
    case json_value::kind::string: return "a string";
    case json_value::kind::array: return "an array";
    case json_value::kind::object: return "an object";
    }
    return "?";
}

json_value parse_json_value(std::string_view text, size_t& pos) {
    parser p(text, pos);
    auto v = p.value(0);
    pos = p.pos();
    return v;
}

json_value parse_json(std::string_view text) {
    parser p(text, 0);
    auto v = p.value(0);
    p.blank();
    if (p.pos() != text.size()) {
        throw json_parse_error("invalid JSON: text after the value", p.pos());
    }
    return v;
}

std::vector<json_value> parse_json_documents(std::string_view text) {
    std::vector<json_value> docs;
    parser p(text, 0);
    while (true) {
        p.blank();
        if (p.pos() >= text.size()) {
            return docs;
        }
        docs.push_back(p.value(0));
    }
}

} // namespace reef::utils
