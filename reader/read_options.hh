// read_options: what one read asks for (partitions, clustering slice, order, forwarding, cache use, statistics), the
// one aggregate every reader factory of the read path takes: new facts of a read become fields, not parameters.
#pragma once

#include "mutation/partition_range.hh"
#include "reader/mutation_reader.hh"
#include "reader/position_range.hh"

namespace reef {

struct combined_reader_stats;

// The clustering order in which a read returns each partition's rows; partitions always come in token order.
enum class read_order : bool { forward, reversed };

// The order a flag asks for (command-line options, randomized tests).
constexpr read_order read_order_for(bool reversed) noexcept {
    return reversed ? read_order::reversed : read_order::forward;
}

// A read flagged so that it neither reads from nor fills the shard's
// caches (CQL's BYPASS CACHE, scans that would only push everything out).
enum class bypass_cache : bool { no = false, yes = true };

// Built with designated initializers, the fields left out taking their defaults (a full forward scan):
//     read_options{.range = pr, .slice = std::move(slice), .order = read_order::reversed}
// Pass it by const& where it is only read, by value (moved in) where a reader keeps it. Inside a coroutine, build
// it in a statement of its own, never inside a co_await expression: it is an aggregate that owns memory (coroutine
// rule 2).
struct read_options {
    // The partitions read.
    dht::partition_range range = dht::partition_range::full();
    // Each partition's clustering ranges, in the read's order (reversed: reverse_ranges of the forward ranges).
    clustering_ranges slice = {position_range::full()};
    read_order order = read_order::forward;
    // yes: each partition is read window by window (fast_forward_to(position_range), windows in the read's order).
    streamed_forwarding forwarding = streamed_forwarding::no;
    // yes: the sstables' index pages go through private caches, and the row cache is neither read nor filled.
    bypass_cache bypass = bypass_cache::no;
    // Where a table read's combined reader counts its skips, if anywhere; it must outlive the reader.
    combined_reader_stats* stats = nullptr;

    bool reversed() const noexcept { return order == read_order::reversed; }
};

} // namespace reef
