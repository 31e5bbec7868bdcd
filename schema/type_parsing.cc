// Parsing into types and values: Cassandra class names (Cassandra's TypeParser grammar), the unquoted text of
// fromString, and CQL literals including collections, tuples and UDT literals.

#include "schema/types.hh"
#include "schema/value_format.hh"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>

namespace reef {

namespace {

constexpr std::string_view marshal_prefix = "org.apache.cassandra.db.marshal.";

// A position in a text being parsed, with the few steps both parsers below
// take; failures throw Error naming the position and the text.
template <typename Error>
struct text_cursor {
    std::string_view s;
    size_t pos = 0;
    // How the text is named in errors: "" or "literal ".
    std::string_view label = {};

    [[noreturn]] void fail(std::string_view what) const {
        throw Error(fmt::format("{} at character {} of {}'{}'", what, pos, label, s));
    }
    void skip_blank() {
        while (pos < s.size() && std::isspace(static_cast<unsigned char>(s[pos]))) {
            ++pos;
        }
    }
    bool eat(char c) {
        skip_blank();
        if (pos < s.size() && s[pos] == c) {
            ++pos;
            return true;
        }
        return false;
    }
    void expect(char c) {
        if (!eat(c)) {
            fail(fmt::format("expected '{}'", c));
        }
    }
};

struct class_name_parser : text_cursor<type_parse_error> {
    std::string_view word() {
        skip_blank();
        size_t start = pos;
        while (pos < s.size() && (std::isalnum(static_cast<unsigned char>(s[pos])) || s[pos] == '_' || s[pos] == '.' ||
                                  s[pos] == '$' || s[pos] == '-' || s[pos] == '+')) {
            ++pos;
        }
        if (start == pos) {
            fail("expected a name");
        }
        return s.substr(start, pos - start);
    }
    std::vector<data_type> type_list() {
        std::vector<data_type> types;
        expect('(');
        if (eat(')')) {
            return types;
        }
        do {
            types.push_back(parse(true));
        } while (eat(','));
        expect(')');
        return types;
    }
    std::string unhex(std::string_view h) {
        try {
            auto b = hex_decode(h);
            return std::string(b.begin(), b.end());
        } catch (const std::invalid_argument& e) {
            fail(e.what());
        }
    }

    // frozen: the type sits inside FrozenType(...) or inside another frozen type, so it is not multi-cell.
    data_type parse(bool frozen) {
        auto name = word();
        if (name.starts_with(marshal_prefix)) {
            name.remove_prefix(marshal_prefix.size());
        }
        static const std::pair<std::string_view, type_kind> native_names[] = {
            {"AsciiType", type_kind::ascii}, {"LongType", type_kind::bigint}, {"BytesType", type_kind::blob},
            {"BooleanType", type_kind::boolean}, {"CounterColumnType", type_kind::counter},
            {"SimpleDateType", type_kind::date}, {"DecimalType", type_kind::decimal},
            {"DoubleType", type_kind::double_}, {"DurationType", type_kind::duration},
            {"FloatType", type_kind::float_}, {"InetAddressType", type_kind::inet}, {"Int32Type", type_kind::int32},
            {"ShortType", type_kind::smallint}, {"UTF8Type", type_kind::text}, {"TimeType", type_kind::time},
            {"TimestampType", type_kind::timestamp}, {"TimeUUIDType", type_kind::timeuuid},
            {"ByteType", type_kind::tinyint}, {"UUIDType", type_kind::uuid}, {"IntegerType", type_kind::varint},
            {"EmptyType", type_kind::empty},
            // DateType is the pre-2.0 name of timestamp, with the same serialization and order.
            {"DateType", type_kind::timestamp},
        };
        for (auto& [n, k] : native_names) {
            if (name == n) {
                return native_type(k);
            }
        }
        if (name == "FrozenType") {
            expect('(');
            auto t = parse(true);
            expect(')');
            return t->freeze();
        }
        if (name == "ReversedType") {
            auto p = type_list();
            if (p.size() != 1) {
                fail("ReversedType takes one parameter");
            }
            return reversed_type(p[0]);
        }
        if (name == "ListType" || name == "SetType") {
            auto p = type_list();
            if (p.size() != 1) {
                fail(fmt::format("{} takes one parameter", name));
            }
            return name == "ListType" ? list_type(p[0], !frozen) : set_type(p[0], !frozen);
        }
        if (name == "MapType") {
            auto p = type_list();
            if (p.size() != 2) {
                fail("MapType takes two parameters");
            }
            return map_type(p[0], p[1], !frozen);
        }
        if (name == "TupleType") {
            return tuple_type(type_list());
        }
        if (name == "CompositeType") {
            return composite_type(type_list());
        }
        if (name == "VectorType") {
            // TypeParser.getVectorParameters: "(element , dimension)", the element frozen.
            expect('(');
            auto element = parse(true);
            expect(',');
            auto n = word();
            uint32_t dimension = 0;
            auto [p, ec] = std::from_chars(n.data(), n.data() + n.size(), dimension);
            if (ec != std::errc() || p != n.data() + n.size() || dimension == 0 ||
                dimension > uint32_t(INT32_MAX)) {
                fail(fmt::format("a vector's dimension must be a positive integer, not '{}'", n));
            }
            expect(')');
            return vector_type(element, dimension);
        }
        if (name == "UserType") {
            expect('(');
            std::string keyspace(word());
            expect(',');
            std::string type_name = unhex(word());
            std::vector<std::string> field_names;
            std::vector<data_type> field_types;
            while (eat(',')) {
                field_names.push_back(unhex(word()));
                expect(':');
                field_types.push_back(parse(true));
            }
            expect(')');
            return user_type(keyspace, type_name, field_names, field_types, !frozen);
        }
        fail(fmt::format("unknown type '{}'", name));
    }
};

[[noreturn]] void bad_value(const abstract_type& t, std::string_view s, std::string_view why = {}) {
    throw marshal_exception(fmt::format("cannot parse '{}' as a value of type {}{}{}", s, t.cql_name(),
                                        why.empty() ? "" : ": ", why));
}

template <typename T>
bytes integer_from_string(const abstract_type& t, std::string_view s) {
    int64_t v = 0;
    auto str = s;
    if (!str.empty() && str[0] == '+') {
        str.remove_prefix(1);
    }
    auto [p, ec] = std::from_chars(str.data(), str.data() + str.size(), v);
    if (ec != std::errc() || p != str.data() + str.size() || v < std::numeric_limits<T>::min() ||
        v > std::numeric_limits<T>::max()) {
        bad_value(t, s, "not an integer in range");
    }
    return serialize_be<T>(T(v));
}

std::string lower(std::string_view s) {
    std::string r(s);
    for (auto& c : r) {
        c = char(std::tolower(static_cast<unsigned char>(c)));
    }
    return r;
}

// Parsed straight into F: going through double first could round twice.
template <typename F>
F floating_from_string(const abstract_type& t, std::string_view s) {
    auto l = lower(s);
    if (l == "nan") {
        return std::numeric_limits<F>::quiet_NaN();
    }
    if (l == "infinity" || l == "+infinity") {
        return std::numeric_limits<F>::infinity();
    }
    if (l == "-infinity") {
        return -std::numeric_limits<F>::infinity();
    }
    F d = 0;
    auto str = s;
    if (!str.empty() && str[0] == '+') {
        str.remove_prefix(1);
    }
    auto [p, ec] = std::from_chars(str.data(), str.data() + str.size(), d);
    if (ec != std::errc() || p != str.data() + str.size()) {
        bad_value(t, s, "not a number");
    }
    return d;
}

// A CQL literal, read character by character: quoted strings, bare words (numbers, uuids, durations, blobs,
// true/false/NaN/Infinity/null) and the bracketed forms of collections, tuples and UDTs.
struct literal_parser : text_cursor<marshal_exception> {
    bool at_quote() {
        skip_blank();
        return pos < s.size() && (s[pos] == '\'' || s.substr(pos).starts_with("$$"));
    }
    std::string quoted() {
        skip_blank();
        if (s.substr(pos).starts_with("$$")) {
            auto end = s.find("$$", pos + 2);
            if (end == std::string_view::npos) {
                fail("unterminated $$ string");
            }
            std::string r(s.substr(pos + 2, end - pos - 2));
            pos = end + 2;
            return r;
        }
        ++pos;
        std::string r;
        while (true) {
            if (pos >= s.size()) {
                fail("unterminated string");
            }
            if (s[pos] == '\'') {
                if (pos + 1 < s.size() && s[pos + 1] == '\'') {
                    r += '\'';
                    pos += 2;
                    continue;
                }
                ++pos;
                return r;
            }
            r += s[pos++];
        }
    }
    std::string_view bare() {
        skip_blank();
        size_t start = pos;
        while (pos < s.size() && !std::isspace(static_cast<unsigned char>(s[pos])) &&
               std::string_view(",:]})[{(").find(s[pos]) == std::string_view::npos) {
            ++pos;
        }
        if (start == pos) {
            fail("expected a value");
        }
        return s.substr(start, pos - start);
    }
    bool at_null() {
        skip_blank();
        size_t save = pos;
        if (pos < s.size() && std::isalpha(static_cast<unsigned char>(s[pos]))) {
            auto w = bare();
            if (lower(w) == "null") {
                return true;
            }
        }
        pos = save;
        return false;
    }
    std::string identifier() {
        skip_blank();
        if (pos < s.size() && s[pos] == '"') {
            ++pos;
            std::string r;
            while (true) {
                if (pos >= s.size()) {
                    fail("unterminated quoted identifier");
                }
                if (s[pos] == '"') {
                    if (pos + 1 < s.size() && s[pos + 1] == '"') {
                        r += '"';
                        pos += 2;
                        continue;
                    }
                    ++pos;
                    return r;
                }
                r += s[pos++];
            }
        }
        return lower(bare());
    }

    bytes value(const abstract_type& t) {
        switch (t.kind()) {
        case type_kind::reversed:
            return value(*t.underlying_type());
        case type_kind::list:
        case type_kind::set: {
            bool list = t.kind() == type_kind::list;
            // An empty set may be written {} or [] in some drivers; CQL allows [] only for lists.
            expect(list ? '[' : '{');
            std::vector<bytes> elements;
            char close = list ? ']' : '}';
            if (!eat(close)) {
                do {
                    elements.push_back(value(*t.element_type()));
                } while (eat(','));
                expect(close);
            }
            if (!list) {
                auto& et = *t.element_type();
                std::sort(elements.begin(), elements.end(),
                          [&](const bytes& a, const bytes& b) { return et.compare(a, b) < 0; });
                elements.erase(std::unique(elements.begin(), elements.end(),
                                           [&](const bytes& a, const bytes& b) { return et.compare(a, b) == 0; }),
                               elements.end());
            }
            return serialize_collection(elements);
        }
        case type_kind::map: {
            expect('{');
            std::vector<std::pair<bytes, bytes>> entries;
            if (!eat('}')) {
                do {
                    auto k = value(*t.key_type());
                    expect(':');
                    entries.emplace_back(std::move(k), value(*t.value_type()));
                } while (eat(','));
                expect('}');
            }
            auto& kt = *t.key_type();
            // Later duplicates win, as in a CQL map literal.
            std::stable_sort(entries.begin(), entries.end(),
                             [&](auto& a, auto& b) { return kt.compare(a.first, b.first) < 0; });
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
        case type_kind::vector: {
            // A list literal of exactly N non-null elements (Vectors.Literal).
            expect('[');
            std::vector<bytes> elements;
            if (!eat(']')) {
                do {
                    if (at_null()) {
                        fail("null is not supported inside vectors");
                    }
                    elements.push_back(value(*t.element_type()));
                } while (eat(','));
                expect(']');
            }
            if (elements.size() != t.vector_dimension()) {
                fail(fmt::format("expected {} elements for {}, but given {}", t.vector_dimension(), t.cql_name(),
                                 elements.size()));
            }
            return serialize_vector(t, elements);
        }
        case type_kind::tuple: {
            expect('(');
            std::vector<std::optional<bytes>> fields;
            auto& types = t.field_types();
            if (!eat(')')) {
                do {
                    if (fields.size() >= types.size()) {
                        fail("too many tuple fields");
                    }
                    if (at_null()) {
                        fields.emplace_back(std::nullopt);
                    } else {
                        fields.emplace_back(value(*types[fields.size()]));
                    }
                } while (eat(','));
                expect(')');
            }
            return serialize_tuple(fields);
        }
        case type_kind::user: {
            auto& u = static_cast<const user_type_impl&>(t);
            expect('{');
            std::vector<std::optional<bytes>> fields(u.field_types().size());
            if (!eat('}')) {
                do {
                    auto name = identifier();
                    auto it = std::find(u.field_names().begin(), u.field_names().end(), name);
                    if (it == u.field_names().end()) {
                        fail(fmt::format("unknown field '{}' of user type {}", name, u.type_name()));
                    }
                    expect(':');
                    size_t i = size_t(it - u.field_names().begin());
                    if (at_null()) {
                        fields[i] = std::nullopt;
                    } else {
                        fields[i] = value(*u.field_types()[i]);
                    }
                } while (eat(','));
                expect('}');
            }
            while (!fields.empty() && !fields.back()) {
                fields.pop_back();
            }
            return serialize_tuple(fields);
        }
        default:
            break;
        }
        if (at_quote()) {
            return t.from_string(quoted());
        }
        auto word = bare();
        if (t.kind() == type_kind::ascii || t.kind() == type_kind::text || t.kind() == type_kind::inet ||
            t.kind() == type_kind::date || t.kind() == type_kind::time) {
            // These take quoted literals only (a bare integer is accepted for date and time, as CQL does).
            if (!((t.kind() == type_kind::date || t.kind() == type_kind::time || t.kind() == type_kind::timestamp) &&
                  std::all_of(word.begin(), word.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))) {
                fail(fmt::format("a {} literal is quoted", t.cql_name()));
            }
        }
        return t.from_string(word);
    }
};

} // namespace

data_type parse_class_name(std::string_view s) {
    class_name_parser p{{s}};
    auto t = p.parse(false);
    p.skip_blank();
    if (p.pos != s.size()) {
        p.fail("unexpected text after the type");
    }
    return t;
}

bytes abstract_type::from_string(std::string_view s) const {
    switch (_kind) {
    case type_kind::ascii: {
        auto b = to_bytes(s);
        validate(b);
        return b;
    }
    case type_kind::text: {
        auto b = to_bytes(s);
        validate(b);
        return b;
    }
    case type_kind::blob:
        try {
            if (s.starts_with("0x") || s.starts_with("0X")) {
                s.remove_prefix(2);
            }
            return hex_decode(s);
        } catch (const std::invalid_argument& e) {
            bad_value(*this, s, e.what());
        }
    case type_kind::reversed:
        return _params[0]->from_string(s);
    case type_kind::empty:
        if (!s.empty()) {
            bad_value(*this, s);
        }
        return {};
    default:
        break;
    }
    if (s.empty()) {
        // fromString of an empty string is the empty value for every type that allows one.
        return {};
    }
    try {
        switch (_kind) {
        case type_kind::int32: return integer_from_string<int32_t>(*this, s);
        case type_kind::bigint:
        case type_kind::counter: return integer_from_string<int64_t>(*this, s);
        case type_kind::smallint: return integer_from_string<int16_t>(*this, s);
        case type_kind::tinyint: return integer_from_string<int8_t>(*this, s);
        case type_kind::boolean: {
            auto l = lower(s);
            if (l != "true" && l != "false") {
                bad_value(*this, s);
            }
            return bytes{uint8_t(l == "true")};
        }
        case type_kind::varint: return big_int::from_string(s).to_bytes();
        case type_kind::decimal: return big_decimal::from_string(s).to_bytes();
        case type_kind::double_:
            return serialize_be<uint64_t>(std::bit_cast<uint64_t>(floating_from_string<double>(*this, s)));
        case type_kind::float_:
            return serialize_be<uint32_t>(std::bit_cast<uint32_t>(floating_from_string<float>(*this, s)));
        case type_kind::date: {
            int64_t raw;
            if (std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
                // A bare number is the stored unsigned day count (SimpleDateSerializer.dateStringToDays).
                raw = std::stoll(std::string(s));
            } else {
                raw = parse_date(s) + (int64_t(1) << 31);
            }
            if (raw < 0 || raw > int64_t(UINT32_MAX)) {
                bad_value(*this, s, "date out of range");
            }
            return serialize_be<uint32_t>(uint32_t(raw));
        }
        case type_kind::time: {
            int64_t t = parse_time(s);
            if (t < 0 || t >= 86400LL * 1000000000LL) {
                bad_value(*this, s, "time out of range");
            }
            return serialize_be<int64_t>(t);
        }
        case type_kind::timestamp: return serialize_be<int64_t>(parse_timestamp(s));
        case type_kind::uuid:
        case type_kind::timeuuid: {
            auto b = parse_uuid(s);
            validate(b);
            return b;
        }
        case type_kind::inet: return parse_inet(s);
        case type_kind::duration: return encode_duration(parse_duration(s));
        case type_kind::composite: {
            // CompositeType.fromString: components split on unescaped ':'.
            std::vector<bytes> parts;
            std::string cur;
            size_t i = 0;
            auto flush = [&] {
                auto& t = parts.size() < _params.size() ? _params[parts.size()] : _params.back();
                parts.push_back(t->from_string(cur));
                cur.clear();
            };
            for (; i < s.size(); ++i) {
                if (s[i] == '\\' && i + 1 < s.size()) {
                    cur += s[++i];
                } else if (s[i] == ':') {
                    flush();
                } else {
                    cur += s[i];
                }
            }
            flush();
            return serialize_composite(parts);
        }
        case type_kind::list:
        case type_kind::set:
        case type_kind::map:
        case type_kind::vector: {
            // CollectionType.fromString and VectorType.fromString: hex, as getString prints it.
            auto b = hex_decode(s);
            validate(b);
            return b;
        }
        case type_kind::tuple:
        case type_kind::user: {
            // TupleType.fromString: fields split on unescaped ':', a lone '@' is null.
            std::vector<std::optional<bytes>> fields;
            std::string cur;
            bool escaped_any = false;
            auto flush = [&] {
                if (fields.size() >= _params.size()) {
                    bad_value(*this, s, "more fields than the type has");
                }
                if (cur == "@" && !escaped_any) {
                    fields.emplace_back(std::nullopt);
                } else {
                    fields.emplace_back(_params[fields.size()]->from_string(cur));
                }
                cur.clear();
                escaped_any = false;
            };
            for (size_t i = 0; i < s.size(); ++i) {
                if (s[i] == '\\' && i + 1 < s.size() && (s[i + 1] == ':' || s[i + 1] == '@')) {
                    cur += s[++i];
                    escaped_any = true;
                } else if (s[i] == ':') {
                    flush();
                } else {
                    cur += s[i];
                }
            }
            flush();
            return serialize_tuple(fields);
        }
        default:
            return from_cql_literal(s);
        }
    } catch (const std::invalid_argument& e) {
        bad_value(*this, s, e.what());
    } catch (const std::out_of_range& e) {
        bad_value(*this, s, "out of range");
    }
}

bytes abstract_type::from_cql_literal(std::string_view literal) const {
    literal_parser p{{literal, 0, "literal "}};
    auto v = p.value(*this);
    p.skip_blank();
    if (p.pos != literal.size()) {
        p.fail("unexpected text after the value");
    }
    return v;
}

} // namespace reef
