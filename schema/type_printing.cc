// Printing serialized values: the JSON of Cassandra's toJSONString (what sstabledump prints), the text of
// getString (partition keys in sstabledump), and CQL literals.

#include "schema/types.hh"
#include "schema/value_format.hh"
#include "utils/java_double_format.hh"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cctype>
#include <cmath>

namespace reef {

using utils::java_double_to_string;
using utils::java_float_to_string;

namespace {

constexpr int64_t date_epoch_offset = int64_t(1) << 31;

int64_t signed_integer(bytes_view v) {
    switch (v.size()) {
    case 1: return int8_t(v[0]);
    case 2: return read_be<int16_t>(v.data());
    case 4: return read_be<int32_t>(v.data());
    case 8: return read_be<int64_t>(v.data());
    default: throw marshal_exception(fmt::format("invalid integer length {}", v.size()));
    }
}

double as_double(bytes_view v) {
    return std::bit_cast<double>(read_be<uint64_t>(v.data()));
}

float as_float(bytes_view v) {
    return std::bit_cast<float>(read_be<uint32_t>(v.data()));
}

std::string quoted(std::string_view s) {
    return "\"" + std::string(s) + "\"";
}

// The text of a non-empty native value, shared by getString and the quoted JSON forms.
std::string native_text(type_kind kind, bytes_view v) {
    switch (kind) {
    case type_kind::ascii:
    case type_kind::text: return std::string(to_string_view(v));
    case type_kind::blob: return hex_encode(v);
    case type_kind::boolean: return v[0] ? "true" : "false";
    case type_kind::int32:
    case type_kind::bigint:
    case type_kind::smallint:
    case type_kind::tinyint:
    case type_kind::counter: return std::to_string(signed_integer(v));
    case type_kind::varint: return big_int::from_bytes(v).to_string();
    case type_kind::decimal: return big_decimal::from_bytes(v).to_string();
    case type_kind::double_: return java_double_to_string(as_double(v));
    case type_kind::float_: return java_float_to_string(as_float(v));
    case type_kind::date: return format_date(int64_t(read_be<uint32_t>(v.data())) - date_epoch_offset);
    case type_kind::time: return format_time(read_be<int64_t>(v.data()));
    case type_kind::timestamp: return format_timestamp(read_be<int64_t>(v.data())) + "Z";
    case type_kind::uuid:
    case type_kind::timeuuid: return format_uuid(v);
    case type_kind::inet: return format_inet(v);
    case type_kind::duration: return format_duration(decode_duration(v));
    case type_kind::empty: return "";
    default: throw std::logic_error("native_text() of a type with parameters");
    }
}

bool needs_quotes(std::string_view id) {
    if (id.empty() || !(std::islower(static_cast<unsigned char>(id[0])))) {
        return true;
    }
    for (char c : id) {
        if (!(std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '_')) {
            return true;
        }
    }
    return false;
}

} // namespace

std::string maybe_quote_identifier(std::string_view id) {
    if (!needs_quotes(id)) {
        return std::string(id);
    }
    std::string s = "\"";
    for (char c : id) {
        s += c;
        if (c == '"') {
            s += '"';
        }
    }
    return s + "\"";
}

std::string abstract_type::to_json_string(bytes_view v) const {
    switch (_kind) {
    case type_kind::reversed:
        return _params[0]->to_json_string(v);
    case type_kind::ascii:
    case type_kind::text:
        return quoted(json_quote(to_string_view(v)));
    case type_kind::blob:
        return quoted("0x" + hex_encode(v));
    default:
        break;
    }
    if (v.empty() && !is_collection() && !is_tuple()) {
        return "\"\"";
    }
    validate(v);
    switch (_kind) {
    case type_kind::boolean:
    case type_kind::int32:
    case type_kind::bigint:
    case type_kind::smallint:
    case type_kind::tinyint:
    case type_kind::counter:
    case type_kind::varint:
    case type_kind::decimal:
        return native_text(_kind, v);
    case type_kind::double_: {
        // JSON has no NaN or Infinity; Cassandra prints null for them.
        double d = as_double(v);
        return std::isfinite(d) ? java_double_to_string(d) : "null";
    }
    case type_kind::float_: {
        float f = as_float(v);
        return std::isfinite(f) ? java_float_to_string(f) : "null";
    }
    case type_kind::list:
    case type_kind::set:
    case type_kind::vector: {
        // VectorType.toJSONString prints a vector as a list of its elements.
        std::string s = "[";
        auto elements = _kind == type_kind::vector ? split_vector(*this, v) : split_collection(v);
        for (size_t i = 0; i < elements.size(); ++i) {
            s += (i ? ", " : "") + element_type()->to_json_string(elements[i]);
        }
        return s + "]";
    }
    case type_kind::map: {
        std::string s = "{";
        auto entries = split_map(v);
        for (size_t i = 0; i < entries.size(); ++i) {
            // JSON object keys are strings: a key that is not one already gets quoted.
            auto key = key_type()->to_json_string(entries[i].first);
            if (key.empty() || key[0] != '"') {
                key = quoted(json_quote(key));
            }
            s += (i ? ", " : "") + key + ": " + value_type()->to_json_string(entries[i].second);
        }
        return s + "}";
    }
    case type_kind::tuple: {
        std::string s = "[";
        auto fields = split_tuple(v);
        for (size_t i = 0; i < _params.size(); ++i) {
            s += i ? ", " : "";
            s += i < fields.size() && fields[i] ? _params[i]->to_json_string(*fields[i]) : "null";
        }
        return s + "]";
    }
    case type_kind::user: {
        auto& u = static_cast<const user_type_impl&>(*this);
        std::string s = "{";
        auto fields = split_tuple(v);
        for (size_t i = 0; i < _params.size(); ++i) {
            std::string name = u.field_names()[i];
            bool lower = std::none_of(name.begin(), name.end(), [](char c) { return std::isupper(static_cast<unsigned char>(c)); });
            if (!lower) {
                name = quoted(name);
            }
            s += (i ? ", " : "") + quoted(json_quote(name)) + ": ";
            s += i < fields.size() && fields[i] ? _params[i]->to_json_string(*fields[i]) : "null";
        }
        return s + "}";
    }
    case type_kind::composite:
        return quoted(json_quote(to_string(v)));
    default:
        return quoted(json_quote(native_text(_kind, v)));
    }
}

std::string abstract_type::to_string(bytes_view v) const {
    if (_kind == type_kind::reversed) {
        return _params[0]->to_string(v);
    }
    if (v.empty() && _kind != type_kind::composite) {
        return "";
    }
    validate(v);
    switch (_kind) {
    case type_kind::composite: {
        // CompositeType.getString: components joined by ':', their own ':' and '\' escaped.
        std::string s;
        auto parts = split_composite(v);
        for (size_t i = 0; i < parts.size(); ++i) {
            auto& t = i < _params.size() ? _params[i] : _params.back();
            std::string part = t->to_string(parts[i]);
            if (i) {
                s += ':';
            }
            for (char c : part) {
                if (c == ':' || c == '\\') {
                    s += '\\';
                }
                s += c;
            }
        }
        return s;
    }
    case type_kind::list:
    case type_kind::set:
    case type_kind::map:
    case type_kind::vector:
        // CollectionType.getString and VectorType.getString are BytesType's: hex.
        return hex_encode(v);
    case type_kind::tuple:
    case type_kind::user: {
        // TupleType.getString: the fields present, joined by ':'; '@' for a null field; ':' and '@' escaped.
        std::string s;
        auto fields = split_tuple(v);
        for (size_t i = 0; i < fields.size() && i < _params.size(); ++i) {
            if (i) {
                s += ':';
            }
            if (!fields[i]) {
                s += '@';
                continue;
            }
            for (char c : _params[i]->to_string(*fields[i])) {
                if (c == ':' || c == '@') {
                    s += '\\';
                }
                s += c;
            }
        }
        return s;
    }
    case type_kind::decimal:
        return big_decimal::from_bytes(v).to_string();
    case type_kind::timestamp:
        return format_timestamp_iso(read_be<int64_t>(v.data()));
    default:
        return native_text(_kind, v);
    }
}

std::string abstract_type::to_cql_literal(bytes_view v) const {
    if (_kind == type_kind::reversed) {
        return _params[0]->to_cql_literal(v);
    }
    auto single_quoted = [](std::string_view s) {
        std::string r = "'";
        for (char c : s) {
            r += c;
            if (c == '\'') {
                r += '\'';
            }
        }
        return r + "'";
    };
    if (_kind == type_kind::blob) {
        return "0x" + hex_encode(v);
    }
    if (v.empty() && !is_collection()) {
        // CQL has no literal for the empty value of a non-string type; '' is what Cassandra's fromString reads as empty.
        return "''";
    }
    validate(v);
    switch (_kind) {
    case type_kind::ascii:
    case type_kind::text:
    case type_kind::date:
    case type_kind::time:
    case type_kind::timestamp:
    case type_kind::inet:
        return single_quoted(native_text(_kind, v));
    case type_kind::duration: {
        auto s = native_text(_kind, v);
        return s.empty() ? "0s" : s;
    }
    case type_kind::list:
    case type_kind::set:
    case type_kind::vector: {
        bool list = _kind != type_kind::set;
        std::string s = list ? "[" : "{";
        auto elements = _kind == type_kind::vector ? split_vector(*this, v) : split_collection(v);
        for (size_t i = 0; i < elements.size(); ++i) {
            s += (i ? ", " : "") + element_type()->to_cql_literal(elements[i]);
        }
        return s + (list ? "]" : "}");
    }
    case type_kind::map: {
        std::string s = "{";
        auto entries = split_map(v);
        for (size_t i = 0; i < entries.size(); ++i) {
            s += (i ? ", " : "") + key_type()->to_cql_literal(entries[i].first) + ": " +
                 value_type()->to_cql_literal(entries[i].second);
        }
        return s + "}";
    }
    case type_kind::tuple: {
        std::string s = "(";
        auto fields = split_tuple(v);
        for (size_t i = 0; i < _params.size(); ++i) {
            s += i ? ", " : "";
            s += i < fields.size() && fields[i] ? _params[i]->to_cql_literal(*fields[i]) : "null";
        }
        return s + ")";
    }
    case type_kind::user: {
        auto& u = static_cast<const user_type_impl&>(*this);
        std::string s = "{";
        auto fields = split_tuple(v);
        for (size_t i = 0; i < _params.size(); ++i) {
            s += (i ? ", " : "") + maybe_quote_identifier(u.field_names()[i]) + ": ";
            s += i < fields.size() && fields[i] ? _params[i]->to_cql_literal(*fields[i]) : "null";
        }
        return s + "}";
    }
    case type_kind::composite:
        return single_quoted(to_string(v));
    default:
        return native_text(_kind, v);
    }
}

} // namespace reef
