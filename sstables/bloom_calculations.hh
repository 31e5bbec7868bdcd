// Sizing a bloom filter as Cassandra does (BloomCalculations, FilterFactory): the fewest bits per key, then the
// fewest hashes, that reach the false-positive chance; bits = keys * bits per key + 20, rounded up to 64-bit words.
#pragma once

#include "sstables/bloom_filter.hh"

#include <cstdint>

namespace reef::sstables {

struct bloom_specification {
    uint32_t hash_count;
    uint32_t buckets_per_element;
};

// Throws std::invalid_argument when the chance is not in (0, 1) or cannot be reached with 20 bits per key.
bloom_specification compute_bloom_spec(uint64_t elements, double fp_chance);

// The smallest chance a table may ask for is above this (BloomCalculations.minSupportedBloomFilterFpChance: 20
// bits per key and the most hashes).
double min_supported_bloom_fp_chance() noexcept;
// Whether a table may ask for this chance: in (min_supported_bloom_fp_chance(), 1], 1 meaning no filter.
inline bool valid_bloom_fp_chance(double fp_chance) noexcept {
    return fp_chance > min_supported_bloom_fp_chance() && fp_chance <= 1;
}

// An empty filter sized for `elements` keys (at least one) at fp_chance.
bloom_filter make_bloom_filter(uint64_t elements, double fp_chance);

} // namespace reef::sstables
