// Parsing values from their JSON form (abstract_type::from_json): the inverse of to_json_string, for
// `reef sstable write`, which reads what dump-data prints.

#include "schema/types.hh"
#include "utils/json_reader.hh"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

namespace reef {

namespace {

using utils::json_value;
using jkind = json_value::kind;

[[noreturn]] void bad_json(const abstract_type& t, const json_value& v, std::string_view why) {
    std::string shown = v.is_string() ? "\"" + v.text + "\"" : v.is_array() ? "[...]" : v.is_object() ? "{...}" : v.text;
    if (shown.size() > 80) {
        shown = shown.substr(0, 80) + "...";
    }
    throw marshal_exception(fmt::format("cannot read {} ({}) as a value of type {}: {}", shown,
                                        utils::kind_name(v.type), t.cql_name(), why));
}

bool is_integral_number(std::string_view s) {
    return s.find_first_of(".eE") == std::string_view::npos;
}

json_value string_value(std::string s) {
    json_value v;
    v.type = jkind::string;
    v.text = std::move(s);
    return v;
}

// A map key: JSON object member names are strings. to_json_string quotes a key whose JSON is not a string
// already, so the name is either the key's JSON text (numbers, booleans, collections, tuples, UDTs, null for
// NaN) or its string form (text, timestamps, uuids, inets, blobs "0x...", ...).
bytes map_key_from_json(const abstract_type& kt, const std::string& name) {
    auto base = kt.without_reversal();
    if (base->kind() == type_kind::text || base->kind() == type_kind::ascii) {
        return kt.from_json(string_value(name));
    }
    std::optional<json_value> parsed;
    try {
        parsed = utils::parse_json(name);
    } catch (const utils::json_parse_error&) {
    }
    if (parsed && !parsed->is_string()) {
        return kt.from_json(*parsed);
    }
    return kt.from_json(string_value(name));
}

} // namespace

bytes abstract_type::from_json(const json_value& v) const {
    auto require = [&](bool ok, std::string_view expected) {
        if (!ok) {
            bad_json(*this, v, fmt::format("expected {}", expected));
        }
    };
    auto parse_text = [&](std::string_view s) {
        try {
            return from_string(s);
        } catch (const marshal_exception& e) {
            bad_json(*this, v, e.what());
        }
    };
    switch (_kind) {
    case type_kind::reversed:
        return _params[0]->from_json(v);
    case type_kind::ascii:
    case type_kind::text:
        require(v.is_string(), "a string");
        return parse_text(v.text);
    case type_kind::blob:
        require(v.is_string(), "a string");
        // Cassandra's BytesType.fromJSONObject wants the 0x prefix; to_json_string always prints it.
        require(v.text.starts_with("0x") || v.text.starts_with("0X"), "a hex string starting with 0x");
        return parse_text(v.text);
    case type_kind::boolean:
        require(v.type == jkind::boolean || v.is_string(), "true, false or a string");
        return parse_text(v.text);
    case type_kind::int32:
    case type_kind::bigint:
    case type_kind::smallint:
    case type_kind::tinyint:
    case type_kind::counter:
    case type_kind::varint:
        require(v.is_string() || (v.is_number() && is_integral_number(v.text)), "an integer or a string");
        return parse_text(v.text);
    case type_kind::decimal:
        require(v.is_string() || v.is_number(), "a number or a string");
        return parse_text(v.text);
    case type_kind::float_:
    case type_kind::double_:
        if (v.is_null()) {
            // JSON has no NaN or Infinity: to_json_string prints null for all three; NaN stands for them.
            return _kind == type_kind::double_
                       ? serialize_be<uint64_t>(std::bit_cast<uint64_t>(std::numeric_limits<double>::quiet_NaN()))
                       : serialize_be<uint32_t>(std::bit_cast<uint32_t>(std::numeric_limits<float>::quiet_NaN()));
        }
        require(v.is_string() || v.is_number(), "a number, a string or null");
        return parse_text(v.text);
    case type_kind::timestamp:
        // A number is milliseconds since the epoch (TimestampType.fromJSONObject).
        require(v.is_string() || (v.is_number() && is_integral_number(v.text)), "a string or an integer");
        return parse_text(v.text);
    case type_kind::date:
    case type_kind::time:
    case type_kind::uuid:
    case type_kind::timeuuid:
    case type_kind::inet:
    case type_kind::duration:
    case type_kind::empty:
    case type_kind::composite:
        require(v.is_string(), "a string");
        return parse_text(v.text);
    case type_kind::list:
    case type_kind::set: {
        require(v.is_array(), "an array");
        std::vector<bytes> elements;
        elements.reserve(v.items.size());
        for (auto& e : v.items) {
            elements.push_back(element_type()->from_json(e));
        }
        if (_kind == type_kind::set) {
            auto& et = *element_type();
            std::sort(elements.begin(), elements.end(), [&](const bytes& a, const bytes& b) { return et.compare(a, b) < 0; });
            elements.erase(std::unique(elements.begin(), elements.end(),
                                       [&](const bytes& a, const bytes& b) { return et.compare(a, b) == 0; }),
                           elements.end());
        }
        return serialize_collection(elements);
    }
    case type_kind::vector: {
        // VectorType.fromJSONObject: an array of exactly N non-null elements.
        require(v.is_array(), "an array");
        if (v.items.size() != vector_dimension()) {
            bad_json(*this, v, fmt::format("List had incorrect size: expected {} but given {}", vector_dimension(),
                                           v.items.size()));
        }
        std::vector<bytes> elements;
        for (auto& e : v.items) {
            if (e.is_null()) {
                bad_json(*this, v, "Invalid null element in list");
            }
            elements.push_back(element_type()->from_json(e));
        }
        return serialize_vector(*this, elements);
    }
    case type_kind::map: {
        require(v.is_object(), "an object");
        std::vector<std::pair<bytes, bytes>> entries;
        entries.reserve(v.members.size());
        for (auto& [name, value] : v.members) {
            entries.emplace_back(map_key_from_json(*key_type(), name), value_type()->from_json(value));
        }
        auto& kt = *key_type();
        std::stable_sort(entries.begin(), entries.end(), [&](auto& a, auto& b) { return kt.compare(a.first, b.first) < 0; });
        for (size_t i = 1; i < entries.size(); ++i) {
            if (kt.compare(entries[i - 1].first, entries[i].first) == 0) {
                bad_json(*this, v, "a key appears twice");
            }
        }
        return serialize_map(entries);
    }
    case type_kind::tuple: {
        require(v.is_array(), "an array");
        if (v.items.size() > _params.size()) {
            bad_json(*this, v, fmt::format("{} fields for a tuple of {}", v.items.size(), _params.size()));
        }
        std::vector<std::optional<bytes>> fields;
        for (size_t i = 0; i < v.items.size(); ++i) {
            if (v.items[i].is_null()) {
                fields.emplace_back(std::nullopt);
            } else {
                fields.emplace_back(_params[i]->from_json(v.items[i]));
            }
        }
        return serialize_tuple(fields);
    }
    case type_kind::user: {
        require(v.is_object(), "an object");
        auto& u = static_cast<const user_type_impl&>(*this);
        std::vector<std::optional<bytes>> fields(_params.size());
        std::vector<bool> seen(_params.size());
        for (auto& [raw_name, value] : v.members) {
            // to_json_string wraps a name with upper-case letters in double quotes; others are as declared.
            std::string name = raw_name;
            bool quoted = name.size() >= 2 && name.front() == '"' && name.back() == '"';
            if (quoted) {
                name = name.substr(1, name.size() - 2);
            }
            auto it = std::find(u.field_names().begin(), u.field_names().end(), name);
            if (it == u.field_names().end() && !quoted) {
                std::string lower = name;
                std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return char(std::tolower(c)); });
                it = std::find(u.field_names().begin(), u.field_names().end(), lower);
            }
            if (it == u.field_names().end()) {
                bad_json(*this, v, fmt::format("no field named {}", raw_name));
            }
            size_t i = size_t(it - u.field_names().begin());
            if (seen[i]) {
                bad_json(*this, v, fmt::format("field {} appears twice", raw_name));
            }
            seen[i] = true;
            if (!value.is_null()) {
                fields[i] = _params[i]->from_json(value);
            }
        }
        return serialize_tuple(fields);
    }
    }
    bad_json(*this, v, "no JSON form");
}

} // namespace reef
