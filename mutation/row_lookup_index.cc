// The normalized key prefix of the row lookup index. See row_lookup_index.hh.
#include "mutation/row_lookup_index.hh"

#include <algorithm>

namespace reef {

namespace {

uint64_t load_be(const uint8_t* p, size_t n) noexcept {
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i) {
        v = (v << 8) | p[i];
    }
    return v;
}

// The low r bytes set (1 <= r <= 8).
uint64_t low_bytes(unsigned r) noexcept {
    return r >= 8 ? ~uint64_t(0) : (uint64_t(1) << (8 * r)) - 1;
}

// TimeUUIDType.reorderTimestampBytes: time_hi (with the version), time_mid, time_low; compared signed.
uint64_t reordered_time(uint64_t msb) noexcept {
    uint64_t t = (msb << 48) | ((msb << 16) & 0xFFFF00000000ULL) | (msb >> 32);
    return t ^ (uint64_t(1) << 63);
}

// IEEE bits in an unsigned order that is Java's Float.compare / Double.compare: NaNs as the canonical NaN
// (above +Infinity), -0.0 below 0.0.
template <typename U>
U java_float_order(U bits) noexcept {
    constexpr unsigned w = sizeof(U) * 8;
    constexpr U sign = U(1) << (w - 1);
    constexpr U exp_all = w == 32 ? U(0x7f800000) : U(0x7ff0000000000000ULL);
    constexpr U canonical_nan = w == 32 ? U(0x7fc00000) : U(0x7ff8000000000000ULL);
    if ((bits & ~sign) > exp_all) {
        bits = canonical_nan;
    }
    return (bits & sign) ? U(~bits) : U(bits | sign);
}

} // namespace

clustering_prefix_encoder::clustering_prefix_encoder(const std::vector<data_type>& types) {
    for (auto& t : types) {
        if (_n == _columns.size()) {
            break;
        }
        bool reversed = t->is_reversed();
        const abstract_type* base = reversed ? t->underlying_type().get() : t.get();
        column c;
        c.reversed = reversed;
        bool exact = true;  // a value of the column's width decides its order alone: the next column may follow
        switch (base->kind()) {
        case type_kind::bigint:
        case type_kind::counter:
        case type_kind::timestamp: c.k = kind::signed_integer, c.width = 8; break;
        case type_kind::int32: c.k = kind::signed_integer, c.width = 4; break;
        case type_kind::smallint: c.k = kind::signed_integer, c.width = 2; break;
        case type_kind::tinyint: c.k = kind::signed_integer, c.width = 1; break;
        case type_kind::date: c.k = kind::fixed_bytes, c.width = 4; break;
        case type_kind::time: c.k = kind::fixed_bytes, c.width = 8; break;
        case type_kind::boolean: c.k = kind::boolean, c.width = 1; break;
        case type_kind::float_: c.k = kind::float32, c.width = 4; break;
        case type_kind::double_: c.k = kind::float64, c.width = 8; break;
        case type_kind::timeuuid: c.k = kind::timeuuid, c.width = 16, exact = false; break;
        case type_kind::uuid: c.k = kind::uuid, c.width = 16, exact = false; break;
        case type_kind::ascii:
        case type_kind::text:
        case type_kind::blob:
        case type_kind::inet:
        case type_kind::duration:
        case type_kind::empty: c.k = kind::byte_order, c.width = 0, exact = false; break;
        default:
            // No cheap form (varint, decimal, collections, tuples, reversed(reversed(...))): keys are
            // encoded up to this column only, as if they ended there.
            return;
        }
        _columns[_n++] = c;
        if (!exact) {
            return;
        }
    }
}

std::optional<uint64_t> clustering_prefix_encoder::encode(const clustering_key_prefix& k) const noexcept {
    uint64_t out = 0;
    unsigned room = 8;  // bytes of `out` not written yet (its low ones)
    size_t n = std::min<size_t>(k.size(), _n);
    for (size_t i = 0; i < n && room > 0; ++i) {
        const column& c = _columns[i];
        bytes_view v = k.component_unchecked(i);
        if (v.empty()) {
            // Before every other value of the column, after them descending: the rest is the extreme.
            return c.reversed ? out | low_bytes(room) : out;
        }
        uint64_t form = 0;  // the value's encoded form's first bytes, left-aligned
        switch (c.k) {
        case kind::signed_integer:
            if (v.size() != c.width) {
                return std::nullopt;
            }
            form = (load_be(v.data(), c.width) ^ (uint64_t(1) << (8 * c.width - 1))) << (64 - 8 * c.width);
            break;
        case kind::fixed_bytes:
            if (v.size() != c.width) {
                return std::nullopt;
            }
            form = load_be(v.data(), c.width) << (64 - 8 * c.width);
            break;
        case kind::boolean:
            form = uint64_t(v[0] != 0) << 56;
            break;
        case kind::float32:
            if (v.size() != 4) {
                return std::nullopt;
            }
            form = uint64_t(java_float_order(uint32_t(load_be(v.data(), 4)))) << 32;
            break;
        case kind::float64:
            if (v.size() != 8) {
                return std::nullopt;
            }
            form = java_float_order(load_be(v.data(), 8));
            break;
        case kind::timeuuid:
            // The comparator validates timeuuids (and throws): such keys are left to it.
            if (v.size() != 16 || (v[6] >> 4) != 1) {
                return std::nullopt;
            }
            form = reordered_time(load_be(v.data(), 8));
            break;
        case kind::uuid: {
            if (v.size() != 16) {
                return std::nullopt;
            }
            // UUIDType: the version first, then the time (version 1) or the bits.
            uint64_t msb = load_be(v.data(), 8);
            uint64_t version = (msb >> 12) & 0xf;
            form = (version << 60) | ((version == 1 ? reordered_time(msb) : msb) >> 4);
            break;
        }
        case kind::byte_order: {
            size_t len = std::min<size_t>(v.size(), 8);
            form = load_be(v.data(), len) << (64 - 8 * len);  // len >= 1
            break;
        }
        }
        unsigned w = c.width;
        if (c.k != kind::byte_order && w <= 8 && w <= room) {
            // The whole form fits, and decides the column: the next column follows.
            uint64_t f = form >> (64 - 8 * w);
            if (c.reversed) {
                f = ~f & low_bytes(w);
            }
            room -= w;
            out |= room ? f << (8 * room) : f;
            continue;
        }
        // The last column written: its first bytes; zeros past a short value fill the rest (inverted
        // descending, which puts a shorter value after its extensions).
        uint64_t seg = room == 8 ? form : form >> (8 * (8 - room));
        if (c.reversed) {
            seg = ~seg & low_bytes(room);
        }
        return out | seg;
    }
    return out;
}

} // namespace reef
