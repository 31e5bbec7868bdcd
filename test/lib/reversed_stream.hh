// Fragment streams of one partition compared and reversed, for the reversed-read tests: a readable description,
// equality fragment for fragment, a forward partition reversed as a reversed reader gives it, and a slice applied.
#pragma once

#include "mutation/fragment.hh"
#include "reader/mutation_fragment_filter.hh"
#include "test/lib/mutation_model.hh"
#include "test/lib/mx_test_support.hh"

#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

namespace reef::testing {

inline std::string describe(const mutation_fragment& f) {
    return std::visit(
        [](const auto& x) -> std::string {
            using T = std::decay_t<decltype(x)>;
            if constexpr (std::is_same_v<T, partition_start>) {
                return "partition_start " + x.key.get_token().to_string() + " " + tomb_text(x.partition_tombstone);
            } else if constexpr (std::is_same_v<T, static_row>) {
                return "static_row";
            } else if constexpr (std::is_same_v<T, clustering_row>) {
                return "row " + to_string(position_in_partition::for_key(x.key)) + " " + tomb_text(x.row_tombstone);
            } else if constexpr (std::is_same_v<T, range_tombstone_change>) {
                return "rtc " + to_string(x.position) + " " + tomb_text(x.tomb);
            } else {
                return "partition_end";
            }
        },
        f);
}

inline std::string describe(const std::vector<mutation_fragment>& fs) {
    std::string out;
    for (auto& f : fs) {
        out += "  " + describe(f) + "\n";
    }
    return out;
}

inline bool same(const mutation_fragment& a, const mutation_fragment& b) {
    if (a.index() != b.index()) {
        return false;
    }
    if (auto* x = std::get_if<partition_start>(&a)) {
        auto& y = std::get<partition_start>(b);
        return x->key == y.key && x->partition_tombstone == y.partition_tombstone;
    }
    if (auto* x = std::get_if<static_row>(&a)) {
        return x->cells == std::get<static_row>(b).cells;
    }
    if (auto* x = std::get_if<clustering_row>(&a)) {
        auto& y = std::get<clustering_row>(b);
        return x->key == y.key && x->marker == y.marker && x->row_tombstone == y.row_tombstone && x->cells == y.cells;
    }
    if (auto* x = std::get_if<range_tombstone_change>(&a)) {
        auto& y = std::get<range_tombstone_change>(b);
        return x->position == y.position && x->tomb == y.tomb;
    }
    return true;
}

inline bool same(const std::vector<mutation_fragment>& a, const std::vector<mutation_fragment>& b) {
    for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
        if (!same(a[i], b[i])) {
            BOOST_TEST_MESSAGE("fragment " << i << " differs: " << describe(a[i]) << " vs " << describe(b[i]));
            if (auto* x = std::get_if<clustering_row>(&a[i]); x && std::holds_alternative<clustering_row>(b[i])) {
                auto& y = std::get<clustering_row>(b[i]);
                BOOST_TEST_MESSAGE("marker " << (x->marker == y.marker) << " cells " << (x->cells == y.cells));
            }
            return false;
        }
    }
    return a.size() == b.size();
}

// One partition's forward stream as a reversed reader gives it: rows in the opposite order, each change moved to its
// position reversed() and carrying the tombstone that was in force before it.
inline std::vector<mutation_fragment> reverse_partition(const std::vector<mutation_fragment>& fwd) {
    std::vector<mutation_fragment> out;
    std::vector<mutation_fragment> clustered;
    tombstone in_force;
    for (auto& f : fwd) {
        if (std::holds_alternative<partition_start>(f) || std::holds_alternative<static_row>(f)) {
            out.push_back(f);
        } else if (auto* rtc = std::get_if<range_tombstone_change>(&f)) {
            clustered.push_back(range_tombstone_change{rtc->position.reversed(), in_force});
            in_force = rtc->tomb;
        } else if (std::holds_alternative<clustering_row>(f)) {
            clustered.push_back(f);
        }
    }
    out.insert(out.end(), clustered.rbegin(), clustered.rend());
    out.push_back(partition_end{});
    return out;
}

// A partition's stream through mutation_fragment_filter (slice in the stream's order).
inline std::vector<mutation_fragment> filtered(const schema& s, const std::vector<mutation_fragment>& p,
                                        const clustering_ranges& slice, bool reversed) {
    std::vector<mutation_fragment> out{p.front()};
    mutation_fragment_filter filter(s, slice, reversed);
    for (size_t i = 1; i < p.size(); ++i) {
        filter.consume(p[i], out);
    }
    return out;
}

// Splits a stream into its partitions.
inline std::vector<std::vector<mutation_fragment>> partitions_of(std::vector<mutation_fragment> fs) {
    std::vector<std::vector<mutation_fragment>> out;
    for (auto& f : fs) {
        if (std::holds_alternative<partition_start>(f)) {
            out.emplace_back();
        }
        out.back().push_back(std::move(f));
    }
    return out;
}

} // namespace reef::testing
