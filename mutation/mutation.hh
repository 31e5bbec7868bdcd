// mutation: one partition of one table in memory (schema, decorated key, mutation_partition), built from a
// partition's fragments and turned back into a valid fragment stream, forward or reversed.
#pragma once

#include "mutation/fragment.hh"
#include "mutation/mutation_partition.hh"
#include "mutation/token.hh"
#include "schema/schema.hh"

#include <optional>
#include <string>
#include <vector>

namespace reef {

class mutation {
public:
    mutation(schema_ptr s, dht::decorated_key key) : _schema(std::move(s)), _key(std::move(key)), _partition(*_schema) {}

    const schema_ptr& schema() const noexcept { return _schema; }
    const dht::decorated_key& decorated_key() const noexcept { return _key; }
    const mutation_partition& partition() const noexcept { return _partition; }
    mutation_partition& partition() noexcept { return _partition; }

    // Merges another version of the same partition (same key and table);
    // throws std::invalid_argument when the keys differ.
    void apply(const mutation& o);

    bool operator==(const mutation& o) const { return _key == o._key && _partition == o._partition; }

private:
    schema_ptr _schema;
    dht::decorated_key _key;
    mutation_partition _partition;
};

// Consumes the fragments of one or more partitions, in stream order
// (reversed: as a reversed reader produces them), into mutations.
class mutation_partition_builder {
public:
    explicit mutation_partition_builder(schema_ptr s, bool reversed = false) : _schema(std::move(s)), _reversed(reversed) {}

    // Returns the finished mutation at partition_end. Throws
    // std::invalid_argument on a fragment outside a partition.
    std::optional<mutation> consume(const mutation_fragment& f);
    // The same, moving f's rows in rather than copying their cells.
    std::optional<mutation> consume(mutation_fragment&& f);

private:
    schema_ptr _schema;
    bool _reversed;
    std::optional<mutation> _current;
    range_tombstone_change_accumulator _changes;
};

// The mutations of a stream of whole partitions.
std::vector<mutation> mutations_from_fragments(schema_ptr s, const std::vector<mutation_fragment>& fragments,
                                               bool reversed = false);
// The one partition of a stream; throws std::invalid_argument unless it
// holds exactly one.
mutation mutation_from_fragments(schema_ptr s, const std::vector<mutation_fragment>& fragments, bool reversed = false);

// The partition as a stream: partition_start, the static row if it has
// cells, rows and range_tombstone_changes interleaved in position order,
// partition_end. Reversed: descending clustering order with reversed()
// change positions. The stream passes fragment_stream_validator.
std::vector<mutation_fragment> to_fragments(const mutation& m, bool reversed = false);

// A one-line description for test failures and logs: tombstones, markers,
// cells (values in hex), rows by key, range tombstones.
std::string to_string(const mutation& m);

} // namespace reef
