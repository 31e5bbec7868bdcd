// Terms follow Cassandra's Constants, Lists, Sets, Maps, Tuples, UserTypes, FunctionCall and their Raw classes.

#include "cql/term.hh"

#include "cql/cql_error.hh"
#include "cql/term_functions.hh"
#include "schema/value_format.hh"

#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <cstdio>

namespace reef::cql {

namespace {

std::string lower(std::string_view s) {
    std::string r(s);
    for (auto& c : r) {
        c = char(std::tolower(static_cast<unsigned char>(c)));
    }
    return r;
}

const data_type& base_type(const data_type& t) { return t->is_reversed() ? t->underlying_type() : t; }

column_spec respec(const column_spec& r, std::string name, data_type type) {
    return column_spec{r.keyspace, r.table, std::move(name), std::move(type)};
}

// ---- constants ----------------------------------------------------------------------------------------------

enum class constant_kind { string, integer, floating, boolean, uuid, hex, duration };

const char* kind_name(constant_kind k) {
    switch (k) {
    case constant_kind::string: return "STRING";
    case constant_kind::integer: return "INTEGER";
    case constant_kind::floating: return "FLOAT";
    case constant_kind::boolean: return "BOOLEAN";
    case constant_kind::uuid: return "UUID";
    case constant_kind::hex: return "HEX";
    case constant_kind::duration: return "DURATION";
    }
    return "?";
}

// Constants.Type.testAssignment: which native types a constant of each kind may be.
bool assignable(constant_kind k, type_kind t) {
    using tk = type_kind;
    switch (k) {
    case constant_kind::string:
        return t == tk::ascii || t == tk::text || t == tk::inet || t == tk::date || t == tk::time ||
               t == tk::timestamp;
    case constant_kind::integer:
        return t == tk::bigint || t == tk::counter || t == tk::date || t == tk::decimal || t == tk::double_ ||
               t == tk::float_ || t == tk::int32 || t == tk::smallint || t == tk::time || t == tk::timestamp ||
               t == tk::tinyint || t == tk::varint;
    case constant_kind::floating: return t == tk::decimal || t == tk::double_ || t == tk::float_;
    case constant_kind::boolean: return t == tk::boolean;
    case constant_kind::uuid: return t == tk::uuid || t == tk::timeuuid;
    case constant_kind::hex: return t == tk::blob;
    case constant_kind::duration: return t == tk::duration;
    }
    return false;
}

// The message of Cassandra's serializers for a value that does not parse.
std::string unparsable_message(const abstract_type& t, const std::string& text, const std::string& detail) {
    switch (t.kind()) {
    case type_kind::int32: return fmt::format("Unable to make int from '{}'", text);
    case type_kind::bigint:
    case type_kind::counter: return fmt::format("Unable to make long from '{}'", text);
    case type_kind::smallint: return fmt::format("Unable to make short from '{}'", text);
    case type_kind::tinyint: return fmt::format("Unable to make byte from '{}'", text);
    case type_kind::varint: return fmt::format("Unable to make integer from '{}'", text);
    case type_kind::decimal: return fmt::format("Unable to make BigDecimal from '{}'", text);
    case type_kind::float_: return fmt::format("Unable to make float from '{}'", text);
    case type_kind::double_: return fmt::format("Unable to make double from '{}'", text);
    case type_kind::inet: return fmt::format("Unable to make inet address from '{}'", text);
    case type_kind::date: return fmt::format("Unable to coerce '{}' to a formatted date (long)", text);
    case type_kind::time: return fmt::format("(TimeType) Unable to coerce '{}' to a formatted time (long)", text);
    case type_kind::timestamp: return fmt::format("Unable to parse a date/time from '{}'", text);
    case type_kind::timeuuid: return "TimeUUID supports only version 1 UUIDs";
    case type_kind::blob: return fmt::format("cannot parse '{}' as hex bytes", text);
    case type_kind::ascii:
        return "Invalid ASCII character in string literal: java.nio.charset.UnmappableCharacterException: Input "
               "length = 1";
    case type_kind::text: return "Invalid UTF-8 in string literal";
    default: return detail;
    }
}

std::string duration_designators(const std::string& s);

// A "yyyy-mm-dd..." date names a day that exists (parse_date rolls 2023-02-29 over to March, Cassandra refuses it).
bool date_fields_exist(const std::string& text, bytes_view v) {
    int y, m, d;
    if (text.size() < 10 || std::sscanf(text.c_str(), "%4d-%2d-%2d", &y, &m, &d) != 3) {
        return true;
    }
    auto printed = format_date(int64_t(read_be<uint32_t>(v.data())) - (int64_t(1) << 31));
    return printed.substr(0, 10) == text.substr(0, 10);
}

class constant_value_term final : public term {
    raw_value _value;

public:
    explicit constant_value_term(raw_value v) : _value(std::move(v)) {}
    raw_value bind(const query_options&) const override { return _value; }
    bool is_terminal() const override { return true; }
};

class constant_literal final : public raw_term {
    constant_kind _kind;
    std::string _text;

public:
    constant_literal(constant_kind k, std::string text) : _kind(k), _text(std::move(text)) {}

    term_ptr prepare(const column_spec& receiver, bind_specs&) const override {
        const auto& t = base_type(receiver.type);
        if (!assignable(_kind, t->kind())) {
            throw invalid_request(fmt::format("Invalid {} constant ({}) for \"{}\" of type {}", kind_name(_kind),
                                              _text, receiver.name, receiver_type_name(receiver.type)));
        }
        std::string text = _text;
        if (_kind == constant_kind::hex) {
            text = text.substr(2);
        } else if (_kind == constant_kind::duration) {
            text = duration_designators(text);
        }
        try {
            if (t->kind() == type_kind::time && _kind == constant_kind::string &&
                std::count(text.begin(), text.end(), ':') < 2) {
                // TimeSerializer wants hh:mm:ss[.fffffffff].
                throw marshal_exception("time without seconds");
            }
            bytes v;
            if (t->kind() == type_kind::text) {
                v = to_bytes(text);
            } else {
                v = t->from_string(text);
            }
            t->validate(v);
            if (t->kind() == type_kind::date && !date_fields_exist(text, v)) {
                throw marshal_exception("no such day");
            }
            return make_constant_term(raw_value::of(std::move(v)));
        } catch (const marshal_exception& e) {
            throw invalid_request(unparsable_message(*t, text, e.what()));
        } catch (const std::exception& e) {
            throw invalid_request(unparsable_message(*t, text, e.what()));
        }
    }

    std::string to_string() const override {
        if (_kind != constant_kind::string) {
            return _text;
        }
        std::string s = "'";
        for (char c : _text) {
            s += c;
            if (c == '\'') {
                s += '\'';
            }
        }
        return s + "'";
    }
};

class null_literal final : public raw_term {
public:
    term_ptr prepare(const column_spec& receiver, bind_specs&) const override {
        (void)receiver;
        return make_constant_term(raw_value::null_value());
    }
    std::string to_string() const override { return "null"; }
    bool is_null_literal() const override { return true; }
};

// ---- bind markers --------------------------------------------------------------------------------------------

class marker_term final : public term {
    uint32_t _index;
    data_type _type;

public:
    marker_term(uint32_t index, data_type type) : _index(index), _type(std::move(type)) {}
    raw_value bind(const query_options& options) const override {
        if (_index >= options.values.size()) {
            throw invalid_request(fmt::format("No value bound for bind marker {}", _index));
        }
        const auto& v = options.values[_index];
        if (!v.is_value()) {
            return v;
        }
        return raw_value::of(canonical_value(*_type, v.data));
    }
};

class bind_marker final : public raw_term {
    uint32_t _index;
    std::string _name;

public:
    bind_marker(uint32_t index, std::string name) : _index(index), _name(std::move(name)) {}
    term_ptr prepare(const column_spec& receiver, bind_specs& specs) const override {
        specs.set(_index, respec(receiver, _name.empty() ? receiver.name : _name, receiver.type));
        return std::make_shared<marker_term>(_index, base_type(receiver.type));
    }
    std::string to_string() const override { return _name.empty() ? "?" : ":" + _name; }
    std::optional<uint32_t> bind_index() const override { return _index; }
};

// ---- collections, tuples, UDTs -------------------------------------------------------------------------------

// A literal of several terms: binds each, then builds the value; constant when every part is.
class composite_term final : public term {
public:
    using builder = std::function<raw_value(std::vector<raw_value>&)>;
    composite_term(std::vector<term_ptr> parts, builder build) : _parts(std::move(parts)), _build(std::move(build)) {}

    raw_value bind(const query_options& options) const override {
        std::vector<raw_value> values;
        values.reserve(_parts.size());
        for (auto& p : _parts) {
            values.push_back(p->bind(options));
        }
        return _build(values);
    }
    bool is_terminal() const override {
        return std::all_of(_parts.begin(), _parts.end(), [](auto& p) { return p->is_terminal(); });
    }

private:
    std::vector<term_ptr> _parts;
    builder _build;
};

// Folds a composite of constants into one constant (so errors of constant literals come at prepare).
term_ptr maybe_fold(std::shared_ptr<const composite_term> t) {
    if (t->is_terminal()) {
        return make_constant_term(t->bind(query_options{}));
    }
    return t;
}

// A list's, set's or vector's elements, each prepared for the collection's element receiver.
std::vector<term_ptr> prepare_elements(const std::vector<raw_term_ptr>& elements, const column_spec& collection,
                                       bind_specs& specs) {
    auto elem = element_receiver(collection);
    std::vector<term_ptr> parts;
    for (auto& e : elements) {
        parts.push_back(e->prepare(elem, specs));
    }
    return parts;
}

// Collection elements: neither null nor, when any is unset, anything (the whole value is unset).
bool collect_elements(std::vector<raw_value>& values, std::vector<bytes>& out) {
    for (auto& v : values) {
        if (v.is_null()) {
            throw invalid_request("null is not supported inside collections");
        }
        if (v.is_unset()) {
            return false;
        }
        out.push_back(std::move(v.data));
    }
    return true;
}

std::string join_terms(const std::vector<raw_term_ptr>& ts) {
    std::string s;
    for (size_t i = 0; i < ts.size(); ++i) {
        s += (i ? ", " : "") + ts[i]->to_string();
    }
    return s;
}

class list_literal final : public raw_term {
    std::vector<raw_term_ptr> _elements;

public:
    explicit list_literal(std::vector<raw_term_ptr> e) : _elements(std::move(e)) {}
    term_ptr prepare(const column_spec& receiver, bind_specs& specs) const override {
        const auto& t = base_type(receiver.type);
        if (t->kind() == type_kind::vector) {
            return prepare_vector(receiver, t, specs);
        }
        if (t->kind() != type_kind::list) {
            throw invalid_request(fmt::format("Unexpected receiver type '{}'; only list and vector are expected",
                                              receiver_type_name(receiver.type)));
        }
        auto parts = prepare_elements(_elements, receiver, specs);
        return maybe_fold(std::make_shared<composite_term>(std::move(parts), [](std::vector<raw_value>& vs) {
            std::vector<bytes> elements;
            if (!collect_elements(vs, elements)) {
                return raw_value::unset_value();
            }
            return raw_value::of(serialize_collection(elements));
        }));
    }
    std::string to_string() const override { return "[" + join_terms(_elements) + "]"; }

private:
    // Vectors.Literal: exactly N elements, none null (nor unset) once bound.
    term_ptr prepare_vector(const column_spec& receiver, const data_type& t, bind_specs& specs) const {
        if (_elements.size() != t->vector_dimension()) {
            throw invalid_request(fmt::format("Invalid vector literal for {} of type {}; expected {} elements, but "
                                              "given {}",
                                              receiver.name, receiver_type_name(receiver.type), t->vector_dimension(),
                                              _elements.size()));
        }
        auto parts = prepare_elements(_elements, receiver, specs);
        data_type type = t;
        return maybe_fold(std::make_shared<composite_term>(std::move(parts), [type](std::vector<raw_value>& vs) {
            std::vector<bytes> elements;
            for (auto& v : vs) {
                // An empty fixed-length element is a null one (AbstractType.isNull).
                if (!v.is_value() || (v.data.empty() && type->element_type()->value_length_if_fixed())) {
                    throw invalid_request("null is not supported inside vectors");
                }
                elements.push_back(std::move(v.data));
            }
            try {
                return raw_value::of(serialize_vector(*type, elements));
            } catch (const marshal_exception& e) {
                throw invalid_request(e.what());
            }
        }));
    }
};

// {a, b}, or {} which is also an empty map.
class set_literal final : public raw_term {
    std::vector<raw_term_ptr> _elements;

public:
    explicit set_literal(std::vector<raw_term_ptr> e) : _elements(std::move(e)) {}
    term_ptr prepare(const column_spec& receiver, bind_specs& specs) const override {
        const auto& t = base_type(receiver.type);
        if (_elements.empty() && (t->kind() == type_kind::map || t->kind() == type_kind::set)) {
            return make_constant_term(raw_value::of(serialize_collection({})));
        }
        if (t->kind() != type_kind::set) {
            throw invalid_request(fmt::format("Invalid set literal for {} of type {}", receiver.name,
                                              receiver_type_name(receiver.type)));
        }
        auto parts = prepare_elements(_elements, receiver, specs);
        data_type type = t;
        return maybe_fold(std::make_shared<composite_term>(std::move(parts), [type](std::vector<raw_value>& vs) {
            std::vector<bytes> elements;
            if (!collect_elements(vs, elements)) {
                return raw_value::unset_value();
            }
            return raw_value::of(canonical_value(*type, serialize_collection(elements)));
        }));
    }
    std::string to_string() const override { return "{" + join_terms(_elements) + "}"; }
};

class map_literal final : public raw_term {
    std::vector<std::pair<raw_term_ptr, raw_term_ptr>> _entries;

public:
    explicit map_literal(std::vector<std::pair<raw_term_ptr, raw_term_ptr>> e) : _entries(std::move(e)) {}
    term_ptr prepare(const column_spec& receiver, bind_specs& specs) const override {
        const auto& t = base_type(receiver.type);
        if (t->kind() != type_kind::map) {
            throw invalid_request(fmt::format("Invalid map literal for {} of type {}", receiver.name,
                                              receiver_type_name(receiver.type)));
        }
        auto key = map_key_receiver(receiver);
        auto value = element_receiver(receiver);
        std::vector<term_ptr> parts;
        for (auto& [k, v] : _entries) {
            parts.push_back(k->prepare(key, specs));
            parts.push_back(v->prepare(value, specs));
        }
        data_type type = t;
        return maybe_fold(std::make_shared<composite_term>(std::move(parts), [type](std::vector<raw_value>& vs) {
            std::vector<bytes> flat;
            if (!collect_elements(vs, flat)) {
                return raw_value::unset_value();
            }
            std::vector<std::pair<bytes, bytes>> entries;
            for (size_t i = 0; i + 1 < flat.size(); i += 2) {
                entries.emplace_back(std::move(flat[i]), std::move(flat[i + 1]));
            }
            return raw_value::of(canonical_value(*type, serialize_map(entries)));
        }));
    }
    std::string to_string() const override {
        std::string s = "{";
        for (size_t i = 0; i < _entries.size(); ++i) {
            s += (i ? ", " : "") + _entries[i].first->to_string() + ": " + _entries[i].second->to_string();
        }
        return s + "}";
    }
};

class tuple_literal final : public raw_term {
    std::vector<raw_term_ptr> _elements;

public:
    explicit tuple_literal(std::vector<raw_term_ptr> e) : _elements(std::move(e)) {}
    term_ptr prepare(const column_spec& receiver, bind_specs& specs) const override {
        const auto& t = base_type(receiver.type);
        if (t->kind() != type_kind::tuple) {
            throw invalid_request(fmt::format("Invalid tuple type literal for {} of type {}", receiver.name,
                                              receiver_type_name(receiver.type)));
        }
        auto& types = t->field_types();
        if (_elements.size() > types.size()) {
            throw invalid_request(fmt::format("Invalid tuple literal for {}: too many elements. Type {} expects {} "
                                              "but got {}",
                                              receiver.name, receiver_type_name(receiver.type), types.size(),
                                              _elements.size()));
        }
        std::vector<term_ptr> parts;
        for (size_t i = 0; i < _elements.size(); ++i) {
            try {
                parts.push_back(_elements[i]->prepare(tuple_component_receiver(receiver, i), specs));
            } catch (const cql_error& e) {
                if (std::string_view(e.what()).starts_with("Invalid ")) {
                    throw invalid_request(fmt::format("Invalid tuple literal for {}: component {} is not of type {}",
                                                      receiver.name, i, receiver_type_name(types[i])));
                }
                throw;
            }
        }
        return maybe_fold(std::make_shared<composite_term>(std::move(parts), [](std::vector<raw_value>& vs) {
            std::vector<std::optional<bytes>> fields;
            for (size_t i = 0; i < vs.size(); ++i) {
                if (vs[i].is_unset()) {
                    throw invalid_request(fmt::format("Invalid unset value for tuple field number {}", i));
                }
                fields.push_back(vs[i].is_value() ? std::optional<bytes>(std::move(vs[i].data)) : std::nullopt);
            }
            return raw_value::of(serialize_tuple(fields));
        }));
    }
    std::string to_string() const override { return "(" + join_terms(_elements) + ")"; }
};

class udt_literal final : public raw_term {
    std::vector<std::pair<std::string, raw_term_ptr>> _fields;

public:
    explicit udt_literal(std::vector<std::pair<std::string, raw_term_ptr>> f) : _fields(std::move(f)) {}
    term_ptr prepare(const column_spec& receiver, bind_specs& specs) const override {
        const auto& t = base_type(receiver.type);
        if (t->kind() != type_kind::user) {
            throw invalid_request(fmt::format("Invalid user type literal for {} of type {}", receiver.name,
                                              receiver_type_name(receiver.type)));
        }
        auto& u = static_cast<const user_type_impl&>(*t);
        std::vector<term_ptr> parts(u.field_names().size());
        for (auto& [name, value] : _fields) {
            auto it = std::find(u.field_names().begin(), u.field_names().end(), name);
            if (it == u.field_names().end()) {
                throw invalid_request(fmt::format("Unknown field '{}' in value of user defined type {}", name,
                                                  u.type_name()));
            }
            size_t i = size_t(it - u.field_names().begin());
            parts[i] = value->prepare(udt_field_receiver(receiver, i), specs);
        }
        for (auto& p : parts) {
            if (!p) {
                p = make_constant_term(raw_value::null_value());
            }
        }
        auto names = u.field_names();
        auto type_name = u.type_name();
        return maybe_fold(
            std::make_shared<composite_term>(std::move(parts), [names, type_name](std::vector<raw_value>& vs) {
                std::vector<std::optional<bytes>> fields;
                for (size_t i = 0; i < vs.size(); ++i) {
                    if (vs[i].is_unset()) {
                        throw invalid_request(fmt::format("Invalid unset value for field '{}' of user defined type {}",
                                                          names[i], type_name));
                    }
                    fields.push_back(vs[i].is_value() ? std::optional<bytes>(std::move(vs[i].data)) : std::nullopt);
                }
                return raw_value::of(serialize_tuple(fields));
            }));
    }
    std::string to_string() const override {
        std::string s = "{";
        for (size_t i = 0; i < _fields.size(); ++i) {
            s += (i ? ", " : "") + maybe_quote_identifier(_fields[i].first) + ": " + _fields[i].second->to_string();
        }
        return s + "}";
    }
};

// ---- function calls ------------------------------------------------------------------------------------------

// Whether a value of type `from` may be stored in `to` (AbstractType.isValueCompatibleWith, the cases CQL meets).
bool value_compatible(const data_type& to, const data_type& from) {
    auto a = base_type(to)->freeze();
    auto b = base_type(from)->freeze();
    if (*a == *b) {
        return true;
    }
    auto ak = a->kind(), bk = b->kind();
    return (ak == type_kind::text && bk == type_kind::ascii) || (ak == type_kind::uuid && bk == type_kind::timeuuid) ||
           (ak == type_kind::blob) || (ak == type_kind::bigint && bk == type_kind::timestamp) ||
           (ak == type_kind::timestamp && bk == type_kind::bigint) || (ak == type_kind::varint &&
           (bk == type_kind::int32 || bk == type_kind::bigint || bk == type_kind::smallint || bk == type_kind::tinyint));
}

class function_term final : public term {
    const native_function* _fn;
    std::vector<term_ptr> _args;
    data_type _result;

public:
    function_term(const native_function* fn, std::vector<term_ptr> args, data_type result)
        : _fn(fn), _args(std::move(args)), _result(std::move(result)) {}
    raw_value bind(const query_options& options) const override {
        std::vector<raw_value> args;
        for (auto& a : _args) {
            args.push_back(a->bind(options));
            if (args.back().is_unset()) {
                throw invalid_request(fmt::format("Invalid unset value for argument in call to function {}",
                                                  _fn->name));
            }
        }
        return _fn->call(args, _result);
    }
    bool is_terminal() const override {
        return _fn->pure && std::all_of(_args.begin(), _args.end(), [](auto& a) { return a->is_terminal(); });
    }
};

class function_call final : public raw_term {
    std::string _name;
    std::vector<raw_term_ptr> _args;

public:
    function_call(std::string name, std::vector<raw_term_ptr> args) : _name(std::move(name)), _args(std::move(args)) {}

    term_ptr prepare(const column_spec& receiver, bind_specs& specs) const override {
        std::string_view short_name = _name;
        if (short_name.starts_with("system.")) {
            short_name.remove_prefix(7);
        }
        auto candidates = find_native_functions(short_name);
        if (candidates.empty()) {
            throw invalid_request(fmt::format("Unknown function {} called", _name));
        }
        std::string qualified = "system." + std::string(short_name);
        std::string last_error = fmt::format("Invalid call to function {}, none of its type signatures match",
                                             qualified);
        for (auto* fn : candidates) {
            if (fn->arg_types.size() != _args.size()) {
                last_error = fmt::format("Invalid number of arguments in call to function {}: {} required but {} "
                                         "provided",
                                         qualified, fn->arg_types.size(), _args.size());
                continue;
            }
            // An overload fits when every argument prepares against its parameter; the last error explains.
            std::vector<term_ptr> args;
            bind_specs trial = specs;
            try {
                for (size_t i = 0; i < _args.size(); ++i) {
                    column_spec arg{receiver.keyspace, receiver.table, fmt::format("arg{}({})", i, qualified),
                                    fn->arg_types[i]};
                    args.push_back(_args[i]->prepare(arg, trial));
                }
            } catch (const cql_error& e) {
                if (candidates.size() == 1) {
                    throw;
                }
                last_error = e.what();
                continue;
            }
            data_type result = fn->return_type ? fn->return_type : base_type(receiver.type);
            if (fn->return_type && !value_compatible(receiver.type, fn->return_type)) {
                throw invalid_request(fmt::format("Type error: cannot assign result of function {} (type {}) to {} "
                                                  "(type {})",
                                                  qualified, fn->return_type->cql_name(), receiver.name,
                                                  receiver_type_name(receiver.type)));
            }
            specs = std::move(trial);
            auto t = std::make_shared<function_term>(fn, std::move(args), result);
            if (t->is_terminal()) {
                return make_constant_term(t->bind(query_options{}));
            }
            return t;
        }
        throw invalid_request(last_error);
    }
    std::string to_string() const override { return _name + "(" + join_terms(_args) + ")"; }
};

// ---- parsing -------------------------------------------------------------------------------------------------

bool adjacent(const cql_token& a, const cql_token& b) {
    return a.line == b.line && b.column == a.column + a.source.size() && b.kind != cql_token_kind::end;
}

// Duration's alternative ISO 8601 form, PYYYY-MM-DDThh:mm:ss, as the designator form parse_duration reads.
std::string duration_designators(const std::string& s) {
    int y, mo, d, h, mi, se;
    char tail;
    if (s.size() == 20 && (s[0] == 'P' || s[0] == 'p') &&
        std::sscanf(s.c_str() + 1, "%4d-%2d-%2dT%2d:%2d:%2d%c", &y, &mo, &d, &h, &mi, &se, &tail) == 6) {
        return fmt::format("P{}Y{}M{}DT{}H{}M{}S", y, mo, d, h, mi, se);
    }
    return s;
}

bool is_duration_text(const std::string& s) {
    try {
        parse_duration(duration_designators(s));
        return true;
    } catch (const std::exception&) {
        return false;
    }
}

bool is_word(const cql_token& t, std::string_view w) {
    return t.kind == cql_token_kind::identifier && lower(t.text) == w;
}

class term_parser {
    cql_token_stream& _ts;
    term_parse_context& _ctx;

public:
    term_parser(cql_token_stream& ts, term_parse_context& ctx) : _ts(ts), _ctx(ctx) {}

    raw_term_ptr term() {
        cql_token_stream::nesting_guard nested(_ts);
        const cql_token t = _ts.peek();
        switch (t.kind) {
        case cql_token_kind::string:
            _ts.next();
            return std::make_shared<constant_literal>(constant_kind::string, t.text);
        case cql_token_kind::hex:
            _ts.next();
            return std::make_shared<constant_literal>(constant_kind::hex, t.text);
        case cql_token_kind::uuid:
            _ts.next();
            return std::make_shared<constant_literal>(constant_kind::uuid, t.text);
        case cql_token_kind::number: return number();
        case cql_token_kind::identifier: return word();
        case cql_token_kind::quoted_identifier: return function();
        case cql_token_kind::symbol: break;
        default: _ts.fail("a term");
        }
        if (_ts.accept_symbol('?')) {
            return std::make_shared<bind_marker>(_ctx.add_marker(""), "");
        }
        if (t.text == ":" && (_ts.peek(1).kind == cql_token_kind::identifier ||
                              _ts.peek(1).kind == cql_token_kind::quoted_identifier)) {
            _ts.next();
            auto name = _ts.expect_name("a bind marker name");
            return std::make_shared<bind_marker>(_ctx.add_marker(name), name);
        }
        if (t.text == "-" && adjacent(t, _ts.peek(1)) && (is_word(_ts.peek(1), "infinity") || is_word(_ts.peek(1), "nan"))) {
            _ts.next();
            auto w = _ts.next();
            return std::make_shared<constant_literal>(constant_kind::floating, "-" + w.text);
        }
        if (_ts.accept_symbol('[')) {
            std::vector<raw_term_ptr> elements;
            if (!_ts.accept_symbol(']')) {
                do {
                    elements.push_back(term());
                } while (_ts.accept_symbol(','));
                _ts.expect_symbol(']');
            }
            return std::make_shared<list_literal>(std::move(elements));
        }
        if (_ts.accept_symbol('(')) {
            std::vector<raw_term_ptr> elements;
            do {
                elements.push_back(term());
            } while (_ts.accept_symbol(','));
            _ts.expect_symbol(')');
            return std::make_shared<tuple_literal>(std::move(elements));
        }
        if (_ts.accept_symbol('{')) {
            return braces();
        }
        _ts.fail("a term");
    }

private:
    raw_term_ptr number() {
        const cql_token t = _ts.next();
        const auto& u = _ts.peek();
        if (adjacent(t, u) && u.kind == cql_token_kind::identifier) {
            // 1h30m, -1d: a duration, or a syntax error at the letters ("1x").
            _ts.next();
            auto text = t.text + u.text;
            if (!is_duration_text(text)) {
                throw cql_parse_error(u.line, u.column, u.source,
                                      fmt::format("no viable alternative at input '{}'", u.source));
            }
            return std::make_shared<constant_literal>(constant_kind::duration, text);
        }
        bool integer = t.text.find_first_of(".eE") == std::string::npos;
        return std::make_shared<constant_literal>(integer ? constant_kind::integer : constant_kind::floating, t.text);
    }

    raw_term_ptr word() {
        const cql_token t = _ts.peek();
        auto w = lower(t.text);
        if (_ts.peek_symbol('(', 1) || (_ts.peek_symbol('.', 1) && _ts.peek_symbol('(', 3))) {
            return function();
        }
        _ts.next();
        if (w == "true" || w == "false") {
            return std::make_shared<constant_literal>(constant_kind::boolean, w);
        }
        if (w == "null") {
            return std::make_shared<null_literal>();
        }
        if (w == "nan" || w == "infinity") {
            return std::make_shared<constant_literal>(constant_kind::floating, t.text);
        }
        if (w[0] == 'p') {
            // ISO 8601 durations; the alternative form (P0001-02-03T04:05:06) is cut by the lexer into touching
            // tokens: glue them back.
            std::string text = t.text;
            cql_token last = t;
            while (adjacent(last, _ts.peek()) &&
                   (_ts.peek().kind == cql_token_kind::number || _ts.peek().kind == cql_token_kind::identifier ||
                    _ts.peek_symbol(':'))) {
                last = _ts.next();
                text += last.source;
            }
            if (is_duration_text(text)) {
                return std::make_shared<constant_literal>(constant_kind::duration, text);
            }
        }
        _ts.fail(t, "a term");
    }

    raw_term_ptr function() {
        std::string name = _ts.expect_name("a function name");
        if (_ts.accept_symbol('.')) {
            name += "." + _ts.expect_name("a function name");
        }
        _ts.expect_symbol('(');
        std::vector<raw_term_ptr> args;
        if (!_ts.accept_symbol(')')) {
            do {
                args.push_back(term());
            } while (_ts.accept_symbol(','));
            _ts.expect_symbol(')');
        }
        return std::make_shared<function_call>(std::move(name), std::move(args));
    }

    // After '{': a set, a map or a UDT literal.
    raw_term_ptr braces() {
        if (_ts.accept_symbol('}')) {
            return std::make_shared<set_literal>(std::vector<raw_term_ptr>{});
        }
        const auto& first = _ts.peek();
        bool field = (first.kind == cql_token_kind::quoted_identifier ||
                      (first.kind == cql_token_kind::identifier && !is_word(first, "true") &&
                       !is_word(first, "false") && !is_word(first, "null") && !is_word(first, "nan") &&
                       !is_word(first, "infinity"))) &&
                     _ts.peek_symbol(':', 1);
        if (field) {
            std::vector<std::pair<std::string, raw_term_ptr>> fields;
            do {
                auto name = _ts.expect_name("a field name");
                _ts.expect_symbol(':');
                fields.emplace_back(std::move(name), term());
            } while (_ts.accept_symbol(','));
            _ts.expect_symbol('}');
            return std::make_shared<udt_literal>(std::move(fields));
        }
        auto t = term();
        if (_ts.accept_symbol(':')) {
            std::vector<std::pair<raw_term_ptr, raw_term_ptr>> entries;
            entries.emplace_back(std::move(t), term());
            while (_ts.accept_symbol(',')) {
                auto k = term();
                _ts.expect_symbol(':');
                entries.emplace_back(std::move(k), term());
            }
            _ts.expect_symbol('}');
            return std::make_shared<map_literal>(std::move(entries));
        }
        std::vector<raw_term_ptr> elements{std::move(t)};
        while (_ts.accept_symbol(',')) {
            elements.push_back(term());
        }
        _ts.expect_symbol('}');
        return std::make_shared<set_literal>(std::move(elements));
    }
};

// ---- canonical values ----------------------------------------------------------------------------------------

bytes canonical(const abstract_type& t, bytes_view v);

bytes canonical_impl(const abstract_type& t, bytes_view v) {
    switch (t.kind()) {
    case type_kind::reversed: return canonical(*t.underlying_type(), v);
    case type_kind::list:
    case type_kind::set: {
        std::vector<bytes> elements;
        for (auto e : split_collection(v)) {
            elements.push_back(canonical(*t.element_type(), e));
        }
        if (t.kind() == type_kind::set) {
            auto& et = *t.element_type();
            std::sort(elements.begin(), elements.end(), [&](auto& a, auto& b) { return et.compare(a, b) < 0; });
            elements.erase(std::unique(elements.begin(), elements.end(),
                                       [&](auto& a, auto& b) { return et.compare(a, b) == 0; }),
                           elements.end());
        }
        return serialize_collection(elements);
    }
    case type_kind::vector: {
        std::vector<bytes> elements;
        for (auto e : split_vector(t, v)) {
            elements.push_back(canonical(*t.element_type(), e));
        }
        return serialize_vector(t, elements);
    }
    case type_kind::map: {
        std::vector<std::pair<bytes, bytes>> entries;
        for (auto [k, val] : split_map(v)) {
            entries.emplace_back(canonical(*t.key_type(), k), canonical(*t.value_type(), val));
        }
        auto& kt = *t.key_type();
        // Later duplicates win, as in a map literal.
        std::stable_sort(entries.begin(), entries.end(), [&](auto& a, auto& b) { return kt.compare(a.first, b.first) < 0; });
        std::vector<std::pair<bytes, bytes>> unique;
        for (auto& e : entries) {
            if (!unique.empty() && kt.compare(unique.back().first, e.first) == 0) {
                unique.back() = std::move(e);
            } else {
                unique.push_back(std::move(e));
            }
        }
        return serialize_map(unique);
    }
    case type_kind::tuple:
    case type_kind::user: {
        std::vector<std::optional<bytes>> fields;
        auto parts = split_tuple(v);
        if (parts.size() > t.field_types().size()) {
            throw marshal_exception("tuple with more fields than its type");
        }
        for (size_t i = 0; i < parts.size(); ++i) {
            fields.push_back(parts[i] ? std::optional<bytes>(canonical(*t.field_types()[i], *parts[i])) : std::nullopt);
        }
        return serialize_tuple(fields);
    }
    default: t.validate(v); return bytes(v.begin(), v.end());
    }
}

bytes canonical(const abstract_type& t, bytes_view v) {
    if (v.empty() && !t.is_collection() && !t.is_tuple() && t.kind() != type_kind::reversed) {
        return {};
    }
    return canonical_impl(t, v);
}

} // namespace

// ---- public --------------------------------------------------------------------------------------------------

bind_specs::bind_specs(const term_parse_context& ctx) : _names(ctx.marker_names), _specs(ctx.marker_names.size()) {}

void bind_specs::set(uint32_t index, column_spec spec) { _specs.at(index) = std::move(spec); }

std::vector<column_spec> bind_specs::specs() const {
    std::vector<column_spec> out;
    for (size_t i = 0; i < _specs.size(); ++i) {
        if (!_specs[i]) {
            throw std::logic_error(fmt::format("bind marker {} was never prepared", i));
        }
        out.push_back(*_specs[i]);
    }
    return out;
}

raw_term_ptr parse_term(cql_token_stream& ts, term_parse_context& ctx) { return term_parser(ts, ctx).term(); }

term_ptr make_constant_term(raw_value value) { return std::make_shared<constant_value_term>(std::move(value)); }

column_spec element_receiver(const column_spec& c) {
    const auto& t = base_type(c.type);
    return respec(c, "value(" + c.name + ")", t->kind() == type_kind::map ? t->value_type() : t->element_type());
}

column_spec map_key_receiver(const column_spec& c) { return respec(c, "key(" + c.name + ")", base_type(c.type)->key_type()); }

column_spec list_index_receiver(const column_spec& c) { return respec(c, "idx(" + c.name + ")", int32_type()); }

column_spec tuple_component_receiver(const column_spec& c, size_t i) {
    return respec(c, fmt::format("{}[{}]", c.name, i), base_type(c.type)->field_types().at(i));
}

column_spec udt_field_receiver(const column_spec& c, size_t i) {
    auto& u = static_cast<const user_type_impl&>(*base_type(c.type));
    return respec(c, c.name + "." + u.field_names().at(i), u.field_types().at(i));
}

bytes canonical_value(const abstract_type& t, bytes_view v) {
    try {
        return canonical(t, v);
    } catch (const marshal_exception& e) {
        throw invalid_request(e.what());
    } catch (const std::exception& e) {
        throw invalid_request(fmt::format("Invalid value for type {}: {}", t.cql_name(), e.what()));
    }
}

query_options positional_options(const std::vector<column_spec>& vars, const query_options& options) {
    if (options.names.empty()) {
        if (options.values.size() != vars.size()) {
            throw invalid_request(fmt::format("There were {} markers(?) in CQL but {} bound variables", vars.size(),
                                              options.values.size()));
        }
        return options;
    }
    query_options out = options;
    out.names.clear();
    out.values.clear();
    for (auto& v : vars) {
        auto it = std::find(options.names.begin(), options.names.end(), v.name);
        if (it == options.names.end() || size_t(it - options.names.begin()) >= options.values.size()) {
            throw invalid_request(fmt::format("Invalid request: no value for named bind variable {}", v.name));
        }
        out.values.push_back(options.values[size_t(it - options.names.begin())]);
    }
    return out;
}

std::string receiver_type_name(const data_type& t) { return base_type(t)->cql_name(); }

} // namespace reef::cql
