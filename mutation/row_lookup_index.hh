// row_lookup_index: a partition's rows as a sorted flat array of 8-byte normalized key prefixes beside their map
// nodes, searched with integer compares first; its lower_bound is exactly the row map's lower_bound.
#pragma once

#include "mutation/clustering_key.hh"
#include "schema/schema.hh"

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <memory>
#include <new>
#include <optional>
#include <vector>

namespace reef {

// The 8-byte normalized prefix of a clustering prefix: weakly order-preserving, i.e. a < b by
// clustering_comparator implies encode(a) <= encode(b) (as unsigned integers), and equal keys encode
// equally. So a prefix that differs decides a comparison without looking at the keys, and only equal
// prefixes need the full compare.
//
// The leading columns are written big-endian, each in a form whose unsigned byte order is the type's order:
// integers with the sign bit flipped, floats and doubles sign-magnitude flipped (NaN above everything, as
// Java's compare), booleans as 0/1, timeuuids by their reordered timestamp, uuids by version then time or
// bits, and byte-order types (text, ascii, blob, inet, date, time, duration) as their bytes. A DESC column's
// bytes are inverted. A column of fixed width whose value has that width fully determines its order, and
// the next column follows it; anything else (a variable-width value, an empty value, a value cut by the 8
// bytes) is the last one written, and the bytes left are filled with the extreme that keeps the order: 0x00
// ascending, 0xff descending (an empty value sorts first ascending, last descending). A key that ends, or
// a column of a type with no such form (varint, decimal, collections, tuples), leaves zeros (shorter keys
// sort first). A key with no components is 0.
class clustering_prefix_encoder {
public:
    explicit clustering_prefix_encoder(const std::vector<data_type>& types);

    // Whether the first clustering column has a form (else every key is 0: no use).
    bool usable() const noexcept { return _n > 0; }
    // k's normalized prefix; nullopt when a value has a size its type never has (the comparator may treat
    // it in its own way, or throw: such a key is compared by the comparator only).
    std::optional<uint64_t> encode(const clustering_key_prefix& k) const noexcept;

private:
    enum class kind : uint8_t {
        signed_integer,  // width 1, 2, 4, 8: two's complement big-endian
        fixed_bytes,     // date (4), time (8): unsigned big-endian
        byte_order,      // variable width: unsigned bytes, shorter first
        boolean,         // any non-empty value: its first byte != 0
        float32,
        float64,
        timeuuid,
        uuid,
    };
    struct column {
        kind k = kind::byte_order;
        bool reversed = false;
        uint8_t width = 0;  // bytes of the encoded form (0: variable)
    };

    std::array<column, 8> _columns{};
    uint8_t _n = 0;  // the leading columns with a form (at most 8: each takes a byte at least)
};

namespace detail {

// The row lookup index's state, allocated only for maps that reach row_lookup_index::min_rows rows.
template <typename Map>
class row_lookup_index_state {
public:
    using const_iterator = typename Map::const_iterator;
    static constexpr size_t block_rows = 32;

    // Whether lower_bound builds the index at its lookup-th lookup since the last change.
    static bool lazy_build_due(size_t lookups, size_t rows) noexcept {
        return lookups * std::bit_width(rows) >= rows;
    }

    // The map gained or lost rows.
    void invalidate() noexcept {
        if (!_prefixes.empty() || !_nodes.empty() || !_summary.empty()) {
            std::vector<uint64_t>().swap(_prefixes);
            std::vector<uint64_t>().swap(_summary);
            std::vector<const_iterator>().swap(_nodes);
        }
        _built = false;
        _refused = false;
        _lookups = 0;
    }

    bool built() const noexcept { return _built; }
    // Heap bytes the index holds.
    size_t memory_usage() const noexcept {
        return (_prefixes.capacity() + _summary.capacity()) * sizeof(uint64_t) + _nodes.capacity() * sizeof(const_iterator);
    }

    // Builds the index now, if the map is large enough and its keys have a form. Returns built().
    bool build(const schema& s, const Map& rows) noexcept {
        if (!_built && !_refused) {
            do_build(s, rows);
        }
        return _built;
    }

    // rows.lower_bound(key); `s` is the schema whose clustering order the map has.
    const_iterator lower_bound(const schema& s, const Map& rows, const clustering_key_prefix& key) {
        if (!_built) {
            if (_refused || !lazy_build_due(++_lookups, rows.size()) || !do_build(s, rows)) {
                return rows.lower_bound(key);
            }
        }
        if (_nodes.size() != rows.size()) {
            // A change that did not invalidate: never trust the nodes then.
            invalidate();
            return rows.lower_bound(key);
        }
        auto p = _encoder->encode(key);
        if (!p) {
            return rows.lower_bound(key);
        }
        const uint64_t x = *p;
        const uint64_t* a = _prefixes.data();
        const size_t n = _prefixes.size();
        // The first block whose first prefix is >= x: the answer is in the block before it, or is its start.
        size_t j = branchless_lower_bound(_summary.data(), _summary.size(), x);
        size_t lo = 0;
        if (j > 0) {
            size_t b = (j - 1) * block_rows;
            size_t len = std::min(block_rows, n - b);
            for (size_t k = 0; k < len; k += 64 / sizeof(uint64_t)) {
                __builtin_prefetch(a + b + k);
            }
            lo = b + branchless_lower_bound(a + b, len, x);
        }
        if (lo == n) {
            return rows.end();
        }
        if (a[lo] != x) {
            return _nodes[lo];
        }
        // The rows whose prefix is x, [lo, last): the full compare decides among them. Mostly one row (or
        // none past a[lo]): the run's end is looked for only when the next prefix is x too.
        size_t first = lo;
        size_t last = lo + 1;
        if (last < n && a[last] == x) {
            last += upper_bound_in(a + last, n - last, x);
        }
        auto less = rows.key_comp();  // a copy (a reference count): only for rows sharing the prefix
        while (first < last) {
            size_t mid = first + (last - first) / 2;
            if (less(_nodes[mid]->first, key)) {
                first = mid + 1;
            } else {
                last = mid;
            }
        }
        return first == n ? rows.end() : _nodes[first];
    }

private:
    // The first i in [0, n) with a[i] >= x, or n.
    static size_t branchless_lower_bound(const uint64_t* a, size_t n, uint64_t x) noexcept {
        if (n == 0) {
            return 0;
        }
        const uint64_t* base = a;
        while (n > 1) {
            size_t half = n / 2;
            base = base[half] < x ? base + half : base;
            n -= half;
        }
        return size_t(base - a) + (*base < x);
    }
    // The first i in [0, n) with a[i] > x, or n.
    static size_t upper_bound_in(const uint64_t* a, size_t n, uint64_t x) noexcept {
        size_t lo = 0;
        while (lo < n) {
            size_t mid = lo + (n - lo) / 2;
            if (a[mid] <= x) {
                lo = mid + 1;
            } else {
                n = mid;
            }
        }
        return lo;
    }

    bool do_build(const schema& s, const Map& rows) noexcept {
        try {
            if (!_encoder) {
                _encoder.emplace(s.clustering_types());
            }
            if (!_encoder->usable()) {
                invalidate();
                _refused = true;
                return false;
            }
            _prefixes.reserve(rows.size());
            _nodes.reserve(rows.size());
            for (auto it = rows.begin(); it != rows.end(); ++it) {
                auto p = _encoder->encode(it->first);
                if (!p) {
                    invalidate();
                    _refused = true;
                    return false;
                }
                _prefixes.push_back(*p);
                _nodes.push_back(it);
            }
            _summary.reserve((_prefixes.size() + block_rows - 1) / block_rows);
            for (size_t i = 0; i < _prefixes.size(); i += block_rows) {
                _summary.push_back(_prefixes[i]);
            }
            _built = true;
            return true;
        } catch (...) {
            // Out of memory: the map serves lookups until the next change.
            invalidate();
            _refused = true;
            return false;
        }
    }

    std::vector<uint64_t> _prefixes;
    std::vector<uint64_t> _summary;  // _prefixes[i * block_rows]
    std::vector<const_iterator> _nodes;
    std::optional<clustering_prefix_encoder> _encoder;  // kept across changes (it depends on the schema only)
    size_t _lookups = 0;
    bool _built = false;
    bool _refused = false;  // no index until the next change
};

} // namespace detail

// A lookup structure over one std::map of rows (the map's const_iterators are its nodes), owned beside the
// map, which drops it whenever a row is added or removed (invalidate()). Built only for maps of at least
// min_rows rows, either when the owner asks (build(): the row cache, right after it put a large part of a
// partition in) or lazily by lower_bound once the lookups since the last change have cost about what a build
// costs: a build walks every node once, a map lookup about log2(rows) of them, so the build comes after
// rows / log2(rows) lookups and a map under writes, or read rarely, keeps being searched as a map (reads never
// pay more than twice what the map alone would cost them). Copies and moves start empty: the nodes belong to
// one map.
//
// The prefixes are searched in two steps, as an sstable's index block then its restart points: a summary of
// every block_rows-th prefix (small, so it stays in cache), then one block, all of whose cache lines are
// fetched at once.
template <typename Map>
class row_lookup_index {
    using state = detail::row_lookup_index_state<Map>;

public:
    using const_iterator = typename Map::const_iterator;
    static constexpr size_t min_rows = 64;
    static constexpr size_t block_rows = state::block_rows;

    static bool lazy_build_due(size_t lookups, size_t rows) noexcept { return state::lazy_build_due(lookups, rows); }

    row_lookup_index() = default;
    row_lookup_index(const row_lookup_index&) noexcept {}
    row_lookup_index(row_lookup_index&&) noexcept {}
    row_lookup_index& operator=(const row_lookup_index&) noexcept {
        invalidate();
        return *this;
    }
    row_lookup_index& operator=(row_lookup_index&&) noexcept {
        invalidate();
        return *this;
    }

    // The map gained or lost rows.
    void invalidate() noexcept {
        if (_state) {
            _state->invalidate();
        }
    }
    bool built() const noexcept { return _state && _state->built(); }
    // Heap bytes the index holds.
    size_t memory_usage() const noexcept { return _state ? sizeof(state) + _state->memory_usage() : 0; }

    // Builds the index now, if the map is large enough and its keys have a form. Returns built().
    bool build(const schema& s, const Map& rows) noexcept {
        return rows.size() >= min_rows && allocated() && _state->build(s, rows);
    }

    // rows.lower_bound(key); `s` is the schema whose clustering order the map has.
    const_iterator lower_bound(const schema& s, const Map& rows, const clustering_key_prefix& key) {
        if (rows.size() < min_rows || !allocated()) {
            return rows.lower_bound(key);
        }
        return _state->lower_bound(s, rows, key);
    }

private:
    bool allocated() noexcept {
        if (!_state) {
            _state.reset(new (std::nothrow) state());
        }
        return bool(_state);
    }

    // Null until the map reaches min_rows rows and is searched: a small partition (a memtable may hold
    // millions) pays one pointer.
    std::unique_ptr<state> _state;
};

} // namespace reef
