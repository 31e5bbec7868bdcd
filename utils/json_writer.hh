// json_writer: builds JSON text in a string, in the layout of Jackson's default pretty printer that Cassandra's
// tools print (`"key" : value`, two-space indents, `[ a, b ]` and `{ "k" : v }` for containers kept on one line).
// Promises: valid JSON whatever the strings hold (escaped as Jackson does); misuse (a value where a key is due,
// unbalanced ends) throws std::logic_error rather than printing broken text.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace reef::utils {

class json_writer {
public:
    // pretty = false: no spaces or newlines at all.
    explicit json_writer(bool pretty = true) : _pretty(pretty) {}

    // A container on one line (`[ 1, 2 ]`) when one_line, else one member per line.
    json_writer& begin_object(bool one_line = false) { return open('{', one_line); }
    json_writer& end_object() { return close('}'); }
    json_writer& begin_array(bool one_line = false) { return open('[', one_line); }
    json_writer& end_array() { return close(']'); }

    // The next member's name (inside an object).
    json_writer& key(std::string_view k);

    json_writer& value(std::string_view s);
    json_writer& value(const char* s) { return value(std::string_view(s)); }
    json_writer& value(const std::string& s) { return value(std::string_view(s)); }
    json_writer& value(int64_t v) { return raw(std::to_string(v)); }
    json_writer& value(uint64_t v) { return raw(std::to_string(v)); }
    json_writer& value(int32_t v) { return raw(std::to_string(v)); }
    json_writer& value(uint32_t v) { return raw(std::to_string(v)); }
    json_writer& value(bool v) { return raw(v ? "true" : "false"); }
    json_writer& null() { return raw("null"); }
    // A value already in JSON form (a number printed elsewhere, a nested document), written as is.
    json_writer& raw(std::string_view json);

    // Shorthands for a member.
    template <typename T>
    json_writer& member(std::string_view k, const T& v) {
        key(k);
        return value(v);
    }

    // True when every container opened has been closed and one top-level value written.
    bool complete() const noexcept { return _stack.empty() && _wrote_top; }
    const std::string& str() const noexcept { return _out; }
    std::string take() { return std::move(_out); }

    // s quoted and escaped: `"` and `\` with a backslash, \b \f \n \r \t short, other control bytes as \u00XX;
    // everything else (UTF-8 included) as is.
    static void append_quoted(std::string& out, std::string_view s);

private:
    struct level {
        char close;
        bool one_line;
        bool empty = true;
        bool key_pending = false;  // objects: a key was written, its value is due
    };

    json_writer& open(char c, bool one_line);
    json_writer& close(char c);
    // Separator and indentation before a value (or a key).
    void before_item(bool is_key);
    void newline_indent(size_t depth);

    bool _pretty;
    bool _wrote_top = false;
    std::vector<level> _stack;
    std::string _out;
};

} // namespace reef::utils
