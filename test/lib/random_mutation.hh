// Random schemas, mutations and clustering slices for the randomized model tests of every room.
// Few distinct timestamps, keys and deletion times, so ties and overlaps are frequent; seeds repeat with REEF_SEED.
#pragma once

#include "mutation/mutation.hh"
#include "reader/position_range.hh"
#include "schema/schema.hh"

#include <boost/test/unit_test.hpp>
#include <cstdint>
#include <random>
#include <vector>

namespace reef::testing {

// ks.t: one int clustering column; a static int, a regular int and a non-frozen map.
schema_ptr random_test_schema();
// ks.w: two clustering columns, the second DESC, so range bounds can be
// prefixes of either length; a static set.
schema_ptr random_test_wide_schema();
// Both of the above.
std::vector<schema_ptr> random_test_schemas();

// REEF_SEED when set, else a fresh random seed.
uint64_t pick_seed();

class mutation_generator {
public:
    mutation_generator(schema_ptr s, uint64_t seed) : _s(std::move(s)), _rng(seed) {}

    // A random partition at key k: maybe a partition tombstone and a static
    // cell, up to max_rows rows (markers, row tombstones, live, expiring and
    // dead cells, collections), up to 4 range tombstones. Timestamps are in
    // [0, 5], deletion and expiry times in [0, 3].
    mutation make(const dht::decorated_key& k, int max_rows = 8);

    // Sorted, non-overlapping, non-empty forward clustering ranges (0 to 3
    // of them) with bounds of every prefix length and both inclusivities;
    // sometimes the full range.
    clustering_ranges make_ranges();

    // A random full clustering key / a random bound position.
    clustering_key_prefix clustering_key();
    position_in_partition bound();

    int rnd(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(_rng); }
    std::mt19937_64& rng() noexcept { return _rng; }
    const schema_ptr& schema() const noexcept { return _s; }

private:
    tombstone tomb();
    row_marker marker();
    atomic_cell cell();
    cell_or_collection cell_for(const column_definition& c);

    schema_ptr _s;
    std::mt19937_64 _rng;
};

// Runs body(schema, generator) `cases` times for each random test schema,
// with one seed for the run, printed, and named in any failure's context.
template <typename Body>
void for_random_cases(int cases, Body body) {
    uint64_t seed = pick_seed();
    BOOST_TEST_MESSAGE("seed " << seed << " (set REEF_SEED to repeat)");
    for (auto s : random_test_schemas()) {
        mutation_generator g(s, seed);
        for (int i = 0; i < cases; ++i) {
            BOOST_TEST_CONTEXT("seed " << seed << " table " << s->table() << " case " << i) {
                body(s, g);
            }
        }
    }
}

} // namespace reef::testing
