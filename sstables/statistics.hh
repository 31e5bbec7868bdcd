// Statistics.db of an mx sstable (mc, md, me, na, nb, oa): its table of contents and the four metadata parts,
// validation, compaction, stats and the serialization header. Parsing checks every length and checksum and
// throws malformed_sstable_exception (file, offset, what was expected) on anything it cannot read.
#pragma once

#include "sstables/clustering_bound.hh"
#include "sstables/serialization_header.hh"
#include "sstables/version.hh"

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace reef::sstables {

// Cassandra's MetadataType, in ordinal order: the numbers Statistics.db's table of contents holds.
enum class metadata_type : uint32_t { validation = 0, compaction = 1, stats = 2, serialization_header = 3 };

struct validation_metadata {
    std::string partitioner;  // a class name: "org.apache.cassandra.dht.Murmur3Partitioner"
    double bloom_filter_fp_chance = 0;
};

struct compaction_metadata {
    // The HyperLogLog++ cardinality estimator of the partition keys, as serialized by the writer (kept raw).
    std::vector<std::byte> cardinality_estimator;
};

// EstimatedHistogram as serialized: (bucket offset, count) pairs. The first pair repeats the first offset
// (Cassandra writes offsets[i == 0 ? 0 : i - 1]); the last bucket counts values above the largest offset.
struct estimated_histogram {
    std::vector<std::pair<int64_t, int64_t>> buckets;
};

// A commit log position: segment id and offset in it (CommitLogPosition).
struct commitlog_position {
    int64_t segment_id = 0;
    int32_t position = 0;
    bool operator==(const commitlog_position&) const = default;
};

// The tombstone drop-time histogram (StreamingHistogram / TombstoneHistogram): (point, count) bins. mc..nb store
// each bin as a double point and an int64 count, oa as an int64 point and an int32 count (held here alike).
struct tombstone_histogram {
    int32_t max_bin_size = 0;
    std::vector<std::pair<double, int64_t>> bins;
};

using uuid_bytes = std::array<uint8_t, 16>;

struct stats_metadata {
    estimated_histogram estimated_partition_size;
    estimated_histogram estimated_cells_count;
    commitlog_position commitlog_upper_bound;
    commitlog_position commitlog_lower_bound;
    // The replayed intervals (mc+): (start, end) pairs.
    std::vector<std::pair<commitlog_position, commitlog_position>> commitlog_intervals;
    int64_t min_timestamp = 0;
    int64_t max_timestamp = 0;
    // Seconds, as stored (signed 32-bit). Cassandra's "no deletion" is INT32_MAX (no_deletion_time_32). oa stores
    // the same 32 bits as an unsigned number (uint_deletion_time below).
    int32_t min_local_deletion_time = 0;
    int32_t max_local_deletion_time = 0;
    int32_t min_ttl = 0;
    int32_t max_ttl = 0;
    double compression_ratio = 0;
    tombstone_histogram estimated_tombstone_drop_time;
    int32_t sstable_level = 0;
    int64_t repaired_at = 0;
    // mc..nb: the clustering values of the first and last clustering (mc's may be inaccurate; md+ are exact).
    std::vector<std::vector<std::byte>> min_clustering_values;
    std::vector<std::vector<std::byte>> max_clustering_values;
    bool has_legacy_counter_shards = false;
    int64_t total_columns_set = 0;
    int64_t total_rows = 0;
    // na, nb.
    std::optional<uuid_bytes> pending_repair;
    bool is_transient = false;
    // me, nb, oa.
    std::optional<uuid_bytes> originating_host_id;
    // oa (Cassandra 5.0) only, in file order: the clustering types and the slice of clusterings the sstable covers
    // (two bounds with their kinds; Slice.ALL is an inclusive start and an inclusive end with no values), in place
    // of the min/max clustering values; whether any partition has a partition deletion; the first and the last
    // partition key; the fraction of the token ring the sstable spans.
    bool uint_deletion_time = false;
    std::vector<data_type> clustering_types;
    std::optional<std::pair<clustering_bound, clustering_bound>> covered_clustering;
    bool has_partition_level_deletions = false;
    std::optional<std::vector<std::byte>> first_key;
    std::optional<std::vector<std::byte>> last_key;
    std::optional<double> token_space_coverage;
};

struct statistics {
    // The table of contents: each part's type and offset, in file order.
    std::vector<std::pair<metadata_type, uint32_t>> toc;
    std::optional<validation_metadata> validation;
    std::optional<compaction_metadata> compaction;
    std::optional<stats_metadata> stats;
    std::optional<serialization_header> header;
};

// What each version's Statistics.db holds (Cassandra 5.0's BigFormat.BigVersion flags).
struct statistics_features {
    bool has_metadata_checksum = false;  // na+: a CRC32 after the TOC and after each part
    bool has_pending_repair = false;     // na+
    bool has_is_transient = false;       // na+
    bool has_originating_host_id = false;  // me, nb+
    bool has_accurate_min_max = false;   // md..nb
    bool has_legacy_min_max = false;     // mc..nb: min/max clustering values
    // oa+: uint32 deletion times (stats, tombstone histogram), the covered clustering slice in place of the legacy
    // min/max, the partition-deletion marker, the key range and the token space coverage.
    bool has_uint_deletion_time = false;
    bool has_improved_min_max = false;
    bool has_partition_level_deletions_marker = false;
    bool has_key_range = false;
    bool has_token_space_coverage = false;
};
statistics_features features_of(sstable_version v);

// Parses the whole file's bytes. `file` names the file in errors. Throws malformed_sstable_exception.
statistics parse_statistics(std::span<const std::byte> data, sstable_version v, const std::string& file);

// Parses one serialization header part (the bytes of the part alone, offsets relative to base_offset).
serialization_header parse_serialization_header(std::span<const std::byte> data, const std::string& file,
                                                uint64_t base_offset = 0);

} // namespace reef::sstables
