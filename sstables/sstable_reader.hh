// make_sstable_reader: the partition-range reader of an mx sstable. For each partition range the index says where its
// partitions start and end in Data.db, and only that byte range is read; inside a partition with a promoted index,
// only the blocks the slice (or forwarding window) reaches are read and parsed.
#pragma once

#include "cache/read_caches.hh"
#include "index/index_reader.hh"
#include "reader/mutation_reader.hh"
#include "reader/read_options.hh"
#include "reader/reader_permit.hh"
#include "runtime/file.hh"
#include "runtime/gate.hh"
#include "runtime/temporary_buffer.hh"
#include "sstables/components.hh"
#include "sstables/mx_fragments.hh"
#include "sstables/serialization_header.hh"

#include <memory>
#include <string>
#include <vector>

namespace reef::sstables {

// What a reader's parsers did with clustering rows: built (into fragments, which the slice may still drop), or passed
// over unread by their key alone (before the slice's or window's next range, or in a partition being left); and the
// partitions started from the index alone, their headers unread; and the reversed reader's jumps through the promoted
// index to the block holding the next range's end (or window's), over the blocks between.
struct sstable_reader_stats {
    uint64_t rows_read = 0;
    uint64_t rows_skipped = 0;
    uint64_t headers_skipped = 0;
    uint64_t reversed_jumps = 0;
};

// What a read needs of one open sstable. The sstable's owner keeps all of it alive (and open) while readers live:
// either the caller, or `owner`, which the reader holds until it is destroyed.
struct sstable_read_handles {
    const sstable_components* components = nullptr;
    std::shared_ptr<const serialization_header> header;
    file data;              // Data.db, open
    std::string_view data_file;   // its path, for errors (the sstable's: valid while it lives)
    std::string_view index_path;  // Index.db's path, for errors (the sstable's: valid while it lives)
    const index::index_summary* summary = nullptr;
    cache::cached_file* index_file = nullptr;       // Index.db's shared page cache
    index::index_page_cache* index_cache = nullptr;  // its shared parsed pages
    index::page_parser parse_page;
    // The partitioner's token of a key (empty: Murmur3), as the summary and the pages were decorated with.
    mx_fragment_consumer::token_function token;
    // Where readers count rows read and skipped (tests, benchmarks), if anywhere; it must outlive them.
    sstable_reader_stats* stats = nullptr;
    // The sstable behind the pointers above, kept by the reader (null: the caller keeps it); and its reader gate,
    // which the reader holds from its start until it closes (null: none), so the files outlive the read.
    std::shared_ptr<const void> owner;
    gate* readers = nullptr;

    // A hold on `readers` (none without one), for a reader to keep until it closes.
    gate::holder hold_readers() const { return readers ? gate::holder(*readers) : gate::holder(); }
};

// Partitions of opts.range in token order, each clipped to opts.slice (clustering ranges in the read's order) through
// mutation_fragment_filter: the stream make_memtable_reader gives for the same data. A singular range whose key the
// bloom filter rules out reads nothing. Forward: a partition with a promoted index, read with a slice that is not
// the full range (or with forwarding), has its header and static row parsed, then parsing jumps to the block holding
// each range's start (promoted_index_cursor), re-emitting the range tombstone open there, and to the partition's end
// after the last range: rows outside the slice in other blocks are neither read nor parsed.
// opts.forwarding == yes: clustering-window forwarding as in reader/mutation_reader.hh (after partition_start and
// the static row the stream ends; fast_forward_to(position_range) opens a window, which shows what lies in both the
// window and the slice; no partition_end). read_order::reversed: each partition in reversed clustering order
// (make_reversed_sstable_reader, with or without forwarding). opts.bypass: the index pages go through private caches
// (read_caches). opts.stats is the table's: this reader counts into h.stats. permit: the read's (a tool's
// reader_permit() has no limits): its deadline is checked before each buffer fill, each index lookup and each
// Data.db read (read_timeout_error naming the file; close() still releases everything), and the Data.db buffer the
// parser holds is charged to it.
mutation_reader make_sstable_reader(schema_ptr s, sstable_read_handles h, reader_permit permit, read_options opts);

// One partition of a batch of single-partition reads, found before its reader runs (sstables/partition_batch.hh):
// its key (the batch's: not decoded and hashed again from the entry), its Index.db entry (page pinned), its bytes
// in Data.db, and (not empty) exactly those bytes, read already.
struct located_partition {
    dht::decorated_key key;
    index::entry_ref entry;
    index::data_range range;
    temporary_buffer bytes;
};

// The partitions of `located` (in ring order, distinct), one after another, each as make_sstable_reader gives the
// singular range of its key (opts.slice, forward, no forwarding: std::invalid_argument otherwise), without the
// bloom filter probe or the index lookups, which the batch made (the promoted index comes from the entry); a
// partition with its bytes is parsed from them, the others read from Data.db. opts.range is not looked at;
// fast_forward_to(partition_range) throws std::logic_error.
mutation_reader make_located_sstable_reader(schema_ptr s, sstable_read_handles h, reader_permit permit,
                                            read_options opts, std::vector<located_partition> located);

} // namespace reef::sstables
