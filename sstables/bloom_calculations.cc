// Bloom filter sizing. See bloom_calculations.hh.
#include "sstables/bloom_calculations.hh"

#include <array>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace reef::sstables {

namespace {

// False-positive rates for i bits per key (row) and j hashes (column), from "Bloom Filters - the math"
// (Cao), the table Cassandra's BloomCalculations uses, so the same chance picks the same filter.
const std::vector<std::vector<double>> probs = {
    {1.0},
    {1.0, 1.0},
    {1.0, 0.393, 0.400},
    {1.0, 0.283, 0.237, 0.253},
    {1.0, 0.221, 0.155, 0.147, 0.160},
    {1.0, 0.181, 0.109, 0.092, 0.092, 0.101},
    {1.0, 0.154, 0.0804, 0.0609, 0.0561, 0.0578, 0.0638},
    {1.0, 0.133, 0.0618, 0.0423, 0.0359, 0.0347, 0.0364},
    {1.0, 0.118, 0.0489, 0.0306, 0.024, 0.0217, 0.0216, 0.0229},
    {1.0, 0.105, 0.0397, 0.0228, 0.0166, 0.0141, 0.0133, 0.0135, 0.0145},
    {1.0, 0.0952, 0.0329, 0.0174, 0.0118, 0.00943, 0.00844, 0.00819, 0.00846},
    {1.0, 0.0869, 0.0276, 0.0136, 0.00864, 0.0065, 0.00552, 0.00513, 0.00509},
    {1.0, 0.08, 0.0236, 0.0108, 0.00646, 0.00459, 0.00371, 0.00329, 0.00314},
    {1.0, 0.074, 0.0203, 0.00875, 0.00492, 0.00332, 0.00255, 0.00217, 0.00199, 0.00194},
    {1.0, 0.0689, 0.0177, 0.00718, 0.00381, 0.00244, 0.00179, 0.00146, 0.00129, 0.00121, 0.0012},
    {1.0, 0.0645, 0.0156, 0.00596, 0.003, 0.00183, 0.00128, 0.001, 0.000852, 0.000775, 0.000744},
    {1.0, 0.0606, 0.0138, 0.005, 0.00239, 0.00139, 0.000935, 0.000702, 0.000574, 0.000505, 0.00047, 0.000459},
    {1.0, 0.0571, 0.0123, 0.00423, 0.00193, 0.00107, 0.000692, 0.000499, 0.000394, 0.000335, 0.000302, 0.000287,
     0.000284},
    {1.0, 0.054, 0.0111, 0.00362, 0.00158, 0.000839, 0.000519, 0.00036, 0.000275, 0.000226, 0.000198, 0.000183,
     0.000176},
    {1.0, 0.0513, 0.00998, 0.00312, 0.0013, 0.000663, 0.000394, 0.000264, 0.000194, 0.000155, 0.000132, 0.000118,
     0.000111, 0.000109},
    {1.0, 0.0488, 0.00906, 0.0027, 0.00108, 0.00053, 0.000303, 0.000196, 0.00014, 0.000108, 8.89e-05, 7.77e-05,
     7.12e-05, 6.79e-05, 6.71e-05},
};

// The hash count with the lowest rate for each bits-per-key row (the first such, at least 1).
std::vector<uint32_t> optimal_k() {
    std::vector<uint32_t> k(probs.size(), 1);
    for (size_t i = 0; i < probs.size(); ++i) {
        double min = std::numeric_limits<double>::max();
        for (size_t j = 0; j < probs[i].size(); ++j) {
            if (probs[i][j] < min) {
                min = probs[i][j];
                k[i] = uint32_t(std::max<size_t>(1, j));
            }
        }
    }
    return k;
}

constexpr uint64_t bitset_excess = 20;

} // namespace

bloom_specification compute_bloom_spec(uint64_t elements, double fp_chance) {
    if (!(fp_chance > 0 && fp_chance < 1)) {
        throw std::invalid_argument("bloom filter false-positive chance " + std::to_string(fp_chance) +
                                    " is not in (0, 1)");
    }
    static const auto opt = optimal_k();
    (void)elements;  // the 20-bits-per-key cap is what limits us long before the 2^63-bit one
    size_t max_buckets = probs.size() - 1;
    size_t max_k = probs[max_buckets].size() - 1;
    if (fp_chance >= probs[2][1]) {
        return {2, opt[2]};  // Cassandra's (K = 2, buckets = optK[2]), arguments as it passes them
    }
    if (fp_chance < probs[max_buckets][max_k]) {
        throw std::invalid_argument("bloom filter false-positive chance " + std::to_string(fp_chance) +
                                    " needs more than 20 bits per key");
    }
    size_t buckets = 2;
    uint32_t k = opt[2];
    while (probs[buckets][k] > fp_chance) {
        ++buckets;
        k = opt[buckets];
    }
    while (probs[buckets][k - 1] <= fp_chance) {
        --k;
    }
    return {k, uint32_t(buckets)};
}

double min_supported_bloom_fp_chance() noexcept { return probs.back().back(); }

bloom_filter make_bloom_filter(uint64_t elements, double fp_chance) {
    auto spec = compute_bloom_spec(elements, fp_chance);
    uint64_t bits = std::max<uint64_t>(elements, 1) * spec.buckets_per_element + bitset_excess;
    uint64_t words = (bits + 63) / 64;
    return bloom_filter(spec.hash_count, std::string(words * 8, '\0'));
}

} // namespace reef::sstables
