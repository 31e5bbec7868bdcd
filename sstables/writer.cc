// The mx sstable writer. See writer.hh, and FORMAT.md ("Writing") for the commit protocol.
#include "sstables/writer.hh"

#include "runtime/blocking.hh"
#include "runtime/file.hh"
#include "runtime/output_stream.hh"
#include "runtime/reactor.hh"
#include "sstables/bloom_calculations.hh"
#include "sstables/checksum.hh"
#include "sstables/compressor.hh"
#include "sstables/index_entry.hh"
#include "sstables/metadata_collector.hh"
#include "sstables/row_serializer.hh"
#include "sstables/summary.hh"
#include "utils/big_endian.hh"
#include "utils/crc32.hh"

#include <algorithm>
#include <filesystem>
#include <tuple>
#include <stdexcept>
#include <system_error>

namespace reef::sstables {

namespace {

constexpr size_t stream_flush_threshold = 256 * 1024;

file_output_stream_options stream_options() {
    file_output_stream_options o;
    o.buffer_size = 128 * 1024;
    o.write_behind = 2;
    return o;
}

// A component file written sequentially through the aligned write-behind stream, then fsynced.
class component_writer {
public:
    static future<component_writer> create(std::string path) {
        auto f = co_await open_file_dma(path, open_flags::wo | open_flags::create | open_flags::exclusive);
        co_return component_writer(std::move(path), f);
    }
    future<> write(std::string_view s) { return _out.write(s); }
    // Flushes, truncates to the exact length, fdatasyncs and closes.
    future<> finish() {
        co_await _out.close();
        co_await _file.flush();
        co_await _file.close();
        _closed = true;
    }
    // After a failure: closes without caring about the contents.
    future<> abandon() noexcept {
        if (_closed) {
            co_return;
        }
        _closed = true;
        try {
            co_await _out.close();
        } catch (...) {
        }
        try {
            co_await _file.close();
        } catch (...) {
        }
    }
    const std::string& path() const noexcept { return _path; }

private:
    component_writer(std::string path, file f)
        : _path(std::move(path)), _file(f), _out(make_file_output_stream(f, stream_options())) {}

    std::string _path;
    file _file;
    output_stream _out;
    bool _closed = false;
};

future<> write_whole_file(std::string path, std::string contents) {
    auto w = co_await component_writer::create(path);
    std::exception_ptr err;
    try {
        co_await w.write(contents);
        co_await w.finish();
    } catch (...) {
        err = std::current_exception();
    }
    if (err) {
        co_await w.abandon();
        std::rethrow_exception(err);
    }
}

// Data.db: the uncompressed stream cut into chunks, each compressed with its CRC32 after it (CompressionInfo.db
// lists their offsets), or written as is with a CRC32 per chunk in CRC.db; the digest covers the stored bytes.
class data_writer {
public:
    data_writer(component_writer w, std::optional<compression_algorithm> alg, uint32_t chunk)
        : _w(std::move(w)), _alg(alg), _chunk(chunk) {}

    // Uncompressed bytes are appended here by the serializers.
    std::string& buffer() noexcept { return _buf; }
    uint64_t position() const noexcept { return _processed + _buf.size(); }

    future<> maybe_flush() {
        if (_buf.size() < std::max<size_t>(stream_flush_threshold, _chunk)) {
            co_return;
        }
        co_await flush(false);
    }

    future<> finish() {
        co_await flush(true);
        co_await _w.finish();
    }
    future<> abandon() noexcept { return _w.abandon(); }

    uint64_t stored_size() const noexcept { return _stored; }
    uint32_t digest() const noexcept { return _digest; }
    const std::vector<uint64_t>& chunk_offsets() const noexcept { return _offsets; }
    const std::vector<uint32_t>& checksums() const noexcept { return _crcs; }

private:
    future<> flush(bool final) {
        std::string out;
        size_t pos = 0;
        while (_buf.size() - pos >= _chunk || (final && pos < _buf.size())) {
            auto piece = std::string_view(_buf).substr(pos, _chunk);
            pos += piece.size();
            if (_alg) {
                auto compressed = compress_chunk(*_alg, piece);
                _offsets.push_back(_stored + out.size());
                char crc[4];
                utils::write_be_unchecked<uint32_t>(crc, utils::crc32(compressed));
                out += compressed;
                out.append(crc, 4);
            } else {
                _crcs.push_back(utils::crc32(piece));
                out.append(piece);
            }
        }
        _processed += pos;
        _buf.erase(0, pos);
        _digest = utils::crc32_update(_digest, std::span<const char>(out));
        _stored += out.size();
        co_await _w.write(out);
    }

    component_writer _w;
    std::optional<compression_algorithm> _alg;
    uint32_t _chunk;
    std::string _buf;
    uint64_t _processed = 0;
    uint64_t _stored = 0;
    uint32_t _digest = 0;
    std::vector<uint64_t> _offsets;
    std::vector<uint32_t> _crcs;
};

deletion_time to_deletion_time(tombstone t) {
    deletion_time d;
    if (t) {
        d.marked_for_delete_at = t.timestamp;
        d.local_deletion_time = deletion_time_32(t.deletion_time);
    }
    return d;
}

// One partition being written: its header, the unfiltereds with their previous sizes, the promoted index
// blocks (Cassandra's ColumnIndex: a block closes once it spans column_index_size bytes; the last one takes
// the end-of-partition byte), the range tombstone in force, and the statistics.
class partition_writer {
public:
    partition_writer(const schema& s, const row_serializer& ser, data_writer& data, metadata_collector& stats,
                     uint64_t column_index_size)
        : _s(s), _ser(ser), _data(data), _stats(stats), _column_index_size(column_index_size) {}

    void start(const partition_start& ps) {
        _key = std::string(ps.key.key().view());
        _tomb = ps.partition_tombstone;
        _start = _data.position();
        _ser.write_partition_header(_data.buffer(), _key, _tomb);
        _stats.update(_tomb);
        _static_pending = !_s.static_columns().empty();
        _header_length = 0;
        _previous_start = 0;
        _written = 0;
        _first.reset();
        _blocks.clear();
        _open.reset();
        _in_force = {};
    }

    void consume(const static_row& sr) {
        _ser.write_static_row(_data.buffer(), sr.cells);
        _stats.update_row(row_marker{}, tombstone{}, sr.cells);
        _static_pending = false;
    }

    void consume(const clustering_row& cr) {
        close_header();
        _stats.update_row(cr.marker, cr.row_tombstone, cr.cells);
        _stats.update_clustering(position_in_partition::for_key(cr.key));
        auto pos = relative();
        begin_unfiltered(clustering_bound{clustering_kind::clustering, cr.key}, pos);
        _ser.write_row(_data.buffer(), cr, pos - _previous_start);
        end_unfiltered(pos);
    }

    void consume(const range_tombstone_change& rtc) {
        close_header();
        tombstone prev = _in_force;
        tombstone next = rtc.tomb;
        // Two empty sides say nothing; two equal ones are a boundary the stream chose to keep (a file had it), and
        // it is written as such, so a rewrite keeps it.
        if (!prev && !next) {
            return;
        }
        auto& p = rtc.position;
        if (p.region() != partition_region::clustered || p.weight() == bound_weight::equal) {
            throw std::invalid_argument("a range tombstone change at " + to_string(p) + ", not at a bound");
        }
        bool before = p.weight() == bound_weight::before_all_prefixed;
        clustering_kind kind;
        if (!prev) {
            kind = before ? clustering_kind::incl_start_bound : clustering_kind::excl_start_bound;
        } else if (!next) {
            kind = before ? clustering_kind::excl_end_bound : clustering_kind::incl_end_bound;
        } else {
            kind = before ? clustering_kind::excl_end_incl_start_boundary : clustering_kind::incl_end_excl_start_boundary;
        }
        _stats.update(prev);
        _stats.update(next);
        _stats.update_clustering(p);
        auto pos = relative();
        clustering_bound b{kind, p.key()};
        begin_unfiltered(b, pos);
        _ser.write_marker(_data.buffer(), b, prev, next, pos - _previous_start);
        _in_force = next;
        _open = next ? std::optional<deletion_time>(to_deletion_time(next)) : std::nullopt;
        end_unfiltered(pos);
    }

    // Writes the end of the partition; returns its index entry.
    void finish(std::string& index_out, const std::vector<data_type>& ck_types, sstable_version v) {
        close_header();
        if (_in_force) {
            throw std::invalid_argument("partition ends with a range tombstone still open");
        }
        row_serializer::write_end_of_partition(_data.buffer());
        if (_written > 0 && _first) {
            add_block();
        }
        static const std::vector<promoted_index_block> none;
        write_index_entry(index_out, _key, _start, _header_length, to_deletion_time(_tomb),
                          _blocks.size() > 1 ? _blocks : none, ck_types, v);
        _stats.add_partition(_data.position() - _start);
    }

    const std::string& key() const noexcept { return _key; }

private:
    uint64_t relative() const noexcept { return _data.position() - _start; }

    void close_header() {
        if (_static_pending) {
            _ser.write_static_row(_data.buffer(), row{});
            _static_pending = false;
        }
        if (_header_length == 0) {
            _header_length = relative();
        }
    }

    void begin_unfiltered(const clustering_bound& b, uint64_t pos) {
        if (!_first) {
            _first = b;
            _block_start = pos;
        }
        _last = b;
    }

    void end_unfiltered(uint64_t pos) {
        _previous_start = pos;
        ++_written;
        if (relative() - _block_start >= _column_index_size) {
            add_block();
        }
    }

    void add_block() {
        _blocks.push_back(promoted_index_block{*_first, _last, _block_start, relative() - _block_start, _open});
        _first.reset();
    }

    const schema& _s;
    const row_serializer& _ser;
    data_writer& _data;
    metadata_collector& _stats;
    uint64_t _column_index_size;
    std::string _key;
    tombstone _tomb;
    uint64_t _start = 0;
    uint64_t _header_length = 0;
    bool _static_pending = false;
    uint64_t _previous_start = 0;
    uint64_t _written = 0;
    std::optional<clustering_bound> _first;
    clustering_bound _last;
    uint64_t _block_start = 0;
    std::vector<promoted_index_block> _blocks;
    std::optional<deletion_time> _open;
    tombstone _in_force;
};

std::string toc_text(const std::vector<component_type>& cs) {
    std::string out;
    for (auto c : cs) {
        out += component_name(c);
        out += '\n';
    }
    return out;
}

std::string compression_class_of(const std::map<std::string, std::string>& m) {
    auto it = m.find("class");
    if (it == m.end()) {
        it = m.find("sstable_compression");
    }
    return it == m.end() ? std::string() : it->second;
}

} // namespace

writer_options writer_options_for(const schema& s) {
    writer_options o;
    auto& m = s.options().compression;
    if (!s.options().compression_enabled()) {
        o.compression.reset();
    } else {
        auto cls = compression_class_of(m);
        if (!cls.empty()) {
            auto a = parse_compressor_class(cls);
            if (!a) {
                throw std::invalid_argument("unknown compressor class '" + cls + "'");
            }
            o.compression = *a;
        }
        for (auto name : {"chunk_length_in_kb", "chunk_length_kb"}) {
            if (auto it = m.find(name); it != m.end()) {
                auto kb = std::stoul(it->second);
                if (kb == 0 || (kb & (kb - 1)) != 0) {
                    throw std::invalid_argument("chunk length " + it->second + " KiB is not a power of two");
                }
                o.chunk_length = uint32_t(kb * 1024);
            }
        }
    }
    if (auto it = s.options().other.find("bloom_filter_fp_chance"); it != s.options().other.end()) {
        o.bloom_filter_fp_chance = std::stod(it->second);
    }
    // Cassandra writes the summary fully sampled at the table's min_index_interval (max_index_interval bounds only
    // its later downsampling, which we do not do).
    if (auto it = s.options().other.find("min_index_interval"); it != s.options().other.end()) {
        auto v = std::stol(it->second);
        if (v < 1) {
            throw std::invalid_argument("min_index_interval " + it->second + " is below 1");
        }
        o.min_index_interval = uint32_t(v);
    }
    return o;
}

// EncodingStats.Collector's rules: every timestamp; deletion times of deletions and expiring data; TTLs of
// expiring data.
void encoding_stats_collector::update_timestamp(write_time::timestamp_type ts) {
    _ts = _ts_set ? std::min(_ts, ts) : ts;
    _ts_set = true;
}
void encoding_stats_collector::update_ldt(int32_t ldt) {
    _ldt = _ldt_set ? std::min(_ldt, ldt) : ldt;
    _ldt_set = true;
}
void encoding_stats_collector::update_ttl(int32_t ttl) {
    _ttl = _ttl_set ? std::min(_ttl, ttl) : ttl;
    _ttl_set = true;
}
void encoding_stats_collector::update(const tombstone& t) {
    if (t) {
        update_timestamp(t.timestamp);
        update_ldt(deletion_time_32(t.deletion_time));
    }
}
void encoding_stats_collector::update(const atomic_cell& c) {
    update_timestamp(c.timestamp());
    if (c.is_expiring()) {
        update_ttl(c.ttl());
        update_ldt(deletion_time_32(c.local_deletion_time()));
    } else if (c.local_deletion_time() != no_deletion_time) {
        update_ldt(deletion_time_32(c.local_deletion_time()));
    }
}
void encoding_stats_collector::update(const row& r) {
    for (auto& [id, c] : r.cells()) {
        if (auto* cell = std::get_if<atomic_cell>(&c)) {
            update(*cell);
        } else {
            auto& coll = std::get<collection_cells>(c);
            update(coll.tomb);
            for (auto& [p, cell] : coll.cells) {
                update(cell);
            }
        }
    }
}
void encoding_stats_collector::update(const mutation_fragment& f) {
    std::visit(
        [this](const auto& x) {
            using T = std::decay_t<decltype(x)>;
            if constexpr (std::is_same_v<T, partition_start>) {
                update(x.partition_tombstone);
            } else if constexpr (std::is_same_v<T, static_row>) {
                update(x.cells);
            } else if constexpr (std::is_same_v<T, clustering_row>) {
                if (!x.marker.empty()) {
                    update_timestamp(x.marker.timestamp);
                    if (x.marker.is_expiring()) {
                        update_ttl(x.marker.ttl);
                        update_ldt(deletion_time_32(x.marker.expiry));
                    }
                }
                update(x.row_tombstone);
                update(x.cells);
            } else if constexpr (std::is_same_v<T, range_tombstone_change>) {
                update(x.tomb);
            }
        },
        f);
}
encoding_stats encoding_stats_collector::get() const {
    return encoding_stats{_ts_set ? _ts : encoding_timestamp_epoch, _ldt_set ? _ldt : encoding_deletion_time_epoch,
                          _ttl_set ? _ttl : 0};
}

namespace {

struct write_state {
    std::vector<std::string> created;  // files to remove if the write fails
};

future<written_sstable> do_write(mutation_reader& stream, schema_ptr s, const descriptor& d, const writer_options& opts,
                                 write_state& st) {
    auto v = d.version;
    bool compressed = bool(opts.compression);
    bool filtered = writes_filter(opts.bloom_filter_fp_chance);
    std::vector<component_type> components = {component_type::data, component_type::index, component_type::summary};
    if (filtered) {
        components.push_back(component_type::filter);
    }
    components.insert(components.end(), {component_type::statistics,
                                         compressed ? component_type::compression_info : component_type::crc,
                                         component_type::digest, component_type::toc});
    auto toc_path = d.filename(component_type::toc);
    auto tmp_toc = toc_path + ".tmp";
    if (co_await file_exists(toc_path)) {
        throw std::system_error(std::make_error_code(std::errc::file_exists), toc_path);
    }
    // The temporary TOC comes first: whatever a crash leaves of this generation, it is there to say so.
    st.created.push_back(tmp_toc);
    auto toc_contents = toc_text(components);
    co_await write_whole_file(tmp_toc, std::move(toc_contents));
    co_await sync_directory(d.directory);

    auto data_path = d.filename(component_type::data);
    auto index_path = d.filename(component_type::index);
    st.created.push_back(data_path);
    auto data_file = co_await component_writer::create(data_path);
    data_writer data(std::move(data_file), opts.compression, compressed ? opts.chunk_length : opts.crc_chunk_size);
    st.created.push_back(index_path);
    auto index = co_await component_writer::create(index_path);

    written_sstable result;
    result.desc = d;
    result.components = components;
    std::exception_ptr err;
    try {
        row_serializer ser(*s, opts.stats);
        metadata_collector stats(*s, d.version);
        summary_builder summary(opts.min_index_interval);
        std::vector<bloom_filter::hash_type> hashes;
        cardinality_estimator cardinality;
        std::string index_buf;
        uint64_t index_pos = 0;
        partition_writer pw(*s, ser, data, stats, opts.column_index_size);
        bool in_partition = false;
        uint64_t fragments = 0;
        std::optional<dht::decorated_key> last_key;
        while (auto mf = co_await stream()) {
            if (auto* ps = std::get_if<partition_start>(&*mf)) {
                if (in_partition) {
                    throw std::invalid_argument("a partition starts before the previous one ended");
                }
                if (last_key && !(*last_key < ps->key)) {
                    throw std::invalid_argument("partitions out of ring order");
                }
                last_key = ps->key;
                pw.start(*ps);
                in_partition = true;
            } else if (!in_partition) {
                throw std::invalid_argument(std::string("a ") + kind_name(*mf) + " outside a partition");
            } else if (auto* sr = std::get_if<static_row>(&*mf)) {
                pw.consume(*sr);
            } else if (auto* cr = std::get_if<clustering_row>(&*mf)) {
                pw.consume(*cr);
            } else if (auto* rtc = std::get_if<range_tombstone_change>(&*mf)) {
                pw.consume(*rtc);
            } else {
                summary.add(pw.key(), index_pos);
                if (filtered) {
                    hashes.push_back(bloom_filter::hash_of(std::as_bytes(std::span<const char>(pw.key()))));
                }
                cardinality.offer(pw.key());
                size_t before = index_buf.size();
                pw.finish(index_buf, ser.clustering_types(), v);
                index_pos += index_buf.size() - before;
                in_partition = false;
                ++result.partitions;
                if (index_buf.size() >= stream_flush_threshold) {
                    co_await index.write(index_buf);
                    index_buf.clear();
                }
                if (opts.max_data_length && data.position() >= opts.max_data_length) {
                    result.stopped_at_length = true;
                    break;
                }
            }
            co_await data.maybe_flush();
            if (++fragments % 256 == 0) {
                co_await maybe_yield();
            }
        }
        if (in_partition) {
            throw std::invalid_argument("the stream ended inside a partition");
        }
        co_await index.write(index_buf);
        result.data_length = data.position();
        co_await data.finish();
        co_await index.finish();
        result.data_file_size = data.stored_size();

        double ratio = -1;
        if (compressed) {
            compression_info ci;
            ci.compressor_class = std::string(compressor_class_name(*opts.compression));
            ci.algorithm = *opts.compression;
            ci.chunk_length = opts.chunk_length;
            ci.data_length = result.data_length;
            ci.chunk_offsets = data.chunk_offsets();
            ratio = result.data_length ? double(result.data_file_size) / double(result.data_length) : 0;
            auto p = d.filename(component_type::compression_info);
            st.created.push_back(p);
            co_await write_whole_file(p, serialize_compression_info(ci, v));
        } else {
            crc_component crc{opts.crc_chunk_size, data.checksums()};
            auto p = d.filename(component_type::crc);
            st.created.push_back(p);
            co_await write_whole_file(p, serialize_crc_component(crc));
        }
        auto p = d.filename(component_type::summary);
        st.created.push_back(p);
        co_await write_whole_file(p, serialize_summary(std::move(summary).build()));
        if (filtered) {
            auto filter = make_bloom_filter(opts.estimated_partitions.value_or(result.partitions),
                                            opts.bloom_filter_fp_chance);
            for (auto& h : hashes) {
                filter.add(h);
            }
            p = d.filename(component_type::filter);
            st.created.push_back(p);
            co_await write_whole_file(p, serialize_bloom_filter(filter, v));
        }
        auto sm = stats.build(ratio);
        sm.originating_host_id = opts.originating_host_id;
        if (!opts.commitlog_intervals.empty()) {
            sm.commitlog_intervals = opts.commitlog_intervals;
            auto by_position = [](const commitlog_position& a, const commitlog_position& b) {
                return std::tie(a.segment_id, a.position) < std::tie(b.segment_id, b.position);
            };
            sm.commitlog_lower_bound = opts.commitlog_intervals.front().first;
            sm.commitlog_upper_bound = opts.commitlog_intervals.front().second;
            for (auto& [a, b] : opts.commitlog_intervals) {
                sm.commitlog_lower_bound = std::min(sm.commitlog_lower_bound, a, by_position);
                sm.commitlog_upper_bound = std::max(sm.commitlog_upper_bound, b, by_position);
            }
        }
        p = d.filename(component_type::statistics);
        st.created.push_back(p);
        // Named, not built inside co_await (ARCHITECTURE.md, coroutine rule 2).
        compaction_metadata cm{cardinality.serialize()};
        validation_metadata vm{opts.partitioner, opts.bloom_filter_fp_chance};
        auto header = make_serialization_header(*s, opts.stats);
        auto statistics_bytes = serialize_statistics(vm, cm, sm, header, v);
        co_await write_whole_file(p, std::move(statistics_bytes));
        p = d.filename(component_type::digest);
        st.created.push_back(p);
        auto digest = std::to_string(data.digest());
        co_await write_whole_file(p, std::move(digest));
    } catch (...) {
        err = std::current_exception();
    }
    if (err) {
        co_await data.abandon();
        co_await index.abandon();
        std::rethrow_exception(err);
    }
    // Every component is durable; the rename publishes them.
    co_await sync_directory(d.directory);
    co_await rename_file(tmp_toc, toc_path);
    co_await sync_directory(d.directory);
    co_return result;
}

} // namespace

future<written_sstable> write_sstable(mutation_reader& stream, schema_ptr s, descriptor d, writer_options opts) {
    if (d.version == sstable_version::oa) {
        throw std::invalid_argument("writing version oa is not supported");
    }
    opts.version = d.version;
    if (d.directory.empty()) {
        d.directory = ".";
    }
    write_state st;
    std::exception_ptr err;
    try {
        co_return co_await do_write(stream, std::move(s), d, opts, st);
    } catch (...) {
        err = std::current_exception();
    }
    // Remove what was written, the temporary TOC last (it marks the generation as partial until then).
    for (auto it = st.created.rbegin(); it != st.created.rend(); ++it) {
        try {
            if (co_await file_exists(*it)) {
                co_await remove_file(*it);
            }
        } catch (...) {
        }
    }
    std::rethrow_exception(err);
}

future<std::vector<descriptor>> remove_partial_sstables(std::string dir, std::function<bool(const descriptor&)> owned) {
    const std::string* dp = &dir;
    // (generation's tmp TOC, whether its TOC.txt exists, every file of the generation)
    struct partial {
        descriptor d;
        std::string tmp_toc;
        bool committed = false;
        std::vector<std::string> files;
    };
    auto list = [dp]() -> std::vector<partial> {
        namespace fs = std::filesystem;
        std::vector<partial> found;
        std::vector<std::string> names;
        for (auto& e : fs::directory_iterator(*dp)) {
            names.push_back(e.path().filename().string());
        }
        for (auto& n : names) {
            constexpr std::string_view suffix = "-TOC.txt.tmp";
            if (n.size() <= suffix.size() || !n.ends_with(suffix)) {
                continue;
            }
            partial p;
            try {
                p.d = descriptor::from_path(*dp + "/" + n.substr(0, n.size() - 4));
            } catch (const std::invalid_argument&) {
                continue;
            }
            p.tmp_toc = *dp + "/" + n;
            auto prefix = n.substr(0, n.size() - (suffix.size() - 1));  // "<version>-<generation>-<format>-"
            for (auto& m : names) {
                if (m == n) {
                    continue;
                }
                if (m == prefix + "TOC.txt") {
                    p.committed = true;
                }
                if (m.starts_with(prefix)) {
                    p.files.push_back(*dp + "/" + m);
                }
            }
            found.push_back(std::move(p));
        }
        return found;
    };
    auto found = co_await run_blocking(list);
    if (owned) {
        std::erase_if(found, [&owned](const partial& p) { return !owned(p.d); });
    }
    std::vector<descriptor> removed;
    for (auto& p : found) {
        if (!p.committed) {
            for (auto& f : p.files) {
                co_await remove_file(f);
            }
            co_await sync_directory(dir);
            removed.push_back(p.d);
        }
        co_await remove_file(p.tmp_toc);
    }
    if (!found.empty()) {
        co_await sync_directory(dir);
    }
    co_return removed;
}

} // namespace reef::sstables
