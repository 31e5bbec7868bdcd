// dump-data. See sstable_dump_data.hh. The JSON pieces are dump_data_printer's; this file feeds it the parser's atoms
// in the order Cassandra's JsonTransformer visits them.
#include "tools/sstable_dump_data.hh"
#include "tools/sstable_schema_check.hh"

#include "runtime/file.hh"
#include "runtime/with_closeable.hh"
#include "schema/bytes.hh"
#include "schema/types.hh"
#include "sstables/exceptions.hh"
#include "sstables/components.hh"
#include "sstables/mx_parser.hh"
#include "sstables/sstable.hh"
#include "sstables/statistics.hh"
#include "tools/dump_data_printer.hh"
#include "tools/jackson_printer.hh"

#include <chrono>
#include <optional>

namespace reef::tools {

using namespace sstables;

namespace {

class dump_consumer final : public mx_consumer {
public:
    dump_consumer(const serialization_header& h, jackson_printer& j, int64_t now) : _p(h, j, now) {}

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
                _p.row(true, _row_clustering, r.marker, r.deletion, _cells, r.end);
            }
        } else if (!empty) {
            _p.row(false, _row_clustering, r.marker, r.deletion, _cells, r.position);
        }
        return proceed::yes;
    }

    proceed consume_range_tombstone(const mx_marker& m) override {
        write_partition_header(_header_end);
        _p.range_tombstone(m.kind, *m.clustering, m.tomb, m.boundary_start_tomb);
        return proceed::yes;
    }

    proceed consume_partition_end(uint64_t) override {
        write_partition_header(_header_end);
        _p.partition_end();
        return proceed::yes;
    }

private:
    void write_partition_header(uint64_t position) {
        if (_partition_written) {
            return;
        }
        _partition_written = true;
        _p.partition_header(_key, _deletion, position);
    }

    dump_data_printer _p;
    bytes _key;
    tombstone _deletion;
    uint64_t _header_end = 0;
    bool _partition_written = false;
    clustering_values _row_clustering;
    std::vector<dump_cell> _cells;
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

// One sstable's dump, its Data.db streamed through the checked source into the parser buffer by buffer.
future<std::string> dump_one(descriptor d, int64_t now, schema_ptr schema) {
    auto st = co_await load_statistics(d);
    if (schema) {
        check_schema_against_header(*schema, *st.header, d.filename(component_type::statistics));
    }
    auto components = co_await load_components(d);
    auto data_name = d.filename(component_type::data);
    jackson_printer j;
    dump_consumer c(*st.header, j, now);
    mx_parser p(*st.header, data_name, c, 0, components.data_length());
    j.start_array();
    auto f = co_await open_file_dma(data_name, open_flags::ro);
    co_await with_closeable(std::move(f), [&](file& f) {
        auto src = make_data_source(f, components, 0, components.data_length(), integrity_check::no);
        return with_closeable(std::move(src), [&](data_source& src) -> future<> {
            try {
                temporary_buffer buf;
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
                throw malformed_sstable_exception(data_name, p.offset(),
                                                  std::string("expected a valid value: ") + e.what());
            }
        });
    });
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
