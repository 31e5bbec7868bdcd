// Cassandra's bloom filter. See bloom_filter.hh and FORMAT.md.
#include "sstables/bloom_filter.hh"

#include "sstables/byte_reader.hh"
#include "utils/murmur3.hh"

#include <algorithm>

namespace reef::sstables {

namespace {

// Cassandra caps the hash count far lower (BloomCalculations); anything above this is corruption.
constexpr int32_t max_hash_count = 64;

template <typename Fn>
void for_each_index(const bloom_filter::hash_type& h, uint32_t hash_count, uint64_t bit_count, Fn&& fn) {
    // Java long arithmetic: base wraps on overflow, % keeps the dividend's sign, then abs.
    uint64_t base = uint64_t(h[1]);
    uint64_t inc = uint64_t(h[0]);
    int64_t max = int64_t(bit_count);
    for (uint32_t i = 0; i < hash_count; ++i) {
        int64_t r = int64_t(base) % max;
        if (!fn(uint64_t(r < 0 ? -r : r))) {
            return;
        }
        base += inc;
    }
}

// Swaps each 8-byte group between the big-endian word order and the byte order.
void reverse_words(std::string& bits) {
    for (size_t i = 0; i + 8 <= bits.size(); i += 8) {
        std::reverse(bits.begin() + i, bits.begin() + i + 8);
    }
}

} // namespace

bloom_filter::hash_type bloom_filter::hash_of(std::span<const std::byte> key) noexcept {
    return utils::cassandra_murmur3_x64_128(key, 0);
}

bool bloom_filter::is_present(const hash_type& h) const noexcept {
    if (_bits.empty()) {
        return true;
    }
    bool present = true;
    for_each_index(h, _hash_count, bit_count(), [&](uint64_t idx) {
        if (!((uint8_t(_bits[idx >> 3]) >> (idx & 7)) & 1)) {
            present = false;
        }
        return present;
    });
    return present;
}

void bloom_filter::prefetch(const hash_type& h) const noexcept {
    if (_bits.empty()) {
        return;
    }
    for_each_index(h, _hash_count, bit_count(), [&](uint64_t idx) {
        __builtin_prefetch(_bits.data() + (idx >> 3));
        return true;
    });
}

void bloom_filter::add(const hash_type& h) noexcept {
    if (_bits.empty()) {
        return;
    }
    for_each_index(h, _hash_count, bit_count(), [&](uint64_t idx) {
        _bits[idx >> 3] = char(uint8_t(_bits[idx >> 3]) | (1u << (idx & 7)));
        return true;
    });
}

bloom_filter parse_bloom_filter(std::string_view bytes, sstable_version v, const std::string& file) {
    byte_reader in(file, byte_reader::to_bytes(bytes));
    auto hashes = in.read_i32("the hash count");
    if (hashes <= 0 || hashes > max_hash_count) {
        in.fail_at(0, "expected a hash count in [1, " + std::to_string(max_hash_count) + "], found " + std::to_string(hashes));
    }
    auto words_at = in.offset();
    auto words = in.read_i32("the bitset's word count");
    if (words <= 0 || uint64_t(words) * 8 != in.remaining()) {
        in.fail_at(words_at, "expected " + std::to_string(in.remaining() / 8) + " 64-bit words (the rest of the file holds " +
                                 std::to_string(in.remaining()) + " bytes), found " + std::to_string(words));
    }
    auto bits = byte_reader::to_string(in.read_bytes(uint64_t(words) * 8, "the bitset"));
    if (has_old_bloom_filter_format(v)) {
        reverse_words(bits);
    }
    return bloom_filter(uint32_t(hashes), std::move(bits));
}

std::string serialize_bloom_filter(const bloom_filter& f, sstable_version v) {
    std::string out(8, '\0');
    utils::write_be_unchecked<int32_t>(out.data(), int32_t(f.hash_count()));
    utils::write_be_unchecked<int32_t>(out.data() + 4, int32_t(f.bits().size() / 8));
    std::string bits = f.bits();
    if (has_old_bloom_filter_format(v)) {
        reverse_words(bits);
    }
    return out + bits;
}

} // namespace reef::sstables
