// MurmurHash3 x64 128-bit exactly as Cassandra's MurmurHash.hash3_x64_128, and the Murmur3Partitioner token derived from it.
// Promises: bit-identical results to Cassandra for every input, including its sign-extension of tail bytes (so not the reference MurmurHash3 for inputs whose tail has a byte >= 0x80).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace reef::utils {

// Returns {h1, h2} as Cassandra's long[2] result holds them.
std::array<int64_t, 2> cassandra_murmur3_x64_128(std::span<const std::byte> data, int64_t seed) noexcept;

inline std::array<int64_t, 2> cassandra_murmur3_x64_128(std::span<const char> data, int64_t seed) noexcept {
    return cassandra_murmur3_x64_128(std::as_bytes(data), seed);
}

inline std::array<int64_t, 2> cassandra_murmur3_x64_128(std::span<const uint8_t> data, int64_t seed) noexcept {
    return cassandra_murmur3_x64_128(std::as_bytes(data), seed);
}

// Murmur3Partitioner.getToken's value for a serialized partition key: h1 of
// the seed-0 hash, with INT64_MIN moved to INT64_MAX because INT64_MIN is the
// ring's minimum token that no key may own; an empty key gets INT64_MIN.
int64_t murmur3_token_value(std::span<const std::byte> key) noexcept;

inline int64_t murmur3_token_value(std::span<const char> key) noexcept {
    return murmur3_token_value(std::as_bytes(key));
}

inline int64_t murmur3_token_value(std::span<const uint8_t> key) noexcept {
    return murmur3_token_value(std::as_bytes(key));
}

} // namespace reef::utils
