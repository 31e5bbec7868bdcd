// counter: Cassandra's counter context (the value of a counter cell: shards of (counter id, clock, count), some
// marked global or local in a header), read and checked, totalled, and merged exactly as CounterContext.merge.
#pragma once

#include "mutation/atomic_cell.hh"
#include "schema/bytes.hh"

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace reef {

// A node's counter id (Cassandra's CounterId: a 16-byte time UUID).
using counter_id = std::array<uint8_t, 16>;

// How a shard merges with another of the same id (CounterContext's header):
// global shards (2.1+ increments) keep the highest clock; local shards
// (pre-2.1 deltas) add up; remote shards (pre-2.1 copies of another node's
// local shard) keep the highest clock.
enum class counter_shard_kind : uint8_t { global, local, remote };

struct counter_shard {
    counter_id id{};
    int64_t clock = 0;
    int64_t count = 0;
    counter_shard_kind kind = counter_shard_kind::global;
    bool operator==(const counter_shard&) const = default;
};

struct counter_merge_result;

// A context read into its shards. Layout (big-endian): int16 n, where |n|
// is the number of header elements (a negative n is Cassandra's "clear the
// local shards" mark); n int16 header elements, each the body index of a
// local shard or (index + Short.MIN_VALUE) of a global one, in index
// order; then 32-byte shards (id, int64 clock, int64 count) sorted by id as
// unsigned bytes. Shards not named in the header are remote.
class counter_context {
public:
    // Throws marshal_exception naming what is wrong: shorter than its
    // header, a body that is not whole shards (Cassandra's validateContext),
    // header elements out of order or past the last shard, ids unsorted or
    // repeated.
    static counter_context parse(std::string_view v);

    const std::vector<counter_shard>& shards() const noexcept { return _shards; }
    // The header count was negative (CounterContext.markLocalToBeCleared).
    bool local_marked_to_clear() const noexcept { return _local_marked_to_clear; }

    // The sum of the counts, wrapping as Java's long does (CounterContext.total).
    int64_t total() const noexcept;

    // The bytes: the header lists global and local shards in index order.
    std::string serialize() const;

    bool operator==(const counter_context&) const = default;

private:
    std::vector<counter_shard> _shards;
    bool _local_marked_to_clear = false;
    friend class counter_context_builder;
    friend counter_merge_result merge_counter_contexts(std::string_view left, std::string_view right);
};

// Builds a context shard by shard in any id order (sorted on build).
class counter_context_builder {
public:
    counter_context_builder& add(const counter_shard& s) {
        _shards.push_back(s);
        return *this;
    }
    counter_context_builder& add_global(const counter_id& id, int64_t clock, int64_t count) {
        return add({id, clock, count, counter_shard_kind::global});
    }
    counter_context_builder& add_local(const counter_id& id, int64_t clock, int64_t count) {
        return add({id, clock, count, counter_shard_kind::local});
    }
    counter_context_builder& add_remote(const counter_id& id, int64_t clock, int64_t count) {
        return add({id, clock, count, counter_shard_kind::remote});
    }
    // Throws std::invalid_argument on a repeated id or more than 32767
    // global and local shards (the header's int16 count).
    counter_context build() const;
    std::string serialize() const { return build().serialize(); }

private:
    std::vector<counter_shard> _shards;
};

// A counter id from its UUID text ("59b82720-99b0-4033-885c-e94d62106a35").
counter_id counter_id_from_uuid(std::string_view uuid);

// The total of a serialized context (throws marshal_exception on bad bytes).
int64_t counter_total(std::string_view context);

// Which bytes a merge returned: CounterContext.merge returns one of its
// inputs unchanged when that input's shards already contain the merge.
enum class counter_merge_source : uint8_t { left, right, merged };

struct counter_merge_result {
    counter_merge_source source;
    std::string value;
};

// CounterContext.merge (Cassandra 2.1+). For shards of the same id:
// global beats local and remote, local beats remote; two globals or two
// remotes keep the higher clock (remote clocks compare as Cassandra's
// legacy rule: a negative clock beats a positive one), on equal clocks the
// higher count; two locals add clocks and counts. If one side's shards are
// all kept (it has every id and wins or ties each), its bytes come back
// unchanged, else a new context with the header rebuilt. Throws
// marshal_exception on bad bytes.
counter_merge_result merge_counter_contexts(std::string_view left, std::string_view right);

// Cells.reconcile for a counter column (Cells.resolveCounter): a counter
// tombstone beats a counter cell whatever the timestamps (CASSANDRA-7346);
// two tombstones reconcile as regular cells; an empty value (a column not
// queried, CASSANDRA-10657/11726) beats a non-empty one, and of two empty
// ones the later wins (the right one on a tie); otherwise the contexts
// merge and the result carries the greater timestamp (an input cell comes
// back as it is when it already is the result).
atomic_cell reconcile_counter(const atomic_cell& left, const atomic_cell& right);

// What a query returns for a counter cell: its total as a bigint (8 bytes,
// big-endian), the value counter_type() validates and prints.
bytes counter_query_value(std::string_view context);

// The total as a CQL literal (what CQL prints for the column: 42, -7).
std::string counter_cql_literal(std::string_view context);

// Cassandra's CounterContext.toString: [{id, clock, count}$,...], `$` for
// global and `*` for local shards.
std::string to_string(const counter_context& c);

} // namespace reef
