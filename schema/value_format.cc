// The text forms follow Java's (BigInteger, BigDecimal, Double.toString, InetAddress) and Cassandra's
// (Duration, TimeSerializer, TimestampSerializer) because sstabledump prints through them.

#include "schema/value_format.hh"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cctype>
#include <charconv>
#include <cmath>
#include <stdexcept>

namespace reef {

void big_int::trim() {
    while (!_limbs.empty() && _limbs.back() == 0) {
        _limbs.pop_back();
    }
    if (_limbs.empty()) {
        _negative = false;
    }
}

big_int::big_int(int64_t v) {
    _negative = v < 0;
    uint64_t m = _negative ? ~uint64_t(v) + 1 : uint64_t(v);
    _limbs = {uint32_t(m), uint32_t(m >> 32)};
    trim();
}

big_int big_int::from_bytes(bytes_view v) {
    big_int r;
    if (v.empty()) {
        return r;
    }
    r._negative = v[0] & 0x80;
    // Read the two's complement bytes as limbs, then negate the whole number for negative values.
    size_t n = (v.size() + 3) / 4;
    r._limbs.assign(n, 0);
    for (size_t i = 0; i < v.size(); ++i) {
        size_t bit = (v.size() - 1 - i) * 8;
        r._limbs[bit / 32] |= uint32_t(v[i]) << (bit % 32);
    }
    if (r._negative) {
        size_t top_bits = (v.size() * 8) % 32;
        if (top_bits) {
            r._limbs.back() |= ~uint32_t(0) << top_bits;
        }
        uint64_t carry = 1;
        for (auto& l : r._limbs) {
            uint64_t x = uint64_t(~l) + carry;
            l = uint32_t(x);
            carry = x >> 32;
        }
    }
    bool neg = r._negative;
    r.trim();
    r._negative = neg && !r._limbs.empty();
    return r;
}

big_int big_int::from_string(std::string_view s) {
    big_int r;
    bool neg = false;
    if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
        neg = s[0] == '-';
        s.remove_prefix(1);
    }
    if (s.empty()) {
        throw std::invalid_argument("not an integer: no digits");
    }
    for (char c : s) {
        if (c < '0' || c > '9') {
            throw std::invalid_argument(fmt::format("not an integer: '{}'", c));
        }
        r.multiply_add(10, uint32_t(c - '0'));
    }
    r._negative = neg && !r.is_zero();
    return r;
}

bytes big_int::to_bytes() const {
    // Two's complement of the whole value in limbs one wider than the magnitude, then drop redundant sign bytes.
    std::vector<uint32_t> l = _limbs;
    l.push_back(0);
    if (_negative) {
        uint64_t carry = 1;
        for (auto& x : l) {
            uint64_t y = uint64_t(~x) + carry;
            x = uint32_t(y);
            carry = y >> 32;
        }
    }
    bytes out;
    for (size_t i = l.size(); i-- > 0;) {
        write_be<uint32_t>(out, l[i]);
    }
    size_t start = 0;
    while (start + 1 < out.size()) {
        bool redundant = (out[start] == 0x00 && !(out[start + 1] & 0x80)) ||
                         (out[start] == 0xFF && (out[start + 1] & 0x80));
        if (!redundant) {
            break;
        }
        ++start;
    }
    return bytes(out.begin() + long(start), out.end());
}

std::string big_int::to_string() const {
    if (is_zero()) {
        return "0";
    }
    big_int m = *this;
    std::string chunks;
    while (!m.is_zero()) {
        uint32_t r = m.divide(1000000000);
        char buf[10];
        auto len = std::to_chars(buf, buf + 10, r).ptr - buf;
        std::string part(buf, size_t(len));
        if (!m.is_zero()) {
            part.insert(0, 9 - part.size(), '0');
        }
        chunks.insert(0, part);
    }
    return (_negative ? "-" : "") + chunks;
}

int big_int::compare(const big_int& o) const {
    if (_negative != o._negative) {
        return _negative ? -1 : 1;
    }
    int mag = 0;
    if (_limbs.size() != o._limbs.size()) {
        mag = _limbs.size() < o._limbs.size() ? -1 : 1;
    } else {
        for (size_t i = _limbs.size(); i-- > 0;) {
            if (_limbs[i] != o._limbs[i]) {
                mag = _limbs[i] < o._limbs[i] ? -1 : 1;
                break;
            }
        }
    }
    return _negative ? -mag : mag;
}

void big_int::multiply_add(uint32_t mul, uint32_t add) {
    uint64_t carry = add;
    for (auto& l : _limbs) {
        uint64_t x = uint64_t(l) * mul + carry;
        l = uint32_t(x);
        carry = x >> 32;
    }
    if (carry) {
        _limbs.push_back(uint32_t(carry));
    }
    trim();
}

uint32_t big_int::divide(uint32_t div) {
    uint64_t rem = 0;
    for (size_t i = _limbs.size(); i-- > 0;) {
        uint64_t cur = (rem << 32) | _limbs[i];
        _limbs[i] = uint32_t(cur / div);
        rem = cur % div;
    }
    bool neg = _negative;
    trim();
    _negative = neg && !is_zero();
    return uint32_t(rem);
}

void big_int::scale_up(uint32_t n) {
    bool neg = _negative;
    for (; n >= 9; n -= 9) {
        multiply_add(1000000000, 0);
    }
    static constexpr uint32_t pow10[] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000};
    multiply_add(pow10[n], 0);
    _negative = neg && !is_zero();
}

size_t big_int::digits() const {
    auto s = to_string();
    return s.size() - (_negative ? 1 : 0);
}

// IntegerType.compareIntegers without building numbers: skip redundant sign bytes, then a longer magnitude
// wins (for negatives, loses); equal lengths compare the first byte signed and the rest unsigned.
int compare_varint(bytes_view a, bytes_view b) {
    if (a.empty() || b.empty()) {
        return a.empty() && b.empty() ? 0 : a.empty() ? -1 : 1;
    }
    auto significant = [](bytes_view v) {
        size_t i = 0;
        while (i + 1 < v.size() && ((v[i] == 0x00 && !(v[i + 1] & 0x80)) || (v[i] == 0xFF && (v[i + 1] & 0x80)))) {
            ++i;
        }
        return v.subspan(i);
    };
    a = significant(a);
    b = significant(b);
    bool na = a[0] & 0x80, nb = b[0] & 0x80;
    if (na != nb) {
        return na ? -1 : 1;
    }
    if (a.size() != b.size()) {
        bool a_longer = a.size() > b.size();
        return (a_longer != na) ? 1 : -1;
    }
    int d = int(int8_t(a[0])) - int(int8_t(b[0]));
    if (d != 0) {
        return d < 0 ? -1 : 1;
    }
    return compare_unsigned(a.subspan(1), b.subspan(1));
}

big_decimal big_decimal::from_bytes(bytes_view v) {
    big_decimal d;
    if (v.empty()) {
        return d;
    }
    if (v.size() < 4) {
        throw std::invalid_argument("a decimal needs at least 4 bytes");
    }
    d.scale = read_be<int32_t>(v.data());
    d.unscaled = big_int::from_bytes(v.subspan(4));
    return d;
}

big_decimal big_decimal::from_string(std::string_view s) {
    std::string digits;
    size_t i = 0;
    bool neg = false;
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) {
        neg = s[i] == '-';
        ++i;
    }
    int64_t frac = 0;
    bool seen_point = false, any = false;
    for (; i < s.size() && s[i] != 'e' && s[i] != 'E'; ++i) {
        if (s[i] == '.' && !seen_point) {
            seen_point = true;
        } else if (s[i] >= '0' && s[i] <= '9') {
            digits += s[i];
            any = true;
            frac += seen_point;
        } else {
            throw std::invalid_argument(fmt::format("not a decimal: '{}'", s));
        }
    }
    if (!any) {
        throw std::invalid_argument(fmt::format("not a decimal: '{}'", s));
    }
    int64_t exp = 0;
    if (i < s.size()) {
        auto e = s.substr(i + 1);
        if (!e.empty() && e[0] == '+') {
            e.remove_prefix(1);
        }
        auto [p, ec] = std::from_chars(e.data(), e.data() + e.size(), exp);
        if (ec != std::errc() || p != e.data() + e.size() || e.empty()) {
            throw std::invalid_argument(fmt::format("not a decimal exponent: '{}'", s));
        }
    }
    int64_t scale = frac - exp;
    if (scale < INT32_MIN || scale > INT32_MAX) {
        throw std::invalid_argument("decimal scale out of range");
    }
    big_decimal d;
    d.scale = int32_t(scale);
    d.unscaled = big_int::from_string(digits);
    if (neg) {
        d.unscaled.negate();
    }
    return d;
}

bytes big_decimal::to_bytes() const {
    bytes out;
    write_be<int32_t>(out, scale);
    auto u = unscaled.to_bytes();
    out.insert(out.end(), u.begin(), u.end());
    return out;
}

std::string big_decimal::to_string() const {
    std::string coeff = unscaled.to_string();
    bool neg = unscaled.negative();
    if (neg) {
        coeff.erase(0, 1);
    }
    int64_t adjusted = -int64_t(scale) + int64_t(coeff.size()) - 1;
    std::string s;
    if (scale >= 0 && adjusted >= -6) {
        if (scale == 0) {
            s = coeff;
        } else if (int64_t(coeff.size()) > scale) {
            s = coeff.substr(0, coeff.size() - size_t(scale)) + "." + coeff.substr(coeff.size() - size_t(scale));
        } else {
            s = "0." + std::string(size_t(scale) - coeff.size(), '0') + coeff;
        }
    } else {
        s = coeff.substr(0, 1);
        if (coeff.size() > 1) {
            s += "." + coeff.substr(1);
        }
        if (adjusted != 0) {
            s += fmt::format("E{}{}", adjusted > 0 ? "+" : "", adjusted);
        }
    }
    return (neg ? "-" : "") + s;
}

std::string big_decimal::to_plain_string() const {
    // Java would write up to 2^31 zeros for an extreme scale; past a bound the exponent form is kept instead.
    if (scale > 10000 || scale < -10000) {
        return to_string();
    }
    std::string coeff = unscaled.to_string();
    bool neg = unscaled.negative();
    if (neg) {
        coeff.erase(0, 1);
    }
    std::string s;
    if (scale <= 0) {
        s = unscaled.is_zero() ? "0" : coeff + std::string(size_t(-int64_t(scale)), '0');
    } else if (int64_t(coeff.size()) > scale) {
        s = coeff.substr(0, coeff.size() - size_t(scale)) + "." + coeff.substr(coeff.size() - size_t(scale));
    } else {
        s = "0." + std::string(size_t(scale) - coeff.size(), '0') + coeff;
    }
    return (neg ? "-" : "") + s;
}

int big_decimal::compare(const big_decimal& o) const {
    int sa = unscaled.is_zero() ? 0 : unscaled.negative() ? -1 : 1;
    int sb = o.unscaled.is_zero() ? 0 : o.unscaled.negative() ? -1 : 1;
    if (sa != sb) {
        return sa < sb ? -1 : 1;
    }
    if (sa == 0) {
        return 0;
    }
    // Different decimal exponents decide without arithmetic; equal ones bound the scale difference by the
    // digit counts, so the alignment below stays small whatever the scales are.
    int64_t adj_a = int64_t(unscaled.digits()) - 1 - scale;
    int64_t adj_b = int64_t(o.unscaled.digits()) - 1 - o.scale;
    if (adj_a != adj_b) {
        return (adj_a < adj_b ? -1 : 1) * sa;
    }
    big_int x = unscaled, y = o.unscaled;
    int64_t diff = int64_t(scale) - int64_t(o.scale);
    if (diff > 0) {
        y.scale_up(uint32_t(diff));
    } else if (diff < 0) {
        x.scale_up(uint32_t(-diff));
    }
    return x.compare(y);
}

namespace {

// Howard Hinnant's civil-from-days and days-from-civil (proleptic Gregorian).
void civil_from_days(int64_t z, int64_t& y, unsigned& m, unsigned& d) {
    z += 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    unsigned doe = unsigned(z - era * 146097);
    unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    y = int64_t(yoe) + era * 400;
    unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    unsigned mp = (5 * doy + 2) / 153;
    d = doy - (153 * mp + 2) / 5 + 1;
    m = mp < 10 ? mp + 3 : mp - 9;
    y += m <= 2;
}

int64_t days_from_civil(int64_t y, unsigned m, unsigned d) {
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = unsigned(y - era * 400);
    unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + int64_t(doe) - 719468;
}

int64_t floor_div(int64_t a, int64_t b) {
    int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

std::string format_year(int64_t y) {
    return y < 0 ? fmt::format("-{:04}", -y) : fmt::format("{:04}", y);
}

// A small scanner for the date and time forms.
struct text_scanner {
    std::string_view s;
    size_t pos = 0;

    bool done() const { return pos >= s.size(); }
    bool eat(char c) {
        if (pos < s.size() && s[pos] == c) {
            ++pos;
            return true;
        }
        return false;
    }
    // Reads 1..max_digits digits; returns the count read.
    size_t number(int64_t& v, size_t max_digits = 18) {
        size_t start = pos;
        v = 0;
        while (pos < s.size() && pos - start < max_digits && s[pos] >= '0' && s[pos] <= '9') {
            v = v * 10 + (s[pos++] - '0');
        }
        return pos - start;
    }
    [[noreturn]] void fail(std::string_view what) const {
        throw std::invalid_argument(fmt::format("invalid {}: '{}'", what, s));
    }
};

bool all_digits(std::string_view s) {
    size_t i = (!s.empty() && s[0] == '-') ? 1 : 0;
    return i < s.size() && std::all_of(s.begin() + long(i), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

uint64_t read_unsigned_vint(bytes_view v, size_t& pos) {
    if (pos >= v.size()) {
        throw std::invalid_argument("truncated vint");
    }
    uint8_t first = v[pos++];
    int extra = std::countl_one(first);
    uint64_t value = extra >= 8 ? 0 : (first & (0xFF >> extra));
    if (pos + size_t(extra) > v.size()) {
        throw std::invalid_argument("truncated vint");
    }
    for (int i = 0; i < extra; ++i) {
        value = (value << 8) | v[pos++];
    }
    return value;
}

void write_unsigned_vint(bytes& out, uint64_t value) {
    int magnitude = std::countl_zero(value | 1);
    int size = (639 - magnitude * 9) >> 6;
    int extra = size - 1;
    uint8_t tmp[9];
    for (int i = size - 1; i >= 0; --i) {
        tmp[i] = uint8_t(value);
        value >>= 8;
    }
    if (extra > 0) {
        tmp[0] |= uint8_t(~(0xFF >> extra));
    }
    out.insert(out.end(), tmp, tmp + size);
}

int64_t read_signed_vint(bytes_view v, size_t& pos) {
    uint64_t n = read_unsigned_vint(v, pos);
    return int64_t((n >> 1) ^ (~(n & 1) + 1));
}

void write_signed_vint(bytes& out, int64_t v) {
    write_unsigned_vint(out, (uint64_t(v) << 1) ^ uint64_t(v >> 63));
}

} // namespace


std::string format_date(int64_t days) {
    int64_t y;
    unsigned m, d;
    civil_from_days(days, y, m, d);
    return fmt::format("{}-{:02}-{:02}", format_year(y), m, d);
}

int64_t parse_date(std::string_view s) {
    text_scanner sc{s};
    bool neg = sc.eat('-');
    int64_t y, m, d;
    if (!sc.number(y, 9) || !sc.eat('-') || sc.number(m, 2) == 0 || !sc.eat('-') || sc.number(d, 2) == 0 || !sc.done()) {
        sc.fail("date");
    }
    if (m < 1 || m > 12 || d < 1 || d > 31) {
        sc.fail("date");
    }
    return days_from_civil(neg ? -y : y, unsigned(m), unsigned(d));
}

std::string format_timestamp(int64_t millis) {
    int64_t days = floor_div(millis, 86400000);
    int64_t ms = millis - days * 86400000;
    return fmt::format("{} {:02}:{:02}:{:02}.{:03}", format_date(days), ms / 3600000, ms / 60000 % 60,
                       ms / 1000 % 60, ms % 1000);
}

std::string format_timestamp_iso(int64_t millis) {
    int64_t days = floor_div(millis, 86400000);
    int64_t ms = millis - days * 86400000;
    return fmt::format("{}T{:02}:{:02}:{:02}.{:03}Z", format_date(days), ms / 3600000, ms / 60000 % 60,
                       ms / 1000 % 60, ms % 1000);
}

int64_t parse_timestamp(std::string_view s) {
    if (all_digits(s)) {
        return std::stoll(std::string(s));
    }
    text_scanner sc{s};
    bool neg = sc.eat('-');
    int64_t y, mo, d, h = 0, mi = 0, sec = 0, ms = 0;
    if (!sc.number(y, 9) || !sc.eat('-') || !sc.number(mo, 2) || !sc.eat('-') || !sc.number(d, 2)) {
        sc.fail("timestamp");
    }
    if (sc.eat(' ') || sc.eat('T')) {
        if (!sc.number(h, 2) || !sc.eat(':') || !sc.number(mi, 2)) {
            sc.fail("timestamp");
        }
        if (sc.eat(':')) {
            if (!sc.number(sec, 2)) {
                sc.fail("timestamp");
            }
            if (sc.eat('.')) {
                size_t n = sc.number(ms, 3);
                if (!n) {
                    sc.fail("timestamp");
                }
                for (; n < 3; ++n) {
                    ms *= 10;
                }
            }
        }
    }
    int64_t offset_minutes = 0;
    if (sc.eat('Z')) {
    } else if (!sc.done() && (s[sc.pos] == '+' || s[sc.pos] == '-')) {
        int sign = s[sc.pos++] == '-' ? -1 : 1;
        int64_t oh, om = 0;
        if (sc.number(oh, 2) != 2) {
            sc.fail("timestamp zone");
        }
        sc.eat(':');
        sc.number(om, 2);
        offset_minutes = sign * (oh * 60 + om);
    }
    if (!sc.done() || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 59) {
        sc.fail("timestamp");
    }
    int64_t days = days_from_civil(neg ? -y : y, unsigned(mo), unsigned(d));
    return ((days * 86400 + h * 3600 + mi * 60 + sec) - offset_minutes * 60) * 1000 + ms;
}

std::string format_time(int64_t nanos) {
    int64_t s = nanos / 1000000000;
    return fmt::format("{:02}:{:02}:{:02}.{:09}", s / 3600, s / 60 % 60, s % 60, nanos % 1000000000);
}

int64_t parse_time(std::string_view s) {
    if (all_digits(s)) {
        return std::stoll(std::string(s));
    }
    text_scanner sc{s};
    int64_t h, m, sec = 0, frac = 0;
    if (!sc.number(h, 2) || !sc.eat(':') || !sc.number(m, 2)) {
        sc.fail("time");
    }
    if (sc.eat(':')) {
        if (!sc.number(sec, 2)) {
            sc.fail("time");
        }
        if (sc.eat('.')) {
            size_t n = sc.number(frac, 9);
            if (!n) {
                sc.fail("time");
            }
            for (; n < 9; ++n) {
                frac *= 10;
            }
        }
    }
    if (!sc.done() || h > 23 || m > 59 || sec > 59) {
        sc.fail("time");
    }
    return ((h * 60 + m) * 60 + sec) * 1000000000 + frac;
}

duration_value decode_duration(bytes_view v) {
    size_t pos = 0;
    duration_value d;
    d.months = int32_t(read_signed_vint(v, pos));
    d.days = int32_t(read_signed_vint(v, pos));
    d.nanoseconds = read_signed_vint(v, pos);
    if (pos != v.size()) {
        throw std::invalid_argument("extra bytes after a duration");
    }
    return d;
}

bytes encode_duration(const duration_value& d) {
    bytes out;
    write_signed_vint(out, d.months);
    write_signed_vint(out, d.days);
    write_signed_vint(out, d.nanoseconds);
    return out;
}

std::string format_duration(const duration_value& d) {
    std::string s;
    if (d.months < 0 || d.days < 0 || d.nanoseconds < 0) {
        s += '-';
    }
    auto append = [&](uint64_t dividend, uint64_t divisor, std::string_view unit) -> uint64_t {
        if (dividend == 0 || dividend < divisor) {
            return dividend;
        }
        s += fmt::format("{}{}", dividend / divisor, unit);
        return dividend % divisor;
    };
    uint64_t months = uint64_t(std::abs(int64_t(d.months)));
    append(append(months, 12, "y"), 1, "mo");
    append(uint64_t(std::abs(int64_t(d.days))), 1, "d");
    if (d.nanoseconds != 0) {
        uint64_t n = d.nanoseconds < 0 ? ~uint64_t(d.nanoseconds) + 1 : uint64_t(d.nanoseconds);
        n = append(n, 3600000000000ULL, "h");
        n = append(n, 60000000000ULL, "m");
        n = append(n, 1000000000ULL, "s");
        n = append(n, 1000000ULL, "ms");
        n = append(n, 1000ULL, "us");
        append(n, 1, "ns");
    }
    return s;
}

duration_value parse_duration(std::string_view s) {
    auto fail = [&] { throw std::invalid_argument(fmt::format("invalid duration: '{}'", s)); };
    bool neg = !s.empty() && s[0] == '-';
    std::string_view body = neg ? s.substr(1) : s;
    if (body.empty()) {
        fail();
    }
    int64_t months = 0, days = 0, nanos = 0;
    // acc += n * unit, refusing what 64 bits cannot hold (never a signed overflow).
    auto add = [&](int64_t& acc, int64_t n, int64_t unit) {
        int64_t scaled = 0;
        if (__builtin_mul_overflow(n, unit, &scaled) || __builtin_add_overflow(acc, scaled, &acc)) {
            fail();
        }
    };
    auto number = [&](std::string_view digits) {
        int64_t n = 0;
        auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
        if (ec != std::errc() || end != digits.data() + digits.size()) {
            fail();
        }
        return n;
    };
    auto lower = [](std::string_view x) {
        std::string r(x);
        for (auto& c : r) {
            c = char(std::tolower(static_cast<unsigned char>(c)));
        }
        return r;
    };
    if (body[0] == 'P' || body[0] == 'p') {
        // ISO 8601: PnYnMnDTnHnMnS or PnW.
        std::string b = lower(body.substr(1));
        bool in_time = false;
        size_t i = 0;
        if (b.empty()) {
            fail();
        }
        while (i < b.size()) {
            if (b[i] == 't') {
                in_time = true;
                ++i;
                continue;
            }
            size_t start = i;
            while (i < b.size() && std::isdigit(static_cast<unsigned char>(b[i]))) {
                ++i;
            }
            if (start == i || i == b.size()) {
                fail();
            }
            int64_t n = number(std::string_view(b).substr(start, i - start));
            char u = b[i++];
            if (!in_time && u == 'y') {
                add(months, n, 12);
            } else if (!in_time && u == 'm') {
                add(months, n, 1);
            } else if (!in_time && u == 'w') {
                add(days, n, 7);
            } else if (!in_time && u == 'd') {
                add(days, n, 1);
            } else if (in_time && u == 'h') {
                add(nanos, n, 3600000000000LL);
            } else if (in_time && u == 'm') {
                add(nanos, n, 60000000000LL);
            } else if (in_time && u == 's') {
                add(nanos, n, 1000000000LL);
            } else {
                fail();
            }
        }
    } else {
        std::string b = lower(body);
        size_t i = 0;
        while (i < b.size()) {
            size_t start = i;
            while (i < b.size() && std::isdigit(static_cast<unsigned char>(b[i]))) {
                ++i;
            }
            if (start == i) {
                fail();
            }
            int64_t n = number(std::string_view(b).substr(start, i - start));
            size_t ustart = i;
            while (i < b.size() && !std::isdigit(static_cast<unsigned char>(b[i]))) {
                ++i;
            }
            std::string u = b.substr(ustart, i - ustart);
            if (u == "y") {
                add(months, n, 12);
            } else if (u == "mo") {
                add(months, n, 1);
            } else if (u == "w") {
                add(days, n, 7);
            } else if (u == "d") {
                add(days, n, 1);
            } else if (u == "h") {
                add(nanos, n, 3600000000000LL);
            } else if (u == "m") {
                add(nanos, n, 60000000000LL);
            } else if (u == "s") {
                add(nanos, n, 1000000000LL);
            } else if (u == "ms") {
                add(nanos, n, 1000000LL);
            } else if (u == "us" || u == "\xc2\xb5s") {
                add(nanos, n, 1000LL);
            } else if (u == "ns") {
                add(nanos, n, 1);
            } else {
                fail();
            }
        }
    }
    if (months > INT32_MAX || days > INT32_MAX) {
        fail();
    }
    duration_value d{int32_t(months), int32_t(days), nanos};
    if (neg) {
        d.months = -d.months;
        d.days = -d.days;
        d.nanoseconds = -d.nanoseconds;
    }
    return d;
}

std::string format_inet(bytes_view v) {
    // Java turns an IPv4-mapped IPv6 address into an Inet4Address.
    static constexpr uint8_t mapped_prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    if (v.size() == 16 && std::equal(mapped_prefix, mapped_prefix + 12, v.begin())) {
        v = v.subspan(12);
    }
    if (v.size() == 4) {
        return fmt::format("{}.{}.{}.{}", v[0], v[1], v[2], v[3]);
    }
    if (v.size() != 16) {
        throw std::invalid_argument("an inet is 4 or 16 bytes");
    }
    std::string s;
    for (int i = 0; i < 8; ++i) {
        s += fmt::format("{}{:x}", i ? ":" : "", read_be<uint16_t>(v.data() + 2 * i));
    }
    return s;
}

bytes parse_inet(std::string_view s) {
    auto fail = [&] { throw std::invalid_argument(fmt::format("invalid inet address: '{}'", s)); };
    auto parse_v4 = [&](std::string_view x, bytes& out) {
        text_scanner sc{x};
        for (int i = 0; i < 4; ++i) {
            int64_t n;
            if ((i && !sc.eat('.')) || !sc.number(n, 3) || n > 255) {
                fail();
            }
            out.push_back(uint8_t(n));
        }
        if (!sc.done()) {
            fail();
        }
    };
    bytes out;
    if (s.find(':') == std::string_view::npos) {
        parse_v4(s, out);
        return out;
    }
    // IPv6, possibly with one "::" and a trailing dotted IPv4 part.
    std::vector<uint16_t> head, tail;
    bool gap = false;
    auto parse_groups = [&](std::string_view part, std::vector<uint16_t>& groups) {
        if (part.empty()) {
            return;
        }
        size_t start = 0;
        while (true) {
            size_t end = part.find(':', start);
            auto g = part.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
            if (g.find('.') != std::string_view::npos && end == std::string_view::npos) {
                bytes v4;
                parse_v4(g, v4);
                groups.push_back(uint16_t(v4[0] << 8 | v4[1]));
                groups.push_back(uint16_t(v4[2] << 8 | v4[3]));
                return;
            }
            unsigned value = 0;
            auto [p, ec] = std::from_chars(g.data(), g.data() + g.size(), value, 16);
            if (g.empty() || g.size() > 4 || ec != std::errc() || p != g.data() + g.size()) {
                fail();
            }
            groups.push_back(uint16_t(value));
            if (end == std::string_view::npos) {
                return;
            }
            start = end + 1;
        }
    };
    auto dc = s.find("::");
    if (dc != std::string_view::npos) {
        gap = true;
        parse_groups(s.substr(0, dc), head);
        parse_groups(s.substr(dc + 2), tail);
    } else {
        parse_groups(s, head);
    }
    size_t total = head.size() + tail.size();
    if ((gap && total > 7) || (!gap && total != 8)) {
        fail();
    }
    head.insert(head.end(), 8 - total, 0);
    head.insert(head.end(), tail.begin(), tail.end());
    for (auto g : head) {
        write_be<uint16_t>(out, g);
    }
    return out;
}

std::string format_uuid(bytes_view v) {
    if (v.size() != 16) {
        throw std::invalid_argument("a uuid is 16 bytes");
    }
    auto h = hex_encode(v);
    return h.substr(0, 8) + "-" + h.substr(8, 4) + "-" + h.substr(12, 4) + "-" + h.substr(16, 4) + "-" + h.substr(20);
}

bytes parse_uuid(std::string_view s) {
    if (s.size() != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-') {
        throw std::invalid_argument(fmt::format("invalid uuid: '{}'", s));
    }
    std::string h;
    for (char c : s) {
        if (c != '-') {
            h += c;
        }
    }
    return hex_decode(h);
}

std::string hex_encode(bytes_view v) {
    static constexpr char digits[] = "0123456789abcdef";
    std::string s;
    s.reserve(v.size() * 2);
    for (auto b : v) {
        s += digits[b >> 4];
        s += digits[b & 15];
    }
    return s;
}

bytes hex_decode(std::string_view s) {
    if (s.size() % 2) {
        throw std::invalid_argument("hex string of odd length");
    }
    auto nibble = [&](char c) -> uint8_t {
        if (c >= '0' && c <= '9') {
            return uint8_t(c - '0');
        }
        if (c >= 'a' && c <= 'f') {
            return uint8_t(c - 'a' + 10);
        }
        if (c >= 'A' && c <= 'F') {
            return uint8_t(c - 'A' + 10);
        }
        throw std::invalid_argument(fmt::format("not a hex digit: '{}'", c));
    };
    bytes out;
    out.reserve(s.size() / 2);
    for (size_t i = 0; i < s.size(); i += 2) {
        out.push_back(uint8_t(nibble(s[i]) << 4 | nibble(s[i + 1])));
    }
    return out;
}

std::string json_quote(std::string_view s) {
    std::string out;
    out.reserve(s.size() + 2);
    for (char ch : s) {
        auto c = static_cast<unsigned char>(ch);
        switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\b': out += "\\b"; break;
        case '\t': out += "\\t"; break;
        case '\n': out += "\\n"; break;
        case '\f': out += "\\f"; break;
        case '\r': out += "\\r"; break;
        default:
            if (c < 0x20) {
                out += fmt::format("\\u{:04X}", c);
            } else {
                out += ch;
            }
        }
    }
    return out;
}

} // namespace reef
