// `reef sstable write`. See sstable_write.hh. The JSON forms read here are the ones sstable_dump_data.cc prints
// (Cassandra's JsonTransformer); each reader function below names the printing code's counterpart.
#include "tools/sstable_write.hh"

#include "mutation/counter.hh"
#include "mutation/fragment_stream_validator.hh"
#include "reader/mutation_reader.hh"
#include "runtime/with_closeable.hh"
#include "schema/types.hh"
#include "sstables/writer.hh"
#include "sstables/partitioner.hh"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <functional>
#include <limits>
#include <charconv>
#include <filesystem>
#include <map>
#include <stdexcept>

namespace reef::tools {

using utils::json_value;
using jkind = json_value::kind;

namespace {

[[noreturn]] void fail(const std::string& path, const json_value& v, const std::string& what) {
    throw std::invalid_argument(fmt::format("{} (offset {}): {}", path, v.offset, what));
}

const json_value& expect(const json_value& v, jkind k, const std::string& path) {
    if (v.type != k) {
        fail(path, v, fmt::format("expected {}, found {}", utils::kind_name(k), utils::kind_name(v.type)));
    }
    return v;
}

// Refuses members the dump never prints, so that a typo is not silently a missing field.
void check_members(const json_value& obj, const std::string& path, std::initializer_list<std::string_view> allowed) {
    for (auto& [name, v] : obj.members) {
        if (std::find(allowed.begin(), allowed.end(), name) == allowed.end()) {
            fail(path + "." + name, v, "unknown member \"" + name + "\"");
        }
    }
    for (size_t i = 0; i < obj.members.size(); ++i) {
        for (size_t j = 0; j < i; ++j) {
            if (obj.members[i].first == obj.members[j].first) {
                fail(path + "." + obj.members[i].first, obj.members[i].second, "member given twice");
            }
        }
    }
}

const json_value& required(const json_value& obj, std::string_view name, const std::string& path) {
    auto* v = obj.get(name);
    if (!v) {
        fail(path, obj, fmt::format("missing member \"{}\"", name));
    }
    return *v;
}

// dump-data prints timestamps and deletion times as strings ("1700000000000000"), TTLs and positions as
// numbers; either form is read.
int64_t integer(const json_value& v, const std::string& path) {
    if (!v.is_string() && !v.is_number()) {
        fail(path, v, fmt::format("expected an integer (a number or a string), found {}", utils::kind_name(v.type)));
    }
    int64_t out = 0;
    auto* b = v.text.data();
    auto* e = b + v.text.size();
    auto [p, ec] = std::from_chars(b, e, out);
    if (ec != std::errc() || p != e || v.text.empty()) {
        fail(path, v, "expected a 64-bit integer, found \"" + v.text + "\" (timestamps are raw microseconds: dump with -t)");
    }
    return out;
}

int32_t ttl_value(const json_value& v, const std::string& path) {
    auto t = integer(v, path);
    if (t <= 0 || t > std::numeric_limits<int32_t>::max()) {
        fail(path, v, fmt::format("a TTL is 1..2147483647 seconds, not {}", t));
    }
    return int32_t(t);
}

// A value's bytes through its type's JSON or string parser; a marshal_exception becomes an error at path.
template <typename F>
bytes parse_value(const std::string& path, const json_value& v, F&& f) {
    try {
        return f();
    } catch (const marshal_exception& e) {
        fail(path, v, e.what());
    }
}

// {"marked_deleted": "ts", "local_delete_time": "ldt"}: a partition, row, range or collection deletion.
tombstone deletion_info(const json_value& v, const std::string& path) {
    expect(v, jkind::object, path);
    check_members(v, path, {"marked_deleted", "local_delete_time"});
    tombstone t;
    t.timestamp = integer(required(v, "marked_deleted", path), path + ".marked_deleted");
    t.deletion_time = integer(required(v, "local_delete_time", path), path + ".local_delete_time");
    if (t.empty()) {
        fail(path, v, "marked_deleted is Long.MIN_VALUE, which means no deletion");
    }
    return t;
}

// A column name as dump-data prints it: bare, or double-quoted with "" for a quote (maybe_quote_identifier).
std::string unquote_identifier(const std::string& s) {
    if (s.size() < 2 || s.front() != '"' || s.back() != '"') {
        return s;
    }
    std::string out;
    for (size_t i = 1; i + 1 < s.size(); ++i) {
        out += s[i];
        if (s[i] == '"' && s[i + 1] == '"') {
            ++i;
        }
    }
    return out;
}

class json_sstable_reader {
public:
    json_sstable_reader(const schema_ptr& s, const sstables::mx_fragment_consumer::token_function& token)
        : _s(s), _token(token), _pos_cmp(*s) {}

    std::vector<mutation_fragment> read(const json_value& doc) {
        expect(doc, jkind::array, "$");
        for (size_t i = 0; i < doc.items.size(); ++i) {
            partition(doc.items[i], fmt::format("$[{}]", i));
        }
        return std::move(_out);
    }

private:
    // {"table kind": "REGULAR", "partition": {"key": [...], "position": n, "deletion_info": {...}}, "rows": [...]}
    void partition(const json_value& p, const std::string& path) {
        expect(p, jkind::object, path);
        check_members(p, path, {"table kind", "partition", "rows"});
        if (auto* kind = p.get("table kind")) {
            if (!kind->is_string() || kind->text != "REGULAR") {
                fail(path + ".table kind", *kind, "only \"REGULAR\" tables are written");
            }
        }
        auto ppath = path + ".partition";
        auto& header = expect(required(p, "partition", path), jkind::object, ppath);
        check_members(header, ppath, {"key", "position", "deletion_info"});
        auto key = partition_key_of(required(header, "key", ppath), ppath + ".key");
        // The token first: the key is moved into the decorated key (argument order is unspecified).
        bytes_view kb(reinterpret_cast<const uint8_t*>(key.bytes().data()), key.bytes().size());
        auto token = _token ? _token(kb) : dht::murmur3_token(kb);
        dht::decorated_key dk(token, std::move(key));
        if (_last_key && !(*_last_key < dk)) {
            fail(ppath + ".key", header, fmt::format("partitions must come in ring order: token {} is not after the "
                                                     "previous partition's (token {}), or the key repeats",
                                                     dk.get_token().value(), _last_key->get_token().value()));
        }
        _last_key = dk;
        tombstone deletion;
        if (auto* d = header.get("deletion_info")) {
            deletion = deletion_info(*d, ppath + ".deletion_info");
        }
        _out.push_back(partition_start{dk, deletion});
        auto rpath = path + ".rows";
        auto& rows = expect(required(p, "rows", path), jkind::array, rpath);
        _last_pos.reset();
        _open = {};
        _open_path.clear();
        bool static_done = false;
        for (size_t i = 0; i < rows.items.size(); ++i) {
            auto& r = rows.items[i];
            auto path_i = fmt::format("{}[{}]", rpath, i);
            expect(r, jkind::object, path_i);
            auto& type = expect(required(r, "type", path_i), jkind::string, path_i + ".type");
            if (type.text == "static_block") {
                if (static_done || _last_pos) {
                    fail(path_i, r, "a static row comes first in its partition, and only once");
                }
                static_done = true;
                static_block(r, path_i);
            } else if (type.text == "row") {
                clustering_row_of(r, path_i);
            } else if (type.text == "range_tombstone_bound" || type.text == "range_tombstone_boundary") {
                marker(r, path_i, type.text == "range_tombstone_boundary");
            } else {
                fail(path_i + ".type", type, "unknown row type \"" + type.text + "\"");
            }
        }
        if (_open) {
            fail(_open_path, p, "this range tombstone is still open at the end of its partition");
        }
        _out.push_back(partition_end{});
    }

    partition_key partition_key_of(const json_value& v, const std::string& path) {
        expect(v, jkind::array, path);
        auto& cols = _s->partition_key();
        if (v.items.size() != cols.size()) {
            fail(path, v, fmt::format("{} key values for a partition key of {} columns", v.items.size(), cols.size()));
        }
        std::vector<std::string> parts;
        for (size_t i = 0; i < cols.size(); ++i) {
            auto ipath = fmt::format("{}[{}]", path, i);
            auto& item = expect(v.items[i], jkind::string, ipath);
            auto b = parse_value(ipath, item, [&] { return cols[i].type->from_string(item.text); });
            parts.emplace_back(to_string_view(b));
        }
        if (parts.size() == 1) {
            return partition_key::from_single_value(parts[0]);
        }
        std::vector<std::string_view> views(parts.begin(), parts.end());
        return partition_key::from_components(views);
    }

    // "clustering": [v, ...]: a row's full key (null values end a compact table's prefix), or a bound's prefix
    // followed by "*" for each column it leaves out (so a text value "*" there reads as a left-out column).
    // A float or double null is NaN or an infinity (the dump prints null for all three): `resolve` picks them.
    clustering_key_prefix clustering(const json_value* v, const std::string& path, bool bound,
                                     const std::function<position_in_partition(clustering_key_prefix)>& at) {
        auto& cols = _s->clustering_key();
        if (!v) {
            if (!bound && !cols.empty()) {
                fail(path, *_current, "a row of a table with clustering columns needs \"clustering\"");
            }
            return {};
        }
        expect(*v, jkind::array, path);
        if (v->items.size() > cols.size()) {
            fail(path, *v, fmt::format("{} clustering values for {} clustering columns", v->items.size(), cols.size()));
        }
        size_t n = v->items.size();
        if (bound) {
            while (n > 0 && v->items[n - 1].is_string() && v->items[n - 1].text == "*") {
                --n;
            }
        }
        std::vector<bytes> values;
        std::vector<size_t> floating_nulls;
        bool ended = false;
        for (size_t i = 0; i < n; ++i) {
            auto ipath = fmt::format("{}[{}]", path, i);
            auto& item = v->items[i];
            if (item.is_null() && is_floating(*cols[i].type)) {
                floating_nulls.push_back(i);
            } else if (item.is_null()) {
                ended = true;
                continue;
            }
            if (ended) {
                fail(ipath, item, "a clustering value after a null one");
            }
            values.push_back(parse_value(ipath, item, [&] { return cols[i].type->from_json(item); }));
        }
        clustering_key_prefix key(std::move(values));
        if (!floating_nulls.empty()) {
            key = resolve_floating_nulls(std::move(key), floating_nulls, at);
        }
        return key;
    }

    // Of NaN, +Infinity and -Infinity for each null float or double, the first combination (in clustering order)
    // whose position comes after the previous row or marker, so that rows the dump prints alike stay distinct and
    // in order (the dump reads the same whichever is taken).
    clustering_key_prefix resolve_floating_nulls(clustering_key_prefix key, const std::vector<size_t>& at_columns,
                                                 const std::function<position_in_partition(clustering_key_prefix)>& at) {
        auto& cols = _s->clustering_key();
        auto components = key.to_vector();
        std::vector<std::vector<bytes>> choices;
        for (auto i : at_columns) {
            bool is_double = cols[i].type->kind() == type_kind::double_;
            std::vector<bytes> c;
            for (double d : {-std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity(),
                             std::numeric_limits<double>::quiet_NaN()}) {
                c.push_back(is_double ? serialize_be<uint64_t>(std::bit_cast<uint64_t>(d))
                                      : serialize_be<uint32_t>(std::bit_cast<uint32_t>(float(d))));
            }
            if (cols[i].order == clustering_order::desc) {
                std::reverse(c.begin(), c.end());
            }
            choices.push_back(std::move(c));
        }
        size_t combinations = 1;
        for (size_t k = 0; k < choices.size() && combinations < 1000; ++k) {
            combinations *= 3;
        }
        std::optional<clustering_key_prefix> first;
        for (size_t n = 0; n < combinations; ++n) {
            size_t rest = n;
            for (size_t k = choices.size(); k-- > 0;) {
                components[at_columns[k]] = choices[k][k < 7 ? rest % 3 : 2];
                rest /= 3;
            }
            clustering_key_prefix candidate(components);
            if (!first) {
                first = candidate;
            }
            if (!_last_pos || _pos_cmp(*_last_pos, at(candidate)) < 0) {
                return candidate;
            }
        }
        return *first;
    }

    static bool is_floating(const abstract_type& t) {
        auto k = t.without_reversal()->kind();
        return k == type_kind::float_ || k == type_kind::double_;
    }

    void check_order(const position_in_partition& pos, const json_value& v, const std::string& path) {
        if (_last_pos && _pos_cmp(*_last_pos, pos) >= 0) {
            fail(path, v, "rows and range tombstone markers must come in clustering order, each position once");
        }
        _last_pos = pos;
    }

    void static_block(const json_value& r, const std::string& path) {
        check_members(r, path, {"type", "position", "cells"});
        if (_s->static_columns().empty()) {
            fail(path, r, "a static row in a table without static columns");
        }
        static_row sr;
        sr.cells = cells(r, path, true, {});
        _out.push_back(std::move(sr));
    }

    void clustering_row_of(const json_value& r, const std::string& path) {
        check_members(r, path, {"type", "position", "clustering", "liveness_info", "deletion_info", "cells"});
        _current = &r;
        clustering_row cr;
        cr.key = clustering(r.get("clustering"), path + ".clustering", false,
                            [](clustering_key_prefix k) { return position_in_partition::for_key(std::move(k)); });
        check_order(position_in_partition::for_key(cr.key), r, path);
        if (auto* l = r.get("liveness_info")) {
            auto lpath = path + ".liveness_info";
            expect(*l, jkind::object, lpath);
            check_members(*l, lpath, {"tstamp", "ttl", "expires_at", "expired"});
            cr.marker.timestamp = integer(required(*l, "tstamp", lpath), lpath + ".tstamp");
            if (cr.marker.empty()) {
                fail(lpath, *l, "tstamp is Long.MIN_VALUE, which means no liveness info");
            }
            expiry(*l, lpath, cr.marker.ttl, cr.marker.expiry);
        }
        if (auto* d = r.get("deletion_info")) {
            cr.row_tombstone = deletion_info(*d, path + ".deletion_info");
        }
        cr.cells = cells(r, path, false, cr.marker);
        _out.push_back(std::move(cr));
    }

    // "ttl" and "expires_at" together, or neither ("expired" is what the dump computed from its clock).
    void expiry(const json_value& obj, const std::string& path, int32_t& ttl, deletion_time_type& expires) {
        auto* t = obj.get("ttl");
        auto* e = obj.get("expires_at");
        if (bool(t) != bool(e)) {
            fail(path, obj, "\"ttl\" and \"expires_at\" go together");
        }
        if (auto* x = obj.get("expired"); x && x->type != jkind::boolean) {
            fail(path + ".expired", *x, "expected a boolean");
        }
        if (t) {
            ttl = ttl_value(*t, path + ".ttl");
            expires = integer(*e, path + ".expires_at");
        }
    }

    const column_definition* column_named(const json_value& name, const std::string& path, bool is_static,
                                          column_id& id) {
        expect(name, jkind::string, path);
        auto n = unquote_identifier(name.text);
        auto& cols = is_static ? _s->static_columns() : _s->regular_columns();
        for (size_t i = 0; i < cols.size(); ++i) {
            if (cols[i].name == n) {
                id = column_id(i);
                return &cols[i];
            }
        }
        fail(path, name, fmt::format("the table has no {} column {}", is_static ? "static" : "regular", name.text));
    }

    // The cells of a row: simple cells, complex cells with a path, and complex deletions ({"name", "deletion_info"
    // with marked_deleted}). A cell without "tstamp" has the row's liveness timestamp; a live cell without "ttl"
    // in a row whose liveness expires has the row's TTL and expiry (dump-data prints neither when they match).
    row cells(const json_value& r, const std::string& path, bool is_static, const row_marker& marker) {
        row out;
        auto cpath = path + ".cells";
        auto& list = expect(required(r, "cells", path), jkind::array, cpath);
        std::map<column_id, collection_cells> complex;
        for (size_t i = 0; i < list.items.size(); ++i) {
            auto& c = list.items[i];
            auto p = fmt::format("{}[{}]", cpath, i);
            expect(c, jkind::object, p);
            check_members(c, p, {"name", "path", "value", "deletion_info", "tstamp", "ttl", "expires_at", "expired"});
            column_id id = 0;
            auto& col = *column_named(required(c, "name", p), p + ".name", is_static, id);
            auto* del = c.get("deletion_info");
            auto* value = c.get("value");
            auto* cell_path = c.get("path");
            if (del && del->get("marked_deleted")) {
                // A complex column's deletion.
                if (!col.is_complex()) {
                    fail(p, c, "a collection deletion of column " + col.name + ", which is not a non-frozen collection or UDT");
                }
                check_members(c, p, {"name", "deletion_info"});
                auto& coll = complex[id];
                if (coll.tomb) {
                    fail(p, c, "column " + col.name + " is deleted twice in this row");
                }
                coll.tomb = deletion_info(*del, p + ".deletion_info");
                continue;
            }
            if (bool(del) == bool(value)) {
                fail(p, c, "a cell has either \"value\" or \"deletion_info\"");
            }
            write_time::timestamp_type ts;
            if (auto* t = c.get("tstamp")) {
                ts = integer(*t, p + ".tstamp");
            } else if (!marker.empty()) {
                ts = marker.timestamp;
            } else {
                fail(p, c, "a cell without \"tstamp\" in a row without liveness_info");
            }
            data_type value_type = col.type;
            bytes cpath_bytes;
            if (col.is_complex()) {
                if (!cell_path) {
                    fail(p, c, "a cell of column " + col.name + " (a non-frozen collection or UDT) needs \"path\"");
                }
                auto pp = p + ".path";
                expect(*cell_path, jkind::array, pp);
                if (cell_path->items.size() != 1) {
                    fail(pp, *cell_path, "a cell path has one element");
                }
                auto& elem = expect(cell_path->items[0], jkind::string, pp + "[0]");
                auto& t = *col.type;
                if (t.is_user_type()) {
                    auto& u = static_cast<const user_type_impl&>(t);
                    auto it = std::find(u.field_names().begin(), u.field_names().end(), elem.text);
                    size_t field;
                    if (it != u.field_names().end()) {
                        field = size_t(it - u.field_names().begin());
                    } else {
                        // dump-data prints a field past the type's as its number.
                        auto [ptr, ec] = std::from_chars(elem.text.data(), elem.text.data() + elem.text.size(), field);
                        if (ec != std::errc() || ptr != elem.text.data() + elem.text.size() || field > 0x7fff) {
                            fail(pp + "[0]", elem, "user type " + u.type_name() + " has no field " + elem.text);
                        }
                    }
                    write_be<uint16_t>(cpath_bytes, uint16_t(field));
                    value_type = field < u.field_types().size() ? u.field_types()[field] : blob_type();
                } else {
                    cpath_bytes = parse_value(pp + "[0]", elem, [&] { return t.name_comparator()->from_string(elem.text); });
                    value_type = t.kind() == type_kind::map    ? t.value_type()
                                 : t.kind() == type_kind::list ? t.element_type()
                                                               : empty_type();
                }
            } else if (cell_path) {
                fail(p + ".path", *cell_path, "column " + col.name + " has no cell paths");
            }
            std::optional<atomic_cell> cell;
            if (del) {
                auto dp = p + ".deletion_info";
                expect(*del, jkind::object, dp);
                check_members(*del, dp, {"local_delete_time"});
                if (c.get("ttl") || c.get("expires_at")) {
                    fail(p, c, "a deleted cell has no TTL");
                }
                cell = atomic_cell::make_dead(ts, integer(required(*del, "local_delete_time", dp), dp + ".local_delete_time"));
            } else {
                auto vp = p + ".value";
                std::string v;
                if (value_type->is_counter()) {
                    auto n = integer(*value, vp);
                    auto ctx = counter_context_with_prefix(n);
                    if (!ctx) {
                        fail(vp, *value, fmt::format("{} is not the first 8 bytes of any counter context", n));
                    }
                    v = std::move(*ctx);
                } else {
                    auto b = parse_value(vp, *value, [&] { return value_type->from_json(*value); });
                    v.assign(to_string_view(b));
                }
                int32_t ttl = no_ttl;
                deletion_time_type expires = no_deletion_time;
                expiry(c, p, ttl, expires);
                if (ttl == no_ttl && marker.is_expiring()) {
                    ttl = marker.ttl;
                    expires = marker.expiry;
                }
                cell = ttl == no_ttl ? atomic_cell::make_live(ts, std::move(v))
                                     : atomic_cell::make_expiring(ts, std::move(v), ttl, expires);
            }
            if (col.is_complex()) {
                auto& coll = complex[id];
                auto cmp = col.type->name_comparator();
                auto& cells = coll.cells;
                auto it = std::lower_bound(cells.begin(), cells.end(), cpath_bytes,
                                           [&](auto& e, const bytes& k) { return cmp->compare(e.first, k) < 0; });
                if (it != cells.end() && cmp->compare(it->first, cpath_bytes) == 0) {
                    fail(p + ".path", *cell_path, "this cell path appears twice in column " + col.name);
                }
                cells.emplace(it, std::move(cpath_bytes), std::move(*cell));
            } else {
                if (out.find(id)) {
                    fail(p, c, "column " + col.name + " appears twice in this row");
                }
                out.apply(id, std::move(*cell));
            }
        }
        for (auto& [id, coll] : complex) {
            auto& col = (is_static ? _s->static_columns() : _s->regular_columns())[id];
            auto cmp = col.type->name_comparator();
            out.apply(id, std::move(coll), [cmp](bytes_view a, bytes_view b) { return cmp->compare(a, b); });
        }
        return out;
    }

    struct bound_json {
        bool inclusive;
        clustering_key_prefix prefix;
        tombstone tomb;
    };

    bound_json bound(const json_value& b, const std::string& path, bool start) {
        expect(b, jkind::object, path);
        check_members(b, path, {"type", "clustering", "deletion_info"});
        auto& type = expect(required(b, "type", path), jkind::string, path + ".type");
        if (type.text != "inclusive" && type.text != "exclusive") {
            fail(path + ".type", type, "a bound is \"inclusive\" or \"exclusive\"");
        }
        _current = &b;
        // Inclusive starts and exclusive ends sit before their prefix's keys, the others after.
        bool before = (type.text == "inclusive") == start;
        auto at = [before](clustering_key_prefix k) {
            return before ? position_in_partition::before_key(std::move(k)) : position_in_partition::after_key(std::move(k));
        };
        return {type.text == "inclusive", clustering(b.get("clustering"), path + ".clustering", true, at),
                deletion_info(required(b, "deletion_info", path), path + ".deletion_info")};
    }

    // A bound opens (start) or closes (end) a range tombstone; a boundary closes one and opens the next at the
    // same prefix, its "start" being the one it opens (sstable_dump_data.cc prints it first).
    void marker(const json_value& m, const std::string& path, bool boundary) {
        check_members(m, path, {"type", "position", "start", "end"});
        auto* start = m.get("start");
        auto* end = m.get("end");
        if (boundary ? !(start && end) : bool(start) == bool(end)) {
            fail(path, m, boundary ? "a boundary has a \"start\" and an \"end\"" : "a bound has a \"start\" or an \"end\"");
        }
        std::optional<bound_json> s, e;
        if (end) {
            e = bound(*end, path + ".end", false);
            if (!_open) {
                fail(path + ".end", *end, "a range tombstone ends, but none is open");
            }
            if (e->tomb != _open) {
                fail(path + ".end.deletion_info", *end,
                     fmt::format("the range tombstone ends with a deletion ({}, {}) other than it began with ({}, {}) "
                                 "at {}", e->tomb.timestamp, e->tomb.deletion_time, _open.timestamp,
                                 _open.deletion_time, _open_path));
            }
        }
        if (start) {
            s = bound(*start, path + ".start", true);
            if (!boundary && _open) {
                fail(path + ".start", *start, "a range tombstone starts while the one from " + _open_path + " is open");
            }
        }
        auto pos = position_in_partition::for_partition_end();
        if (boundary) {
            if (s->inclusive == e->inclusive || !(s->prefix == e->prefix)) {
                fail(path, m, "a boundary's start and end have the same clustering, one inclusive and one exclusive");
            }
            // Exclusive end + inclusive start sits before the prefix's keys; inclusive end + exclusive start after.
            pos = s->inclusive ? position_in_partition::before_key(s->prefix) : position_in_partition::after_key(s->prefix);
        } else if (s) {
            pos = s->inclusive ? position_in_partition::before_key(s->prefix) : position_in_partition::after_key(s->prefix);
        } else {
            pos = e->inclusive ? position_in_partition::after_key(e->prefix) : position_in_partition::before_key(e->prefix);
        }
        check_order(pos, m, path);
        _open = s ? s->tomb : tombstone{};
        _open_path = s ? path + ".start" : "";
        _out.push_back(range_tombstone_change{std::move(pos), _open});
    }

    schema_ptr _s;
    const sstables::mx_fragment_consumer::token_function& _token;
    position_in_partition_comparator _pos_cmp;
    std::vector<mutation_fragment> _out;
    std::optional<dht::decorated_key> _last_key;
    std::optional<position_in_partition> _last_pos;
    tombstone _open;
    std::string _open_path;
    const json_value* _current = nullptr;
};

} // namespace

std::vector<mutation_fragment> fragments_from_json(const schema_ptr& s, const json_value& sstable,
                                                   const sstables::mx_fragment_consumer::token_function& token) {
    json_sstable_reader r(s, token);
    return r.read(sstable);
}

std::optional<std::string> counter_context_with_prefix(int64_t value) {
    uint8_t b[8];
    for (int i = 0; i < 8; ++i) {
        b[i] = uint8_t(uint64_t(value) >> (56 - 8 * i));
    }
    int16_t n = int16_t((b[0] << 8) | b[1]);
    int header_count = n < 0 ? -int(n) : int(n);
    size_t header_size = 2 + 2 * size_t(header_count);
    // Header elements: a local shard's index, or a global one's index + Short.MIN_VALUE, in index order.
    std::vector<int16_t> elements;
    int last_index = -1;
    for (int i = 0; i < header_count; ++i) {
        int16_t e;
        if (i < 3) {
            e = int16_t((b[2 + 2 * i] << 8) | b[3 + 2 * i]);
        } else {
            // Past the 8 bytes: the next indexes, global.
            if (last_index + 1 > 0x7fff) {
                return std::nullopt;
            }
            e = int16_t(last_index + 1 - 0x8000);
        }
        int index = e >= 0 ? e : e + 0x8000;
        if (index <= last_index) {
            return std::nullopt;
        }
        last_index = index;
        elements.push_back(e);
    }
    size_t shards = size_t(last_index + 1);
    if (header_size < 8 && shards == 0) {
        shards = 1;
    }
    std::string out;
    auto put16 = [&](int16_t v) {
        out += char(uint16_t(v) >> 8);
        out += char(uint16_t(v) & 0xff);
    };
    put16(n);
    for (auto e : elements) {
        put16(e);
    }
    for (size_t k = 0; k < shards; ++k) {
        std::string id(16, '\0');
        if (k == 0) {
            for (size_t i = header_size; i < 8; ++i) {
                id[i - header_size] = char(b[i]);
            }
        } else {
            // Shard ids sort as unsigned bytes: the first one's prefix, then a counter in the last 8 bytes.
            id = out.substr(header_size, 16);
            for (int i = 0; i < 8; ++i) {
                id[8 + size_t(i)] = char(uint64_t(k) >> (56 - 8 * i));
            }
        }
        out += id;
        out.append(16, '\0');  // clock and count
    }
    try {
        counter_context::parse(out);
    } catch (const marshal_exception&) {
        return std::nullopt;
    }
    return out;
}

uint64_t next_generation(const std::string& dir) {
    uint64_t max = 0;
    std::error_code ec;
    for (auto& e : std::filesystem::directory_iterator(dir, ec)) {
        try {
            auto d = sstables::descriptor::from_path(e.path().string());
            uint64_t g = 0;
            auto [p, err] = std::from_chars(d.generation.data(), d.generation.data() + d.generation.size(), g);
            if (err == std::errc() && p == d.generation.data() + d.generation.size()) {
                max = std::max(max, g);
            }
        } catch (const std::invalid_argument&) {
        }
    }
    return max + 1;
}

future<std::string> write_sstables_from_json(schema_ptr s, std::string json_text, write_json_options opts) {
    if (opts.output_dir.empty()) {
        throw std::invalid_argument("--output DIR is required");
    }
    auto partitioner = sstables::partitioner_class_name(opts.partitioner);
    auto token = sstables::partitioner_token_function(partitioner);
    std::vector<json_value> docs;
    try {
        docs = utils::parse_json_documents(json_text);
    } catch (const utils::json_parse_error& e) {
        throw std::invalid_argument(e.what());
    }
    if (docs.empty()) {
        throw std::invalid_argument("the input holds no JSON document");
    }
    // Everything is checked before anything is written.
    std::vector<std::vector<mutation_fragment>> sstables;
    for (size_t i = 0; i < docs.size(); ++i) {
        try {
            sstables.push_back(fragments_from_json(s, docs[i], token));
        } catch (const std::invalid_argument& e) {
            if (docs.size() == 1) {
                throw;
            }
            throw std::invalid_argument(fmt::format("document {}: {}", i + 1, e.what()));
        }
    }
    std::filesystem::create_directories(opts.output_dir);
    co_await sstables::remove_partial_sstables(opts.output_dir);
    std::string out;
    for (auto& fragments : sstables) {
        sstables::encoding_stats_collector stats;
        for (auto& f : fragments) {
            stats.update(f);
        }
        auto wo = sstables::writer_options_for(*s);
        wo.stats = stats.get();
        wo.partitioner = partitioner;
        sstables::descriptor d{opts.output_dir, sstables::sstable_version::me,
                               std::to_string(next_generation(opts.output_dir)), "big"};
        auto reader = make_fragment_vector_reader(s, std::move(fragments));
        co_await with_closeable(std::move(reader),
                                [&](mutation_reader& reader) { return sstables::write_sstable(reader, s, d, wo); });
        out += d.filename(sstables::component_type::data) + "\n";
    }
    co_return out;
}

} // namespace reef::tools
