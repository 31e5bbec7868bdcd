// value_bytes: fixed-width CQL values to and from their serialized bytes (big-endian integers, IEEE floats), for
// the selectors and casts that compute values. The caller checks the width; these do not.
#pragma once

#include "schema/bytes.hh"
#include "utils/big_endian.hh"

#include <cstdint>
#include <cstring>

namespace reef::cql {

template <typename T>
inline bytes be_bytes(T v) {
    bytes b(sizeof(T));
    utils::write_be_unchecked<T>(reinterpret_cast<char*>(b.data()), v);
    return b;
}

template <typename T>
inline T from_be(bytes_view b) {
    return utils::read_be_unchecked<T>(reinterpret_cast<const char*>(b.data()));
}

inline bytes double_bytes(double d) {
    uint64_t u;
    std::memcpy(&u, &d, 8);
    return be_bytes<uint64_t>(u);
}

inline bytes float_bytes(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return be_bytes<uint32_t>(u);
}

inline double double_of(bytes_view b) {
    auto u = from_be<uint64_t>(b);
    double d;
    std::memcpy(&d, &u, 8);
    return d;
}

inline float float_of(bytes_view b) {
    auto u = from_be<uint32_t>(b);
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}

} // namespace reef::cql
