// Cassandra's variable-length integers (VIntCoding): unsigned, and signed through zigzag.
// Promises: encodings are byte-identical to Cassandra's; decoders never read past the span and report a short buffer instead of guessing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>

namespace reef::utils {

// The longest encoding: a 0xff marker byte then the 8 value bytes.
inline constexpr size_t max_vint_size = 9;

// Thrown by the throwing decoders when the buffer ends inside a vint, and by
// the encoders when the output span is too small.
class vint_error : public std::out_of_range {
public:
    using std::out_of_range::out_of_range;
};

template <typename T>
struct vint_decoded {
    T value;
    size_t length; // bytes consumed, 1..9
};

// Bytes the encoding of v takes, 1..9.
size_t unsigned_vint_size(uint64_t v) noexcept;
size_t signed_vint_size(int64_t v) noexcept;
inline size_t vint_size(uint64_t v) noexcept { return unsigned_vint_size(v); }

// Total length of a vint (1..9) known from its first byte alone, so a
// streaming parser can wait for exactly that many bytes.
size_t vint_length_from_first_byte(std::byte first) noexcept;

constexpr uint64_t zigzag_encode(int64_t v) noexcept {
    return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
}
constexpr int64_t zigzag_decode(uint64_t v) noexcept {
    return static_cast<int64_t>((v >> 1) ^ (~(v & 1) + 1));
}

// Writes the encoding at the start of out and returns its length; throws
// vint_error (writing nothing) when out is shorter than the encoding.
size_t encode_unsigned_vint(uint64_t v, std::span<std::byte> out);
size_t encode_signed_vint(int64_t v, std::span<std::byte> out);

// Appends the encoding to s.
void append_unsigned_vint(std::string& s, uint64_t v);
void append_signed_vint(std::string& s, int64_t v);

// Decode the vint at the start of in; nullopt when in ends before the vint
// does (including an empty in). Non-minimal encodings are accepted, as
// Cassandra accepts them.
std::optional<vint_decoded<uint64_t>> try_decode_unsigned_vint(std::span<const std::byte> in) noexcept;
std::optional<vint_decoded<int64_t>> try_decode_signed_vint(std::span<const std::byte> in) noexcept;

// As above, but throw vint_error naming offset when the buffer is too short;
// on success offset advances past the vint.
uint64_t read_unsigned_vint(std::span<const std::byte> in, size_t& offset);
int64_t read_signed_vint(std::span<const std::byte> in, size_t& offset);

inline std::optional<vint_decoded<uint64_t>> try_decode_unsigned_vint(std::span<const char> in) noexcept {
    return try_decode_unsigned_vint(std::as_bytes(in));
}
inline std::optional<vint_decoded<int64_t>> try_decode_signed_vint(std::span<const char> in) noexcept {
    return try_decode_signed_vint(std::as_bytes(in));
}
inline uint64_t read_unsigned_vint(std::span<const char> in, size_t& offset) {
    return read_unsigned_vint(std::as_bytes(in), offset);
}
inline int64_t read_signed_vint(std::span<const char> in, size_t& offset) {
    return read_signed_vint(std::as_bytes(in), offset);
}
inline std::optional<vint_decoded<uint64_t>> try_decode_unsigned_vint(std::span<const uint8_t> in) noexcept {
    return try_decode_unsigned_vint(std::as_bytes(in));
}
inline std::optional<vint_decoded<int64_t>> try_decode_signed_vint(std::span<const uint8_t> in) noexcept {
    return try_decode_signed_vint(std::as_bytes(in));
}
inline uint64_t read_unsigned_vint(std::span<const uint8_t> in, size_t& offset) {
    return read_unsigned_vint(std::as_bytes(in), offset);
}
inline int64_t read_signed_vint(std::span<const uint8_t> in, size_t& offset) {
    return read_signed_vint(std::as_bytes(in), offset);
}

} // namespace reef::utils
