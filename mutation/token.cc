#include "mutation/token.hh"

#include "utils/murmur3.hh"

namespace reef::dht {

token murmur3_token(std::span<const std::byte> partition_key_bytes) noexcept {
    return token(utils::murmur3_token_value(partition_key_bytes));
}

token murmur3_token(std::span<const char> partition_key_bytes) noexcept {
    return token(utils::murmur3_token_value(partition_key_bytes));
}

decorated_key::decorated_key(partition_key key) : _token(murmur3_token(key)), _key(std::move(key)) {}

std::strong_ordering decorated_key::operator<=>(const decorated_key& o) const noexcept {
    if (auto c = _token <=> o._token; c != 0) {
        return c;
    }
    return _key <=> o._key;
}

} // namespace reef::dht
