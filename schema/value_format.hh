// Number, time, address and string codecs behind the CQL types' printing and parsing: arbitrary-precision
// integers and decimals, Java's BigDecimal text forms, dates, durations, inets, UUIDs, JSON quoting.
#pragma once

#include "schema/bytes.hh"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace reef {

// An arbitrary-precision integer: the value of a varint and a decimal's unscaled value.
class big_int {
    bool _negative = false;
    // Magnitude, 32-bit limbs, least significant first, no leading zero limbs (zero is empty).
    std::vector<uint32_t> _limbs;
    void trim();
public:
    big_int() = default;
    explicit big_int(int64_t v);
    // Java BigInteger(byte[]): big-endian two's complement; empty is zero.
    static big_int from_bytes(bytes_view v);
    // Decimal digits with an optional sign; throws std::invalid_argument.
    static big_int from_string(std::string_view s);
    // Java BigInteger.toByteArray(): the shortest two's complement form.
    bytes to_bytes() const;
    std::string to_string() const;
    bool is_zero() const { return _limbs.empty(); }
    bool negative() const { return _negative; }
    int compare(const big_int& o) const;
    void multiply_add(uint32_t mul, uint32_t add);
    // Divides the magnitude in place, returns the remainder.
    uint32_t divide(uint32_t div);
    void negate() { _negative = !_negative && !is_zero(); }
    // Multiplies by 10^n.
    void scale_up(uint32_t n);
    // The number of decimal digits of the magnitude (1 for zero).
    size_t digits() const;
};

// Compares two varints (IntegerType) numerically; empty values are smallest.
int compare_varint(bytes_view a, bytes_view b);

// A decimal: unscaled * 10^-scale, serialized as int32 scale + varint unscaled (DecimalSerializer).
struct big_decimal {
    int32_t scale = 0;
    big_int unscaled;

    static big_decimal from_bytes(bytes_view v);
    // "1.5", "-1E+300", "3e-2" (Java's new BigDecimal(String)).
    static big_decimal from_string(std::string_view s);
    bytes to_bytes() const;
    // Java BigDecimal.toString(): "1E+300", "-1.00", "0.000001", "1E-7".
    std::string to_string() const;
    // Java BigDecimal.toPlainString(): never an exponent ("1000", "0.0000001"); for a scale beyond ±10000,
    // to_string() rather than a string of millions of zeros.
    std::string to_plain_string() const;
    // Numeric order: 1.0 == 1.00 (BigDecimal.compareTo).
    int compare(const big_decimal& o) const;
};

// days since the epoch (date values are stored as days + 2^31, unsigned) <-> "yyyy-mm-dd".
std::string format_date(int64_t days);
int64_t parse_date(std::string_view s);
// Milliseconds since the epoch -> "yyyy-mm-dd hh:mm:ss.SSS" (UTC, proleptic Gregorian).
std::string format_timestamp(int64_t millis);
// Milliseconds since the epoch -> "yyyy-mm-ddThh:mm:ss.SSSZ" (UTC), Cassandra 5.0's TimestampSerializer.toString.
std::string format_timestamp_iso(int64_t millis);
// Accepts "yyyy-mm-dd[( |T)hh:mm[:ss[.fff]]][Z|+hh[:]mm|-hh[:]mm]" or plain milliseconds.
int64_t parse_timestamp(std::string_view s);
// Nanoseconds since midnight <-> "hh:mm:ss.nnnnnnnnn".
std::string format_time(int64_t nanos);
int64_t parse_time(std::string_view s);

// A duration: months, days, nanoseconds, serialized as three zigzag vints (DurationSerializer).
struct duration_value {
    int32_t months = 0;
    int32_t days = 0;
    int64_t nanoseconds = 0;
};
duration_value decode_duration(bytes_view v);
bytes encode_duration(const duration_value& d);
// Cassandra's Duration.toString: "1y2mo3d4h5m6s7ms8us9ns", "-5ns", "" for zero.
std::string format_duration(const duration_value& d);
// "1h30m", "-2d", ISO 8601 "P1Y2M3DT4H5M6S" and "P2W".
duration_value parse_duration(std::string_view s);

// 4 or 16 bytes <-> Java's InetAddress.getHostAddress() ("0:0:0:0:0:0:0:1", no "::").
std::string format_inet(bytes_view v);
bytes parse_inet(std::string_view s);

// 16 bytes <-> "01234567-89ab-cdef-0123-456789abcdef".
std::string format_uuid(bytes_view v);
bytes parse_uuid(std::string_view s);

std::string hex_encode(bytes_view v);
// Throws std::invalid_argument on an odd length or a non-hex digit.
bytes hex_decode(std::string_view s);

// Jackson's quoteAsString: escapes '"', '\\' and control characters; everything else verbatim.
std::string json_quote(std::string_view s);

} // namespace reef
