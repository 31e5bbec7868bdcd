// See jackson_printer.hh. Each step names the DefaultPrettyPrinter call it stands for.
#include "tools/jackson_printer.hh"

#include "utils/json_writer.hh"

#include <stdexcept>

namespace reef::tools {

void jackson_printer::indent(bool compact) {
    // CompactIndenter.writeIndentation: a space when compact, else a newline and two spaces per level.
    if (compact) {
        _out += ' ';
        return;
    }
    _out += '\n';
    _out.append(size_t(std::max(_nesting, 0)) * 2, ' ');
}

void jackson_printer::before_value() {
    if (_stack.empty()) {
        if (_root_values++ > 0) {
            _out += ' ';  // writeRootValueSeparator
        }
        return;
    }
    auto& c = _stack.back();
    if (c.object) {
        if (!c.value_due) {
            throw std::logic_error("jackson_printer: a value where a field name is due");
        }
        c.value_due = false;
        _out += " : ";  // writeObjectFieldValueSeparator
        return;
    }
    if (c.entries++ > 0) {
        _out += ',';  // writeArrayValueSeparator
    }
    indent(_compact_arrays);  // (or beforeArrayValues)
}

void jackson_printer::start_object() {
    before_value();
    _out += '{';
    ++_nesting;
    _stack.push_back({true});
}

void jackson_printer::end_object() {
    if (_stack.empty() || !_stack.back().object || _stack.back().value_due) {
        throw std::logic_error("jackson_printer: unbalanced end_object");
    }
    --_nesting;
    if (_stack.back().entries > 0) {
        indent(_compact_objects);
    } else {
        _out += ' ';
    }
    _out += '}';
    _stack.pop_back();
}

void jackson_printer::start_array() {
    before_value();
    ++_nesting;
    _out += '[';
    _stack.push_back({false});
}

void jackson_printer::end_array() {
    if (_stack.empty() || _stack.back().object) {
        throw std::logic_error("jackson_printer: unbalanced end_array");
    }
    --_nesting;
    if (_stack.back().entries > 0) {
        indent(_compact_arrays);
    } else {
        _out += ' ';
    }
    _out += ']';
    _stack.pop_back();
}

void jackson_printer::field_name(std::string_view name) {
    if (_stack.empty() || !_stack.back().object || _stack.back().value_due) {
        throw std::logic_error("jackson_printer: a field name outside an object");
    }
    auto& c = _stack.back();
    if (c.entries++ > 0) {
        _out += ',';  // writeObjectEntrySeparator
    }
    indent(_compact_objects);  // (or beforeObjectEntries)
    utils::json_writer::append_quoted(_out, name);
    c.value_due = true;
}

void jackson_printer::string(std::string_view s) {
    before_value();
    utils::json_writer::append_quoted(_out, s);
}

void jackson_printer::raw_value(std::string_view json) {
    before_value();
    _out += json;
}

} // namespace reef::tools
