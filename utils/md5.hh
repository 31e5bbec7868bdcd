// md5: RFC 1321's message digest, for the ids Cassandra gives prepared statements and schema versions (not for
// security). Incremental: update() any number of times, then finish() once.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace reef::utils {

class md5 {
public:
    using digest = std::array<uint8_t, 16>;

    md5() noexcept;
    void update(std::span<const uint8_t> data) noexcept;
    void update(std::string_view s) noexcept {
        update(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(s.data()), s.size()));
    }
    // Pads, appends the bit length and returns the digest; the object must not be used afterwards.
    digest finish() noexcept;

    static digest of(std::string_view s) noexcept {
        md5 h;
        h.update(s);
        return h.finish();
    }

private:
    void transform(const uint8_t* block) noexcept;

    uint32_t _state[4];
    uint64_t _length = 0;
    uint8_t _buffer[64];
};

} // namespace reef::utils
