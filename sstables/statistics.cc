// Statistics.db parsing. See statistics.hh and FORMAT.md ("Statistics.db").
#include "sstables/statistics.hh"

#include "sstables/byte_reader.hh"
#include "utils/crc32.hh"

#include <algorithm>
#include <cstring>

namespace reef::sstables {

statistics_features features_of(sstable_version v) {
    statistics_features f;
    f.has_metadata_checksum = f.has_pending_repair = f.has_is_transient = v >= sstable_version::na;
    f.has_originating_host_id = v == sstable_version::me || v >= sstable_version::nb;
    f.has_legacy_min_max = v <= sstable_version::nb;
    f.has_accurate_min_max = v >= sstable_version::md && v <= sstable_version::nb;
    f.has_uint_deletion_time = f.has_improved_min_max = f.has_partition_level_deletions_marker = f.has_key_range =
        f.has_token_space_coverage = v >= sstable_version::oa;
    return f;
}

namespace {

// A count read from the file, checked against what the remaining bytes can hold (each item takes at least
// min_item_size bytes), so that a corrupt count fails here instead of reserving gigabytes.
size_t checked_count(byte_reader& r, int64_t n, size_t min_item_size, uint64_t at, std::string_view what) {
    if (n < 0 || uint64_t(n) > r.remaining() / std::max<size_t>(min_item_size, 1)) {
        r.fail_at(at, "impossible count of " + std::string(what) + ": " + std::to_string(n) + " with " +
                          std::to_string(r.remaining()) + " bytes left");
    }
    return size_t(n);
}

estimated_histogram read_estimated_histogram(byte_reader& r, std::string_view what) {
    auto at = r.offset();
    auto n = checked_count(r, r.read_i32(what), 16, at, what);
    estimated_histogram h;
    h.buckets.reserve(n);
    for (size_t i = 0; i < n; ++i) {
        int64_t offset = r.read_i64(what);
        int64_t count = r.read_i64(what);
        h.buckets.emplace_back(offset, count);
    }
    return h;
}

commitlog_position read_commitlog_position(byte_reader& r, std::string_view what) {
    commitlog_position p;
    p.segment_id = r.read_i64(what);
    p.position = r.read_i32(what);
    return p;
}

tombstone_histogram read_tombstone_histogram(byte_reader& r, bool uint_deletion_time) {
    tombstone_histogram h;
    h.max_bin_size = r.read_i32("the tombstone histogram's max bin size");
    auto at = r.offset();
    auto n = checked_count(r, r.read_i32("the tombstone histogram's size"), uint_deletion_time ? 12 : 16, at,
                           "tombstone histogram bins");
    h.bins.reserve(n);
    for (size_t i = 0; i < n; ++i) {
        if (uint_deletion_time) {
            int64_t point = r.read_i64("a tombstone histogram point");
            int32_t count = r.read_i32("a tombstone histogram count");
            h.bins.emplace_back(double(point), count);
        } else {
            double point = r.read_double("a tombstone histogram point");
            int64_t count = r.read_i64("a tombstone histogram count");
            h.bins.emplace_back(point, count);
        }
    }
    return h;
}

std::vector<std::vector<std::byte>> read_clustering_values(byte_reader& r, std::string_view what) {
    auto at = r.offset();
    auto n = checked_count(r, r.read_i32(what), 2, at, what);
    std::vector<std::vector<std::byte>> values;
    values.reserve(n);
    for (size_t i = 0; i < n; ++i) {
        auto b = r.read_short_length_bytes(what);
        values.emplace_back(b.begin(), b.end());
    }
    return values;
}

std::optional<uuid_bytes> read_optional_uuid(byte_reader& r, std::string_view what) {
    auto at = r.offset();
    uint8_t present = r.read_u8(what);
    if (present > 1) {
        r.fail_at(at, "expected the presence byte (0 or 1) of " + std::string(what) + ", found " +
                          std::to_string(present));
    }
    if (!present) {
        return std::nullopt;
    }
    auto b = r.read_bytes(16, what);
    uuid_bytes u;
    std::memcpy(u.data(), b.data(), 16);
    return u;
}

validation_metadata read_validation(byte_reader& r) {
    validation_metadata m;
    m.partitioner = byte_reader::to_string(r.read_short_length_bytes("the partitioner class name"));
    m.bloom_filter_fp_chance = r.read_double("the bloom filter false-positive chance");
    return m;
}

compaction_metadata read_compaction(byte_reader& r) {
    compaction_metadata m;
    auto b = r.read_int_length_bytes("the cardinality estimator");
    m.cardinality_estimator.assign(b.begin(), b.end());
    return m;
}

data_type read_type(byte_reader& r, std::string_view what);

std::vector<std::byte> read_vint_bytes(byte_reader& r, std::string_view what) {
    auto b = r.read_vint_length_bytes(what);
    return std::vector<std::byte>(b.begin(), b.end());
}

stats_metadata read_stats(byte_reader& r, const statistics_features& f) {
    stats_metadata s;
    s.estimated_partition_size = read_estimated_histogram(r, "the partition size histogram");
    s.estimated_cells_count = read_estimated_histogram(r, "the cell count histogram");
    s.commitlog_upper_bound = read_commitlog_position(r, "the commit log upper bound");
    s.min_timestamp = r.read_i64("the minimum timestamp");
    s.max_timestamp = r.read_i64("the maximum timestamp");
    s.min_local_deletion_time = r.read_i32("the minimum local deletion time");
    s.max_local_deletion_time = r.read_i32("the maximum local deletion time");
    s.min_ttl = r.read_i32("the minimum TTL");
    s.max_ttl = r.read_i32("the maximum TTL");
    s.compression_ratio = r.read_double("the compression ratio");
    s.uint_deletion_time = f.has_uint_deletion_time;
    s.estimated_tombstone_drop_time = read_tombstone_histogram(r, f.has_uint_deletion_time);
    s.sstable_level = r.read_i32("the sstable level");
    s.repaired_at = r.read_i64("repaired_at");
    if (f.has_legacy_min_max) {
        s.min_clustering_values = read_clustering_values(r, "the minimum clustering values");
        s.max_clustering_values = read_clustering_values(r, "the maximum clustering values");
    } else if (f.has_improved_min_max) {
        auto at = r.offset();
        auto count = r.read_unsigned_vint("the clustering type count");
        // Each type takes at least two bytes (a vint length and a name).
        auto n = checked_count(r, count > uint64_t(INT64_MAX) ? -1 : int64_t(count), 2, at, "clustering types");
        for (size_t i = 0; i < n; ++i) {
            s.clustering_types.push_back(read_type(r, "a clustering type of the covered slice"));
        }
        auto start = read_clustering_bound(r, s.clustering_types);
        auto end = read_clustering_bound(r, s.clustering_types);
        s.covered_clustering.emplace(std::move(start), std::move(end));
    }
    s.has_legacy_counter_shards = r.read_bool("has_legacy_counter_shards");
    s.total_columns_set = r.read_i64("the total of columns set");
    s.total_rows = r.read_i64("the total of rows");
    // Every mx version has the lower bound (mb+) and the intervals (mc+).
    s.commitlog_lower_bound = read_commitlog_position(r, "the commit log lower bound");
    auto at = r.offset();
    auto n = checked_count(r, r.read_i32("the commit log interval count"), 24, at, "commit log intervals");
    s.commitlog_intervals.reserve(n);
    for (size_t i = 0; i < n; ++i) {
        auto start = read_commitlog_position(r, "a commit log interval start");
        auto end = read_commitlog_position(r, "a commit log interval end");
        s.commitlog_intervals.emplace_back(start, end);
    }
    if (f.has_pending_repair) {
        s.pending_repair = read_optional_uuid(r, "the pending repair id");
    }
    if (f.has_is_transient) {
        s.is_transient = r.read_bool("is_transient");
    }
    if (f.has_originating_host_id) {
        s.originating_host_id = read_optional_uuid(r, "the originating host id");
    }
    if (f.has_partition_level_deletions_marker) {
        s.has_partition_level_deletions = r.read_bool("has_partition_level_deletions");
    }
    if (f.has_key_range) {
        s.first_key = read_vint_bytes(r, "the first partition key");
        s.last_key = read_vint_bytes(r, "the last partition key");
    }
    if (f.has_token_space_coverage) {
        s.token_space_coverage = r.read_double("the token space coverage");
    }
    if (f.has_uint_deletion_time) {
        // Cassandra 5.0 sizes this part with 16 bytes per tombstone histogram bin (TombstoneHistogram's
        // serializedSize counts the legacy form) but writes 12, so the part ends in 4 zero bytes per bin (the CRC
        // covers them). A writer without that slip leaves none.
        size_t pad = 4 * s.estimated_tombstone_drop_time.bins.size();
        if (pad > 0 && r.remaining() == pad) {
            auto at = r.offset();
            for (auto b : r.read_bytes(pad, "the stats' padding")) {
                if (b != std::byte{0}) {
                    r.fail_at(at, "expected " + std::to_string(pad) +
                                      " zero bytes of padding (4 per tombstone histogram bin) at the end of the stats");
                }
            }
        }
    }
    return s;
}

data_type read_type(byte_reader& r, std::string_view what) {
    auto at = r.offset();
    auto name = byte_reader::to_string(r.read_vint_length_bytes(what));
    try {
        return parse_class_name(name);
    } catch (const std::exception& e) {
        r.fail_at(at, "expected " + std::string(what) + ", a type class name; cannot parse '" + name + "': " + e.what());
    }
}

std::vector<serialization_header_column> read_columns(byte_reader& r, std::string_view what) {
    auto at = r.offset();
    auto count = r.read_unsigned_vint(what);
    // Each column takes at least two bytes (two vint lengths).
    auto n = checked_count(r, count > uint64_t(INT64_MAX) ? -1 : int64_t(count), 2, at, what);
    std::vector<serialization_header_column> columns;
    columns.reserve(n);
    for (size_t i = 0; i < n; ++i) {
        serialization_header_column c;
        c.name = byte_reader::to_string(r.read_vint_length_bytes("a column name"));
        c.type = read_type(r, "the type of column '" + c.name + "'");
        columns.push_back(std::move(c));
    }
    // Cassandra's Columns order: simple before complex, then by the name's unsigned bytes.
    std::stable_sort(columns.begin(), columns.end(), [](const auto& a, const auto& b) {
        if (a.is_complex() != b.is_complex()) {
            return !a.is_complex();
        }
        return a.name < b.name;
    });
    for (size_t i = 1; i < columns.size(); ++i) {
        if (columns[i].name == columns[i - 1].name) {
            r.fail_at(at, "column '" + columns[i].name + "' appears twice in " + std::string(what));
        }
    }
    return columns;
}

serialization_header read_header(byte_reader& r) {
    serialization_header h;
    // Cassandra's arithmetic: a 64-bit wrap for timestamps, a 32-bit one for deletion times and TTLs.
    h.stats.min_timestamp =
        int64_t(r.read_unsigned_vint("the encoding stats' minimum timestamp") + uint64_t(encoding_timestamp_epoch));
    h.stats.min_local_deletion_time = int32_t(uint32_t(r.read_unsigned_vint("the encoding stats' minimum deletion time")) +
                                              uint32_t(encoding_deletion_time_epoch));
    h.stats.min_ttl = int32_t(uint32_t(r.read_unsigned_vint("the encoding stats' minimum TTL")));
    h.partition_key_type = read_type(r, "the partition key type");
    auto at = r.offset();
    auto count = r.read_unsigned_vint("the clustering column count");
    auto n = checked_count(r, count > uint64_t(INT64_MAX) ? -1 : int64_t(count), 1, at, "clustering types");
    for (size_t i = 0; i < n; ++i) {
        h.clustering_types.push_back(read_type(r, "a clustering column type"));
    }
    h.static_columns = read_columns(r, "the static columns");
    h.regular_columns = read_columns(r, "the regular columns");
    return h;
}

const char* part_name(metadata_type t) {
    switch (t) {
    case metadata_type::validation: return "the validation metadata";
    case metadata_type::compaction: return "the compaction metadata";
    case metadata_type::stats: return "the stats metadata";
    case metadata_type::serialization_header: return "the serialization header";
    }
    return "?";
}

} // namespace

serialization_header parse_serialization_header(std::span<const std::byte> data, const std::string& file,
                                                uint64_t base_offset) {
    byte_reader r(file, data, base_offset);
    auto h = read_header(r);
    if (!r.at_end()) {
        r.fail(std::to_string(r.remaining()) + " unexpected bytes after the serialization header");
    }
    return h;
}

statistics parse_statistics(std::span<const std::byte> data, sstable_version v, const std::string& file) {
    auto f = features_of(v);
    byte_reader r(file, data);
    statistics st;

    auto toc_count = checked_count(r, r.read_i32("the metadata count"), 8, 0, "metadata parts");
    // na+: | count | crc(count) | toc | crc(count, toc) | part 1 | crc(part 1) | ...
    auto check_crc = [&](std::span<const std::byte> covered, std::string_view what) {
        auto at = r.offset();
        auto stored = uint32_t(r.read_i32(what));
        if (stored != utils::crc32(covered)) {
            r.fail_at(at, std::string(what) + " does not match its bytes");
        }
    };
    if (f.has_metadata_checksum) {
        check_crc(data.subspan(0, 4), "the CRC32 of the metadata count");
    }
    for (size_t i = 0; i < toc_count; ++i) {
        auto at = r.offset();
        int32_t type = r.read_i32("a metadata type");
        int32_t offset = r.read_i32("a metadata offset");
        if (type < 0 || type > int32_t(metadata_type::serialization_header)) {
            r.fail_at(at, "unknown metadata type " + std::to_string(type));
        }
        for (auto& [t, o] : st.toc) {
            if (t == metadata_type(type)) {
                r.fail_at(at, std::string(part_name(t)) + " is listed twice");
            }
        }
        st.toc.emplace_back(metadata_type(type), uint32_t(offset));
        if (offset < 0 || uint64_t(offset) > data.size()) {
            r.fail_at(at + 4, "the offset of " + std::string(part_name(metadata_type(type))) + " (" +
                                  std::to_string(offset) + ") is outside the file (" + std::to_string(data.size()) +
                                  " bytes)");
        }
    }
    if (f.has_metadata_checksum) {
        // Covers the count and the entries (the CRC before them is not part of it).
        uint32_t crc = utils::crc32(data.subspan(0, 4));
        crc = utils::crc32_update(crc, data.subspan(8, r.position() - 8));
        auto at = r.offset();
        auto stored = uint32_t(r.read_i32("the CRC32 of the table of contents"));
        if (stored != crc) {
            r.fail_at(at, "the CRC32 of the table of contents does not match its bytes");
        }
    }
    // The parts lie one after the other in TOC order, after the TOC.
    size_t toc_end = r.position();
    for (size_t i = 0; i < st.toc.size(); ++i) {
        auto [type, start] = st.toc[i];
        size_t end = i + 1 < st.toc.size() ? st.toc[i + 1].second : data.size();
        if (start < toc_end || end < start) {
            r.fail_at(start, std::string(part_name(type)) + " has an impossible offset " + std::to_string(start) +
                                 " (the parts must follow the table of contents in order)");
        }
        toc_end = end;
        size_t length = end - start;
        if (f.has_metadata_checksum) {
            if (length < 4) {
                r.fail_at(start, std::string(part_name(type)) + " is too short to hold its CRC32");
            }
            length -= 4;
            auto body = data.subspan(start, length);
            auto stored = utils::read_be_unchecked<uint32_t>(data.data() + start + length);
            if (stored != utils::crc32(body)) {
                r.fail_at(start + length, "the CRC32 of " + std::string(part_name(type)) + " does not match its bytes");
            }
        }
        byte_reader pr(file, data.subspan(start, length), start);
        switch (type) {
        case metadata_type::validation: st.validation = read_validation(pr); break;
        case metadata_type::compaction: st.compaction = read_compaction(pr); break;
        case metadata_type::stats: st.stats = read_stats(pr, f); break;
        case metadata_type::serialization_header:
            st.header = read_header(pr);
            st.header->version = v;
            break;
        }
        if (!pr.at_end()) {
            pr.fail(std::to_string(pr.remaining()) + " unexpected bytes at the end of " + part_name(type));
        }
    }
    if (!st.header) {
        throw malformed_sstable_exception(file, "Statistics.db has no serialization header");
    }
    if (!st.validation) {
        throw malformed_sstable_exception(file, "Statistics.db has no validation metadata (partitioner)");
    }
    return st;
}

} // namespace reef::sstables
