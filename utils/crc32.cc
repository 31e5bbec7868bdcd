#include "utils/crc32.hh"

#include <algorithm>
#include <climits>
#include <zlib.h>

namespace reef::utils {

uint32_t crc32_update(uint32_t crc, std::span<const std::byte> data) noexcept {
    auto p = reinterpret_cast<const Bytef*>(data.data());
    size_t left = data.size();
    // zlib's length parameter is a uInt; feed larger spans in pieces.
    while (left > 0) {
        size_t n = std::min<size_t>(left, UINT_MAX);
        crc = static_cast<uint32_t>(::crc32(crc, p, static_cast<uInt>(n)));
        p += n;
        left -= n;
    }
    return crc;
}

} // namespace reef::utils
