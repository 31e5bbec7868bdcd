// table_metrics: one or more tables' figures gathered from every shard and added up, as the REST API's column_family
// metrics and storage_service/load report them. Promises: real values only (sstables, memtables, the database's
// read/write stats); what Reef does not keep is not here.
#pragma once

#include "db/database.hh"
#include "db/table_stats.hh"
#include "runtime/sharded.hh"
#include "utils/rate_meter.hh"

#include <cstdint>
#include <optional>
#include <vector>

namespace reef::api {

struct table_figures {
    uint64_t live_sstables = 0;
    // Bytes of the live sstables' component files, and of their Filter.db alone (with_disk only).
    uint64_t live_disk_bytes = 0;
    uint64_t filter_disk_bytes = 0;
    // Bytes of the files under the tables' snapshots/ directories (with_disk only; counted once, not per shard).
    uint64_t snapshot_bytes = 0;
    // The active memtables: occupancy (db/memtable.hh) and partitions.
    uint64_t memtable_bytes = 0;
    uint64_t memtable_partitions = 0;
    // Memtables sealed since the table (this version of it) started on each shard: flushed or waiting to be.
    uint64_t memtable_switches = 0;
    uint64_t pending_flushes = 0;
    // In-memory sizes of the sstables' bloom filter bits, summary entries and compression chunk offsets.
    uint64_t filter_memory = 0;
    uint64_t summary_memory = 0;
    uint64_t compression_memory = 0;
    // Statistics.db's compression ratios of the compressed sstables: their sum and number.
    double compression_ratio_sum = 0;
    uint64_t compressed_sstables = 0;
    // Statistics.db's estimated partition size histograms, merged: partitions, smallest and largest bucket bounds,
    // and the sum of each bucket's count times its upper bound (for the mean).
    uint64_t estimated_partitions = 0;
    std::optional<int64_t> min_partition_size;
    int64_t max_partition_size = 0;
    double partition_size_sum = 0;
    latency_summary read_latency;
    latency_summary write_latency;
    utils::rate_meter::figures read_rate;
    utils::rate_meter::figures write_rate;

    // Both sets of tables' (or shards') figures.
    static table_figures merge(table_figures a, const table_figures& b);
    // The mean compression ratio, 0 with no compressed sstable (ScyllaDB's answer).
    double compression_ratio() const noexcept {
        return compressed_sstables ? compression_ratio_sum / double(compressed_sstables) : 0;
    }
    // The mean partition size, truncated as Cassandra 3.x does (0 with no partition).
    int64_t mean_partition_size() const noexcept {
        return estimated_partitions ? int64_t(partition_size_sum / double(estimated_partitions)) : 0;
    }
};

// The figures of `tables` summed over them and over every shard; with_disk stats the sstables' files (a blocking
// call per file, off the shards' loops). A table a shard does not have (dropped meanwhile) adds nothing.
future<table_figures> gather_table_figures(sharded<database>& db, std::vector<table_id> tables, bool with_disk);

} // namespace reef::api
