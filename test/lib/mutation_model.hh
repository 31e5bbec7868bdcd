// The simple model every reader is checked against: a sorted map of merged mutations, what a sliced read of it
// returns, what a query at `now` returns, and the helpers that read, validate and compare reader output.
#pragma once

#include "mutation/mutation.hh"
#include "reader/mutation_reader.hh"
#include "reader/position_range.hh"
#include "test/lib/random_mutation.hh"

#include <map>
#include <optional>
#include <vector>

namespace reef::testing {

// Partitions by decorated key, each the merge (mutation::apply) of everything written to it.
using mutation_model = std::map<dht::decorated_key, mutation>;

// Merges m into the model.
void apply_to_model(mutation_model& model, const mutation& m);

// One partition as a read with `slice` (in the read's order) returns it, raw: to_fragments through a
// mutation_fragment_filter, partition_start to partition_end.
std::vector<mutation_fragment> sliced_partition(const mutation& m, const clustering_ranges& slice, bool reversed);

// The raw read of the model: the partitions of `pr` in ring order, each sliced.
std::vector<mutation_fragment> expected_read(const mutation_model& model, const dht::partition_range& pr,
                                             const clustering_ranges& slice, bool reversed);

// The query result model at `now`: tombstones applied (drop_shadowed), then only live data (live cells and
// collection elements, live markers), rows with nothing live and partitions with nothing live left out; with a
// slice (forward ranges) only its rows; the static row whatever the slice. keep_empty: a partition with
// nothing live comes back empty instead of as nothing (what a forwarding read, which emits every partition
// start, returns).
std::optional<mutation> model_query(mutation m, deletion_time_type now,
                                    const std::optional<clustering_ranges>& forward_slice = std::nullopt,
                                    bool keep_empty = false);

// The mutations of a stream (whole partitions), with drop_shadowed() applied, so that two streams that
// differ only in data their own tombstones delete compare equal.
std::vector<mutation> canonical_mutations(const schema_ptr& s, const std::vector<mutation_fragment>& fs, bool reversed);

// Checks the stream with fragment_stream_validator (throws on a violation).
void validate_stream(const schema& s, const std::vector<mutation_fragment>& fs, bool reversed);

// Reads to end of stream, yielding to the reactor before each fragment (in debug builds a long run of
// ready awaits would otherwise grow the stack: coroutine rule 5), validating what it read.
future<std::vector<mutation_fragment>> read_validated(mutation_reader& r, bool reversed);

// The model's partition keys, in ring order.
std::vector<dht::decorated_key> keys_of(const mutation_model& model);

// One mutation per line (to_string), for failure messages.
std::string describe(const std::vector<mutation>& ms);

// A partition that holds nothing: no partition tombstone, static row, row or range tombstone.
bool is_empty(const mutation& m);

// A random partition range over `keys` (sorted): everything, one key, or bounds at or around keys (possibly empty);
// everything when there are no keys.
dht::partition_range random_partition_range(mutation_generator& g, const std::vector<dht::decorated_key>& keys);

} // namespace reef::testing
