// CAST's conversions. See cast_functions.hh.
#include "cql/cast_functions.hh"

#include "cql/cql_error.hh"
#include "cql/value_bytes.hh"
#include "schema/value_format.hh"
#include "utils/big_endian.hh"
#include "utils/java_double_format.hh"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace reef::cql {

namespace {

// Cassandra's CastFcts: numbers convert as Java's Number methods do (integers wrap, a float or double truncates
// and saturates), text is the value's string form, timestamps, dates and timeuuids convert into each other.

bool is_numeric(type_kind k) {
    switch (k) {
    case type_kind::tinyint:
    case type_kind::smallint:
    case type_kind::int32:
    case type_kind::bigint:
    case type_kind::counter:
    case type_kind::float_:
    case type_kind::double_:
    case type_kind::decimal:
    case type_kind::varint: return true;
    default: return false;
    }
}

// The low 64 bits of a varint (BigInteger.longValue()).
int64_t varint_low_bits(bytes_view b) {
    uint64_t v = (!b.empty() && (b[0] & 0x80)) ? ~uint64_t(0) : 0;
    for (auto c : b) {
        v = v << 8 | c;
    }
    return int64_t(v);
}

int64_t saturating(double d) {
    if (std::isnan(d)) {
        return 0;
    }
    if (d >= 9.2233720368547758e18) {
        return INT64_MAX;
    }
    if (d <= -9.2233720368547758e18) {
        return INT64_MIN;
    }
    return int64_t(d);
}

int64_t saturating32(double d) {
    if (std::isnan(d)) {
        return 0;
    }
    return std::clamp<double>(std::trunc(d), INT32_MIN, INT32_MAX);
}

std::string plain_integer_part(const std::string& decimal_plain) {
    auto dot = decimal_plain.find('.');
    auto s = dot == std::string::npos ? decimal_plain : decimal_plain.substr(0, dot);
    return s.empty() || s == "-" ? "0" : s;
}

} // namespace

std::optional<bytes> cast_value(const data_type& from_t, const data_type& to, const bytes& v) {
    auto from = from_t->without_reversal();
    auto fk = from->kind();
    auto tk = to->kind();
    if (tk == type_kind::text || tk == type_kind::ascii) {
        switch (fk) {
        case type_kind::float_: return to_bytes(utils::java_float_to_string(float_of(v)));
        case type_kind::double_: return to_bytes(utils::java_double_to_string(double_of(v)));
        default: return to_bytes(from->to_string(v));
        }
    }
    if (is_numeric(fk) && is_numeric(tk)) {
        // The source as an exact integer (when it is one), a double, and a decimal string.
        std::optional<int64_t> exact;
        double d = 0;
        std::string dec;
        switch (fk) {
        case type_kind::tinyint: exact = from_be<int8_t>(v); break;
        case type_kind::smallint: exact = from_be<int16_t>(v); break;
        case type_kind::int32: exact = from_be<int32_t>(v); break;
        case type_kind::bigint:
        case type_kind::counter: exact = from_be<int64_t>(v); break;
        case type_kind::float_: d = float_of(v); dec = utils::java_double_to_string(d); break;
        case type_kind::double_: d = double_of(v); dec = utils::java_double_to_string(d); break;
        case type_kind::varint:
            exact = varint_low_bits(v);
            dec = from->to_string(v);
            d = std::stod(dec);
            break;
        case type_kind::decimal: {
            auto bd = big_decimal::from_bytes(v);
            dec = bd.to_string();
            d = std::stod(dec);
            exact = varint_low_bits(big_int::from_string(plain_integer_part(bd.to_plain_string())).to_bytes());
            break;
        }
        default: break;
        }
        if (exact && fk != type_kind::varint && fk != type_kind::decimal) {
            d = double(*exact);
            dec = std::to_string(*exact);
        }
        bool integral_source = fk != type_kind::float_ && fk != type_kind::double_;
        auto as_long = [&] { return integral_source ? *exact : saturating(d); };
        switch (tk) {
        case type_kind::tinyint: return be_bytes<int8_t>(int8_t(integral_source ? *exact : saturating32(d)));
        case type_kind::smallint: return be_bytes<int16_t>(int16_t(integral_source ? *exact : saturating32(d)));
        case type_kind::int32: return be_bytes<int32_t>(int32_t(integral_source ? *exact : saturating32(d)));
        case type_kind::bigint:
        case type_kind::counter: return be_bytes<int64_t>(as_long());
        case type_kind::float_: return float_bytes(float(d));
        case type_kind::double_: return double_bytes(d);
        case type_kind::decimal: return big_decimal::from_string(dec).to_bytes();
        case type_kind::varint: {
            if (fk == type_kind::float_ || fk == type_kind::double_ || fk == type_kind::decimal) {
                return big_int::from_string(plain_integer_part(big_decimal::from_string(dec).to_plain_string())).to_bytes();
            }
            return big_int::from_string(dec).to_bytes();
        }
        default: break;
        }
    }
    // Times: timestamp <-> date, timeuuid -> both; timestamp -> bigint (milliseconds).
    auto millis = [&]() -> std::optional<int64_t> {
        switch (fk) {
        case type_kind::timestamp: return from_be<int64_t>(v);
        case type_kind::date: return (int64_t(from_be<uint32_t>(v)) - (int64_t(1) << 31)) * 86400000;
        case type_kind::timeuuid: {
            uint64_t ts = (uint64_t(from_be<uint16_t>(bytes_view(v).subspan(6))) & 0x0fff) << 48 |
                          uint64_t(from_be<uint16_t>(bytes_view(v).subspan(4))) << 32 | from_be<uint32_t>(v);
            return int64_t((ts - 0x01b21dd213814000ULL) / 10000);
        }
        default: return std::nullopt;
        }
    }();
    if (millis) {
        if (tk == type_kind::timestamp) {
            return be_bytes<int64_t>(*millis);
        }
        if (tk == type_kind::date) {
            int64_t days = *millis >= 0 ? *millis / 86400000 : -((-*millis + 86399999) / 86400000);
            return be_bytes<uint32_t>(uint32_t(days + (int64_t(1) << 31)));
        }
        if (tk == type_kind::bigint && fk == type_kind::timestamp) {
            return be_bytes<int64_t>(*millis);
        }
    }
    auto name = to->cql_name();
    throw invalid_request(fmt::format("Invalid call to function system.cast_as_{}, none of its type signatures match",
                                      name));
}

// Whether CAST(from AS to) exists (Cassandra's cast functions).
bool castable(const data_type& from_t, const data_type& to) {
    auto fk = from_t->without_reversal()->kind();
    auto tk = to->kind();
    if (tk == type_kind::text || tk == type_kind::ascii) {
        return true;
    }
    if (is_numeric(fk) && is_numeric(tk) && tk != type_kind::counter) {
        return true;
    }
    bool time_source = fk == type_kind::timestamp || fk == type_kind::date || fk == type_kind::timeuuid;
    return (time_source && (tk == type_kind::timestamp || tk == type_kind::date)) ||
           (fk == type_kind::timestamp && tk == type_kind::bigint);
}

} // namespace reef::cql
