// partition_batch: where a batch of single-partition reads lies in one sstable, found together: the bloom filter
// probes first, then one index page lookup per summary page, then the Data.db bytes of the small partitions, read in
// file order with nearby ones merged into one read, all reads issued before any is awaited (RocksDB's MultiGet).
#pragma once

#include "mutation/token.hh"
#include "reader/reader_permit.hh"
#include "runtime/future.hh"
#include "sstables/sstable.hh"
#include "sstables/sstable_reader.hh"

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace reef::sstables {

struct partition_batch_options {
    // A partition this small (Data.db bytes) is read with the batch; a larger one is left to its reader, which
    // reads only the promoted index blocks its slice needs.
    uint64_t max_prefetched_partition = 16 * 1024;
    // Two partitions at most this many bytes apart are read by one read (the bytes between read and dropped).
    uint64_t merge_gap = 4096;
    // No read of the batch spans more than this (unless one partition alone does).
    uint64_t max_read = 128 * 1024;
};

// What locate_partitions found: the batch's keys the sstable holds (their indexes in the batch, ascending) and,
// for each, where it lies (make_located_sstable_reader's input, in the same order).
struct located_batch {
    std::vector<size_t> keys;
    std::vector<located_partition> partitions;
};

// Figures of the batches (tests, benchmarks): keys probed and admitted by the filter, index page lookups, Data.db
// reads issued and the partitions they carried.
struct partition_batch_stats {
    uint64_t probes = 0;
    uint64_t admitted = 0;
    uint64_t page_lookups = 0;
    uint64_t data_reads = 0;
    uint64_t prefetched = 0;
};

// The keys sst's bloom filter admits (their indexes, ascending); hashes[i]: keys[i]'s bloom_filter::hash_of. A
// batch over many sstables probes every filter first and looks further only in the sstables that admit a key.
std::vector<size_t> probe_filter(const sstable& sst, std::span<const bloom_filter::hash_type> hashes,
                                 partition_batch_stats* stats = nullptr);

// As locate_partitions, for the keys of `keys` that `admitted` names (probe_filter's answer): no filter probe.
future<located_batch> locate_admitted(const sstable& sst, std::span<const dht::decorated_key> keys,
                                      std::vector<size_t> admitted, const reader_permit& permit,
                                      partition_batch_options opts = {}, partition_batch_stats* stats = nullptr);

// Locates keys (in ring order, distinct) in sst through its shared index caches (index_reader::find_all), reading
// the small partitions' bytes. hashes: the keys' bloom_filter::hash_of, one per key, so that a batch over many
// sstables hashes each key once (empty: computed here). permit: the batch's; its deadline is checked before the index lookups and the reads.
// Errors as the sstable reader's (malformed_sstable_exception, std::system_error naming the file).
future<located_batch> locate_partitions(const sstable& sst, std::span<const dht::decorated_key> keys,
                                        std::span<const bloom_filter::hash_type> hashes, const reader_permit& permit, partition_batch_options opts = {},
                                        partition_batch_stats* stats = nullptr);

} // namespace reef::sstables
