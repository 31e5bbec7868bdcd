// The mutation encoding, version 1 (commitlog/FORMAT.md). See mutation_codec.hh.
#include "mutation/mutation_codec.hh"

#include "schema/types.hh"

#include <fmt/core.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>
#include <utility>
#include <vector>

namespace reef {

namespace {

constexpr uint8_t codec_magic = 'M';
enum column_flags : uint8_t { complex_column = 1, counter_column = 2 };
enum encoded_kind : uint8_t { static_kind = 0, regular_kind = 1 };

class writer {
public:
    template <typename T>
    void put(T v) {
        using U = std::make_unsigned_t<T>;
        U u = U(v);
        for (int i = int(sizeof(T)) - 1; i >= 0; --i) {
            _out.push_back(uint8_t(u >> (8 * i)));
        }
    }
    void put_bytes(bytes_view v) {
        put(uint32_t(v.size()));
        _out.insert(_out.end(), v.begin(), v.end());
    }
    void put_bytes(std::string_view v) { put_bytes(to_bytes_view(v)); }
    void put_raw(bytes_view v) { _out.insert(_out.end(), v.begin(), v.end()); }
    void put(const tombstone& t) {
        put(int64_t(t.timestamp));
        put(int64_t(t.deletion_time));
    }
    void put(const atomic_cell& c) {
        put(int64_t(c.timestamp()));
        put(int32_t(c.ttl()));
        put(int64_t(c.local_deletion_time()));
        put_bytes(c.value());
    }
    void put(const clustering_key_prefix& k) {
        put(uint16_t(k.size()));
        for (auto v : k.components()) {
            put_bytes(v);
        }
    }
    bytes& out() noexcept { return _out; }

private:
    bytes _out;
};

class reader {
public:
    explicit reader(bytes_view in) : _in(in) {}

    [[noreturn]] void fail(const std::string& what) const {
        throw mutation_codec_error(fmt::format("mutation encoding: {} at offset {} of {} bytes", what, _pos, _in.size()));
    }
    void need(size_t n, const char* what) const {
        if (_in.size() - _pos < n) {
            fail(fmt::format("{} ({} bytes) overruns the end", what, n));
        }
    }
    template <typename T>
    T get(const char* what) {
        need(sizeof(T), what);
        using U = std::make_unsigned_t<T>;
        U u = 0;
        for (size_t i = 0; i < sizeof(T); ++i) {
            u = U((u << 8) | _in[_pos + i]);
        }
        _pos += sizeof(T);
        return T(u);
    }
    bytes_view get_bytes(const char* what) {
        size_t at = _pos;
        auto n = get<uint32_t>(what);
        need(n, what);
        auto v = _in.subspan(_pos, n);
        _pos += n;
        (void)at;
        return v;
    }
    bytes_view get_raw(size_t n, const char* what) {
        need(n, what);
        auto v = _in.subspan(_pos, n);
        _pos += n;
        return v;
    }
    tombstone get_tombstone(const char* what) {
        tombstone t;
        t.timestamp = get<int64_t>(what);
        t.deletion_time = get<int64_t>(what);
        return t;
    }
    atomic_cell get_cell() {
        auto ts = get<int64_t>("cell timestamp");
        auto ttl = get<int32_t>("cell ttl");
        auto ldt = get<int64_t>("cell deletion time");
        auto value = get_bytes("cell value");
        if (ttl != no_ttl) {
            if (ttl < 0) {
                fail(fmt::format("negative cell ttl {}", ttl));
            }
            return atomic_cell::make_expiring(ts, std::string(to_string_view(value)), ttl, ldt);
        }
        if (ldt != no_deletion_time) {
            if (!value.empty()) {
                fail("a dead cell with a value");
            }
            return atomic_cell::make_dead(ts, ldt);
        }
        return atomic_cell::make_live(ts, std::string(to_string_view(value)));
    }
    size_t pos() const noexcept { return _pos; }
    bool at_end() const noexcept { return _pos == _in.size(); }

private:
    bytes_view _in;
    size_t _pos = 0;
};

// One column of an entry's column table, resolved against the decoding schema.
struct decoded_column {
    encoded_kind kind;
    uint8_t flags;
    // The column's id in the schema, or nullopt when it was dropped (or changed shape): its cells are skipped.
    std::optional<column_id> id;
};

void encode_row(writer& w, const row& r, encoded_kind kind, const std::map<std::pair<uint8_t, column_id>, uint32_t>& index) {
    w.put(uint32_t(r.size()));
    for (auto& [id, c] : r.cells()) {
        w.put(index.at({kind, id}));
        if (auto* cell = std::get_if<atomic_cell>(&c)) {
            w.put(*cell);
        } else {
            auto& coll = std::get<collection_cells>(c);
            w.put(coll.tomb);
            w.put(uint32_t(coll.cells.size()));
            for (auto& [path, cell] : coll.cells) {
                w.put_bytes(bytes_view(path));
                w.put(cell);
            }
        }
    }
}

clustering_key_prefix decode_key(reader& r, const schema& s, bool full) {
    size_t at = r.pos();
    auto n = r.get<uint16_t>("clustering key size");
    auto& ck = s.clustering_key();
    if (n > ck.size() || (full && n != ck.size())) {
        r.fail(fmt::format("clustering key of {} values (the table has {} clustering columns) at {}", n, ck.size(), at));
    }
    std::vector<bytes_view> values;
    for (size_t i = 0; i < n; ++i) {
        auto v = r.get_bytes("clustering value");
        try {
            ck[i].type->validate(v);
        } catch (const std::exception& e) {
            r.fail(fmt::format("bad value of clustering column {} ({})", ck[i].name, e.what()));
        }
        values.push_back(v);
    }
    return clustering_key_prefix::from_views(values);
}

// Reads a row's cells into `into` (column ids of the kind's columns), skipping the dropped columns' cells.
void decode_row(reader& r, const schema& s, encoded_kind kind, const std::vector<decoded_column>& table, row& into) {
    auto& columns = kind == static_kind ? s.static_columns() : s.regular_columns();
    auto n = r.get<uint32_t>("cell count");
    std::optional<uint32_t> last;
    for (uint32_t i = 0; i < n; ++i) {
        auto ci = r.get<uint32_t>("cell column index");
        if (ci >= table.size()) {
            r.fail(fmt::format("column index {} past the column table's {} columns", ci, table.size()));
        }
        if (table[ci].kind != kind) {
            r.fail(fmt::format("column {} of the other kind (static/regular) in this row", ci));
        }
        if (last && ci <= *last) {
            r.fail(fmt::format("column index {} after {}: not increasing", ci, *last));
        }
        last = ci;
        auto& col = table[ci];
        if (col.flags & complex_column) {
            collection_cells coll;
            coll.tomb = r.get_tombstone("collection tombstone");
            auto ne = r.get<uint32_t>("collection element count");
            data_type path_type;
            if (col.id) {
                path_type = columns[*col.id].type->name_comparator();
            }
            for (uint32_t e = 0; e < ne; ++e) {
                auto path = r.get_bytes("collection cell path");
                if (path_type) {
                    try {
                        path_type->validate(path);
                    } catch (const std::exception& ex) {
                        r.fail(fmt::format("bad collection path of column {} ({})", columns[*col.id].name, ex.what()));
                    }
                    if (!coll.cells.empty() && path_type->compare(bytes_view(coll.cells.back().first), path) >= 0) {
                        r.fail(fmt::format("collection paths of column {} not increasing", columns[*col.id].name));
                    }
                }
                auto cell = r.get_cell();
                coll.cells.emplace_back(bytes(path.begin(), path.end()), std::move(cell));
            }
            if (col.id) {
                apply_cell(into, *col.id, coll, columns);
            }
        } else {
            auto cell = r.get_cell();
            if (col.id) {
                apply_cell(into, *col.id, cell, columns);
            }
        }
    }
}

} // namespace

bytes encode_mutation(const mutation& m) {
    const schema& s = *m.schema();
    const mutation_partition& p = m.partition();
    writer w;
    w.put(codec_magic);
    w.put(mutation_codec_version);
    w.put_raw(bytes_view(s.id().data(), s.id().size()));
    w.put_bytes(m.decorated_key().key().view());
    w.put(p.partition_tombstone());

    // The column table: the columns that have cells here, statics first, each kind by column id.
    std::map<std::pair<uint8_t, column_id>, uint32_t> index;
    auto note = [&](encoded_kind kind, const row& r) {
        for (auto& [id, c] : r.cells()) {
            index.emplace(std::pair<uint8_t, column_id>(kind, id), 0);
        }
    };
    note(static_kind, p.static_row());
    for (auto& [k, r] : p.rows()) {
        note(regular_kind, r.cells);
    }
    w.put(uint32_t(index.size()));
    uint32_t next = 0;
    for (auto& [key, i] : index) {
        i = next++;
        auto& col = key.first == static_kind ? s.static_columns().at(key.second) : s.regular_columns().at(key.second);
        w.put(key.first);
        w.put(uint8_t((col.is_complex() ? complex_column : 0) | (col.type->is_counter() ? counter_column : 0)));
        w.put(uint16_t(col.name.size()));
        w.put_raw(to_bytes_view(col.name));
    }

    encode_row(w, p.static_row(), static_kind, index);
    w.put(uint32_t(p.rows().size()));
    for (auto& [k, r] : p.rows()) {
        w.put(k);
        w.put(int64_t(r.marker.timestamp));
        w.put(int32_t(r.marker.ttl));
        w.put(int64_t(r.marker.expiry));
        w.put(r.tomb);
        encode_row(w, r.cells, regular_kind, index);
    }
    auto& rts = p.range_tombstones();
    w.put(uint32_t(rts.size()));
    for (auto& e : rts) {
        w.put(int8_t(e.start.weight()));
        w.put(e.start.key());
        w.put(int8_t(e.end.weight()));
        w.put(e.end.key());
        w.put(e.tomb);
    }
    return std::move(w.out());
}

table_id encoded_mutation_table_id(bytes_view data) {
    reader r(data);
    if (r.get<uint8_t>("magic") != codec_magic) {
        r.fail("not a mutation encoding (bad magic)");
    }
    auto v = r.get<uint8_t>("version");
    if (v != mutation_codec_version) {
        r.fail(fmt::format("unknown mutation encoding version {}", v));
    }
    auto raw = r.get_raw(16, "table id");
    table_id id;
    std::memcpy(id.data(), raw.data(), 16);
    return id;
}

mutation decode_mutation(schema_ptr sp, bytes_view data) {
    const schema& s = *sp;
    auto id = encoded_mutation_table_id(data);
    reader r(data);
    r.get_raw(18, "header");
    if (id != s.id()) {
        r.fail(fmt::format("table id {} is not the schema's ({}.{}, {})", format_table_id(id), s.keyspace(), s.table(),
                           format_table_id(s.id())));
    }
    auto key = r.get_bytes("partition key");
    mutation m(sp, dht::decorated_key(partition_key(to_string_view(key))));
    auto& p = m.partition();
    p.apply(r.get_tombstone("partition tombstone"));

    auto ncols = r.get<uint32_t>("column count");
    std::vector<decoded_column> table;
    for (uint32_t i = 0; i < ncols; ++i) {
        auto kind = r.get<uint8_t>("column kind");
        if (kind != static_kind && kind != regular_kind) {
            r.fail(fmt::format("column kind {}", kind));
        }
        auto flags = r.get<uint8_t>("column flags");
        if (flags & ~uint8_t(complex_column | counter_column)) {
            r.fail(fmt::format("column flags {:#x}", flags));
        }
        auto len = r.get<uint16_t>("column name length");
        auto name = to_string_view(r.get_raw(len, "column name"));
        decoded_column dc{encoded_kind(kind), flags, std::nullopt};
        auto& columns = kind == static_kind ? s.static_columns() : s.regular_columns();
        for (column_id c = 0; c < columns.size(); ++c) {
            auto& col = columns[c];
            if (col.name == name) {
                bool same_shape = col.is_complex() == bool(flags & complex_column) &&
                                  col.type->is_counter() == bool(flags & counter_column);
                if (same_shape) {
                    dc.id = c;
                }
                break;
            }
        }
        table.push_back(dc);
    }

    row static_cells;
    decode_row(r, s, static_kind, table, static_cells);
    for (auto& [c, v] : static_cells.cells()) {
        p.apply_static(s, c, v);
    }
    auto nrows = r.get<uint32_t>("row count");
    for (uint32_t i = 0; i < nrows; ++i) {
        auto k = decode_key(r, s, true);
        deletable_row dr;
        dr.marker.timestamp = r.get<int64_t>("row marker timestamp");
        dr.marker.ttl = r.get<int32_t>("row marker ttl");
        dr.marker.expiry = r.get<int64_t>("row marker expiry");
        dr.tomb = r.get_tombstone("row tombstone");
        decode_row(r, s, regular_kind, table, dr.cells);
        p.apply_row(s, k, dr);
    }
    auto nranges = r.get<uint32_t>("range tombstone count");
    position_in_partition_comparator cmp(s);
    for (uint32_t i = 0; i < nranges; ++i) {
        auto bound = [&](const char* what) {
            auto w = r.get<int8_t>(what);
            if (w != -1 && w != 1) {
                r.fail(fmt::format("{} weight {} (a range bound is before or after its key)", what, w));
            }
            auto k = decode_key(r, s, false);
            return w < 0 ? position_in_partition::before_key(std::move(k)) : position_in_partition::after_key(std::move(k));
        };
        auto start = bound("range tombstone start");
        auto end = bound("range tombstone end");
        auto t = r.get_tombstone("range tombstone");
        if (cmp(start, end) >= 0) {
            r.fail("range tombstone start not before its end");
        }
        p.apply_range_tombstone(start, end, t);
    }
    if (!r.at_end()) {
        r.fail(fmt::format("{} bytes left over", data.size() - r.pos()));
    }
    return m;
}

} // namespace reef
