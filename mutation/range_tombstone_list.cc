// Applying range tombstones to a sorted list of ranges, and the change stream form. See range_tombstone_list.hh.
#include "mutation/range_tombstone_list.hh"

#include <algorithm>
#include <iterator>
#include <stdexcept>

namespace reef {

namespace {

bool is_bound(const position_in_partition& p) {
    return p.region() == partition_region::clustered && p.weight() != bound_weight::equal;
}

} // namespace

void range_tombstone_list::apply(const position_in_partition& start, const position_in_partition& end, tombstone t) {
    if (!is_bound(start) || !is_bound(end)) {
        throw std::invalid_argument("range tombstone bounds must be before/after clustered positions: " +
                                    to_string(start) + ", " + to_string(end));
    }
    int c = cmp(start, end);
    if (c > 0) {
        throw std::invalid_argument("range tombstone start after its end: " + to_string(start) + ", " + to_string(end));
    }
    if (c == 0 || t.empty()) {
        return;
    }
    // Only the ranges the new one overlaps, plus one neighbour on each side
    // (which it may touch and join), are rebuilt; the rest stay in place.
    auto first_after = std::partition_point(_ranges.begin(), _ranges.end(),
                                            [&](const range_tombstone_entry& r) { return cmp(r.end, start) <= 0; });
    auto first_beyond = std::partition_point(first_after, _ranges.end(),
                                             [&](const range_tombstone_entry& r) { return cmp(r.start, end) < 0; });
    auto lo = first_after == _ranges.begin() ? first_after : first_after - 1;
    auto hi = first_beyond == _ranges.end() ? first_beyond : first_beyond + 1;
    // `push` keeps the window canonical: it drops empty pieces and joins
    // touching pieces with equal tombstones.
    std::vector<range_tombstone_entry> out;
    out.reserve((hi - lo) + 2);
    auto push = [&](const position_in_partition& s, const position_in_partition& e, tombstone tomb) {
        if (cmp(s, e) >= 0) {
            return;
        }
        if (!out.empty() && out.back().tomb == tomb && cmp(out.back().end, s) == 0) {
            out.back().end = e;
            return;
        }
        out.push_back({s, e, tomb});
    };
    auto it = lo;
    for (; it != first_after; ++it) {
        push(it->start, it->end, it->tomb);
    }
    // `pos`: how far the new range has been laid down.
    position_in_partition pos = start;
    for (; it != first_beyond; ++it) {
        if (cmp(pos, it->start) < 0) {
            push(pos, it->start, t);
            pos = it->start;
        } else if (cmp(it->start, pos) < 0) {
            // Only the first overlapped range can start before the new one.
            push(it->start, pos, it->tomb);
        }
        const position_in_partition& overlap_end = cmp(it->end, end) < 0 ? it->end : end;
        tombstone winner = it->tomb;
        winner.apply(t);
        push(pos, overlap_end, winner);
        if (cmp(end, it->end) < 0) {
            push(end, it->end, it->tomb);
        }
        pos = overlap_end;
    }
    push(pos, end, t);
    for (; it != hi; ++it) {
        push(it->start, it->end, it->tomb);
    }
    // Splice the window back: overwrite what fits, then insert or erase the rest.
    size_t at = lo - _ranges.begin(), old_size = hi - lo, common = std::min(old_size, out.size());
    std::move(out.begin(), out.begin() + common, _ranges.begin() + at);
    if (out.size() > old_size) {
        _ranges.insert(_ranges.begin() + at + common, std::make_move_iterator(out.begin() + common),
                       std::make_move_iterator(out.end()));
    } else {
        _ranges.erase(_ranges.begin() + at + common, _ranges.begin() + at + old_size);
    }
}

void range_tombstone_list::apply(const range_tombstone_list& o) {
    for (auto& e : o._ranges) {
        apply(e.start, e.end, e.tomb);
    }
}

tombstone range_tombstone_list::search(const position_in_partition& p) const {
    // The first range that ends after p is the only one that can hold it.
    size_t lo = 0, hi = _ranges.size();
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (cmp(_ranges[mid].end, p) <= 0) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    if (lo < _ranges.size() && cmp(_ranges[lo].start, p) <= 0) {
        return _ranges[lo].tomb;
    }
    return {};
}

std::vector<range_tombstone_change> range_tombstone_list::to_changes(bool reversed) const {
    std::vector<range_tombstone_change> out;
    out.reserve(_ranges.size() * 2);
    size_t n = _ranges.size();
    // Whether the previous range touched this one and already announced its
    // tombstone at the shared bound.
    bool handed_over = false;
    for (size_t k = 0; k < n; ++k) {
        // In a reversed stream a range starts at its forward end.
        const auto& r = _ranges[reversed ? n - 1 - k : k];
        const auto* next = k + 1 < n ? &_ranges[reversed ? n - 2 - k : k + 1] : nullptr;
        const auto& first = reversed ? r.end : r.start;
        const auto& last = reversed ? r.start : r.end;
        if (!handed_over) {
            out.push_back({reversed ? first.reversed() : first, r.tomb});
        }
        handed_over = next && cmp(reversed ? next->end : next->start, last) == 0;
        out.push_back({reversed ? last.reversed() : last, handed_over ? next->tomb : tombstone{}});
    }
    return out;
}

void range_tombstone_list::apply_changes(const std::vector<range_tombstone_change>& changes, bool reversed) {
    range_tombstone_change_accumulator acc(reversed);
    for (auto& c : changes) {
        acc.consume(c, *this);
    }
}

void range_tombstone_change_accumulator::consume(const range_tombstone_change& c, range_tombstone_list& out) {
    if (_pos && !_current.empty()) {
        if (_reversed) {
            out.apply(c.position.reversed(), _pos->reversed(), _current);
        } else {
            out.apply(*_pos, c.position, _current);
        }
    }
    _pos = c.position;
    _current = c.tomb;
}

} // namespace reef
