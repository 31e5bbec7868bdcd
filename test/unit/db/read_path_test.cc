// The read path end to end against the model: random mutations spread over several memtables, read through
// memtable readers merged by the combined reader (with its range-tombstone skip), then compacted for a query at
// `now`. Forward and reversed, random slices and partition ranges; every stream validated. (The raw merge alone
// is db/combined_memtable_test.)
#include "db/memtable.hh"
#include "db/memtable_reader.hh"
#include "reader/combined_reader.hh"
#include "reader/compacting_reader.hh"
#include "test/lib/mutation_model.hh"
#include "test/lib/random_mutation.hh"
#include "test/lib/reef_test.hh"
#include "test/lib/simple_keys.hh"

#include <algorithm>
#include <memory>

using namespace reef;
using namespace reef::testing;

namespace {

struct read_path_case {
    schema_ptr s;
    std::vector<std::shared_ptr<memtable>> memtables;
    mutation_model model;
    std::vector<dht::decorated_key> keys;
};

// 1 to 4 memtables; each key gets 1 to 6 random mutations, each applied to a random memtable, so that
// newer tombstones in one memtable often cover older data in another (what the skip needs).
read_path_case make_case(const schema_ptr& s, mutation_generator& g) {
    read_path_case c{s, {}, {}, {}};
    int n = g.rnd(1, 4);
    for (int i = 0; i < n; ++i) {
        c.memtables.push_back(std::make_shared<memtable>(s));
    }
    int nkeys = g.rnd(1, 5);
    for (int k = 0; k < nkeys; ++k) {
        c.keys.push_back(pkey(k));
    }
    std::sort(c.keys.begin(), c.keys.end());
    for (auto& k : c.keys) {
        int writes = g.rnd(1, 6);
        for (int w = 0; w < writes; ++w) {
            auto m = g.make(k);
            c.memtables[g.rnd(0, n - 1)]->apply(m);
            apply_to_model(c.model, m);
        }
    }
    return c;
}

mutation_reader make_read(const read_path_case& c, const dht::partition_range& pr, const clustering_ranges& slice,
                          bool reversed, combined_reader_stats* stats) {
    std::vector<combined_reader_source> sources;
    for (auto& mt : c.memtables) {
        sources.push_back({make_memtable_reader(mt, c.s,
                                                {.range = pr,
                                                 .slice = slice,
                                                 .order = read_order_for(reversed),
                                                 .forwarding = streamed_forwarding::yes}),
                           mt->max_timestamp()});
    }
    return make_combined_reader(c.s, std::move(sources), reversed, streamed_forwarding::no, stats);
}

} // namespace

// A query at `now` through the whole path: combined memtables, then the compacting reader in query mode,
// equals the model's query result, forward and reversed.
REEF_TEST_CASE(test_query_through_read_path_matches_model) {
    uint64_t seed = pick_seed();
    BOOST_TEST_MESSAGE("seed " << seed << " (set REEF_SEED to repeat)");
    for (auto s : random_test_schemas()) {
        mutation_generator g(s, seed + 1);
        for (int i = 0; i < 400; ++i) {
            auto c = make_case(s, g);
            bool reversed = g.rnd(0, 1);
            auto forward_slice = g.make_ranges();
            auto slice = reversed ? reverse_ranges(forward_slice) : forward_slice;
            auto pr = random_partition_range(g, c.keys);
            deletion_time_type now = g.rnd(0, 4);
            auto r = make_compacting_reader(make_read(c, pr, slice, reversed, nullptr), now, compaction_mode::query);
            auto got = co_await read_validated(r, reversed);
            co_await r.close();
            auto got_ms = mutations_from_fragments(s, got, reversed);
            std::vector<mutation> expected_ms;
            for (auto& [k, m] : c.model) {
                if (pr.contains(k)) {
                    if (auto q = model_query(m, now, forward_slice)) {
                        expected_ms.push_back(std::move(*q));
                    }
                }
            }
            BOOST_REQUIRE_MESSAGE(got_ms.size() == expected_ms.size(),
                                  "seed " << seed + 1 << " table " << s->table() << " case " << i << ": "
                                          << got_ms.size() << " partitions, expected " << expected_ms.size());
            for (size_t p = 0; p < got_ms.size(); ++p) {
                BOOST_REQUIRE_MESSAGE(got_ms[p] == expected_ms[p],
                                      "seed " << seed + 1 << " table " << s->table() << " case " << i << " reversed "
                                              << reversed << " now " << now << "\n  got      " << to_string(got_ms[p])
                                              << "\n  expected " << to_string(expected_ms[p]));
            }
        }
    }
}
