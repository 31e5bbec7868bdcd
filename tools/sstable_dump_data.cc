// dump-data. See sstable_dump_data.hh. The call sequence below follows Cassandra's JsonTransformer (including its
// setCompact toggles), which is what makes the bytes match.
#include "tools/sstable_dump_data.hh"
#include "tools/sstable_schema_check.hh"

#include "runtime/file.hh"
#include "schema/bytes.hh"
#include "schema/types.hh"
#include "sstables/exceptions.hh"
#include "sstables/components.hh"
#include "sstables/mx_parser.hh"
#include "sstables/statistics.hh"
#include "tools/jackson_printer.hh"

#include <chrono>
#include <optional>

namespace reef::tools {

using namespace sstables;

namespace {

class dump_consumer final : public mx_consumer {
public:
    dump_consumer(const serialization_header& h, jackson_printer& j, int64_t now) : _h(h), _j(j), _now(now) {}

    proceed consume_partition_start(bytes_view key, tombstone deletion, uint64_t, uint64_t header_end) override {
        _key.assign(key.begin(), key.end());
        _deletion = deletion;
        _header_end = header_end;
        _partition_written = false;
        return proceed::yes;
    }

    row_action consume_row_start(const mx_row& r) override {
        if (!r.is_static) {
            write_partition_header(_header_end);
        }
        _row = r;
        _row_clustering = r.is_static ? clustering_values{} : *r.clustering;
        _cells.clear();
        return row_action::read;
    }

    void consume_cell(const mx_cell& c) override {
        _cells.push_back({false, c.column, bytes(c.path.begin(), c.path.end()), c.timestamp, c.ttl,
                          c.local_deletion_time, c.is_deleted, c.is_expiring, bytes(c.value.begin(), c.value.end()), {}});
    }
    void consume_complex_start(column_id col, tombstone t) override {
        if (t) {
            _cells.push_back({true, col, {}, 0, 0, 0, false, false, {}, t});
        }
    }
    void consume_complex_end() override {}

    proceed consume_row_end(const mx_row& r) override {
        bool empty = _cells.empty() && r.marker.empty() && !r.deletion;
        if (r.is_static) {
            // The partition's position is where the scanner stands after the static row.
            write_partition_header(r.end);
            if (!empty) {
                write_row(r, r.end);
            }
        } else if (!empty) {
            write_row(r, r.position);
        }
        return proceed::yes;
    }

    proceed consume_range_tombstone(const mx_marker& m) override {
        write_partition_header(_header_end);
        _j.start_object();
        _j.field_name("type");
        bool boundary = is_boundary(m.kind);
        _j.string(boundary ? "range_tombstone_boundary" : "range_tombstone_bound");
        switch (m.kind) {
        case mx_bound_kind::incl_start: bound(true, true, *m.clustering, m.tomb); break;
        case mx_bound_kind::excl_start: bound(true, false, *m.clustering, m.tomb); break;
        case mx_bound_kind::incl_end: bound(false, true, *m.clustering, m.tomb); break;
        case mx_bound_kind::excl_end: bound(false, false, *m.clustering, m.tomb); break;
        // Open bound first, then the close one.
        case mx_bound_kind::excl_end_incl_start:
            bound(true, true, *m.clustering, m.boundary_start_tomb);
            bound(false, false, *m.clustering, m.tomb);
            break;
        case mx_bound_kind::incl_end_excl_start:
            bound(true, false, *m.clustering, m.boundary_start_tomb);
            bound(false, true, *m.clustering, m.tomb);
            break;
        }
        _j.end_object();
        _j.set_compact_objects(false);
        return proceed::yes;
    }

    proceed consume_partition_end(uint64_t) override {
        write_partition_header(_header_end);
        _j.end_array();
        _j.end_object();
        return proceed::yes;
    }

private:
    struct cell_entry {
        bool complex_deletion;
        column_id column;
        bytes path;
        api::timestamp_type timestamp;
        int32_t ttl;
        deletion_time_type ldt;
        bool deleted, expiring;
        bytes value;
        tombstone tomb;
    };

    const serialization_header_column& column(column_id id, bool is_static) const {
        return (is_static ? _h.static_columns : _h.regular_columns).at(id);
    }

    void write_partition_header(uint64_t position) {
        if (_partition_written) {
            return;
        }
        _partition_written = true;
        _j.start_object();
        _j.field_name("table kind");
        _j.string("REGULAR");
        _j.field_name("partition");
        _j.start_object();
        _j.field_name("key");
        _j.set_compact_objects(true);
        _j.set_compact_arrays(true);
        _j.start_array();
        auto& kt = *_h.partition_key_type;
        if (kt.is_composite()) {
            auto parts = split_composite(_key);
            for (size_t i = 0; i < parts.size() && i < kt.field_types().size(); ++i) {
                _j.string(kt.field_types()[i]->to_string(parts[i]));
            }
        } else {
            _j.string(kt.to_string(_key));
        }
        _j.end_array();
        _j.set_compact_objects(false);
        _j.set_compact_arrays(false);
        _j.field_name("position");
        _j.number((long long)position);
        if (_deletion) {
            deletion(_deletion);
        }
        _j.end_object();
        _j.field_name("rows");
        _j.start_array();
    }

    void deletion(const tombstone& t) {
        _j.field_name("deletion_info");
        _j.set_compact_objects(true);
        _j.start_object();
        _j.field_name("marked_deleted");
        _j.string(std::to_string(t.timestamp));
        _j.field_name("local_delete_time");
        _j.string(std::to_string(t.deletion_time));
        _j.end_object();
        _j.set_compact_objects(false);
    }

    void clustering(const clustering_values& ck) {
        if (ck.empty()) {
            return;
        }
        _j.field_name("clustering");
        _j.set_compact_objects(true);
        _j.start_array();
        _j.set_compact_arrays(true);
        for (size_t i = 0; i < _h.clustering_types.size(); ++i) {
            if (i >= ck.size()) {
                _j.string("*");
            } else if (!ck[i]) {
                _j.raw_value("null");
            } else {
                _j.raw_value(_h.clustering_types[i]->without_reversal()->to_json_string(*ck[i]));
            }
        }
        _j.end_array();
        _j.set_compact_objects(false);
        _j.set_compact_arrays(false);
    }

    void bound(bool start, bool inclusive, const clustering_values& ck, const tombstone& t) {
        _j.field_name(start ? "start" : "end");
        _j.start_object();
        _j.field_name("type");
        _j.string(inclusive ? "inclusive" : "exclusive");
        clustering(ck);
        deletion(t);
        _j.end_object();
    }

    void write_row(const mx_row& r, uint64_t position) {
        _j.start_object();
        _j.field_name("type");
        _j.string(r.is_static ? "static_block" : "row");
        _j.field_name("position");
        _j.number((long long)position);
        if (!r.is_static) {
            clustering(_row_clustering);
        }
        if (!r.marker.empty()) {
            _j.set_compact_objects(false);
            _j.field_name("liveness_info");
            _j.set_compact_objects(true);
            _j.start_object();
            _j.field_name("tstamp");
            _j.string(std::to_string(r.marker.timestamp));
            if (r.marker.is_expiring()) {
                _j.field_name("ttl");
                _j.number(r.marker.ttl);
                _j.field_name("expires_at");
                _j.string(std::to_string(r.marker.expiry));
                _j.field_name("expired");
                _j.boolean(r.marker.expiry < _now);
            }
            _j.end_object();
            _j.set_compact_objects(false);
        }
        if (r.deletion) {
            deletion(r.deletion);
        }
        _j.field_name("cells");
        _j.start_array();
        for (auto& c : _cells) {
            auto& col = column(c.column, r.is_static);
            if (c.complex_deletion) {
                _j.set_compact_objects(true);
                _j.start_object();
                _j.field_name("name");
                _j.string(maybe_quote_identifier(col.name));
                deletion(c.tomb);
                _j.set_compact_objects(true);
                _j.end_object();
                _j.set_compact_objects(false);
                continue;
            }
            cell(r, col, c);
        }
        _j.end_array();
        _j.end_object();
    }

    void cell(const mx_row& r, const serialization_header_column& col, const cell_entry& c) {
        _j.start_object();
        _j.set_compact_objects(true);
        _j.field_name("name");
        _j.string(maybe_quote_identifier(col.name));
        auto& t = *col.type;
        data_type value_type = col.type;
        if (t.is_multi_cell() && t.is_user_type()) {
            auto& u = static_cast<const user_type_impl&>(t);
            size_t field = c.path.size() >= 2 ? size_t(read_be<uint16_t>(c.path.data())) : 0;
            _j.field_name("path");
            _j.set_compact_arrays(true);
            _j.start_array();
            _j.string(field < u.field_names().size() ? u.field_names()[field] : std::to_string(field));
            _j.end_array();
            _j.set_compact_arrays(false);
            value_type = field < u.field_types().size() ? u.field_types()[field] : blob_type();
        } else if (t.is_multi_cell()) {
            _j.field_name("path");
            _j.set_compact_arrays(true);
            _j.start_array();
            _j.string(t.name_comparator()->to_string(c.path));
            _j.end_array();
            _j.set_compact_arrays(false);
            value_type = t.kind() == type_kind::map ? t.value_type() : t.kind() == type_kind::list ? t.element_type() : empty_type();
        }
        if (c.deleted) {
            _j.field_name("deletion_info");
            _j.set_compact_objects(true);
            _j.start_object();
            _j.field_name("local_delete_time");
            _j.string(std::to_string(c.ldt));
            _j.end_object();
            _j.set_compact_objects(false);
        } else {
            _j.field_name("value");
            if (value_type->is_counter()) {
                // JsonTransformer prints a counter context's first 8 bytes as a long.
                _j.raw_value(c.value.size() >= 8 ? std::to_string(read_be<int64_t>(c.value.data())) : "0");
            } else {
                _j.raw_value(value_type->to_json_string(c.value));
            }
        }
        if (r.marker.empty() || c.timestamp != r.marker.timestamp) {
            _j.field_name("tstamp");
            _j.string(std::to_string(c.timestamp));
        }
        if (c.expiring && (r.marker.empty() || c.ttl != r.marker.ttl)) {
            _j.field_name("ttl");
            _j.number(c.ttl);
            _j.field_name("expires_at");
            _j.string(std::to_string(c.ldt));
            _j.field_name("expired");
            _j.boolean(!(_now < c.ldt));
        }
        _j.end_object();
        _j.set_compact_objects(false);
    }

    const serialization_header& _h;
    jackson_printer& _j;
    int64_t _now;
    bytes _key;
    tombstone _deletion;
    uint64_t _header_end = 0;
    bool _partition_written = false;
    mx_row _row;
    clustering_values _row_clustering;
    std::vector<cell_entry> _cells;
};

} // namespace

std::string dump_data_json(const serialization_header& h, std::span<const std::byte> data, const std::string& file,
                           int64_t now) {
    jackson_printer j;
    dump_consumer c(h, j, now);
    mx_parser p(h, file, c, 0, data.size());
    j.start_array();
    p.feed(data);
    while (true) {
        auto step = p.run();
        if (step.what == parse_step::kind::done) {
            break;
        }
        if (step.what == parse_step::kind::need_more_data) {
            p.feed_end_of_stream();
        }
    }
    j.end_array();
    j.out() += '\n';
    return std::move(j.out());
}

namespace {

future<std::string> read_whole(std::string name) {
    auto f = co_await open_file_dma(name, open_flags::ro);
    auto size = co_await f.size();
    auto src = make_file_data_source(f, 0, size);
    std::string out;
    while (true) {
        auto b = co_await src.get();
        if (b.empty()) {
            break;
        }
        out.append(b.get(), b.size());
    }
    co_await src.close();
    co_await f.close();
    co_return out;
}

// One sstable's dump, its Data.db streamed through the checked source into the parser buffer by buffer.
future<std::string> dump_one(descriptor d, int64_t now, schema_ptr schema) {
    auto stats_name = d.filename(component_type::statistics);
    auto stats_bytes = co_await read_whole(stats_name);
    auto st = parse_statistics(std::as_bytes(std::span<const char>(stats_bytes)), d.version, stats_name);
    if (schema) {
        check_schema_against_header(*schema, *st.header, stats_name);
    }
    auto components = co_await load_components(d);
    auto data_name = d.filename(component_type::data);
    auto f = co_await open_file_dma(data_name, open_flags::ro);
    auto src = make_data_source(f, components, 0, components.data_length());
    jackson_printer j;
    dump_consumer c(*st.header, j, now);
    mx_parser p(*st.header, data_name, c, 0, components.data_length());
    j.start_array();
    temporary_buffer buf;
    std::exception_ptr err;
    try {
        while (true) {
            auto step = p.run();
            if (step.what == parse_step::kind::done) {
                break;
            }
            if (step.what == parse_step::kind::consumer_full) {
                continue;
            }
            if (step.what == parse_step::kind::skip) {
                buf = co_await src.skip(step.bytes);
            } else {
                buf = co_await src.get();
            }
            if (buf.empty()) {
                p.feed_end_of_stream();
            } else {
                p.feed(std::as_bytes(std::span<const char>(buf.get(), buf.size())));
            }
        }
    } catch (const marshal_exception& e) {
        // A key or value the types cannot print is corrupt data: name the file and where the parser stands.
        err = std::make_exception_ptr(malformed_sstable_exception(
            data_name, p.offset(), std::string("expected a valid value: ") + e.what()));
    } catch (...) {
        err = std::current_exception();
    }
    co_await src.close();
    co_await f.close();
    if (err) {
        std::rethrow_exception(err);
    }
    j.end_array();
    j.out() += '\n';
    co_return std::move(j.out());
}

} // namespace

future<std::string> dump_data_json(std::vector<descriptor> sstables, int64_t now, schema_ptr schema) {
    std::string out;
    for (auto& d : sstables) {
        out += co_await dump_one(d, now, schema);
    }
    co_return out;
}

future<std::string> dump_data_json(std::vector<descriptor> sstables) {
    int64_t now = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
    return dump_data_json(std::move(sstables), now);
}

} // namespace reef::tools
