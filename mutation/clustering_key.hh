// clustering_key_prefix: the serialized values of a row's first N clustering columns, and
// the comparator that orders them as the schema says (each column ASC or DESC).
#pragma once

#include "schema/schema.hh"
#include "schema/types.hh"

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
class clustering_comparator {
public:
    explicit clustering_comparator(const schema& s) : _types(s.clustering_types()) {}
    explicit clustering_comparator(std::vector<data_type> types) : _types(std::move(types)) {}

    size_t size() const noexcept { return _types.size(); }
    // Compares component by component over the common length; returns the
    // first difference, or 0 and sets `common_equal`.
    int compare_common(const clustering_key_prefix& a, const clustering_key_prefix& b) const;
    int operator()(const clustering_key_prefix& a, const clustering_key_prefix& b) const;

private:
    std::vector<data_type> _types;
};

} // namespace reef
