// Per shard: the table's sstables, memtables and stats read synchronously, the files' sizes stat'ed by a blocking
// call; the shards' figures are then merged on the caller's shard.
#include "api/table_metrics.hh"

#include "db/database.hh"
#include "db/table.hh"
#include "runtime/blocking.hh"
#include "runtime/smp.hh"

#include <algorithm>
#include <filesystem>
#include <string>
#include <system_error>

namespace reef::api {

table_figures table_figures::merge(table_figures a, const table_figures& b) {
    a.live_sstables += b.live_sstables;
    a.live_disk_bytes += b.live_disk_bytes;
    a.filter_disk_bytes += b.filter_disk_bytes;
    a.snapshot_bytes += b.snapshot_bytes;
    a.memtable_bytes += b.memtable_bytes;
    a.memtable_partitions += b.memtable_partitions;
    a.memtable_switches += b.memtable_switches;
    a.pending_flushes += b.pending_flushes;
    a.filter_memory += b.filter_memory;
    a.summary_memory += b.summary_memory;
    a.compression_memory += b.compression_memory;
    a.compression_ratio_sum += b.compression_ratio_sum;
    a.compressed_sstables += b.compressed_sstables;
    a.estimated_partitions += b.estimated_partitions;
    if (b.min_partition_size) {
        a.min_partition_size = a.min_partition_size ? std::min(*a.min_partition_size, *b.min_partition_size)
                                                    : *b.min_partition_size;
    }
    a.max_partition_size = std::max(a.max_partition_size, b.max_partition_size);
    a.partition_size_sum += b.partition_size_sum;
    a.read_latency = latency_summary::merge(a.read_latency, b.read_latency);
    a.write_latency = latency_summary::merge(a.write_latency, b.write_latency);
    a.read_rate = utils::rate_meter::add(a.read_rate, b.read_rate);
    a.write_rate = utils::rate_meter::add(a.write_rate, b.write_rate);
    return a;
}

namespace {

// Cassandra's EstimatedHistogram as Statistics.db stores it: pair i is (offsets[i-1], count of bucket i) with
// bucket i counting values in (offsets[i-1], offsets[i]]; pair 0 repeats offsets[0]; the last bucket is the overflow.
void add_partition_sizes(table_figures& f, const sstables::estimated_histogram& h) {
    auto& b = h.buckets;
    for (size_t i = 0; i < b.size(); ++i) {
        auto count = b[i].second;
        if (count <= 0) {
            continue;
        }
        int64_t lower = i == 0 ? 0 : b[i].first;
        // The overflow bucket's values are above the largest offset: counted at it.
        int64_t upper = i + 1 < b.size() ? b[i + 1].first : b[i].first;
        f.estimated_partitions += uint64_t(count);
        f.min_partition_size = f.min_partition_size ? std::min(*f.min_partition_size, lower) : lower;
        f.max_partition_size = std::max(f.max_partition_size, upper);
        f.partition_size_sum += double(count) * double(upper);
    }
}

void add_sstable(table_figures& f, const sstables::sstable& sst) {
    auto& c = sst.components();
    ++f.live_sstables;
    f.filter_memory += c.filter.bits().size();
    for (auto& e : c.summary.entries) {
        f.summary_memory += e.key.size() + sizeof(e.index_position);
    }
    if (c.compression) {
        f.compression_memory += c.compression->chunk_offsets.size() * sizeof(uint64_t);
    }
    if (auto& stats = sst.statistics().stats) {
        // Cassandra writes -1 (NO_COMPRESSION_RATIO) for an uncompressed sstable.
        if (c.compression && stats->compression_ratio > 0) {
            f.compression_ratio_sum += stats->compression_ratio;
            ++f.compressed_sstables;
        }
        add_partition_sizes(f, stats->estimated_partition_size);
    }
}

struct file_sizes {
    uint64_t all = 0;
    uint64_t filter = 0;
    uint64_t snapshots = 0;
};

// Blocking: the sizes of the files (a vanished one counts 0) and of the snapshot directories' files.
file_sizes stat_files(const std::vector<std::pair<std::string, bool>>& files, const std::vector<std::string>& snapshot_dirs) {
    file_sizes out;
    for (auto& [path, is_filter] : files) {
        std::error_code ec;
        auto n = std::filesystem::file_size(path, ec);
        if (ec) {
            continue;
        }
        out.all += n;
        if (is_filter) {
            out.filter += n;
        }
    }
    for (auto& dir : snapshot_dirs) {
        std::error_code ec;
        for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
             !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
            std::error_code size_ec;
            if (it->is_regular_file(size_ec)) {
                auto n = it->file_size(size_ec);
                out.snapshots += size_ec ? 0 : n;
            }
        }
    }
    return out;
}

future<table_figures> shard_figures(database& db, std::vector<table_id> ids, bool with_disk) {
    table_figures f;
    std::vector<std::pair<std::string, bool>> files;
    std::vector<std::string> snapshot_dirs;
    for (auto& id : ids) {
        auto t = db.find_table_shared(id);
        if (!t) {
            continue;
        }
        for (auto& sst : t->sstables()) {
            add_sstable(f, *sst);
            if (with_disk) {
                auto listed = sst->components().listed.components;
                listed.insert(sstables::component_type::toc);
                for (auto c : listed) {
                    files.emplace_back(sst->desc().filename(c), c == sstables::component_type::filter);
                }
            }
        }
        f.memtable_bytes += t->active_memtable().occupancy();
        f.memtable_partitions += t->active_memtable().partition_count();
        f.pending_flushes += t->sealed_memtable_count();
        f.memtable_switches += t->flushes() + t->sealed_memtable_count();
        if (auto* stats = db.find_table_stats(id)) {
            auto now = utils::rate_meter::clock::now();
            f.read_latency = latency_summary::merge(f.read_latency, stats->reads.latency);
            f.write_latency = latency_summary::merge(f.write_latency, stats->writes.latency);
            f.read_rate = utils::rate_meter::add(f.read_rate, stats->reads.meter.read(now));
            f.write_rate = utils::rate_meter::add(f.write_rate, stats->writes.meter.read(now));
        }
        if (with_disk && this_shard_id() == 0) {
            // The directories are the shards' shared ones: their snapshots are counted once.
            for (auto& dir : db.table_directories(*t->schema())) {
                snapshot_dirs.push_back(dir + "/snapshots");
            }
        }
    }
    if (with_disk && (!files.empty() || !snapshot_dirs.empty())) {
        auto stat = [&files, &snapshot_dirs] { return stat_files(files, snapshot_dirs); };
        auto sizes = co_await run_blocking(stat);
        f.live_disk_bytes = sizes.all;
        f.filter_disk_bytes = sizes.filter;
        f.snapshot_bytes = sizes.snapshots;
    }
    co_return f;
}

} // namespace

future<table_figures> gather_table_figures(sharded<database>& db, std::vector<table_id> tables, bool with_disk) {
    auto mapper = [tables, with_disk](database& d) { return shard_figures(d, tables, with_disk); };
    auto merge = [](table_figures a, table_figures b) { return table_figures::merge(std::move(a), b); };
    table_figures none;
    auto out = co_await db.map_reduce0(mapper, none, merge);
    co_return out;
}

} // namespace reef::api
