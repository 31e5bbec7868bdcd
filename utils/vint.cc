#include "utils/vint.hh"

#include <bit>

namespace reef::utils {

size_t unsigned_vint_size(uint64_t v) noexcept {
    // Each byte of the encoding carries 7 value bits except the 9-byte form,
    // whose 0xff marker frees all 64 bits of the following 8 bytes.
    int bits = 64 - std::countl_zero(v | 1);
    size_t n = (static_cast<size_t>(bits) + 6) / 7;
    return n > 8 ? max_vint_size : n;
}

size_t signed_vint_size(int64_t v) noexcept {
    return unsigned_vint_size(zigzag_encode(v));
}

size_t vint_length_from_first_byte(std::byte first) noexcept {
    // The count of leading 1-bits is the count of bytes that follow.
    return 1 + static_cast<size_t>(std::countl_one(static_cast<uint8_t>(first)));
}

size_t encode_unsigned_vint(uint64_t v, std::span<std::byte> out) {
    size_t n = unsigned_vint_size(v);
    if (out.size() < n) {
        throw vint_error("vint of " + std::to_string(n) + " bytes does not fit in " +
                         std::to_string(out.size()) + " bytes");
    }
    for (size_t i = n; i-- > 0;) {
        out[i] = static_cast<std::byte>(v & 0xff);
        v >>= 8;
    }
    size_t extra = n - 1;
    // The marker's 1-bits are OR-ed over the value's top bits, which are zero
    // because the size was chosen to leave them free.
    out[0] |= static_cast<std::byte>(~(0xffu >> extra) & 0xffu);
    return n;
}

size_t encode_signed_vint(int64_t v, std::span<std::byte> out) {
    return encode_unsigned_vint(zigzag_encode(v), out);
}

void append_unsigned_vint(std::string& s, uint64_t v) {
    std::byte buf[max_vint_size];
    size_t n = encode_unsigned_vint(v, buf);
    s.append(reinterpret_cast<const char*>(buf), n);
}

void append_signed_vint(std::string& s, int64_t v) {
    append_unsigned_vint(s, zigzag_encode(v));
}

std::optional<vint_decoded<uint64_t>> try_decode_unsigned_vint(std::span<const std::byte> in) noexcept {
    if (in.empty()) {
        return std::nullopt;
    }
    size_t n = vint_length_from_first_byte(in[0]);
    if (in.size() < n) {
        return std::nullopt;
    }
    size_t extra = n - 1;
    // For n == 9 the mask is 0: the marker byte holds no value bits.
    uint64_t v = static_cast<uint8_t>(in[0]) & (0xffu >> extra);
    for (size_t i = 1; i < n; ++i) {
        v = (v << 8) | static_cast<uint8_t>(in[i]);
    }
    return vint_decoded<uint64_t>{v, n};
}

std::optional<vint_decoded<int64_t>> try_decode_signed_vint(std::span<const std::byte> in) noexcept {
    auto u = try_decode_unsigned_vint(in);
    if (!u) {
        return std::nullopt;
    }
    return vint_decoded<int64_t>{zigzag_decode(u->value), u->length};
}

uint64_t read_unsigned_vint(std::span<const std::byte> in, size_t& offset) {
    if (offset > in.size()) {
        throw vint_error("vint read at offset " + std::to_string(offset) + " is past the end of a buffer of " +
                         std::to_string(in.size()) + " bytes");
    }
    auto d = try_decode_unsigned_vint(in.subspan(offset));
    if (!d) {
        size_t need = offset < in.size() ? vint_length_from_first_byte(in[offset]) : 1;
        throw vint_error("truncated vint at offset " + std::to_string(offset) + ": needs " + std::to_string(need) +
                         " bytes, buffer has " + std::to_string(in.size() - offset));
    }
    offset += d->length;
    return d->value;
}

int64_t read_signed_vint(std::span<const std::byte> in, size_t& offset) {
    return zigzag_decode(read_unsigned_vint(in, offset));
}

} // namespace reef::utils
