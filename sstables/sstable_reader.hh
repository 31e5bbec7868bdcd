// make_sstable_reader: the partition-range reader of an mx sstable. For each partition range the index says where its
// partitions start and end in Data.db, and only that byte range is read and parsed; the slice is applied per partition.
#pragma once

#include "cache/read_caches.hh"
#include "index/index_reader.hh"
#include "reader/mutation_reader.hh"
#include "runtime/file.hh"
#include "sstables/components.hh"
#include "sstables/mx_fragments.hh"
#include "sstables/serialization_header.hh"

#include <memory>
#include <string>

namespace reef::sstables {

// What a read needs of one open sstable. The sstable's owner keeps all of it alive (and open) while readers live.
struct sstable_read_handles {
    const sstable_components* components = nullptr;
    std::shared_ptr<const serialization_header> header;
    file data;              // Data.db, open
    std::string data_file;  // its path, for errors
    const index::index_summary* summary = nullptr;
    cache::cached_file* index_file = nullptr;       // Index.db's shared page cache
    index::index_page_cache* index_cache = nullptr;  // its shared parsed pages
    index::page_parser parse_page;
    // The partitioner's token of a key (empty: Murmur3), as the summary and the pages were decorated with.
    mx_fragment_consumer::token_function token;
};

// Partitions of range in token order, each clipped to slice (clustering ranges in the read's order) through
// mutation_fragment_filter. A singular range whose key the bloom filter rules out reads nothing. reversed: each
// partition in reversed clustering order (make_reversed_sstable_reader, with or without forwarding). Not done yet:
// forward clustering-window forwarding (std::invalid_argument), and skipping inside a partition with the promoted
// index (a partition's rows outside the slice are parsed and dropped; the index entries keep the promoted index
// bytes for that step).
mutation_reader make_sstable_reader(schema_ptr s, sstable_read_handles h, dht::partition_range range,
                                    clustering_ranges slice, bool reversed = false,
                                    streamed_forwarding fwd = streamed_forwarding::no,
                                    cache::bypass_cache bypass = cache::bypass_cache::no);

} // namespace reef::sstables
