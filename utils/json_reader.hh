// json_reader: parses JSON text into a tree of json_value that keeps every scalar's source text (so 1E+300 and
// 0.10 stay as written) and every value's byte offset in the document, for messages that say where input is bad.
// Promises: any input either parses or throws json_parse_error with the offset; nesting is bounded.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace reef::utils {

// Bad JSON text: what was expected and the byte offset where it went wrong.
class json_parse_error : public std::runtime_error {
public:
    json_parse_error(const std::string& what, size_t offset)
        : std::runtime_error(what + " at offset " + std::to_string(offset)), _offset(offset) {}
    size_t offset() const noexcept { return _offset; }

private:
    size_t _offset;
};

struct json_value {
    enum class kind { null, boolean, number, string, array, object };
    kind type = kind::null;
    // string: the unescaped text (UTF-8); number, boolean, null: the source text as written.
    std::string text;
    std::vector<json_value> items;
    // Members in document order (duplicate names are kept; get() finds the first).
    std::vector<std::pair<std::string, json_value>> members;
    // Where the value starts in the document.
    size_t offset = 0;

    // Defined in the .cc, where json_value is complete: the members' pair<string, json_value> may not be
    // instantiated inside this definition (clang with libstdc++ refuses it).
    json_value();
    json_value(const json_value&);
    json_value(json_value&&) noexcept;
    json_value& operator=(const json_value&);
    json_value& operator=(json_value&&) noexcept;
    ~json_value();

    bool is_null() const noexcept { return type == kind::null; }
    bool is_string() const noexcept { return type == kind::string; }
    bool is_number() const noexcept { return type == kind::number; }
    bool is_array() const noexcept { return type == kind::array; }
    bool is_object() const noexcept { return type == kind::object; }
    const json_value* get(std::string_view name) const noexcept;
};

// "null", "boolean", ... for messages.
const char* kind_name(json_value::kind k) noexcept;

// Parses one value starting at pos (leading white space skipped), leaves pos after it.
json_value parse_json_value(std::string_view text, size_t& pos);

// Parses a whole document: one value and nothing but white space after it.
json_value parse_json(std::string_view text);

// Every value of a text holding several documents one after the other (a dump of several sstables).
std::vector<json_value> parse_json_documents(std::string_view text);

} // namespace reef::utils
