// Shared by the combined reader's model tests over any kind of source: random mutations split among sources
// (with timestamp layers, so that skips happen), random read plans, and the check against the merged model.
#pragma once

#include "mutation/mutation.hh"
#include "reader/combined_reader.hh"
#include "reader/mutation_reader.hh"
#include "test/lib/random_mutation.hh"

#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace reef::testing {

// Every write timestamp in a fragment, rewritten by fn (cells, collection
// elements, markers, and partition, row, collection and range tombstones).
void map_timestamps(mutation_fragment& f, const std::function<write_time::timestamp_type(write_time::timestamp_type)>& fn);
// The greatest write timestamp in the fragments (what a source declares).
write_time::timestamp_type max_timestamp(std::vector<mutation_fragment> fs);
// m with every timestamp raised by delta.
mutation shift_timestamps(const mutation& m, write_time::timestamp_type delta);

// How a test reads: the partition ranges (the first at creation, then
// fast_forward_to), the keys left by next_partition right after their
// partition_start, and, for a forwarding read, the windows of each
// partition (in the read's order).
struct read_plan {
    std::vector<dht::partition_range> ranges;
    std::set<dht::decorated_key> skipped;
    std::optional<clustering_ranges> windows;
};

struct read_result {
    std::vector<dht::decorated_key> keys;  // every partition_start seen, skipped ones too
    std::vector<mutation> mutations;       // the partitions read
};

// Reads as the plan says; every partition (window by window, then closed)
// goes through the stream validator.
future<read_result> read_by_plan(mutation_reader& r, schema_ptr s, const read_plan& plan, bool reversed);

// What a read returns: the partition with what its tombstones delete dropped.
mutation visible(mutation m);

// A random case: a few partitions, each version of each put in one of 1..4
// sources (with `layered`, source i's timestamps are raised by 10 * a random
// layer in 0..3, as an LSM's later flushes hold later writes), the merged
// model, a direction, maybe a slice, and a read plan.
struct combined_case {
    schema_ptr s;
    std::vector<std::vector<mutation>> sources;  // per source, partitions in ring order
    std::vector<write_time::timestamp_type> max_timestamps;
    std::vector<size_t> buffer_fragments;        // per source: 1..3, or 128
    // Per source: forwarding, or (sometimes, when the plan has no windows)
    // whole partitions, as compaction's full-scan readers give.
    std::vector<streamed_forwarding> source_forwarding;
    std::vector<mutation> model;
    bool reversed = false;
    std::optional<clustering_ranges> slice;      // in the read's order
    read_plan plan;

    streamed_forwarding forwarding() const { return plan.windows ? streamed_forwarding::yes : streamed_forwarding::no; }
};
combined_case make_combined_case(mutation_generator& g, bool layered);

// A reader of source i of the case, over plan.ranges.front(), with the
// case's slice, direction and source_forwarding[i].
using source_factory = std::function<mutation_reader(const combined_case& c, size_t i)>;

// Reads the case's sources combined and checks the result against the
// model read by the same plan (see the comparison's comment).
future<> check_combined_case(const combined_case& c, const source_factory& make_source, const std::string& context,
                             combined_reader_stats& stats);

} // namespace reef::testing
