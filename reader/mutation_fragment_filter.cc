// Slicing one partition's fragments by clustering ranges. See mutation_fragment_filter.hh.
#include "reader/mutation_fragment_filter.hh"

#include "reader/mutation_reader.hh"

#include <algorithm>

namespace reef {

clustering_ranges reverse_ranges(const clustering_ranges& forward) {
    clustering_ranges out;
    out.reserve(forward.size());
    for (auto it = forward.rbegin(); it != forward.rend(); ++it) {
        out.push_back(it->reversed());
    }
    return out;
}

clustering_ranges_walker::clustering_ranges_walker(const schema& s, clustering_ranges ranges, bool reversed)
    : _cmp(s, reversed), _owned(std::move(ranges)) {}

mutation_fragment_filter::mutation_fragment_filter(const schema& s, clustering_ranges ranges, bool reversed)
    : _walker(s, std::move(ranges), reversed) {}

template <typename Out>
void mutation_fragment_filter::emit_change(position_in_partition pos, tombstone t, Out& out) {
    if (t == _emitted) {
        return;  // the output already has this tombstone in force
    }
    out.push_back(range_tombstone_change{std::move(pos), t});
    _emitted = t;
}

template <typename Pos, typename Out>
bool mutation_fragment_filter::move_to(const Pos& pos, Out& out) {
    while (auto* r = _walker.current()) {
        if (_walker.passed_current(pos)) {
            // The range is behind pos. If we never entered it but a
            // tombstone was in force all along, it covered the whole range.
            if (!_inside) {
                emit_change(r->start, _in_force, out);
            }
            emit_change(r->end, {}, out);
            _inside = false;
            _walker.next();
            continue;
        }
        // Inside the range, pos is not before its start (a stream's
        // positions never go back): one comparison per row saved.
        if (!_inside && _walker.before_current(pos)) {
            return false;
        }
        if (!_inside) {
            _inside = true;
            emit_change(r->start, _in_force, out);
        }
        return true;
    }
    return false;
}

template <typename Out>
bool mutation_fragment_filter::consume_row_key(const clustering_key_prefix& k, Out& out) {
    return move_to(k, out);
}

template <typename Out>
bool mutation_fragment_filter::consume_change(const position_in_partition& pos, tombstone t, Out& out) {
    bool inside = move_to(pos, out);
    _in_force = t;
    if (inside) {
        emit_change(pos, t, out);
    }
    return _walker.current() != nullptr;
}

template <typename Out>
bool mutation_fragment_filter::consume(mutation_fragment f, Out& out) {
    if (std::holds_alternative<static_row>(f)) {
        out.push_back(std::move(f));
        return true;
    }
    if (std::holds_alternative<partition_end>(f)) {
        finish(out);
        out.push_back(std::move(f));
        return false;
    }
    if (auto* cr = std::get_if<clustering_row>(&f)) {
        if (move_to(cr->key, out)) {
            out.push_back(std::move(f));
        }
        return _walker.current() != nullptr;
    }
    auto pos = position_of(f);
    bool inside = move_to(pos, out);
    if (auto* rtc = std::get_if<range_tombstone_change>(&f)) {
        _in_force = rtc->tomb;
        if (inside) {
            emit_change(std::move(rtc->position), rtc->tomb, out);
        }
    } else if (inside) {
        out.push_back(std::move(f));
    }
    return _walker.current() != nullptr;
}

template <typename Out>
void mutation_fragment_filter::finish(Out& out) {
    // Every range still ahead is either covered by the tombstone in force
    // (a valid stream has none left at its end) or empty; close what is open.
    while (auto* r = _walker.current()) {
        if (!_inside) {
            emit_change(r->start, _in_force, out);
        }
        emit_change(r->end, {}, out);
        _inside = false;
        _walker.next();
    }
}

std::optional<position_in_partition> mutation_fragment_filter::skip_target() const {
    if (auto* p = skip_target_position()) {
        return *p;
    }
    return std::nullopt;
}

const position_in_partition* mutation_fragment_filter::skip_target_position() const noexcept {
    if (_inside) {
        return nullptr;
    }
    if (auto* r = _walker.current()) {
        return &r->start;
    }
    return nullptr;
}

std::optional<position_in_partition> mutation_fragment_filter::current_end() const {
    if (auto* r = _walker.current()) {
        return r->end;
    }
    return std::nullopt;
}

const position_in_partition* mutation_fragment_filter::current_end_position() const noexcept {
    auto* r = _walker.current();
    return r ? &r->end : nullptr;
}

template bool mutation_fragment_filter::consume(mutation_fragment, std::vector<mutation_fragment>&);
template bool mutation_fragment_filter::consume(mutation_fragment, fragment_buffer&);
template bool mutation_fragment_filter::consume_row_key(const clustering_key_prefix&, std::vector<mutation_fragment>&);
template bool mutation_fragment_filter::consume_row_key(const clustering_key_prefix&, fragment_buffer&);
template bool mutation_fragment_filter::consume_change(const position_in_partition&, tombstone, std::vector<mutation_fragment>&);
template bool mutation_fragment_filter::consume_change(const position_in_partition&, tombstone, fragment_buffer&);
template void mutation_fragment_filter::finish(std::vector<mutation_fragment>&);
template void mutation_fragment_filter::finish(fragment_buffer&);

} // namespace reef
