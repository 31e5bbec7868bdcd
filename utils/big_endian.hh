// Big-endian (network order) integer codecs over byte spans, as SSTable components store them.
// Promises: checked variants never touch bytes outside the span and throw big_endian_error naming the offset; unchecked ones are plain loads/stores.
#pragma once

#include <bit>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <stdexcept>
#include <string>

namespace reef::utils {

// Thrown by the checked readers and writers; what() names the width, the offset and the span's size.
class big_endian_error : public std::out_of_range {
public:
    big_endian_error(const char* op, size_t width, size_t offset, size_t size)
        : std::out_of_range(std::string("big-endian ") + op + " of " + std::to_string(width) +
                            " bytes at offset " + std::to_string(offset) + " overruns a buffer of " +
                            std::to_string(size) + " bytes") {}
};

namespace detail {

template <std::integral T>
constexpr T byteswap(T v) noexcept {
    using U = std::make_unsigned_t<T>;
    U u = static_cast<U>(v);
    if constexpr (sizeof(T) == 1) {
        return v;
    } else if constexpr (sizeof(T) == 2) {
        return static_cast<T>(__builtin_bswap16(u));
    } else if constexpr (sizeof(T) == 4) {
        return static_cast<T>(__builtin_bswap32(u));
    } else {
        static_assert(sizeof(T) == 8);
        return static_cast<T>(__builtin_bswap64(u));
    }
}

template <std::integral T>
constexpr T to_from_be(T v) noexcept {
    if constexpr (std::endian::native == std::endian::big) {
        return v;
    } else {
        return byteswap(v);
    }
}

} // namespace detail

// Reads sizeof(T) bytes at p; the caller guarantees they exist.
template <std::integral T>
inline T read_be_unchecked(const std::byte* p) noexcept {
    T v;
    std::memcpy(&v, p, sizeof(T));
    return detail::to_from_be(v);
}

template <std::integral T>
inline T read_be_unchecked(const char* p) noexcept {
    return read_be_unchecked<T>(reinterpret_cast<const std::byte*>(p));
}

template <std::integral T>
inline T read_be_unchecked(const uint8_t* p) noexcept {
    return read_be_unchecked<T>(reinterpret_cast<const std::byte*>(p));
}

// Writes sizeof(T) bytes at p; the caller guarantees room for them.
template <std::integral T>
inline void write_be_unchecked(std::byte* p, T v) noexcept {
    v = detail::to_from_be(v);
    std::memcpy(p, &v, sizeof(T));
}

template <std::integral T>
inline void write_be_unchecked(char* p, T v) noexcept {
    write_be_unchecked<T>(reinterpret_cast<std::byte*>(p), v);
}

template <std::integral T>
inline void write_be_unchecked(uint8_t* p, T v) noexcept {
    write_be_unchecked<T>(reinterpret_cast<std::byte*>(p), v);
}

// Reads the T at buf[offset..offset+sizeof(T)), or throws big_endian_error.
template <std::integral T>
inline T read_be(std::span<const std::byte> buf, size_t offset) {
    // Written as a subtraction so that a huge offset cannot wrap around.
    if (offset > buf.size() || buf.size() - offset < sizeof(T)) {
        throw big_endian_error("read", sizeof(T), offset, buf.size());
    }
    return read_be_unchecked<T>(buf.data() + offset);
}

template <std::integral T>
inline T read_be(std::span<const char> buf, size_t offset) {
    return read_be<T>(std::as_bytes(buf), offset);
}

template <std::integral T>
inline T read_be(std::span<const uint8_t> buf, size_t offset) {
    return read_be<T>(std::as_bytes(buf), offset);
}

// Writes v at buf[offset..offset+sizeof(T)), or throws big_endian_error and writes nothing.
template <std::integral T>
inline void write_be(std::span<std::byte> buf, size_t offset, T v) {
    if (offset > buf.size() || buf.size() - offset < sizeof(T)) {
        throw big_endian_error("write", sizeof(T), offset, buf.size());
    }
    write_be_unchecked<T>(buf.data() + offset, v);
}

template <std::integral T>
inline void write_be(std::span<char> buf, size_t offset, T v) {
    write_be<T>(std::as_writable_bytes(buf), offset, v);
}

template <std::integral T>
inline void write_be(std::span<uint8_t> buf, size_t offset, T v) {
    write_be<T>(std::as_writable_bytes(buf), offset, v);
}

} // namespace reef::utils
