#include "runtime/program_options.hh"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>

namespace reef::program_options {

namespace {

option_error bad_value(std::string_view name, std::string_view value, std::string_view what) {
    return option_error(fmt::format("option --{}: '{}' is {}", name, value, what));
}

template <typename T>
T parse_integer(std::string_view name, std::string_view value, T min, T max, std::string_view what) {
    T result;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), result);
    if (ec == std::errc::invalid_argument || end != value.data() + value.size()) {
        throw bad_value(name, value, what);
    }
    if (ec == std::errc::result_out_of_range || result < min || result > max) {
        throw bad_value(name, value, fmt::format("out of range [{}, {}]", min, max));
    }
    return result;
}

bool parse_bool(std::string_view name, std::string_view value) {
    if (value == "true" || value == "1" || value == "yes") {
        return true;
    }
    if (value == "false" || value == "0" || value == "no") {
        return false;
    }
    throw bad_value(name, value, "not true or false");
}

} // namespace

options::options(std::string program, std::string description)
        : _program(std::move(program))
        , _description(std::move(description)) {
}

int64_t options::parse_signed(const option& o, std::string_view value, int64_t min, int64_t max) {
    return parse_integer<int64_t>(o.name, value, min, max, "not an integer");
}

uint64_t options::parse_unsigned(const option& o, std::string_view value, uint64_t min, uint64_t max) {
    return parse_integer<uint64_t>(o.name, value, min, max, "not an unsigned integer");
}

void options::add_option(option o) {
    if (o.name == "help" || find(o.name)) {
        throw std::logic_error(fmt::format("option --{} added twice", o.name));
    }
    _options.push_back(std::move(o));
}

options::option* options::find(std::string_view name) {
    auto it = std::find_if(_options.begin(), _options.end(), [&](auto& o) { return o.name == name; });
    return it == _options.end() ? nullptr : &*it;
}

options& options::add(std::string name, std::string help, bool* target) {
    *target = false;
    option o{std::move(name), std::move(help), "", ""};
    o.set = [target](const option& self, std::string_view v) { *target = parse_bool(self.name, v); };
    add_option(std::move(o));
    return *this;
}

options& options::add(std::string name, std::string help, std::string* target, std::string default_value) {
    *target = default_value;
    option o{std::move(name), std::move(help), "string", std::move(default_value)};
    o.set = [target](const option&, std::string_view v) { *target = std::string(v); };
    add_option(std::move(o));
    return *this;
}

options& options::add(std::string name, std::string help, double* target, double default_value) {
    *target = default_value;
    option o{std::move(name), std::move(help), "number", fmt::format("{}", default_value)};
    o.set = [target](const option& self, std::string_view v) {
        double d;
        auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), d);
        if (ec != std::errc() || end != v.data() + v.size() || !std::isfinite(d)) {
            throw bad_value(self.name, v, "not a number");
        }
        *target = d;
    };
    add_option(std::move(o));
    return *this;
}

options& options::add(std::string name, std::string help, std::vector<std::string>* target) {
    target->clear();
    option o{std::move(name), std::move(help), "string", ""};
    o.repeated = true;
    o.set = [target](const option&, std::string_view v) { target->emplace_back(v); };
    add_option(std::move(o));
    return *this;
}

options& options::add_positional(std::string name, std::string help, std::vector<std::string>* target) {
    target->clear();
    _positional_name = std::move(name);
    _positional_help = std::move(help);
    _positional = target;
    return *this;
}

void options::parse(std::span<const std::string_view> args) {
    bool options_ended = false;
    for (size_t i = 0; i < args.size(); ++i) {
        auto arg = args[i];
        if (options_ended || arg == "-" || !arg.starts_with("-")) {
            if (!_positional) {
                throw option_error(fmt::format("unexpected argument '{}'", arg));
            }
            _positional->emplace_back(arg);
            continue;
        }
        if (arg == "--") {
            options_ended = true;
            continue;
        }
        if (!arg.starts_with("--")) {
            throw option_error(fmt::format("unknown option {} (options start with --)", arg));
        }
        auto body = arg.substr(2);
        auto eq = body.find('=');
        auto name = body.substr(0, eq);
        bool has_value = eq != std::string_view::npos;
        if (name == "help") {
            if (has_value) {
                throw option_error("option --help takes no value");
            }
            _help_requested = true;
            continue;
        }
        option* o = find(name);
        if (!o) {
            throw option_error(fmt::format("unknown option --{}", name));
        }
        if (o->seen && !o->repeated) {
            throw option_error(fmt::format("option --{} given more than once", name));
        }
        o->seen = true;
        std::string_view value;
        if (has_value) {
            value = body.substr(eq + 1);
        } else if (o->value_name.empty()) {
            value = "true";
        } else if (i + 1 < args.size() && !args[i + 1].starts_with("--")) {
            value = args[++i];
        } else {
            throw option_error(fmt::format("option --{}: missing value", name));
        }
        o->set(*o, value);
    }
}

void options::parse(int argc, const char* const* argv) {
    std::vector<std::string_view> args(argv + std::min(argc, 1), argv + argc);
    parse(args);
}

bool options::was_set(std::string_view name) const {
    auto it = std::find_if(_options.begin(), _options.end(), [&](auto& o) { return o.name == name; });
    return it != _options.end() && it->seen;
}

std::string options::help() const {
    struct row {
        std::string left;
        std::string right;
    };
    std::vector<row> rows;
    rows.push_back({"--help", "show this help and exit"});
    for (auto& o : _options) {
        if (o.help.empty()) {
            continue;  // a hidden option (a test hook)
        }
        std::string left = "--" + o.name;
        if (!o.value_name.empty()) {
            left += fmt::format(" <{}>{}", o.value_name, o.repeated ? "..." : "");
        }
        std::string right = o.help;
        if (!o.default_text.empty()) {
            right += fmt::format(" (default: {})", o.default_text);
        }
        if (o.repeated) {
            right += " (repeatable)";
        }
        rows.push_back({std::move(left), std::move(right)});
    }
    size_t width = 0;
    for (auto& r : rows) {
        width = std::max(width, r.left.size());
    }
    if (_positional) {
        width = std::max(width, _positional_name.size());
    }

    std::string out = fmt::format("Usage: {} [options]{}\n\n", _program,
                                  _positional ? fmt::format(" [{}...]", _positional_name) : "");
    if (!_description.empty()) {
        out += _description + "\n\n";
    }
    out += "Options:\n";
    for (auto& r : rows) {
        out += fmt::format("  {:<{}}  {}\n", r.left, width, r.right);
    }
    if (_positional) {
        out += fmt::format("\nArguments:\n  {:<{}}  {}\n", _positional_name, width, _positional_help);
    }
    return out;
}

} // namespace reef::program_options
