// Statistics.db collection and writing. See metadata_collector.hh and FORMAT.md ("Statistics.db").
#include "sstables/metadata_collector.hh"

#include "sstables/row_serializer.hh"
#include "utils/big_endian.hh"
#include "utils/crc32.hh"
#include "utils/vint.hh"

#include <cmath>
#include <cstring>
#include <limits>

namespace reef::sstables {

namespace {

// StreamingHistogram's bin limit (SSTable.TOMBSTONE_HISTOGRAM_BIN_SIZE).
constexpr size_t tombstone_histogram_bins = 100;

template <typename T>
void put(std::string& out, T v) {
    char b[sizeof(T)];
    utils::write_be_unchecked<T>(b, v);
    out.append(b, sizeof(T));
}

void put_double(std::string& out, double d) {
    uint64_t u;
    std::memcpy(&u, &d, 8);
    put<uint64_t>(out, u);
}

// Java's writeUTF for ASCII names: a 2-byte length, then the bytes.
void put_short_string(std::string& out, std::string_view s) {
    put<uint16_t>(out, uint16_t(s.size()));
    out.append(s);
}

void put_vint_string(std::string& out, std::string_view s) {
    utils::append_unsigned_vint(out, s.size());
    out.append(s);
}

void put_histogram(std::string& out, const estimated_histogram& h) {
    put<int32_t>(out, int32_t(h.buckets.size()));
    for (auto& [o, c] : h.buckets) {
        put<int64_t>(out, o);
        put<int64_t>(out, c);
    }
}

void put_position(std::string& out, const commitlog_position& p) {
    put<int64_t>(out, p.segment_id);
    put<int32_t>(out, p.position);
}

void put_clustering(std::string& out, const std::vector<std::vector<std::byte>>& values) {
    put<int32_t>(out, int32_t(values.size()));
    for (auto& v : values) {
        put<uint16_t>(out, uint16_t(v.size()));
        out.append(reinterpret_cast<const char*>(v.data()), v.size());
    }
}

void put_optional_uuid(std::string& out, const std::optional<uuid_bytes>& u) {
    out.push_back(u ? 1 : 0);
    if (u) {
        out.append(reinterpret_cast<const char*>(u->data()), 16);
    }
}

std::string serialize_stats(const stats_metadata& s, const statistics_features& f) {
    std::string out;
    put_histogram(out, s.estimated_partition_size);
    put_histogram(out, s.estimated_cells_count);
    put_position(out, s.commitlog_upper_bound);
    put<int64_t>(out, s.min_timestamp);
    put<int64_t>(out, s.max_timestamp);
    put<int32_t>(out, s.min_local_deletion_time);
    put<int32_t>(out, s.max_local_deletion_time);
    put<int32_t>(out, s.min_ttl);
    put<int32_t>(out, s.max_ttl);
    put_double(out, s.compression_ratio);
    put<int32_t>(out, s.estimated_tombstone_drop_time.max_bin_size);
    put<int32_t>(out, int32_t(s.estimated_tombstone_drop_time.bins.size()));
    for (auto& [p, c] : s.estimated_tombstone_drop_time.bins) {
        put_double(out, p);
        put<int64_t>(out, c);
    }
    put<int32_t>(out, s.sstable_level);
    put<int64_t>(out, s.repaired_at);
    put_clustering(out, s.min_clustering_values);
    put_clustering(out, s.max_clustering_values);
    out.push_back(s.has_legacy_counter_shards ? 1 : 0);
    put<int64_t>(out, s.total_columns_set);
    put<int64_t>(out, s.total_rows);
    put_position(out, s.commitlog_lower_bound);
    put<int32_t>(out, int32_t(s.commitlog_intervals.size()));
    for (auto& [a, b] : s.commitlog_intervals) {
        put_position(out, a);
        put_position(out, b);
    }
    if (f.has_pending_repair) {
        put_optional_uuid(out, s.pending_repair);
    }
    if (f.has_is_transient) {
        out.push_back(s.is_transient ? 1 : 0);
    }
    if (f.has_originating_host_id) {
        put_optional_uuid(out, s.originating_host_id);
    }
    return out;
}

std::string serialize_header(const serialization_header& h) {
    std::string out;
    utils::append_unsigned_vint(out, uint64_t(h.stats.min_timestamp) - uint64_t(encoding_timestamp_epoch));
    // Java's int arithmetic widened to long (a negative difference is sign-extended).
    int32_t ldt = int32_t(uint32_t(int32_t(h.stats.min_local_deletion_time)) - uint32_t(encoding_deletion_time_epoch));
    utils::append_unsigned_vint(out, uint64_t(int64_t(ldt)));
    utils::append_unsigned_vint(out, uint64_t(int64_t(int32_t(h.stats.min_ttl))));
    put_vint_string(out, h.partition_key_type->class_name());
    utils::append_unsigned_vint(out, h.clustering_types.size());
    for (auto& t : h.clustering_types) {
        put_vint_string(out, t->class_name());
    }
    for (auto* columns : {&h.static_columns, &h.regular_columns}) {
        utils::append_unsigned_vint(out, columns->size());
        for (auto& c : *columns) {
            put_vint_string(out, c.name);
            put_vint_string(out, c.type->class_name());
        }
    }
    return out;
}

std::vector<std::vector<std::byte>> values_of(const clustering_key_prefix& p) {
    std::vector<std::vector<std::byte>> out;
    for (auto c : p.components()) {
        auto b = reinterpret_cast<const std::byte*>(c.data());
        out.emplace_back(b, b + c.size());
    }
    return out;
}

} // namespace

estimated_histogram_builder::estimated_histogram_builder(size_t bucket_count) {
    int64_t last = 1;
    _offsets.push_back(last);
    while (_offsets.size() < bucket_count) {
        auto next = int64_t(std::llround(double(last) * 1.2));
        if (next == last) {
            ++next;
        }
        _offsets.push_back(next);
        last = next;
    }
    _counts.assign(_offsets.size() + 1, 0);
}

void estimated_histogram_builder::add(int64_t value) {
    auto it = std::lower_bound(_offsets.begin(), _offsets.end(), value);
    ++_counts[size_t(it - _offsets.begin())];
}

estimated_histogram estimated_histogram_builder::build() const {
    estimated_histogram h;
    for (size_t i = 0; i < _counts.size(); ++i) {
        h.buckets.emplace_back(_offsets[i == 0 ? 0 : i - 1], _counts[i]);
    }
    return h;
}

// As the corpus shows them: partition sizes in 150 buckets (up to 1.7 TB), 155 (3.5 TB) in Cassandra 5.0's nb
// (4.0's nb still had 150); cells per partition in 118 buckets (4.1 billion) from md on, 114 in mc.
metadata_collector::metadata_collector(const schema& s, sstable_version v)
    : _version(v)
    , _position_cmp(s)
    , _partition_size(v >= sstable_version::nb ? 155 : 150)
    , _cells_per_partition(v >= sstable_version::md ? 118 : 114) {}

void metadata_collector::update_timestamp(write_time::timestamp_type ts) {
    if (!_timestamp_set) {
        _min_ts = _max_ts = ts;
        _timestamp_set = true;
    }
    _min_ts = std::min(_min_ts, ts);
    _max_ts = std::max(_max_ts, ts);
}

void metadata_collector::update_local_deletion_time(int32_t ldt) {
    if (!_ldt_set) {
        _min_ldt = _max_ldt = ldt;
        _ldt_set = true;
    }
    _min_ldt = std::min(_min_ldt, ldt);
    _max_ldt = std::max(_max_ldt, ldt);
    if (ldt != no_deletion_time_32) {
        // StreamingTombstoneHistogramBuilder (3.11.2+, 4.0) rounds each point up to a multiple of 60 seconds
        // (Java's remainder, saturated at Integer.MAX_VALUE).
        int32_t delta = ldt % 60;
        int32_t point = delta == 0 ? ldt : int32_t(std::min<int64_t>(int64_t(ldt) + 60 - delta, no_deletion_time_32));
        ++_drop_times[point];
    }
}

void metadata_collector::update_ttl(int32_t ttl) {
    if (!_ttl_set) {
        _min_ttl = _max_ttl = ttl;
        _ttl_set = true;
    }
    _min_ttl = std::min(_min_ttl, ttl);
    _max_ttl = std::max(_max_ttl, ttl);
}

void metadata_collector::update(const tombstone& t) {
    if (t) {
        update_timestamp(t.timestamp);
        update_local_deletion_time(deletion_time_32(t.deletion_time));
    }
}

void metadata_collector::update(const row_marker& m) {
    if (m.empty()) {
        return;
    }
    update_timestamp(m.timestamp);
    update_ttl(m.ttl);
    update_local_deletion_time(m.is_expiring() ? deletion_time_32(m.expiry) : no_deletion_time_32);
}

void metadata_collector::update(const atomic_cell& c) {
    update_timestamp(c.timestamp());
    update_ttl(c.ttl());
    update_local_deletion_time(deletion_time_32(c.local_deletion_time()));
    ++_cells_in_partition;
}

void metadata_collector::update_row(const row_marker& m, tombstone deletion, const row& cells) {
    update(m);
    update(deletion);
    int64_t columns = 0;
    for (auto& [id, c] : cells.cells()) {
        if (auto* cell = std::get_if<atomic_cell>(&c)) {
            update(*cell);
            ++columns;
            continue;
        }
        auto& coll = std::get<collection_cells>(c);
        // Rows.collectStats: a complex column counts when it has cells (a collection deletion alone does not).
        columns += coll.cells.empty() ? 0 : 1;
        update(coll.tomb);
        for (auto& [path, cell] : coll.cells) {
            update(cell);
        }
    }
    _total_columns += columns;
    ++_total_rows;
}

void metadata_collector::update_clustering(const position_in_partition& p) {
    if (!_min_clustering || _position_cmp(p, *_min_clustering) < 0) {
        _min_clustering = p;
    }
    if (!_max_clustering || _position_cmp(p, *_max_clustering) > 0) {
        _max_clustering = p;
    }
}

void metadata_collector::add_partition(uint64_t size_bytes) {
    _partition_size.add(int64_t(size_bytes));
    _cells_per_partition.add(_cells_in_partition);
    _cells_in_partition = 0;
}

stats_metadata metadata_collector::build(double compression_ratio) const {
    stats_metadata s;
    s.estimated_partition_size = _partition_size.build();
    s.estimated_cells_count = _cells_per_partition.build();
    // CommitLogPosition.NONE: the writer knows no commit log.
    s.commitlog_upper_bound = commitlog_position{-1, 0};
    s.commitlog_lower_bound = commitlog_position{-1, 0};
    s.min_timestamp = _timestamp_set ? _min_ts : std::numeric_limits<int64_t>::min();
    s.max_timestamp = _timestamp_set ? _max_ts : std::numeric_limits<int64_t>::max();
    s.min_local_deletion_time = _ldt_set ? _min_ldt : no_deletion_time_32;
    s.max_local_deletion_time = _ldt_set ? _max_ldt : no_deletion_time_32;
    s.min_ttl = _ttl_set ? _min_ttl : 0;
    s.max_ttl = _ttl_set ? _max_ttl : 0;
    s.compression_ratio = compression_ratio;
    // StreamingHistogram: at most 100 bins; the two closest merge into their weighted mean.
    std::vector<std::pair<double, int64_t>> bins;
    for (auto& [p, c] : _drop_times) {
        bins.emplace_back(double(p), c);
    }
    while (bins.size() > tombstone_histogram_bins) {
        size_t best = 0;
        for (size_t i = 1; i + 1 < bins.size(); ++i) {
            if (bins[i + 1].first - bins[i].first < bins[best + 1].first - bins[best].first) {
                best = i;
            }
        }
        auto& a = bins[best];
        auto& b = bins[best + 1];
        int64_t n = a.second + b.second;
        a.first = (a.first * double(a.second) + b.first * double(b.second)) / double(n);
        a.second = n;
        bins.erase(bins.begin() + long(best) + 1);
    }
    // 3.11 writes the builder's bin limit; 4.0 writes the number of bins there instead ("for legacy reasons").
    s.estimated_tombstone_drop_time.max_bin_size =
        _version >= sstable_version::na ? int32_t(bins.size()) : int32_t(tombstone_histogram_bins);
    s.estimated_tombstone_drop_time.bins = std::move(bins);
    if (_min_clustering) {
        s.min_clustering_values = values_of(_min_clustering->key());
        s.max_clustering_values = values_of(_max_clustering->key());
    }
    s.total_columns_set = _total_columns;
    s.total_rows = _total_rows;
    return s;
}

int64_t murmur_hash2_64(std::string_view key, int64_t seed) {
    const uint64_t m = 0xc6a4a7935bd1e995ULL;
    const int r = 47;
    size_t length = key.size();
    uint64_t h = (uint64_t(seed) & 0xffffffffULL) ^ (m * uint64_t(length));
    auto byte = [&](size_t i) { return uint64_t(uint8_t(key[i])); };
    size_t longs = length >> 3;
    for (size_t i = 0; i < longs; ++i) {
        uint64_t k = 0;
        for (size_t b = 0; b < 8; ++b) {
            k |= byte(i * 8 + b) << (8 * b);
        }
        k *= m;
        k ^= k >> r;
        k *= m;
        h ^= k;
        h *= m;
    }
    size_t rem = length & 7;
    if (rem) {
        for (size_t b = rem; b-- > 0;) {
            h ^= uint64_t(int64_t(int8_t(key[length - rem + b]))) << (8 * b);
        }
        h *= m;
    }
    h ^= h >> r;
    h *= m;
    h ^= h >> r;
    return int64_t(h);
}

namespace {
constexpr unsigned hll_p = 13;
constexpr unsigned hll_sp = 25;
constexpr size_t hll_registers = size_t(1) << hll_p;
// RegisterSet: 5-bit registers, 6 to a word; getSizeForCount(8192) = 8192 / 6 + 1 words.
constexpr size_t hll_words = hll_registers / 6 + 1;

// stream-lib's Varint: 7-bit groups, low first, the high bit set on all but the last.
void put_varint(std::string& out, uint32_t v) {
    while (v & ~0x7fu) {
        out.push_back(char((v & 0x7f) | 0x80));
        v >>= 7;
    }
    out.push_back(char(v));
}
} // namespace

cardinality_estimator::cardinality_estimator() : _words(hll_words, 0) {}

void cardinality_estimator::offer(std::string_view key) {
    auto h = uint64_t(murmur_hash2_64(key, 0));
    size_t idx = size_t(h >> (64 - hll_p));
    uint64_t w = (h << hll_p) | (uint64_t(1) << (hll_p - 1));
    uint32_t rho = uint32_t(__builtin_clzll(w)) + 1;
    size_t word = idx / 6;
    unsigned shift = unsigned(5 * (idx - word * 6));
    uint32_t current = (_words[word] >> shift) & 0x1f;
    if (rho > current) {
        _words[word] = (_words[word] & ~(uint32_t(0x1f) << shift)) | (rho << shift);
    }
}

std::vector<std::byte> cardinality_estimator::serialize() const {
    std::string out;
    put<int32_t>(out, -2);  // -VERSION
    put_varint(out, hll_p);
    put_varint(out, hll_sp);
    put_varint(out, 0);  // normal format
    put_varint(out, uint32_t(_words.size() * 4));
    for (auto w : _words) {
        put<uint32_t>(out, w);
    }
    auto b = reinterpret_cast<const std::byte*>(out.data());
    return std::vector<std::byte>(b, b + out.size());
}

std::string serialize_statistics(const validation_metadata& validation, const compaction_metadata& compaction,
                                 const stats_metadata& stats, const serialization_header& header, sstable_version v) {
    auto f = features_of(v);
    if (!f.has_legacy_min_max) {
        throw std::invalid_argument("writing Statistics.db of version " + std::string(to_string(v)) + " is not supported");
    }
    std::string parts[4];
    put_short_string(parts[0], validation.partitioner);
    put_double(parts[0], validation.bloom_filter_fp_chance);
    put<int32_t>(parts[1], int32_t(compaction.cardinality_estimator.size()));
    parts[1].append(reinterpret_cast<const char*>(compaction.cardinality_estimator.data()),
                    compaction.cardinality_estimator.size());
    parts[2] = serialize_stats(stats, f);
    parts[3] = serialize_header(header);
    if (f.has_metadata_checksum) {
        for (auto& p : parts) {
            put<uint32_t>(p, utils::crc32(p));
        }
    }
    std::string out;
    put<int32_t>(out, 4);
    if (f.has_metadata_checksum) {
        put<uint32_t>(out, utils::crc32(out));
    }
    size_t toc_size = out.size() + 4 * 8 + (f.has_metadata_checksum ? 4 : 0);
    size_t offset = toc_size;
    std::string toc;
    for (int i = 0; i < 4; ++i) {
        put<int32_t>(toc, i);
        put<int32_t>(toc, int32_t(offset));
        offset += parts[i].size();
    }
    out += toc;
    if (f.has_metadata_checksum) {
        uint32_t crc = utils::crc32(std::string_view(out).substr(0, 4));
        crc = utils::crc32_update(crc, std::span<const char>(toc));
        put<uint32_t>(out, crc);
    }
    for (auto& p : parts) {
        out += p;
    }
    return out;
}

} // namespace reef::sstables
