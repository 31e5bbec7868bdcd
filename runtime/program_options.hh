// A small declarative command-line parser: options write straight into the caller's variables.
// Parsing either sets every given option or throws option_error naming the option and the bad value.
#pragma once

#include <concepts>
#include <cstdint>
#include <functional>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace reef::program_options {

class option_error : public std::invalid_argument {
public:
    using std::invalid_argument::invalid_argument;
};

// Accepts `--name value`, `--name=value`, `--flag`, `--flag=true|false`,
// and `--` to end options. A value may start with '-' (as in `--offset -5`)
// but not with "--", so a forgotten value is reported, not swallowed. Each
// non-repeated option may be given once. `--help` is always known.
class options {
    struct option {
        std::string name;
        std::string help;
        std::string value_name; // "" for flags
        std::string default_text;
        bool repeated = false;
        bool seen = false;
        std::function<void(const option& self, std::string_view value)> set;
    };
    std::string _program;
    std::string _description;
    std::vector<option> _options;
    std::string _positional_name;
    std::string _positional_help;
    std::vector<std::string>* _positional = nullptr;
    bool _help_requested = false;

    void add_option(option o);
    option* find(std::string_view name);
    static int64_t parse_signed(const option& o, std::string_view value, int64_t min, int64_t max);
    static uint64_t parse_unsigned(const option& o, std::string_view value, uint64_t min, uint64_t max);

public:
    options(std::string program, std::string description);

    // Each add() stores the default in *target now; a name may be added once
    // (std::logic_error otherwise). Targets must outlive parse(). An option
    // with an empty help text is accepted but not listed by help().

    // A flag: false unless given.
    options& add(std::string name, std::string help, bool* target);
    options& add(std::string name, std::string help, std::string* target, std::string default_value = {});
    options& add(std::string name, std::string help, double* target, double default_value);
    // Repeatable; each occurrence appends one value.
    options& add(std::string name, std::string help, std::vector<std::string>* target);

    // Integers of any width, checked against [min, max] and the target's range.
    template <std::integral T>
        requires(!std::is_same_v<T, bool>)
    options& add(std::string name, std::string help, T* target, std::type_identity_t<T> default_value,
                 std::type_identity_t<T> min = std::numeric_limits<T>::min(),
                 std::type_identity_t<T> max = std::numeric_limits<T>::max()) {
        *target = default_value;
        option o{std::move(name), std::move(help), std::is_signed_v<T> ? "int" : "unsigned",
                 std::to_string(default_value)};
        if constexpr (std::is_signed_v<T>) {
            o.set = [target, min, max](const option& self, std::string_view v) {
                *target = T(parse_signed(self, v, min, max));
            };
        } else {
            o.set = [target, min, max](const option& self, std::string_view v) {
                *target = T(parse_unsigned(self, v, min, max));
            };
        }
        add_option(std::move(o));
        return *this;
    }

    // Arguments that are not options go to *target; without this, any is an error.
    options& add_positional(std::string name, std::string help, std::vector<std::string>* target);

    // args excludes the program name. Throws option_error.
    void parse(std::span<const std::string_view> args);
    // argv[0] is the program name and is skipped.
    void parse(int argc, const char* const* argv);

    // True when --help was given; the caller prints help() and exits.
    bool help_requested() const noexcept { return _help_requested; }
    // Whether the option appeared on the command line (not just defaulted).
    bool was_set(std::string_view name) const;
    // Usage, description, then one aligned line per option with its default.
    std::string help() const;
};

} // namespace reef::program_options
