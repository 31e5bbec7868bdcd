#include "utils/murmur3.hh"

#include <algorithm>
#include <limits>

namespace reef::utils {

namespace {

// Java's long arithmetic wraps; do it in uint64_t to keep C++ defined.
constexpr uint64_t c1 = 0x87c37b91114253d5ULL;
constexpr uint64_t c2 = 0x4cf5ad432745937fULL;

constexpr uint64_t rotl64(uint64_t v, int n) noexcept {
    return (v << n) | (v >> (64 - n));
}

constexpr uint64_t fmix(uint64_t k) noexcept {
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53ULL;
    k ^= k >> 33;
    return k;
}

uint64_t load_le64(const std::byte* p) noexcept {
    uint64_t v = 0;
    for (int i = 7; i >= 0; --i) {
        v = (v << 8) | static_cast<uint8_t>(p[i]);
    }
    return v;
}

// Cassandra casts each tail byte from a signed Java byte to long, so a byte
// >= 0x80 brings 1-bits above its position into the xor.
uint64_t sign_extended(std::byte b) noexcept {
    return static_cast<uint64_t>(static_cast<int64_t>(static_cast<int8_t>(b)));
}

} // namespace

std::array<int64_t, 2> cassandra_murmur3_x64_128(std::span<const std::byte> data, int64_t seed) noexcept {
    const std::byte* p = data.data();
    const size_t length = data.size();
    const size_t nblocks = length / 16;
    uint64_t h1 = static_cast<uint64_t>(seed);
    uint64_t h2 = static_cast<uint64_t>(seed);

    for (size_t i = 0; i < nblocks; ++i) {
        uint64_t k1 = load_le64(p + i * 16);
        uint64_t k2 = load_le64(p + i * 16 + 8);

        k1 *= c1; k1 = rotl64(k1, 31); k1 *= c2; h1 ^= k1;
        h1 = rotl64(h1, 27); h1 += h2; h1 = h1 * 5 + 0x52dce729;

        k2 *= c2; k2 = rotl64(k2, 33); k2 *= c1; h2 ^= k2;
        h2 = rotl64(h2, 31); h2 += h1; h2 = h2 * 5 + 0x38495ab5;
    }

    const std::byte* tail = p + nblocks * 16;
    const size_t rem = length & 15;
    uint64_t k1 = 0;
    uint64_t k2 = 0;
    if (rem > 8) {
        for (size_t i = rem; i-- > 8;) {
            k2 ^= sign_extended(tail[i]) << ((i - 8) * 8);
        }
        k2 *= c2; k2 = rotl64(k2, 33); k2 *= c1; h2 ^= k2;
    }
    if (rem > 0) {
        for (size_t i = std::min<size_t>(rem, 8); i-- > 0;) {
            k1 ^= sign_extended(tail[i]) << (i * 8);
        }
        k1 *= c1; k1 = rotl64(k1, 31); k1 *= c2; h1 ^= k1;
    }

    // Java xors in an int length widened to long; lengths here fit in 31 bits.
    h1 ^= static_cast<uint64_t>(length);
    h2 ^= static_cast<uint64_t>(length);
    h1 += h2;
    h2 += h1;
    h1 = fmix(h1);
    h2 = fmix(h2);
    h1 += h2;
    h2 += h1;
    return {static_cast<int64_t>(h1), static_cast<int64_t>(h2)};
}

int64_t murmur3_token_value(std::span<const std::byte> key) noexcept {
    if (key.empty()) {
        return std::numeric_limits<int64_t>::min();
    }
    int64_t h1 = cassandra_murmur3_x64_128(key, 0)[0];
    return h1 == std::numeric_limits<int64_t>::min() ? std::numeric_limits<int64_t>::max() : h1;
}

} // namespace reef::utils
