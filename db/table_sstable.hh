// table_sstable: one sstable of a table, opened (components, Statistics, its timestamp bounds), and the one
// function that makes a reader of it for the read path (the seam the indexed sstable reader is to replace).
#pragma once

#include "mutation/partition_range.hh"
#include "reader/mutation_reader.hh"
#include "reader/position_range.hh"
#include "runtime/future.hh"
#include "runtime/gate.hh"
#include "sstables/components.hh"
#include "sstables/statistics.hh"

#include <memory>

namespace reef {

// Shared by the table's sstable set and every reader of it. `readers` counts the readers open on it: the
// table removes a compacted sstable's files only once that gate is closed (no reader opens Data.db later).
struct table_sstable {
    sstables::descriptor desc;
    sstables::sstable_components components;
    sstables::statistics stats;
    std::shared_ptr<const sstables::serialization_header> header;
    api::timestamp_type min_timestamp = 0;
    api::timestamp_type max_timestamp = 0;
    gate readers;

    // Whether the partition may be in it (the bloom filter; false positives possible).
    bool may_contain(const dht::decorated_key& k) const;
};

// Loads d (its components, checked as load_components checks them, and Statistics.db).
future<std::shared_ptr<table_sstable>> open_table_sstable(sstables::descriptor d);

// The read path's reader of sst: the partitions of `range` sliced by `slice` (in the read's order), forward or
// reversed, with clustering-window forwarding when fwd == yes, as make_fragment_vector_reader gives them.
// For now it reads the range's partitions through the full-scan reader into memory when first filled (and again
// after fast_forward_to(partition_range)): correct, but costs the range's size in memory and reads without the
// index. The indexed reader replaces this function's body.
mutation_reader make_sstable_reader(std::shared_ptr<table_sstable> sst, schema_ptr s, const dht::partition_range& range,
                                    clustering_ranges slice, bool reversed, streamed_forwarding fwd);

// Compaction's reader of sst: the whole sstable as whole partitions (no forwarding), streamed by the full-scan
// reader. Holds sst's reader gate until closed.
mutation_reader make_sstable_full_scan_reader(std::shared_ptr<table_sstable> sst, schema_ptr s);

// Removes sst's files: TOC.txt is first renamed to TOC.txt.tmp, which makes the sstable a partial write that
// remove_partial_sstables (at the next start) finishes removing should this stop half-way.
future<> delete_table_sstable(const sstables::descriptor& d);

} // namespace reef
