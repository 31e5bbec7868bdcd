// Readers of a shared_sstable that own it: each keeps the sstable alive and holds its reader gate until closed, so
// that its owner (the table, compaction) closes the sstable and removes its files only after its last reader.
#pragma once

#include "cache/read_caches.hh"
#include "mutation/partition_range.hh"
#include "reader/mutation_reader.hh"
#include "reader/position_range.hh"
#include "reader/read_options.hh"
#include "reader/reader_permit.hh"
#include "sstables/sstable.hh"

namespace reef::sstables {

// The read path's reader of sst: the partitions of opts.range sliced by opts.slice (in the read's order), in
// opts.order, with clustering-window forwarding when opts.forwarding == yes, as make_memtable_reader gives them: the
// indexed reader (make_sstable_reader over read_handles(): the index's byte range of Data.db, promoted-index skips
// inside partitions; reversed, each partition through a partition_reversing_data_source), through sst's index caches,
// or private ones with opts.bypass == yes. permit: the read's deadline and memory account (see
// sstables/sstable_reader.hh).
mutation_reader make_sstable_reader(shared_sstable sst, schema_ptr s, reader_permit permit, read_options opts);

// A batch's reader of sst: make_located_sstable_reader over read_handles() (the partitions the batch located in sst,
// with sst's index caches), holding sst as the reader above does.
mutation_reader make_located_sstable_reader(shared_sstable sst, schema_ptr s, reader_permit permit, read_options opts,
                                            std::vector<located_partition> located);

// What a full scan has read so far: the bytes of its own Data.db reads (read-ahead included), not the queries'.
struct scan_progress {
    uint64_t bytes = 0;
};

// Compaction's reader of sst: the whole sstable as whole partitions (no forwarding), streamed by the full-scan
// reader over a Data.db file of its own, keys decorated by sst's partitioner. progress, when given, is kept up to
// date after each buffer.
mutation_reader make_sstable_full_scan_reader(shared_sstable sst, schema_ptr s,
                                              std::shared_ptr<scan_progress> progress = {});

} // namespace reef::sstables
