// The combined reader over memtable readers: random mutations in 1..4 memtables, each declaring its
// max_timestamp(), read merged (with skips) against the model, so memtable readers are held to the contract skips rely on.
#include "db/memtable.hh"
#include "db/memtable_reader.hh"
#include "runtime/reactor.hh"
#include "test/lib/combined_model.hh"
#include "test/lib/random_mutation.hh"
#include "test/lib/reef_test.hh"

#include <memory>
#include <string>

using namespace reef;

REEF_TEST_CASE(test_combined_memtables_against_model) {
    uint64_t seed = testing::pick_seed();
    BOOST_TEST_MESSAGE("seed " << seed << " (set REEF_SEED to repeat)");
    combined_reader_stats stats;
    // The memtables' own max_timestamp(), not the case's computed one: the
    // two must agree, and the combined reader gets what a table would give.
    auto memtable_source = [](const testing::combined_case& c, size_t i) {
        auto mt = std::make_shared<memtable>(c.s);
        for (auto& m : c.sources[i]) {
            mt->apply(m);
        }
        BOOST_CHECK_EQUAL(mt->max_timestamp(), c.max_timestamps[i]);
        auto slice = c.slice ? *c.slice : clustering_ranges{position_range::full()};
        return make_memtable_reader(mt, c.s,
                                    {.range = c.plan.ranges.front(),
                                     .slice = std::move(slice),
                                     .order = read_order_for(c.reversed),
                                     .forwarding = c.source_forwarding[i]},
                                    c.buffer_fragments[i]);
    };
    for (auto s : testing::random_test_schemas()) {
        testing::mutation_generator g(s, seed);
#ifdef REEF_DEBUG
        constexpr int cases = 300;  // ASan: keep the test case under ~20 s
#else
        constexpr int cases = 2000;
#endif
        for (int i = 0; i < cases; ++i) {
            auto context = "seed " + std::to_string(seed) + " table " + s->table() + " case " + std::to_string(i);
            auto c = testing::make_combined_case(g, i % 2 == 1);
            co_await testing::check_combined_case(c, memtable_source, context, stats);
            co_await yield();  // unwinds the stack (debug builds have no tail calls)
        }
    }
    BOOST_TEST_MESSAGE("range skips " << stats.range_skips << ", partition skips " << stats.partition_skips
                                      << ", covered fragments dropped " << stats.covered_fragments_dropped);
    BOOST_CHECK_GT(stats.range_skips, 0u);
    BOOST_CHECK_GT(stats.partition_skips, 0u);
}
