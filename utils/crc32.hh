// CRC-32 (IEEE 802.3, zlib's and java.util.zip.CRC32's), as in Cassandra's CRC.db, Digest.crc32 and compressed-chunk checksums.
// Promises: crc32(a + b) == crc32_update(crc32(a), b); the empty input's checksum is 0.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace reef::utils {

// Continues crc over data; start with crc 0.
uint32_t crc32_update(uint32_t crc, std::span<const std::byte> data) noexcept;

inline uint32_t crc32_update(uint32_t crc, std::span<const char> data) noexcept {
    return crc32_update(crc, std::as_bytes(data));
}

inline uint32_t crc32_update(uint32_t crc, std::span<const uint8_t> data) noexcept {
    return crc32_update(crc, std::as_bytes(data));
}

inline uint32_t crc32(std::span<const std::byte> data) noexcept { return crc32_update(0, data); }
inline uint32_t crc32(std::span<const char> data) noexcept { return crc32_update(0, data); }
inline uint32_t crc32(std::span<const uint8_t> data) noexcept { return crc32_update(0, data); }
// A string literal matches both this and the span overloads and so fails to
// compile, rather than silently checksumming its terminating NUL.
inline uint32_t crc32(std::string_view s) noexcept { return crc32_update(0, std::span<const char>(s)); }
inline uint32_t crc32(const std::string& s) noexcept { return crc32_update(0, std::span<const char>(s)); }

// An incremental checksum, the shape of java.util.zip.CRC32.
class crc32_hasher {
public:
    void update(std::span<const std::byte> data) noexcept { _crc = crc32_update(_crc, data); }
    void update(std::span<const char> data) noexcept { _crc = crc32_update(_crc, data); }
    void update(std::span<const uint8_t> data) noexcept { _crc = crc32_update(_crc, data); }
    uint32_t value() const noexcept { return _crc; }
    void reset() noexcept { _crc = 0; }

private:
    uint32_t _crc = 0;
};

} // namespace reef::utils
