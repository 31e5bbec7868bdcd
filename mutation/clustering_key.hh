// clustering_key_prefix: the serialized values of a row's first N clustering columns, and
// the comparator that orders them as the schema says (each column ASC or DESC).
#pragma once

#include "schema/schema.hh"
#include "schema/types.hh"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace reef {

// A full clustering key has one value per clustering column; a prefix has
// fewer (range tombstone bounds, slices). Values are serialized bytes.
class clustering_key_prefix {
public:
    clustering_key_prefix() = default;
    explicit clustering_key_prefix(std::vector<bytes> components) : _components(std::move(components)) {}

    size_t size() const noexcept { return _components.size(); }
    bool empty() const noexcept { return _components.empty(); }
    const std::vector<bytes>& components() const noexcept { return _components; }
    bytes_view component(size_t i) const { return _components.at(i); }
    bool is_full(const schema& s) const noexcept { return size() == s.clustering_key().size(); }

    bool operator==(const clustering_key_prefix&) const = default;

private:
    std::vector<bytes> _components;
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
// unexpected size) go through abstract_type::compare. Copies share the
// compiled column list (one reference count, no allocation).
class clustering_comparator {
public:
    explicit clustering_comparator(const schema& s) : clustering_comparator(s.clustering_types()) {}
    explicit clustering_comparator(std::vector<data_type> types);

    size_t size() const noexcept { return _c->columns.size(); }
    // Compares component by component over the common length; returns the
    // first difference (-1 or 1), or 0.
    int compare_common(const clustering_key_prefix& a, const clustering_key_prefix& b) const {
        auto& ac = a.components();
        auto& bc = b.components();
        size_t n = std::min(ac.size(), bc.size());
        for (size_t i = 0; i < n; ++i) {
            if (int c = compare_column(_c->columns[i], ac[i], bc[i])) {
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
    enum class fast_kind : uint8_t { generic, signed_integer, byte_order };
    struct column {
        fast_kind kind;
        bool reversed;              // a DESC column (fast kinds; generic types reverse themselves)
        const abstract_type* type;  // the column's type as the schema has it (reversed(...) for DESC)
    };
    struct compiled {
        std::vector<data_type> types;  // keeps the types alive
        std::vector<column> columns;
    };

    static uint64_t load_be(const uint8_t* p, size_t n) noexcept {
        uint64_t v = 0;
        for (size_t i = 0; i < n; ++i) {
            v = (v << 8) | p[i];
        }
        return v;
    }
    static int compare_column(const column& c, const bytes& a, const bytes& b) {
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
    static int generic(const column& c, const bytes& a, const bytes& b) {
        int r = c.type->compare(a, b);
        return r < 0 ? -1 : r > 0 ? 1 : 0;
    }

    std::shared_ptr<const compiled> _c;
};

} // namespace reef
