// Counter contexts: parsing, totals and Cassandra's merge. See counter.hh and mutation/README.md.
#include "mutation/counter.hh"

#include "schema/types.hh"
#include "schema/value_format.hh"

#include <algorithm>
#include <cstring>
#include <limits>
#include <stdexcept>

namespace reef {

namespace {

constexpr size_t header_size_length = 2;
constexpr size_t header_elt_length = 2;
constexpr size_t shard_length = 16 + 8 + 8;

int compare_ids(const counter_id& a, const counter_id& b) noexcept {
    return std::memcmp(a.data(), b.data(), a.size());
}

int16_t read_i16(const char* p) {
    return read_be<int16_t>(reinterpret_cast<const uint8_t*>(p));
}
int64_t read_i64(const char* p) {
    return read_be<int64_t>(reinterpret_cast<const uint8_t*>(p));
}
void put_i16(std::string& out, int16_t v) {
    auto u = uint16_t(v);
    out.push_back(char(u >> 8));
    out.push_back(char(u & 0xff));
}
void put_i64(std::string& out, int64_t v) {
    auto u = uint64_t(v);
    for (int shift = 56; shift >= 0; shift -= 8) {
        out.push_back(char((u >> shift) & 0xff));
    }
}

// Java's long addition: wraps instead of overflowing.
int64_t add_wrapping(int64_t a, int64_t b) noexcept {
    return int64_t(uint64_t(a) + uint64_t(b));
}

std::string id_to_string(const counter_id& id) {
    return format_uuid(bytes_view(id.data(), id.size()));
}

enum class relationship { equal, greater_than, less_than, disjoint };

// CounterContext.compare: which of two shards of one id wins.
// greater_than: left; less_than: right; equal: the same (global or
// remote) shard; disjoint: two local shards, which add up.
relationship compare_shards(const counter_shard& l, const counter_shard& r) {
    using k = counter_shard_kind;
    auto by_count = [&] {
        // Equal clocks and different counts should not happen; Cassandra
        // keeps the higher count to heal deterministically.
        return l.count > r.count ? relationship::greater_than
             : l.count == r.count ? relationship::equal : relationship::less_than;
    };
    if (l.kind == k::global || r.kind == k::global) {
        if (l.kind != r.kind) {
            return l.kind == k::global ? relationship::greater_than : relationship::less_than;
        }
        if (l.clock == r.clock) {
            return by_count();
        }
        return l.clock > r.clock ? relationship::greater_than : relationship::less_than;
    }
    if (l.kind == k::local || r.kind == k::local) {
        if (l.kind == r.kind) {
            return relationship::disjoint;
        }
        return l.kind == k::local ? relationship::greater_than : relationship::less_than;
    }
    if (l.clock == r.clock) {
        return by_count();
    }
    // Remote shards: pre-1.x negative clocks marked deleted shards and win.
    // Cassandra's expression as it stands (a clock of 0 against a positive
    // one goes to whichever is on the right).
    int64_t lc = l.clock, rc = r.clock;
    if ((lc >= 0 && rc > 0 && lc >= rc) || (lc < 0 && (rc > 0 || lc < rc))) {
        return relationship::greater_than;
    }
    return relationship::less_than;
}

} // namespace

counter_context counter_context::parse(std::string_view v) {
    if (v.size() < header_size_length) {
        throw marshal_exception("counter context of " + std::to_string(v.size()) +
                                " bytes is shorter than its 2-byte header count");
    }
    int16_t raw_count = read_i16(v.data());
    size_t elts = size_t(raw_count < 0 ? -int32_t(raw_count) : int32_t(raw_count));
    size_t header_length = header_size_length + elts * header_elt_length;
    if (v.size() < header_length) {
        throw marshal_exception("counter context of " + std::to_string(v.size()) + " bytes is shorter than its " +
                                std::to_string(header_length) + "-byte header (" + std::to_string(elts) +
                                " header elements)");
    }
    if ((v.size() - header_length) % shard_length != 0) {
        // CounterContext.validateContext's check.
        throw marshal_exception("Invalid size for a counter context: " + std::to_string(v.size() - header_length) +
                                " bytes after the header are not whole 32-byte shards");
    }
    size_t n = (v.size() - header_length) / shard_length;
    counter_context c;
    c._local_marked_to_clear = raw_count < 0;
    c._shards.resize(n);
    for (size_t i = 0; i < n; ++i) {
        const char* p = v.data() + header_length + i * shard_length;
        auto& s = c._shards[i];
        std::memcpy(s.id.data(), p, 16);
        s.clock = read_i64(p + 16);
        s.count = read_i64(p + 24);
        s.kind = counter_shard_kind::remote;
        if (i > 0 && compare_ids(c._shards[i - 1].id, s.id) >= 0) {
            throw marshal_exception("counter context: shard " + std::to_string(i) + " id " + id_to_string(s.id) +
                                    " does not sort after shard " + std::to_string(i - 1) + " id " +
                                    id_to_string(c._shards[i - 1].id));
        }
    }
    // Cassandra walks the header and the body together, so header elements
    // must name shards in increasing index order.
    int64_t previous = -1;
    for (size_t e = 0; e < elts; ++e) {
        int16_t elt = read_i16(v.data() + header_size_length + e * header_elt_length);
        bool global = elt < 0;
        int64_t index = global ? int64_t(elt) - std::numeric_limits<int16_t>::min() : int64_t(elt);
        if (index <= previous || index >= int64_t(n)) {
            throw marshal_exception("counter context: header element " + std::to_string(e) + " (" +
                                    std::to_string(elt) + ") names shard " + std::to_string(index) + ", not after " +
                                    std::to_string(previous) + " and below " + std::to_string(n));
        }
        previous = index;
        c._shards[size_t(index)].kind = global ? counter_shard_kind::global : counter_shard_kind::local;
    }
    return c;
}

int64_t counter_context::total() const noexcept {
    int64_t t = 0;
    for (auto& s : _shards) {
        t = add_wrapping(t, s.count);
    }
    return t;
}

std::string counter_context::serialize() const {
    std::vector<int16_t> header;
    for (size_t i = 0; i < _shards.size(); ++i) {
        if (_shards[i].kind == counter_shard_kind::global) {
            header.push_back(int16_t(int32_t(i) + std::numeric_limits<int16_t>::min()));
        } else if (_shards[i].kind == counter_shard_kind::local) {
            header.push_back(int16_t(i));
        }
    }
    if (header.size() > size_t(std::numeric_limits<int16_t>::max())) {
        throw std::invalid_argument("counter context: " + std::to_string(header.size()) +
                                    " global and local shards do not fit the header");
    }
    std::string out;
    out.reserve(header_size_length + header.size() * header_elt_length + _shards.size() * shard_length);
    auto count = int16_t(header.size());
    put_i16(out, _local_marked_to_clear ? int16_t(-count) : count);
    for (auto e : header) {
        put_i16(out, e);
    }
    for (auto& s : _shards) {
        out.append(reinterpret_cast<const char*>(s.id.data()), s.id.size());
        put_i64(out, s.clock);
        put_i64(out, s.count);
    }
    return out;
}

counter_context counter_context_builder::build() const {
    counter_context c;
    c._shards = _shards;
    std::sort(c._shards.begin(), c._shards.end(),
              [](const counter_shard& a, const counter_shard& b) { return compare_ids(a.id, b.id) < 0; });
    for (size_t i = 1; i < c._shards.size(); ++i) {
        if (c._shards[i - 1].id == c._shards[i].id) {
            throw std::invalid_argument("counter_context_builder: id " + id_to_string(c._shards[i].id) +
                                        " added twice");
        }
    }
    size_t marked = std::count_if(c._shards.begin(), c._shards.end(),
                                  [](auto& s) { return s.kind != counter_shard_kind::remote; });
    if (marked > size_t(std::numeric_limits<int16_t>::max())) {
        throw std::invalid_argument("counter_context_builder: too many global and local shards");
    }
    return c;
}

counter_id counter_id_from_uuid(std::string_view uuid) {
    bytes b = parse_uuid(uuid);
    counter_id id{};
    std::copy(b.begin(), b.end(), id.begin());
    return id;
}

int64_t counter_total(std::string_view context) {
    return counter_context::parse(context).total();
}

counter_merge_result merge_counter_contexts(std::string_view left, std::string_view right) {
    auto l = counter_context::parse(left);
    auto r = counter_context::parse(right);
    auto& ls = l._shards;
    auto& rs = r._shards;
    bool left_is_superset = true;
    bool right_is_superset = true;
    counter_context merged;
    merged._shards.reserve(ls.size() + rs.size());
    size_t i = 0, j = 0;
    while (i < ls.size() && j < rs.size()) {
        int cmp = compare_ids(ls[i].id, rs[j].id);
        if (cmp == 0) {
            switch (compare_shards(ls[i], rs[j])) {
            case relationship::greater_than:
                right_is_superset = false;
                merged._shards.push_back(ls[i]);
                break;
            case relationship::less_than:
                left_is_superset = false;
                merged._shards.push_back(rs[j]);
                break;
            case relationship::equal:
                merged._shards.push_back(rs[j]);
                break;
            case relationship::disjoint:
                left_is_superset = right_is_superset = false;
                merged._shards.push_back({ls[i].id, add_wrapping(ls[i].clock, rs[j].clock),
                                          add_wrapping(ls[i].count, rs[j].count), counter_shard_kind::local});
                break;
            }
            ++i;
            ++j;
        } else if (cmp > 0) {
            left_is_superset = false;
            merged._shards.push_back(rs[j++]);
        } else {
            right_is_superset = false;
            merged._shards.push_back(ls[i++]);
        }
    }
    if (i < ls.size()) {
        right_is_superset = false;
    } else if (j < rs.size()) {
        left_is_superset = false;
    }
    if (left_is_superset) {
        return {counter_merge_source::left, std::string(left)};
    }
    if (right_is_superset) {
        return {counter_merge_source::right, std::string(right)};
    }
    merged._shards.insert(merged._shards.end(), ls.begin() + i, ls.end());
    merged._shards.insert(merged._shards.end(), rs.begin() + j, rs.end());
    return {counter_merge_source::merged, merged.serialize()};
}

atomic_cell reconcile_counter(const atomic_cell& left, const atomic_cell& right) {
    bool left_dead = left.is_dead_marker();
    bool right_dead = right.is_dead_marker();
    if (left_dead && right_dead) {
        // Neither is a counter cell (Cell.isCounterCell is false for a
        // tombstone): the regular rules.
        return reconcile(left, right);
    }
    if (left_dead || right_dead) {
        // CASSANDRA-7346: a deleted counter stays deleted, whatever the
        // timestamps (increments carry the writer's clock, not an order).
        return left_dead ? left : right;
    }
    bool left_empty = left.value().empty();
    bool right_empty = right.value().empty();
    if (left_empty || right_empty) {
        if (left_empty != right_empty) {
            return left_empty ? left : right;
        }
        return left.timestamp() > right.timestamp() ? left : right;
    }
    auto merged = merge_counter_contexts(left.value(), right.value());
    write_time::timestamp_type ts = std::max(left.timestamp(), right.timestamp());
    if (merged.source == counter_merge_source::left && ts == left.timestamp()) {
        return left;
    }
    if (merged.source == counter_merge_source::right && ts == right.timestamp()) {
        return right;
    }
    return atomic_cell::make_live(ts, std::move(merged.value));
}

bytes counter_query_value(std::string_view context) {
    bytes out;
    write_be<int64_t>(out, counter_total(context));
    return out;
}

std::string counter_cql_literal(std::string_view context) {
    return counter_type()->to_cql_literal(counter_query_value(context));
}

std::string to_string(const counter_context& c) {
    std::string out = "[";
    for (size_t i = 0; i < c.shards().size(); ++i) {
        auto& s = c.shards()[i];
        if (i > 0) {
            out += ",";
        }
        out += "{" + id_to_string(s.id) + ", " + std::to_string(s.clock) + ", " + std::to_string(s.count) + "}";
        if (s.kind == counter_shard_kind::global) {
            out += "$";
        } else if (s.kind == counter_shard_kind::local) {
            out += "*";
        }
    }
    return out + "]";
}

} // namespace reef
