// JSON text building. See json_writer.hh.
#include "utils/json_writer.hh"

#include <stdexcept>

namespace reef::utils {

void json_writer::append_quoted(std::string& out, std::string_view s) {
    static constexpr char hex[] = "0123456789ABCDEF";
    out.push_back('"');
    for (char c : s) {
        auto u = static_cast<unsigned char>(c);
        switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\b': out += "\\b"; break;
        case '\f': out += "\\f"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        default:
            if (u < 0x20) {
                out += "\\u00";
                out.push_back(hex[u >> 4]);
                out.push_back(hex[u & 15]);
            } else {
                out.push_back(c);
            }
        }
    }
    out.push_back('"');
}

void json_writer::newline_indent(size_t depth) {
    _out.push_back('\n');
    _out.append(2 * depth, ' ');
}

void json_writer::before_item(bool is_key) {
    if (_stack.empty()) {
        if (_wrote_top) {
            throw std::logic_error("json_writer: a second top-level value");
        }
        _wrote_top = true;
        return;
    }
    auto& l = _stack.back();
    if (l.close == '}') {
        if (is_key == l.key_pending) {
            throw std::logic_error(is_key ? "json_writer: a key where its value is due" : "json_writer: a value without a key");
        }
        if (!is_key) {
            l.key_pending = false;
            return;  // the key wrote the separator
        }
        l.key_pending = true;
    } else if (is_key) {
        throw std::logic_error("json_writer: a key inside an array");
    }
    if (!l.empty) {
        _out.push_back(',');
    }
    if (_pretty) {
        if (l.one_line) {
            _out.push_back(' ');
        } else {
            newline_indent(_stack.size());
        }
    }
    l.empty = false;
}

json_writer& json_writer::key(std::string_view k) {
    before_item(true);
    append_quoted(_out, k);
    _out += _pretty ? " : " : ":";
    return *this;
}

json_writer& json_writer::value(std::string_view s) {
    before_item(false);
    append_quoted(_out, s);
    return *this;
}

json_writer& json_writer::raw(std::string_view json) {
    before_item(false);
    _out += json;
    return *this;
}

json_writer& json_writer::open(char c, bool one_line) {
    before_item(false);
    _out.push_back(c);
    _stack.push_back(level{c == '{' ? '}' : ']', one_line});
    return *this;
}

json_writer& json_writer::close(char c) {
    if (_stack.empty() || _stack.back().close != c || _stack.back().key_pending) {
        throw std::logic_error(std::string("json_writer: unbalanced '") + c + "'");
    }
    auto l = _stack.back();
    _stack.pop_back();
    if (_pretty) {
        if (l.empty || l.one_line) {
            _out.push_back(' ');
        } else {
            newline_indent(_stack.size());
        }
    }
    _out.push_back(c);
    return *this;
}

} // namespace reef::utils
