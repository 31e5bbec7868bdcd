// dht::token (a Murmur3Partitioner token, a signed 64-bit ring position) and dht::decorated_key (token + serialized partition key).
// Promises: tokens equal Cassandra's for the same key bytes; decorated keys order exactly as Cassandra orders partitions (token, then key bytes unsigned).
#pragma once

#include "mutation/partition_key.hh"

#include <compare>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <utility>

namespace reef::dht {

class token {
public:
    constexpr token() noexcept = default;
    constexpr explicit token(int64_t value) noexcept : _value(value) {}

    constexpr int64_t value() const noexcept { return _value; }

    // The ring's minimum sorts before every key's token (only the empty key
    // maps to it); the maximum is a token keys can own.
    static constexpr token minimum() noexcept { return token(std::numeric_limits<int64_t>::min()); }
    static constexpr token maximum() noexcept { return token(std::numeric_limits<int64_t>::max()); }

    constexpr auto operator<=>(const token&) const noexcept = default;

    // As Cassandra prints it (Long.toString).
    std::string to_string() const { return std::to_string(_value); }

private:
    int64_t _value = std::numeric_limits<int64_t>::min();
};

// The sharder: which shard owns a token. ScyllaDB's "biased-token-round-robin" algorithm, as its drivers compute
// it (shard-aware routing depends on agreeing bit for bit): the token moved to [0, 2^64) (+ 2^63), its top
// ignore_msb bits dropped (so the ring is cut into 2^ignore_msb spans each split among all shards, which spreads a
// vnode's range over every shard), then read as a fraction in [0, 1) times shard_count. ScyllaDB's default
// murmur3_partitioner_ignore_msb_bits is 12; shard_count must be > 0.
inline constexpr unsigned default_sharding_ignore_msb = 12;

constexpr unsigned shard_of(token t, unsigned shard_count, unsigned ignore_msb = default_sharding_ignore_msb) noexcept {
    uint64_t unbiased = uint64_t(t.value()) + (uint64_t(1) << 63);
    uint64_t fraction = ignore_msb >= 64 ? 0 : unbiased << ignore_msb;
    return unsigned((static_cast<unsigned __int128>(fraction) * shard_count) >> 64);
}

// Murmur3Partitioner.getToken of the serialized partition key.
token murmur3_token(std::span<const std::byte> partition_key_bytes) noexcept;
token murmur3_token(std::span<const char> partition_key_bytes) noexcept;
inline token murmur3_token(std::span<const uint8_t> partition_key_bytes) noexcept {
    return murmur3_token(std::as_bytes(partition_key_bytes));
}
inline token murmur3_token(std::string_view partition_key_bytes) noexcept {
    return murmur3_token(std::span<const char>(partition_key_bytes));
}
inline token murmur3_token(const std::string& partition_key_bytes) noexcept {
    return murmur3_token(std::span<const char>(partition_key_bytes));
}
inline token murmur3_token(const partition_key& key) noexcept {
    return murmur3_token(key.bytes());
}

// A partition key with its token: the unit of partition order.
class decorated_key {
public:
    // Computes the token from the key.
    explicit decorated_key(partition_key key);
    // For keys whose token is already known (read from an index); the caller
    // vouches that t is the key's token.
    decorated_key(token t, partition_key key) noexcept : _token(t), _key(std::move(key)) {}

    const token& get_token() const noexcept { return _token; }
    const partition_key& key() const noexcept { return _key; }

    std::strong_ordering operator<=>(const decorated_key& o) const noexcept;
    bool operator==(const decorated_key& o) const noexcept { return (*this <=> o) == 0; }

private:
    token _token;
    partition_key _key;
};

} // namespace reef::dht
