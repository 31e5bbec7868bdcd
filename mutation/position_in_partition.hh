// position_in_partition: one total order over everything in a partition: its start, the
// static row, rows and range tombstone bounds (a key prefix and a bound weight), its end.
#pragma once

#include "mutation/clustering_key.hh"

#include <cstdint>
#include <optional>
#include <string>

namespace reef {

enum class partition_region : uint8_t { partition_start, static_row, clustered, partition_end };

// Where a position sits relative to the keys its prefix covers: before all
// of them, at the key itself (a row), or after all of them.
enum class bound_weight : int8_t { before_all_prefixed = -1, equal = 0, after_all_prefixed = 1 };

// The four kinds of range bound, as the sstable format names them.
enum class bound_kind : uint8_t { incl_start, excl_start, incl_end, excl_end };

// An inclusive start or an exclusive end sits before the keys of its prefix;
// an exclusive start or an inclusive end sits after them.
bound_weight weight_of(bound_kind k) noexcept;
// The same bound read in reversed order: starts become ends, keeping which
// keys are in (incl_start <-> incl_end, excl_start <-> excl_end).
bound_kind reverse(bound_kind k) noexcept;

class position_in_partition {
public:
    static position_in_partition for_partition_start() { return {partition_region::partition_start, bound_weight::equal, {}}; }
    static position_in_partition for_static_row() { return {partition_region::static_row, bound_weight::equal, {}}; }
    static position_in_partition for_partition_end() { return {partition_region::partition_end, bound_weight::equal, {}}; }
    // A row's position.
    static position_in_partition for_key(clustering_key_prefix ck) {
        return {partition_region::clustered, bound_weight::equal, std::move(ck)};
    }
    static position_in_partition before_key(clustering_key_prefix ck) {
        return {partition_region::clustered, bound_weight::before_all_prefixed, std::move(ck)};
    }
    static position_in_partition after_key(clustering_key_prefix ck) {
        return {partition_region::clustered, bound_weight::after_all_prefixed, std::move(ck)};
    }
    static position_in_partition for_bound(clustering_key_prefix ck, bound_kind k) {
        return {partition_region::clustered, weight_of(k), std::move(ck)};
    }
    static position_in_partition before_all_clustered_rows() { return before_key({}); }
    static position_in_partition after_all_clustered_rows() { return after_key({}); }

    partition_region region() const noexcept { return _region; }
    bound_weight weight() const noexcept { return _weight; }
    const clustering_key_prefix& key() const noexcept { return _key; }
    bool is_clustering_row() const noexcept { return _region == partition_region::clustered && _weight == bound_weight::equal; }

    // This position as seen by a reader walking the partition backwards:
    // the key stays, the weight flips (what was before its keys is after
    // them), and the partition's start and end keep their roles.
    position_in_partition reversed() const {
        return {_region, bound_weight(-int8_t(_weight)), _key};
    }

    bool operator==(const position_in_partition&) const = default;

private:
    position_in_partition(partition_region r, bound_weight w, clustering_key_prefix k)
        : _region(r), _weight(w), _key(std::move(k)) {}

    partition_region _region;
    bound_weight _weight;
    clustering_key_prefix _key;
};

// Orders positions: partition start < static row < clustered positions <
// partition end; clustered positions by key with the weights deciding ties
// and prefixes (Cassandra's ClusteringComparator over bounds and rows).
// With reversed = true it orders a reversed stream (clustering order
// inverted, positions taken as produced by reversed()).
class position_in_partition_comparator {
public:
    explicit position_in_partition_comparator(const schema& s, bool reversed = false)
        : _ck(s), _reversed(reversed) {}
    position_in_partition_comparator(clustering_comparator ck, bool reversed)
        : _ck(std::move(ck)), _reversed(reversed) {}

    int operator()(const position_in_partition& a, const position_in_partition& b) const;
    // The clustering comparator (shared by copies).
    const clustering_comparator& clustering() const noexcept { return _ck; }
    bool is_reversed() const noexcept { return _reversed; }
    bool less(const position_in_partition& a, const position_in_partition& b) const { return (*this)(a, b) < 0; }
    // The clustered position of prefix k with weight w (a row: equal; after
    // it: after_all_prefixed) against p, without building that position
    // (which would copy the key).
    int compare_key(const clustering_key_prefix& k, bound_weight w, const position_in_partition& p) const;

private:
    int compare_clustered(const clustering_key_prefix& a, bound_weight wa, const clustering_key_prefix& b,
                          bound_weight wb) const;

    clustering_comparator _ck;
    bool _reversed;
};

std::string to_string(const position_in_partition& p);

} // namespace reef
