// Serialized values as schema/ sees them: an owning byte vector and a read-only view, plus big-endian reads
// and writes. Private to schema/ until utils/ has its codecs (then these become aliases of those).
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace reef {

using bytes = std::vector<uint8_t>;
using bytes_view = std::span<const uint8_t>;

inline bytes_view to_bytes_view(std::string_view s) {
    return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

inline bytes to_bytes(std::string_view s) {
    return bytes(s.begin(), s.end());
}

inline std::string_view to_string_view(bytes_view v) {
    return {reinterpret_cast<const char*>(v.data()), v.size()};
}

// Unsigned lexicographic order, the order of Cassandra's ByteBufferUtil.compareUnsigned.
inline int compare_unsigned(bytes_view a, bytes_view b) {
    size_t n = std::min(a.size(), b.size());
    int c = n ? std::memcmp(a.data(), b.data(), n) : 0;
    if (c != 0) {
        return c < 0 ? -1 : 1;
    }
    return a.size() < b.size() ? -1 : a.size() > b.size() ? 1 : 0;
}

template <typename T>
inline T read_be(const uint8_t* p) {
    using U = std::make_unsigned_t<T>;
    U v = 0;
    for (size_t i = 0; i < sizeof(T); ++i) {
        v = U(v << 8) | p[i];
    }
    return T(v);
}

template <typename T>
inline void write_be(bytes& out, T value) {
    using U = std::make_unsigned_t<T>;
    U v = U(value);
    for (size_t i = sizeof(T); i-- > 0;) {
        out.push_back(uint8_t(v >> (8 * i)));
    }
}

template <typename T>
inline bytes serialize_be(T value) {
    bytes out;
    out.reserve(sizeof(T));
    write_be(out, value);
    return out;
}

} // namespace reef
