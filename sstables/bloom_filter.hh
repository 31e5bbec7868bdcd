// The bloom filter of Filter.db, bit for bit Cassandra's: MurmurHash3 x64 128 of the partition key (seed 0),
// k indexes base + i * inc (base = h[1], inc = h[0]) modulo the bit count, so a key Cassandra wrote is found.
// mc..me store the bitset as big-endian 64-bit words ("old" format), na and later as the bytes themselves.
#pragma once

#include "sstables/version.hh"

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace reef::sstables {

class bloom_filter {
public:
    // A filter with no bits says every key may be present (Cassandra's AlwaysPresentFilter, used when
    // bloom_filter_fp_chance is 1 and Filter.db is not written).
    bloom_filter() = default;
    bloom_filter(uint32_t hash_count, std::string bits) : _hash_count(hash_count), _bits(std::move(bits)) {}

    // The key's hash, to check one key against many filters while hashing it once.
    using hash_type = std::array<int64_t, 2>;
    static hash_type hash_of(std::span<const std::byte> key) noexcept;

    // False only for keys certainly absent.
    bool is_present(std::span<const std::byte> key) const noexcept { return is_present(hash_of(key)); }
    bool is_present(const hash_type& h) const noexcept;
    // Asks the CPU to bring the key's bits into its cache: a batch prefetches a few keys ahead of its probes, so that
    // their cache misses overlap.
    void prefetch(const hash_type& h) const noexcept;
    bool is_present(std::string_view key) const noexcept {
        return is_present(std::as_bytes(std::span<const char>(key)));
    }
    // Sets the key's bits (the writer's side; used by tests).
    void add(std::span<const std::byte> key) noexcept { add(hash_of(key)); }
    void add(const hash_type& h) noexcept;

    uint32_t hash_count() const noexcept { return _hash_count; }
    uint64_t bit_count() const noexcept { return uint64_t(_bits.size()) * 8; }
    // Bit i is bit (i % 8) of byte i / 8: the na+ stored order.
    const std::string& bits() const noexcept { return _bits; }
    bool always_present() const noexcept { return _bits.empty(); }

private:
    uint32_t _hash_count = 0;
    std::string _bits;
};

// True for the versions that store the bitset as big-endian words (Cassandra's hasOldBfFormat: before na).
inline bool has_old_bloom_filter_format(sstable_version v) noexcept { return v < sstable_version::na; }

// Parses Filter.db; file names it in errors.
bloom_filter parse_bloom_filter(std::string_view bytes, sstable_version v, const std::string& file);
// Serializes as version v stores it.
std::string serialize_bloom_filter(const bloom_filter& f, sstable_version v);

} // namespace reef::sstables
