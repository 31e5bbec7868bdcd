// table_sstable: one sstable of a table, opened (components, Statistics, its timestamp bounds, Data.db and Index.db
// open with Index.db on the shard's caches), and the one function that makes a reader of it for the read path.
#pragma once

#include "mutation/partition_range.hh"
#include "reader/mutation_reader.hh"
#include "reader/position_range.hh"
#include "reader/read_options.hh"
#include "reader/reader_permit.hh"
#include "runtime/future.hh"
#include "runtime/gate.hh"
#include "cache/cached_file.hh"
#include "cache/read_caches.hh"
#include "index/index_reader.hh"
#include "sstables/components.hh"
#include "sstables/sstable_reader.hh"
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
    write_time::timestamp_type min_timestamp = 0;
    write_time::timestamp_type max_timestamp = 0;
    gate readers;
    // What the indexed reader reads through, open from open_table_sstable until close(): Data.db, Index.db as a
    // cached_file on the shard's cache tracker with a partition_index_cache of its parsed pages, and the summary
    // (Summary.db, or rebuilt from Index.db when missing) decorated with tokens.
    file data;
    file index;
    index::index_summary summary;
    std::unique_ptr<cache::cached_file> index_file;
    std::unique_ptr<index::index_page_cache> index_cache;

    // Whether the partition may be in it (the bloom filter; false positives possible).
    bool may_contain(const dht::decorated_key& k) const;
    // What make_sstable_reader (sstables/sstable_reader.hh) needs; valid until close().
    sstables::sstable_read_handles read_handles() const;
    // Drops its cached Index.db pages and closes its files; only once no reader is left (readers closed).
    future<> close();
};

// Loads d (its components, checked as load_components checks them, and Statistics.db).
future<std::shared_ptr<table_sstable>> open_table_sstable(sstables::descriptor d);

// The read path's reader of sst: the partitions of opts.range sliced by opts.slice (in the read's order), in
// opts.order, with clustering-window forwarding when opts.forwarding == yes, as make_memtable_reader gives them: the
// indexed reader (sstables::make_sstable_reader: the index's byte range of Data.db, promoted-index skips inside
// partitions; reversed, each partition through a partition_reversing_data_source), through the shard's index caches,
// or private ones with opts.bypass == yes. permit: the read's deadline and memory account (see
// sstables/sstable_reader.hh). Holds sst's reader gate until closed.
mutation_reader make_sstable_reader(std::shared_ptr<table_sstable> sst, schema_ptr s, reader_permit permit,
                                    read_options opts);

// Compaction's reader of sst: the whole sstable as whole partitions (no forwarding), streamed by the full-scan
// reader. Holds sst's reader gate until closed.
mutation_reader make_sstable_full_scan_reader(std::shared_ptr<table_sstable> sst, schema_ptr s);

// Removes sst's files: TOC.txt is first renamed to TOC.txt.tmp, which makes the sstable a partial write that
// remove_partial_sstables (at the next start) finishes removing should this stop half-way.
future<> delete_table_sstable(const sstables::descriptor& d);

} // namespace reef
