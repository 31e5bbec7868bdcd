// FloatingDecimal's binary-to-decimal conversion as JDK 17 does it, written from the algorithm's description
// (Steele & White's digit generation with a symmetric stopping test, and FloatingDecimal's shortcuts). Where JDK 17
// prints more digits than needed (JDK-4511638), the cause is one of the choices below, kept on purpose:
// - integers below 2^63 print all their digits, rounded only past 2^(significand bits) ("insignificant" digits);
// - the stopping test treats the gap below a power of two as the gap above it, only halved once;
// - the int and long fast paths stop on `b + m > 10s`, the big-integer path on `b + m >= 10s`;
// - E-form values always develop a second digit before the stopping test may end them;
// - a carry out of the last digit (9.99 -> 10.0) keeps the digit count, leaving trailing zeros.
#include "utils/java_double_format.hh"

#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <type_traits>

namespace reef::utils {

namespace {

// A double's significand bits below the hidden bit; fract_bits below carry the hidden bit at this position, also
// for floats (their 23 bits are shifted up).
constexpr int exp_shift = 52;
constexpr int max_small_bin_exp = 62;
constexpr int min_small_bin_exp = -(63 / 3);

constexpr std::array<int64_t, 27> long_5_pow = [] {
    std::array<int64_t, 27> p{};
    p[0] = 1;
    for (size_t i = 1; i < p.size(); ++i) {
        p[i] = p[i - 1] * 5;
    }
    return p;
}();

// Bits of 5^i (ceil(log2(5^i)) for i > 0): FloatingDecimal's size estimates.
constexpr std::array<int, 27> n_5_bits = [] {
    std::array<int, 27> n{};
    for (size_t i = 0; i < n.size(); ++i) {
        n[i] = int(std::bit_width(uint64_t(long_5_pow[i])));
    }
    n[0] = 0;
    return n;
}();

// floor(log10(2^p2)) for 1 < p2 < 64, else 0: how many low decimal digits of an integer above 2^53 (2^24 for a
// float) are noise. (JDK's table says 19 for p2 = 63, which no double or float reaches: p2 stays below 38.)
int insignificant_digits_for_pow2(int p2) {
    if (p2 <= 1 || p2 >= 64) {
        return 0;
    }
    uint64_t v = uint64_t(1) << p2;
    int i = 0;
    for (; v >= 10; v /= 10) {
        ++i;
    }
    return i;
}

// floor(log10(d)) estimated from the bits, as FloatingDecimal does: never too low, sometimes one too high.
int estimate_dec_exp(uint64_t fract_bits, int bin_exp) {
    double d2 = std::bit_cast<double>((uint64_t(1023) << exp_shift) | (fract_bits & ((uint64_t(1) << exp_shift) - 1)));
    // Rounded at each step like Java: a fused multiply-add here would change the estimate at its edges.
    volatile double a = (d2 - 1.5) * 0.289529654;
    volatile double b = a + 0.176091259;
    volatile double c = double(bin_exp) * 0.301029995663981;
    double d = b + c;
    return int(std::floor(d));
}

// Java's int and long arithmetic wraps. The fast paths below let a scaled half-ulp overflow and rely on the
// wrapped value, so they are computed in T with wrapping operations.
template <typename T>
struct wrapping {
    using U = std::make_unsigned_t<T>;
    static constexpr int bits = sizeof(T) * 8;
    static T mul(T a, T b) { return T(U(a) * U(b)); }
    static T add(T a, T b) { return T(U(a) + U(b)); }
    static T sub(T a, T b) { return T(U(a) - U(b)); }
    static T shl(T a, int s) { return T(U(a) << (s & (bits - 1))); }
};

// A natural number for the big-integer path: 32-bit limbs, least significant first.
class big_nat {
    static constexpr size_t capacity = 80;
    std::array<uint32_t, capacity> _w{};
    size_t _n = 0;

    void trim() {
        while (_n > 0 && _w[_n - 1] == 0) {
            --_n;
        }
    }
    void push(uint32_t v) {
        if (_n == capacity) {
            throw std::logic_error("java_double_format: big number overflow");
        }
        _w[_n++] = v;
    }

public:
    // m * 5^p5 * 2^p2
    static big_nat pow52(uint64_t m, int p5, int p2) {
        big_nat r;
        r.push(uint32_t(m));
        r.push(uint32_t(m >> 32));
        r.trim();
        for (; p5 >= 13; p5 -= 13) {
            r.mul_small(1220703125u);  // 5^13
        }
        if (p5 > 0) {
            r.mul_small(uint32_t(long_5_pow[size_t(p5)]));
        }
        r.shift_left(p2);
        return r;
    }
    void mul_small(uint32_t m) {
        uint64_t carry = 0;
        for (size_t i = 0; i < _n; ++i) {
            uint64_t v = uint64_t(_w[i]) * m + carry;
            _w[i] = uint32_t(v);
            carry = v >> 32;
        }
        if (carry) {
            push(uint32_t(carry));
        }
    }
    void shift_left(int bits) {
        if (_n == 0 || bits == 0) {
            return;
        }
        size_t words = size_t(bits) / 32;
        int rest = bits % 32;
        if (_n + words + 1 > capacity) {
            throw std::logic_error("java_double_format: big number overflow");
        }
        _w[_n + words] = 0;
        for (size_t i = _n; i-- > 0;) {
            uint64_t v = uint64_t(_w[i]) << rest;
            _w[i + words + 1] |= uint32_t(v >> 32);
            _w[i + words] = uint32_t(v);
        }
        for (size_t i = 0; i < words; ++i) {
            _w[i] = 0;
        }
        _n += words + 1;
        trim();
    }
    bool is_zero() const { return _n == 0; }
    int compare(const big_nat& o) const {
        if (_n != o._n) {
            return _n < o._n ? -1 : 1;
        }
        for (size_t i = _n; i-- > 0;) {
            if (_w[i] != o._w[i]) {
                return _w[i] < o._w[i] ? -1 : 1;
            }
        }
        return 0;
    }
    void add(const big_nat& o) {
        uint64_t carry = 0;
        size_t n = std::max(_n, o._n);
        for (size_t i = _n; i < n; ++i) {
            _w[i] = 0;
        }
        for (size_t i = 0; i < n; ++i) {
            uint64_t v = uint64_t(_w[i]) + (i < o._n ? o._w[i] : 0) + carry;
            _w[i] = uint32_t(v);
            carry = v >> 32;
        }
        _n = n;
        if (carry) {
            push(uint32_t(carry));
        }
    }
    // this -= o, with o <= this.
    void subtract(const big_nat& o) {
        int64_t borrow = 0;
        for (size_t i = 0; i < _n; ++i) {
            int64_t v = int64_t(_w[i]) - (i < o._n ? int64_t(o._w[i]) : 0) - borrow;
            borrow = v < 0;
            _w[i] = uint32_t(v + (borrow << 32));
        }
        trim();
    }
    // q = this / s (< 10 by the caller's scaling), this = 10 * (this % s).
    int quotient_digit(const big_nat& s) {
        int q = 0;
        while (compare(s) >= 0) {
            subtract(s);
            ++q;
        }
        mul_small(10);
        return q;
    }
};

// The digits FloatingDecimal develops: value = 0.d1d2...dn * 10^dec_exponent.
struct decimal_digits {
    std::array<char, 32> digits{};
    int n = 0;
    int dec_exponent = 0;

    // Adds one to the last digit; a carry out of the first digit makes it "1" and keeps n (trailing zeros stay).
    void round_up() {
        int i = n - 1;
        char q = digits[size_t(i)];
        if (q == '9') {
            while (q == '9' && i > 0) {
                digits[size_t(i)] = '0';
                q = digits[size_t(--i)];
            }
            if (q == '9') {
                dec_exponent += 1;
                digits[0] = '1';
                return;
            }
        }
        digits[size_t(i)] = char(q + 1);
    }
};

// An integer value held in a long: its digits, rounding away `insignificant` low digits (half up), trailing zeros
// dropped.
decimal_digits long_digits(uint64_t value, int insignificant) {
    decimal_digits r;
    int dec_exponent = 0;
    if (insignificant != 0) {
        uint64_t pow10 = uint64_t(long_5_pow[size_t(insignificant)]) << insignificant;
        uint64_t residue = value % pow10;
        value /= pow10;
        dec_exponent += insignificant;
        if (residue >= (pow10 >> 1)) {
            ++value;
        }
    }
    char buf[24] = {};
    int len = 0;
    for (uint64_t v = value; v != 0; v /= 10) {
        buf[len++] = char('0' + v % 10);
    }
    int first = 0;
    while (buf[first] == '0') {  // value > 0, so a non-zero digit comes
        ++first;
    }
    for (int i = len - 1; i >= first; --i) {
        r.digits[size_t(r.n++)] = buf[i];
    }
    r.dec_exponent = dec_exponent + len;
    return r;
}

// The int (T = int32_t) and long (T = int64_t) fast paths of the digit loop: b / s is the value scaled into
// [1, 10) (or [0.1, 1) when the exponent estimate was one too high), m half an ulp scaled alike.
template <typename T>
void develop_digits(decimal_digits& r, int& dec_exp, T b, T s, T m, bool& low, bool& high, T& low_digit_difference) {
    using w = wrapping<T>;
    T tens = w::mul(s, 10);
    int q = int(b / s);
    b = w::mul(10, b % s);
    m = w::mul(m, 10);
    low = b < m;
    high = w::add(b, m) > tens;
    if (q == 0 && !high) {
        --dec_exp;  // the estimate was one too high: drop the leading zero
    } else {
        r.digits[size_t(r.n++)] = char('0' + q);
    }
    if (dec_exp < -3 || dec_exp >= 8) {
        high = low = false;  // E-form: a digit after the point is always developed
    }
    while (!low && !high) {
        q = int(b / s);
        b = w::mul(10, b % s);
        m = w::mul(m, 10);
        if (m > 0) {
            low = b < m;
            high = w::add(b, m) > tens;
        } else {
            low = high = true;  // m overflowed
        }
        r.digits[size_t(r.n++)] = char('0' + q);
    }
    low_digit_difference = w::sub(w::shl(b, 1), tens);
}

// FloatingDecimal.dtoa for a positive finite value: fract_bits has the hidden bit at bit 52, bin_exp is unbiased,
// n_significant_bits counts the significand's bits (53 or 24, fewer for subnormals).
decimal_digits dtoa(int bin_exp, uint64_t fract_bits, int n_significant_bits) {
    const int tail_zeros = std::countr_zero(fract_bits);
    const int n_fract_bits = exp_shift + 1 - tail_zeros;
    const int n_tiny_bits = std::max(0, n_fract_bits - bin_exp - 1);
    if (bin_exp <= max_small_bin_exp && bin_exp >= min_small_bin_exp && n_tiny_bits == 0) {
        // An integer that fits a long: its digits, less the ones below the significand's precision.
        int insignificant = bin_exp > n_significant_bits
            ? insignificant_digits_for_pow2(bin_exp - n_significant_bits - 1) : 0;
        uint64_t value = bin_exp >= exp_shift ? fract_bits << (bin_exp - exp_shift) : fract_bits >> (exp_shift - bin_exp);
        return long_digits(value, insignificant);
    }

    // value = (B / S) * 10^dec_exp with 1 <= B / S < 10, M half an ulp scaled like B; each kept as powers of 2
    // and 5.
    int dec_exp = estimate_dec_exp(fract_bits, bin_exp);
    int b5 = std::max(0, -dec_exp);
    int b2 = b5 + n_tiny_bits + bin_exp;
    int s5 = std::max(0, dec_exp);
    int s2 = s5 + n_tiny_bits;
    int m5 = b5;
    int m2 = b2 - n_significant_bits;
    fract_bits >>= tail_zeros;
    b2 -= n_fract_bits - 1;
    int common2 = std::min(b2, s2);
    b2 -= common2;
    s2 -= common2;
    m2 -= common2;
    if (n_fract_bits == 1) {
        m2 -= 1;  // a power of two: the gap below is half the gap above
    }
    if (m2 < 0) {
        b2 -= m2;
        s2 -= m2;
        m2 = 0;
    }

    decimal_digits r;
    bool low = false;
    bool high = false;
    int64_t low_digit_difference = 0;
    int b_bits = n_fract_bits + b2 + (size_t(b5) < n_5_bits.size() ? n_5_bits[size_t(b5)] : b5 * 3);
    int ten_s_bits = s2 + 1 + (size_t(s5 + 1) < n_5_bits.size() ? n_5_bits[size_t(s5 + 1)] : (s5 + 1) * 3);
    if (b_bits < 64 && ten_s_bits < 64) {
        if (b_bits < 32 && ten_s_bits < 32) {
            using w = wrapping<int32_t>;
            int32_t b = w::shl(w::mul(int32_t(fract_bits), int32_t(long_5_pow[size_t(b5)])), b2);
            int32_t s = w::shl(int32_t(long_5_pow[size_t(s5)]), s2);
            int32_t m = w::shl(int32_t(long_5_pow[size_t(m5)]), m2);
            int32_t diff = 0;
            develop_digits<int32_t>(r, dec_exp, b, s, m, low, high, diff);
            low_digit_difference = diff;
        } else {
            using w = wrapping<int64_t>;
            int64_t b = w::shl(w::mul(int64_t(fract_bits), long_5_pow[size_t(b5)]), b2);
            int64_t s = w::shl(long_5_pow[size_t(s5)], s2);
            int64_t m = w::shl(long_5_pow[size_t(m5)], m2);
            develop_digits<int64_t>(r, dec_exp, b, s, m, low, high, low_digit_difference);
        }
    } else {
        big_nat s = big_nat::pow52(1, s5, s2);
        big_nat b = big_nat::pow52(fract_bits, b5, b2);
        big_nat m = big_nat::pow52(10, m5, m2);  // ten half-ulps: compared with b after its first step
        big_nat ten_s = big_nat::pow52(10, s5, s2);
        auto stop_high = [&] {
            big_nat sum = b;
            sum.add(m);
            return ten_s.compare(sum) <= 0;
        };
        int q = b.quotient_digit(s);
        low = b.compare(m) < 0;
        high = stop_high();
        if (q == 0 && !high) {
            --dec_exp;
        } else {
            r.digits[size_t(r.n++)] = char('0' + q);
        }
        if (dec_exp < -3 || dec_exp >= 8) {
            high = low = false;
        }
        while (!low && !high) {
            q = b.quotient_digit(s);
            m.mul_small(10);
            low = b.compare(m) < 0;
            high = stop_high();
            r.digits[size_t(r.n++)] = char('0' + q);
        }
        if (high && low) {
            big_nat twice = b;
            twice.shift_left(1);
            low_digit_difference = twice.compare(ten_s);
        }
    }
    r.dec_exponent = dec_exp + 1;
    // The last digit is rounded by the stopping condition: up when only the upper bound was reached, and when both
    // were, by which half the remainder lies in (a tie goes to an even digit).
    if (high) {
        if (low) {
            if (low_digit_difference == 0) {
                if ((r.digits[size_t(r.n - 1)] & 1) != 0) {
                    r.round_up();
                }
            } else if (low_digit_difference > 0) {
                r.round_up();
            }
        } else {
            r.round_up();
        }
    }
    return r;
}

// FloatingDecimal's getChars.
std::string format(bool negative, const decimal_digits& r) {
    std::string out;
    out.reserve(32);
    if (negative) {
        out += '-';
    }
    const char* digits = r.digits.data();
    int e = r.dec_exponent;
    if (e > 0 && e < 8) {
        int int_digits = std::min(r.n, e);
        out.append(digits, size_t(int_digits));
        if (int_digits < e) {
            out.append(size_t(e - int_digits), '0');
            out += ".0";
        } else {
            out += '.';
            if (int_digits < r.n) {
                out.append(digits + int_digits, size_t(r.n - int_digits));
            } else {
                out += '0';
            }
        }
    } else if (e <= 0 && e > -3) {
        out += "0.";
        out.append(size_t(-e), '0');
        out.append(digits, size_t(r.n));
    } else {
        out += digits[0];
        out += '.';
        if (r.n > 1) {
            out.append(digits + 1, size_t(r.n - 1));
        } else {
            out += '0';
        }
        out += 'E';
        if (e <= 0) {
            out += '-';
            out += std::to_string(-e + 1);
        } else {
            out += std::to_string(e - 1);
        }
    }
    return out;
}

// Double.toString and Float.toString share FloatingDecimal: the value's fields are taken apart here (a subnormal's
// significand normalized so that its leading one is where a normal value's implicit one would be), and the
// significand goes to dtoa aligned as a double's.
template <typename UInt, int fraction_bits, int exponent_bias>
std::string java_to_string(UInt bits) {
    constexpr int width = int(sizeof(UInt)) * 8;
    constexpr int exponent_bits = width - 1 - fraction_bits;
    constexpr int exponent_mask = (1 << exponent_bits) - 1;
    bool negative = (bits >> (width - 1)) != 0;
    UInt fract_bits = bits & ((UInt(1) << fraction_bits) - 1);
    int bin_exp = int((bits >> fraction_bits) & UInt(exponent_mask));
    if (bin_exp == exponent_mask) {
        return fract_bits != 0 ? "NaN" : negative ? "-Infinity" : "Infinity";
    }
    int n_significant_bits;
    if (bin_exp == 0) {
        if (fract_bits == 0) {
            return negative ? "-0.0" : "0.0";
        }
        int leading_zeros = std::countl_zero(fract_bits);
        int shift = leading_zeros - exponent_bits;
        fract_bits <<= shift;
        bin_exp = 1 - shift;
        n_significant_bits = width - leading_zeros;
    } else {
        fract_bits |= UInt(1) << fraction_bits;
        n_significant_bits = fraction_bits + 1;
    }
    return format(negative, dtoa(bin_exp - exponent_bias, uint64_t(fract_bits) << (exp_shift - fraction_bits),
                                 n_significant_bits));
}

} // namespace

std::string java_double_to_string(double d) {
    return java_to_string<uint64_t, exp_shift, 1023>(std::bit_cast<uint64_t>(d));
}

std::string java_float_to_string(float f) {
    return java_to_string<uint32_t, 23, 127>(std::bit_cast<uint32_t>(f));
}

} // namespace reef::utils
