// The mx sstable writer: a fragment stream becomes a whole `me` sstable (Data.db LZ4-compressed or plain with
// CRC.db, Index.db with promoted indexes, Summary.db, Filter.db, Statistics.db, Digest.crc32, TOC.txt), written
// with large aligned O_DIRECT writes, fsynced, and made visible atomically: TOC.txt appears (by rename) last.
#pragma once

#include "reader/mutation_reader.hh"
#include "runtime/future.hh"
#include "schema/schema.hh"
#include "sstables/compression_info.hh"
#include "sstables/serialization_header.hh"
#include "sstables/statistics.hh"
#include "sstables/version.hh"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace reef::sstables {

struct writer_options {
    sstable_version version = sstable_version::me;
    // Data.db's compressor; nullopt: uncompressed, checked by CRC.db.
    std::optional<compression_algorithm> compression = compression_algorithm::lz4;
    // Uncompressed bytes per compressed chunk (a power of two). 64 KiB: what Cassandra 3.11, the `me` writer, uses.
    uint32_t chunk_length = 64 * 1024;
    // Bytes per CRC.db checksum of an uncompressed Data.db (Cassandra's 64 KiB).
    uint32_t crc_chunk_size = 64 * 1024;
    // A promoted index block is closed once it holds this many bytes (Cassandra's column_index_size_in_kb: 64).
    uint64_t column_index_size = 64 * 1024;
    // Summary.db samples every min_index_interval-th Index.db entry.
    uint32_t min_index_interval = 128;
    // 1: no filter, and no Filter.db (Cassandra's writers list none in the TOC; readers take every key as present).
    double bloom_filter_fp_chance = 0.01;
    // The key count the filter is sized for; nullopt: the partitions actually written.
    std::optional<uint64_t> estimated_partitions;
    // The deltas' base in Data.db: any values are correct (deltas wrap); the data's minimums make it smallest.
    encoding_stats stats{encoding_timestamp_epoch, encoding_deletion_time_epoch, 0};
    std::string partitioner = "org.apache.cassandra.dht.Murmur3Partitioner";
    std::optional<uuid_bytes> originating_host_id;
    // The commitlog positions the data covers (Statistics.db's commitlog intervals, Cassandra's IntervalSet):
    // a flush's [least, greatest] position of its memtable, a compaction's inputs' intervals. Empty: none
    // (lower and upper bound CommitLogPosition.NONE).
    std::vector<std::pair<commitlog_position, commitlog_position>> commitlog_intervals;
    // Non-zero: the writer stops reading the stream after the partition that takes Data.db (uncompressed) to this
    // length, leaving the rest of the stream for the next sstable (a compaction's output split into a run).
    uint64_t max_data_length = 0;
};

// Whether an sstable written at this false-positive chance has a Filter.db: not at 1, as in Cassandra.
inline bool writes_filter(double bloom_filter_fp_chance) { return bloom_filter_fp_chance < 1; }

// The options a table's schema asks for: its compression map ({'enabled': 'false'}, 'class',
// 'chunk_length_in_kb'), bloom_filter_fp_chance and min_index_interval; the defaults above otherwise.
writer_options writer_options_for(const schema& s);

// The encoding stats of a set of fragments (their minimum timestamp, deletion time and TTL, as Cassandra's
// EncodingStats.Collector counts them); for callers that know the data before writing it (a memtable flush).
class encoding_stats_collector {
public:
    void update(const mutation_fragment& f);
    encoding_stats get() const;

private:
    void update_timestamp(write_time::timestamp_type ts);
    void update_ldt(int32_t ldt);
    void update_ttl(int32_t ttl);
    void update(const tombstone& t);
    void update(const atomic_cell& c);
    void update(const row& r);
    bool _ts_set = false, _ldt_set = false, _ttl_set = false;
    int64_t _ts = 0;
    int32_t _ldt = 0, _ttl = 0;
};

struct written_sstable {
    descriptor desc;
    uint64_t partitions = 0;
    uint64_t data_length = 0;      // uncompressed
    uint64_t data_file_size = 0;   // as stored
    std::vector<component_type> components;
    // It stopped at writer_options::max_data_length: the stream may hold more partitions.
    bool stopped_at_length = false;
};

// Writes the stream (whole partitions in ring order, fragments valid) as sstable d (version d.version,
// which must be one of mc..nb; options.version is ignored in favour of it). Throws std::system_error when a
// component of that generation already exists; on any failure removes what it wrote and rethrows.
// The commit protocol (FORMAT.md, "Writing"): TOC.txt.tmp first (fsynced with the directory), every other
// component, their fsyncs and the directory's, then TOC.txt.tmp renamed to TOC.txt and the directory fsynced.
future<written_sstable> write_sstable(mutation_reader& stream, schema_ptr s, descriptor d, writer_options opts);

// Removes the leftovers of writes that did not finish in directory dir: every generation with a TOC.txt.tmp
// and no TOC.txt loses all of its component files, the TOC.txt.tmp last (so a crash during the removal is
// finished by the next call); a stray TOC.txt.tmp beside a TOC.txt is removed. Returns the generations removed.
// Sstable-opening code calls it before loading a directory. `owned`, when given, limits it to the generations
// for which it returns true (a shard of a shared table directory must leave the other shards' writes alone).
future<std::vector<descriptor>> remove_partial_sstables(std::string dir,
                                                        std::function<bool(const descriptor&)> owned = {});

} // namespace reef::sstables
