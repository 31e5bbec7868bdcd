// clustering_key_prefix: the serialized values of a row's first N clustering columns, and
// the comparator that orders them as the schema says (each column ASC or DESC).
#pragma once

#include "schema/schema.hh"
#include "schema/types.hh"
#include "utils/small_vector.hh"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace reef {

// A full clustering key has one value per clustering column; a prefix has
// fewer (range tombstone bounds, slices). Values are serialized bytes.
//
// Every row of every read builds or copies one, so the values share one
// buffer that lives inside the object while it fits (a bigint key, a key of
// an int and a uuid, a ~30-byte text): [end offset of each value, 4 bytes
// each, native order][the values' bytes]. Such a key costs no allocation.
class clustering_key_prefix {
public:
    // The values as views (valid while the key is alive and unchanged).
    class components_view {
    public:
        class iterator {
        public:
            using iterator_category = std::random_access_iterator_tag;
            using value_type = bytes_view;
            using difference_type = std::ptrdiff_t;
            using pointer = void;
            using reference = bytes_view;

            iterator() = default;
            iterator(const clustering_key_prefix* k, size_t i) noexcept : _k(k), _i(i) {}
            bytes_view operator*() const noexcept { return _k->component_unchecked(_i); }
            bytes_view operator[](difference_type d) const noexcept { return _k->component_unchecked(_i + d); }
            iterator& operator++() noexcept { ++_i; return *this; }
            iterator operator++(int) noexcept { auto t = *this; ++_i; return t; }
            iterator& operator--() noexcept { --_i; return *this; }
            iterator operator--(int) noexcept { auto t = *this; --_i; return t; }
            iterator& operator+=(difference_type d) noexcept { _i += d; return *this; }
            iterator& operator-=(difference_type d) noexcept { _i -= d; return *this; }
            friend iterator operator+(iterator a, difference_type d) noexcept { return a += d; }
            friend iterator operator+(difference_type d, iterator a) noexcept { return a += d; }
            friend iterator operator-(iterator a, difference_type d) noexcept { return a -= d; }
            friend difference_type operator-(iterator a, iterator b) noexcept { return difference_type(a._i) - difference_type(b._i); }
            friend bool operator==(iterator a, iterator b) noexcept { return a._i == b._i; }
            friend auto operator<=>(iterator a, iterator b) noexcept { return a._i <=> b._i; }

        private:
            const clustering_key_prefix* _k = nullptr;
            size_t _i = 0;
        };

        explicit components_view(const clustering_key_prefix& k) noexcept : _k(&k) {}
        size_t size() const noexcept { return _k->size(); }
        bool empty() const noexcept { return _k->empty(); }
        bytes_view operator[](size_t i) const noexcept { return _k->component_unchecked(i); }
        iterator begin() const noexcept { return {_k, 0}; }
        iterator end() const noexcept { return {_k, _k->size()}; }

    private:
        const clustering_key_prefix* _k;
    };

    clustering_key_prefix() = default;
    explicit clustering_key_prefix(const std::vector<bytes>& components) {
        assign(components.begin(), components.end(), components.size());
    }
    // A key of these values (copied).
    static clustering_key_prefix from_views(std::span<const bytes_view> components) {
        clustering_key_prefix k;
        k.assign(components.begin(), components.end(), components.size());
        return k;
    }
    // The key becomes these values, built where it is (a row built in a reader's buffer), its storage reused.
    void assign_views(std::span<const bytes_view> components) {
        assign(components.begin(), components.end(), components.size());
    }

    size_t size() const noexcept { return _n; }
    bool empty() const noexcept { return _n == 0; }
    components_view components() const noexcept { return components_view(*this); }
    bytes_view component(size_t i) const {
        if (i >= _n) {
            throw std::out_of_range("clustering_key_prefix::component: " + std::to_string(i) + " of " + std::to_string(_n));
        }
        return component_unchecked(i);
    }
    bytes_view component_unchecked(size_t i) const noexcept {
        const uint8_t* p = _buf.data();
        uint32_t start = i ? load_end(p, i - 1) : 0;
        return bytes_view(p + 4 * _n + start, load_end(p, i) - start);
    }
    // Copies of the values (for callers that edit them into another key).
    std::vector<bytes> to_vector() const;
    // Appends a value (a longer prefix).
    void push_back(bytes_view v);
    bool is_full(const schema& s) const noexcept { return size() == s.clustering_key().size(); }
    // Heap bytes this key holds (0 while its values fit inside it).
    size_t external_memory_usage() const noexcept { return _buf.external_memory_usage(); }

    bool operator==(const clustering_key_prefix& o) const noexcept { return _n == o._n && _buf == o._buf; }

private:
    static uint32_t load_end(const uint8_t* p, size_t i) noexcept {
        uint32_t v;
        std::memcpy(&v, p + 4 * i, 4);
        return v;
    }
    template <typename It>
    void assign(It first, It last, size_t n) {
        size_t total = 4 * n;
        for (auto it = first; it != last; ++it) {
            total += it->size();
        }
        if (total > UINT32_MAX) {
            throw std::length_error("clustering_key_prefix: values too long");
        }
        _buf.resize(total);
        _n = uint32_t(n);
        uint8_t* p = _buf.data();
        uint32_t end = 0;
        size_t i = 0;
        for (auto it = first; it != last; ++it, ++i) {
            if (it->size()) {
                std::memcpy(p + 4 * n + end, it->data(), it->size());
            }
            end += uint32_t(it->size());
            std::memcpy(p + 4 * i, &end, 4);
        }
    }

    utils::small_vector<uint8_t, 40> _buf;
    uint32_t _n = 0;
};

// Orders clustering prefixes by their common components, each with its
// column's type (reversed for DESC columns), then shorter first (Cassandra's
// ClusteringComparator for prefixes of the same kind).
//
// Columns of fixed-size integer types (bigint, int, smallint, tinyint,
// counter, timestamp) and of byte-order types (text, ascii, blob, inet,
// date, time, duration) are compared inline, without the type's virtual
// dispatch: this comparison runs in every map step of the memtable and in
// every position comparison of the read path. Other types (and values of an
// unexpected size) go through abstract_type::compare. Comparators of one
// schema share its clustering_columns (one reference count, no allocation).
class clustering_comparator {
public:
    explicit clustering_comparator(const schema& s) : _c(s.clustering_compare()) {}
    explicit clustering_comparator(std::vector<data_type> types) : _c(make_clustering_columns(std::move(types))) {}

    size_t size() const noexcept { return _c->columns.size(); }
    // Compares component by component over the common length; returns the
    // first difference (-1 or 1), or 0.
    int compare_common(const clustering_key_prefix& a, const clustering_key_prefix& b) const {
        size_t n = std::min(a.size(), b.size());
        for (size_t i = 0; i < n; ++i) {
            if (int c = compare_column(_c->columns[i], a.component_unchecked(i), b.component_unchecked(i))) {
                return c;
            }
        }
        return 0;
    }
    int operator()(const clustering_key_prefix& a, const clustering_key_prefix& b) const {
        if (int c = compare_common(a, b)) {
            return c;
        }
        return a.size() < b.size() ? -1 : a.size() > b.size() ? 1 : 0;
    }

private:
    using fast_kind = clustering_compare_kind;
    using column = clustering_column_compare;

    static uint64_t load_be(const uint8_t* p, size_t n) noexcept {
        uint64_t v = 0;
        for (size_t i = 0; i < n; ++i) {
            v = (v << 8) | p[i];
        }
        return v;
    }
    static int compare_column(const column& c, bytes_view a, bytes_view b) {
        int r;
        switch (c.kind) {
        case fast_kind::signed_integer:
            // Two's complement big-endian of the same size: flipping the
            // sign bit makes the unsigned order the signed one (as
            // compare_signed, first byte signed then the rest unsigned).
            if (a.size() == b.size() && !a.empty() && a.size() <= 8) {
                size_t n = a.size();
                uint64_t sign = uint64_t(1) << (n * 8 - 1);
                uint64_t x = load_be(a.data(), n) ^ sign, y = load_be(b.data(), n) ^ sign;
                r = x < y ? -1 : x > y ? 1 : 0;
                break;
            }
            return generic(c, a, b);
        case fast_kind::byte_order: {
            size_t n = std::min(a.size(), b.size());
            r = n ? std::memcmp(a.data(), b.data(), n) : 0;
            r = r < 0 ? -1 : r > 0 ? 1 : a.size() < b.size() ? -1 : a.size() > b.size() ? 1 : 0;
            break;
        }
        default:
            return generic(c, a, b);
        }
        return c.reversed ? -r : r;
    }
    static int generic(const column& c, bytes_view a, bytes_view b) {
        int r = c.type->compare(a, b);
        return r < 0 ? -1 : r > 0 ? 1 : 0;
    }

    std::shared_ptr<const clustering_columns> _c;
};

} // namespace reef
