// jackson_printer: JSON text exactly as Jackson's generator with a DefaultPrettyPrinter whose object and array
// indenters are Cassandra's CompactIndenter (sstabledump's JsonTransformer). The calls mirror JsonGenerator's,
// and set_compact_objects/arrays mirror objectIndenter/arrayIndenter.setCompact, so that the same call sequence
// gives the same bytes, odd line breaks included.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace reef::tools {

class jackson_printer {
public:
    void start_object();
    void end_object();
    void start_array();
    void end_array();
    void field_name(std::string_view name);
    // A string value, quoted and escaped.
    void string(std::string_view s);
    // A value already in JSON form (numbers, booleans, toJSONString output).
    void raw_value(std::string_view json);
    void boolean(bool b) { raw_value(b ? "true" : "false"); }
    void number(long long v) { raw_value(std::to_string(v)); }

    void set_compact_objects(bool c) noexcept { _compact_objects = c; }
    void set_compact_arrays(bool c) noexcept { _compact_arrays = c; }

    std::string& out() noexcept { return _out; }

private:
    struct context {
        bool object;
        size_t entries = 0;
        bool value_due = false;  // objects: a field name was written
    };
    // JsonGenerator._verifyValueWrite with a pretty printer.
    void before_value();
    void indent(bool compact);

    std::string _out;
    std::vector<context> _stack;
    size_t _root_values = 0;
    int _nesting = 0;
    bool _compact_objects = false;
    bool _compact_arrays = false;
};

} // namespace reef::tools
