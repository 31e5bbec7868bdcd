// check_table_read: one random read of a table (range, slice, direction, cache or bypass) compared with the model,
// for the table-level tests that interleave it with writes, flushes and compactions.
#pragma once

#include "db/table.hh"
#include "test/lib/mutation_model.hh"
#include "test/lib/random_mutation.hh"

#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

namespace reef::testing {

// canonical_mutations without the partitions that hold nothing: a read may give an empty partition (one whose
// rows all fall outside the slice, or whose data its own tombstones deleted) that a compaction dropped.
inline std::vector<mutation> canonical_nonempty(const schema_ptr& s, const std::vector<mutation_fragment>& fs,
                                                bool reversed) {
    auto ms = canonical_mutations(s, fs, reversed);
    std::erase_if(ms, is_empty);
    return ms;
}

// Reads the table (a random range, slice and direction, through the cache or bypassing it) and requires the
// model's answer; `when` names the moment in the failure.
inline future<> check_table_read(table& t, const mutation_model& model, mutation_generator& g,
                                 const std::string& when) {
    auto s = t.schema();
    auto keys = keys_of(model);
    auto pr = g.rnd(0, 2) ? dht::partition_range::full() : random_partition_range(g, keys);
    auto forward_slice = g.rnd(0, 1) ? clustering_ranges{position_range::full()} : g.make_ranges();
    bool reversed = g.rnd(0, 1);
    auto slice = reversed ? reverse_ranges(forward_slice) : forward_slice;
    auto bypass = g.rnd(0, 3) == 0 ? bypass_cache::yes : bypass_cache::no;
    auto r = t.make_reader(reader_permit(),
                           {.range = pr, .slice = slice, .order = read_order_for(reversed), .bypass = bypass});
    std::vector<mutation_fragment> got;
    std::exception_ptr err;
    try {
        got = co_await read_validated(r, reversed);
    } catch (...) {
        err = std::current_exception();
    }
    co_await r.close();
    if (err) {
        std::rethrow_exception(err);
    }
    auto a = canonical_nonempty(s, got, reversed);
    auto b = canonical_nonempty(s, expected_read(model, pr, slice, reversed), reversed);
    BOOST_REQUIRE_MESSAGE(a == b, when << " (reversed " << reversed << "):\n" << describe(a) << "!=\n" << describe(b));
}

} // namespace reef::testing
