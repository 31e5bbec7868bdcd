// Ordering of clustering prefixes and positions. See position_in_partition.hh.
#include "mutation/position_in_partition.hh"

#include <fmt/core.h>

namespace reef {

bound_weight weight_of(bound_kind k) noexcept {
    switch (k) {
    case bound_kind::incl_start:
    case bound_kind::excl_end:
        return bound_weight::before_all_prefixed;
    case bound_kind::excl_start:
    case bound_kind::incl_end:
        return bound_weight::after_all_prefixed;
    }
    return bound_weight::equal;
}

bound_kind reverse(bound_kind k) noexcept {
    switch (k) {
    case bound_kind::incl_start: return bound_kind::incl_end;
    case bound_kind::excl_start: return bound_kind::excl_end;
    case bound_kind::incl_end: return bound_kind::incl_start;
    case bound_kind::excl_end: return bound_kind::excl_start;
    }
    return k;
}

int position_in_partition_comparator::operator()(const position_in_partition& a, const position_in_partition& b) const {
    if (a.region() != b.region()) {
        return a.region() < b.region() ? -1 : 1;
    }
    if (a.region() != partition_region::clustered) {
        return 0;
    }
    return compare_clustered(a.key(), a.weight(), b.key(), b.weight());
}

int position_in_partition_comparator::compare_key(const clustering_key_prefix& k, bound_weight w,
                                                  const position_in_partition& p) const {
    switch (p.region()) {
    case partition_region::partition_start:
    case partition_region::static_row: return 1;
    case partition_region::partition_end: return -1;
    case partition_region::clustered: break;
    }
    return compare_clustered(k, w, p.key(), p.weight());
}

int position_in_partition_comparator::compare_clustered(const clustering_key_prefix& a, bound_weight wa_,
                                                        const clustering_key_prefix& b, bound_weight wb_) const {
    if (int c = _ck.compare_common(a, b)) {
        return _reversed ? -c : c;
    }
    // Equal over the common components: the weights decide. In a reversed
    // stream the weights were already flipped by reversed(), so they order
    // correctly as they are; only a shorter prefix's place changes side.
    size_t la = a.size(), lb = b.size();
    int wa = int(wa_), wb = int(wb_);
    if (la == lb) {
        return wa < wb ? -1 : wa > wb ? 1 : 0;
    }
    // The shorter prefix covers the other's key. Forward, it sits after
    // that key only when it is "after all prefixed"; reversed, it sits
    // before it only when it is "before all prefixed".
    auto shorter_first = [this](int w) { return _reversed ? w < 0 : w <= 0; };
    if (la < lb) {
        return shorter_first(wa) ? -1 : 1;
    }
    return shorter_first(wb) ? 1 : -1;
}

std::string to_string(const position_in_partition& p) {
    switch (p.region()) {
    case partition_region::partition_start: return "{partition_start}";
    case partition_region::static_row: return "{static_row}";
    case partition_region::partition_end: return "{partition_end}";
    case partition_region::clustered: break;
    }
    std::string key;
    for (auto c : p.key().components()) {
        if (!key.empty()) {
            key += ":";
        }
        for (auto b : c) {
            key += fmt::format("{:02x}", b);
        }
    }
    return fmt::format("{{clustered, {}, weight {}}}", key, int(p.weight()));
}

} // namespace reef
