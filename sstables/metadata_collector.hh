// What the writer learns while it writes, for Statistics.db (Cassandra's MetadataCollector): timestamp,
// deletion time and TTL bounds, the partition size and cell count histograms, the tombstone drop-time histogram,
// the smallest and largest clustering position, row and column totals; and Statistics.db's serialization (mc..nb
// layouts), field by field as Cassandra 3.11.19 (me) and 4.0+ (na, nb) write them.
#pragma once

#include "mutation/fragment.hh"
#include "sstables/statistics.hh"

#include <map>
#include <optional>
#include <string>

namespace reef::sstables {

// Cassandra's EstimatedHistogram with its bucket offsets (1, 2, 3, ... growing by 1.2 each).
class estimated_histogram_builder {
public:
    explicit estimated_histogram_builder(size_t bucket_count);
    void add(int64_t value);
    estimated_histogram build() const;

private:
    std::vector<int64_t> _offsets;
    std::vector<int64_t> _counts;  // one more than offsets: the overflow bucket
};

class metadata_collector {
public:
    // The histograms' sizes and the tombstone histogram's form depend on the version written.
    metadata_collector(const schema& s, sstable_version v);

    void update_timestamp(write_time::timestamp_type ts);
    void update_local_deletion_time(int32_t ldt);
    void update_ttl(int32_t ttl);
    void update(const tombstone& t);
    void update(const row_marker& m);
    void update(const atomic_cell& c);
    // A row's cells, marker and deletion; counts the row and its columns (static rows too).
    void update_row(const row_marker& m, tombstone deletion, const row& cells);
    // A row's or a range tombstone marker's position: the smallest and the largest seen (in the table's
    // clustering order, bounds by their kind, over all partitions) give min/max clustering values, their
    // prefixes' values (Cassandra's MetadataCollector since CASSANDRA-14861, md and later).
    void update_clustering(const position_in_partition& p);
    void add_partition(uint64_t size_bytes);

    // Statistics.db's stats part; compression_ratio is -1 for uncompressed sstables.
    stats_metadata build(double compression_ratio) const;

private:
    sstable_version _version;
    position_in_partition_comparator _position_cmp;
    estimated_histogram_builder _partition_size;
    estimated_histogram_builder _cells_per_partition;
    int64_t _cells_in_partition = 0;
    bool _timestamp_set = false, _ldt_set = false, _ttl_set = false;
    int64_t _min_ts = 0, _max_ts = 0;
    int32_t _min_ldt = 0, _max_ldt = 0;
    int32_t _min_ttl = 0, _max_ttl = 0;
    std::map<int32_t, int64_t> _drop_times;
    std::optional<position_in_partition> _min_clustering, _max_clustering;
    int64_t _total_columns = 0, _total_rows = 0;
};

// Statistics.db's bytes for version v (mc..nb): the table of contents and the four parts, with the na+ CRCs.
std::string serialize_statistics(const validation_metadata& validation, const compaction_metadata& compaction,
                                 const stats_metadata& stats, const serialization_header& header, sstable_version v);

// The compaction part's cardinality estimator: stream-lib's HyperLogLogPlus (p 13, sp 25) offered each
// partition key's MurmurHash64A (Cassandra's MurmurHash.hash2_64, seed 0), serialized in its normal (dense)
// form: 8192 registers of 5 bits, 6 to a 32-bit word. (Cassandra starts sparse and goes dense past ~1/4 of
// the dense size; a reader accepts either form.)
class cardinality_estimator {
public:
    cardinality_estimator();
    void offer(std::string_view key);
    std::vector<std::byte> serialize() const;

private:
    std::vector<uint32_t> _words;
};

// Cassandra's MurmurHash.hash2_64 (MurmurHash64A; the tail bytes are sign-extended, as Java's (long) byte is).
int64_t murmur_hash2_64(std::string_view key, int64_t seed);

} // namespace reef::sstables
