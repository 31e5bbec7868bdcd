// dump-statistics. See sstable_dump_statistics.hh.
#include "tools/sstable_dump_statistics.hh"

#include "runtime/file.hh"
#include "schema/value_format.hh"
#include "sstables/sstable.hh"
#include "sstables/statistics.hh"
#include "utils/json_writer.hh"

#include <fmt/format.h>

#include <cmath>

namespace reef::tools {

using namespace reef::sstables;
using utils::json_writer;

namespace {

const char* metadata_name(metadata_type t) {
    switch (t) {
    case metadata_type::validation: return "validation";
    case metadata_type::compaction: return "compaction";
    case metadata_type::stats: return "stats";
    case metadata_type::serialization_header: return "serialization_header";
    }
    return "unknown";
}

// JSON has no NaN or infinity: those print as strings.
void write_double(json_writer& w, double v) {
    if (std::isfinite(v)) {
        w.raw(fmt::format("{}", v));
    } else {
        w.value(fmt::format("{}", v));
    }
}

void write_hex(json_writer& w, std::span<const std::byte> b) {
    w.value(hex_encode(bytes_view(reinterpret_cast<const uint8_t*>(b.data()), b.size())));
}

void write_uuid(json_writer& w, const uuid_bytes& u) {
    w.value(hex_encode(bytes_view(u.data(), u.size())));
}

void write_histogram(json_writer& w, const estimated_histogram& h) {
    w.begin_array(true);
    for (auto& [offset, count] : h.buckets) {
        w.begin_array(true).value(offset).value(count).end_array();
    }
    w.end_array();
}

void write_position(json_writer& w, const commitlog_position& p) {
    w.begin_object(true).member("segment_id", p.segment_id).member("position", p.position).end_object();
}

void write_columns(json_writer& w, const std::vector<serialization_header_column>& cols) {
    w.begin_array();
    for (auto& c : cols) {
        w.begin_object(true).member("name", c.name).member("type", c.type->class_name()).end_object();
    }
    w.end_array();
}

void write_stats(json_writer& w, const stats_metadata& s) {
    w.begin_object();
    w.key("estimated_partition_size");
    write_histogram(w, s.estimated_partition_size);
    w.key("estimated_cells_count");
    write_histogram(w, s.estimated_cells_count);
    w.key("commitlog_upper_bound");
    write_position(w, s.commitlog_upper_bound);
    w.key("commitlog_lower_bound");
    write_position(w, s.commitlog_lower_bound);
    w.key("commitlog_intervals").begin_array();
    for (auto& [start, end] : s.commitlog_intervals) {
        w.begin_object(true).key("start");
        write_position(w, start);
        w.key("end");
        write_position(w, end);
        w.end_object();
    }
    w.end_array();
    w.member("min_timestamp", s.min_timestamp);
    w.member("max_timestamp", s.max_timestamp);
    // oa stores them unsigned.
    w.member("min_local_deletion_time",
             s.uint_deletion_time ? int64_t(uint32_t(s.min_local_deletion_time)) : int64_t(s.min_local_deletion_time));
    w.member("max_local_deletion_time",
             s.uint_deletion_time ? int64_t(uint32_t(s.max_local_deletion_time)) : int64_t(s.max_local_deletion_time));
    w.member("min_ttl", s.min_ttl);
    w.member("max_ttl", s.max_ttl);
    w.key("compression_ratio");
    write_double(w, s.compression_ratio);
    w.key("estimated_tombstone_drop_time").begin_object();
    w.member("max_bin_size", s.estimated_tombstone_drop_time.max_bin_size);
    w.key("bins").begin_array(true);
    for (auto& [point, count] : s.estimated_tombstone_drop_time.bins) {
        w.begin_array(true);
        write_double(w, point);
        w.value(count).end_array();
    }
    w.end_array();
    w.end_object();
    w.member("sstable_level", s.sstable_level);
    w.member("repaired_at", s.repaired_at);
    for (auto* part : {&s.min_clustering_values, &s.max_clustering_values}) {
        w.key(part == &s.min_clustering_values ? "min_clustering_values" : "max_clustering_values").begin_array(true);
        for (auto& v : *part) {
            write_hex(w, v);
        }
        w.end_array();
    }
    w.member("has_legacy_counter_shards", s.has_legacy_counter_shards);
    w.member("total_columns_set", s.total_columns_set);
    w.member("total_rows", s.total_rows);
    if (s.pending_repair) {
        w.key("pending_repair");
        write_uuid(w, *s.pending_repair);
    }
    w.member("is_transient", s.is_transient);
    if (s.originating_host_id) {
        w.key("originating_host_id");
        write_uuid(w, *s.originating_host_id);
    }
    if (s.covered_clustering) {
        w.key("clustering_types").begin_array(true);
        for (auto& t : s.clustering_types) {
            w.value(t->class_name());
        }
        w.end_array();
        w.key("covered_clustering").begin_object(true);
        for (auto* b : {&s.covered_clustering->first, &s.covered_clustering->second}) {
            w.key(b == &s.covered_clustering->first ? "start" : "end").begin_object(true);
            w.member("kind", std::string(to_string(b->kind)));
            w.key("values").begin_array(true);
            for (auto v : b->prefix.components()) {
                w.value(hex_encode(v));
            }
            w.end_array().end_object();
        }
        w.end_object();
    }
    if (s.uint_deletion_time) {
        w.member("has_partition_level_deletions", s.has_partition_level_deletions);
    }
    for (auto* k : {&s.first_key, &s.last_key}) {
        if (*k) {
            w.key(k == &s.first_key ? "first_key" : "last_key");
            write_hex(w, **k);
        }
    }
    if (s.token_space_coverage) {
        w.key("token_space_coverage");
        write_double(w, *s.token_space_coverage);
    }
    w.end_object();
}

void write_statistics(json_writer& w, const statistics& st) {
    w.begin_object();
    w.key("offsets").begin_object(true);
    for (auto& [type, offset] : st.toc) {
        w.member(metadata_name(type), offset);
    }
    w.end_object();
    if (st.validation) {
        w.key("validation").begin_object();
        w.member("partitioner", st.validation->partitioner);
        w.key("bloom_filter_fp_chance");
        write_double(w, st.validation->bloom_filter_fp_chance);
        w.end_object();
    }
    if (st.compaction) {
        w.key("compaction").begin_object();
        w.key("cardinality");
        write_hex(w, st.compaction->cardinality_estimator);
        w.end_object();
    }
    if (st.stats) {
        w.key("stats");
        write_stats(w, *st.stats);
    }
    if (st.header) {
        auto& h = *st.header;
        w.key("serialization_header").begin_object();
        w.member("min_timestamp", h.stats.min_timestamp);
        w.member("min_local_deletion_time", h.stats.min_local_deletion_time);
        w.member("min_ttl", h.stats.min_ttl);
        w.member("partition_key_type", h.partition_key_type->class_name());
        w.key("clustering_key_types").begin_array(true);
        for (auto& t : h.clustering_types) {
            w.value(t->class_name());
        }
        w.end_array();
        w.key("static_columns");
        write_columns(w, h.static_columns);
        w.key("regular_columns");
        write_columns(w, h.regular_columns);
        w.end_object();
    }
    w.end_object();
}

} // namespace

future<std::string> dump_statistics_json(std::vector<descriptor> sstables) {
    json_writer w;
    w.begin_object();
    w.key("sstables").begin_object();
    for (auto& d : sstables) {
        auto st = co_await load_statistics(d);
        w.key(d.filename(component_type::data));
        write_statistics(w, st);
    }
    w.end_object();
    w.end_object();
    auto out = w.take();
    out += '\n';
    co_return out;
}

} // namespace reef::tools
