// The memtable reader: walks the partition map, and in each partition merges the row map with the
// range tombstone list by position, through a mutation_fragment_filter. See memtable_reader.hh.
#include "db/memtable_reader.hh"

#include "reader/mutation_fragment_filter.hh"

#include <algorithm>
#include <stdexcept>

namespace reef {

namespace {

using rows_type = mutation_partition::rows_type;

// The read's order over positions, and rows' keys compared with positions
// without building a position for each row (which would copy the key).
class stream_order {
public:
    explicit stream_order(position_in_partition_comparator pos) : _pos(std::move(pos)) {}

    const position_in_partition_comparator& comparator() const noexcept { return _pos; }

    int operator()(const position_in_partition& a, const position_in_partition& b) const { return _pos(a, b); }

    // position_in_partition_comparator(for_key(k), p).
    int key_vs(const clustering_key_prefix& k, const position_in_partition& p) const {
        return _pos.compare_key(k, bound_weight::equal, p);
    }
    // position_in_partition_comparator(after_key(k), p).
    int after_key_vs(const clustering_key_prefix& k, const position_in_partition& p) const {
        return _pos.compare_key(k, bound_weight::after_all_prefixed, p);
    }

private:
    position_in_partition_comparator _pos;
};

// A partition's range tombstones as a function of the stream position:
// which tombstone is in force there, and where it next changes. Every
// question is a binary search on the list as it is now, so nothing is held
// across a suspension (apply() rebuilds the list's vector).
//
// Forward, range [s, e) is in force at q when s <= q < e. Reversed, the
// stream carries it as [e.reversed(), s.reversed()); for q = f.reversed()
// that is s < f <= e in forward terms, which is how it is searched.
class range_tombstone_view {
public:
    // `fwd`: the forward order (both directions search the list with it).
    range_tombstone_view(const range_tombstone_list& l, const position_in_partition_comparator& fwd, bool reversed)
        : _list(l), _fwd(fwd), _reversed(reversed) {}

    bool empty() const noexcept { return _list.empty(); }

    // The tombstone in force from stream position q on.
    tombstone value_at(const position_in_partition& q) const {
        auto& v = _list.ranges();
        if (v.empty()) {
            return {};
        }
        if (!_reversed) {
            auto j = std::partition_point(v.begin(), v.end(), [&](auto& e) { return _fwd(e.end, q) <= 0; });
            return j != v.end() && _fwd(j->start, q) <= 0 ? j->tomb : tombstone{};
        }
        auto f = q.reversed();
        auto j = std::partition_point(v.begin(), v.end(), [&](auto& e) { return _fwd(e.start, f) < 0; });
        return j != v.begin() && _fwd(f, std::prev(j)->end) <= 0 ? std::prev(j)->tomb : tombstone{};
    }

    // The tombstone in force just before stream position q.
    tombstone value_before(const position_in_partition& q) const {
        auto& v = _list.ranges();
        if (v.empty()) {
            return {};
        }
        if (!_reversed) {
            auto j = std::partition_point(v.begin(), v.end(), [&](auto& e) { return _fwd(e.end, q) < 0; });
            return j != v.end() && _fwd(j->start, q) < 0 ? j->tomb : tombstone{};
        }
        auto f = q.reversed();
        auto j = std::partition_point(v.begin(), v.end(), [&](auto& e) { return _fwd(e.start, f) <= 0; });
        return j != v.begin() && _fwd(f, std::prev(j)->end) < 0 ? std::prev(j)->tomb : tombstone{};
    }

    // Forward reads only: value_at(q), next_bound_after(q) and the value at
    // that bound, from one binary search (the list is sorted, its ranges
    // non-empty and disjoint).
    struct lookup_result {
        tombstone at;
        const position_in_partition* next = nullptr;
        tombstone at_next;
    };
    lookup_result lookup(const position_in_partition& q) const {
        auto& v = _list.ranges();
        lookup_result r;
        // The first range ending after q: q is in it, or before it.
        auto j = std::partition_point(v.begin(), v.end(), [&](auto& e) { return _fwd(e.end, q) <= 0; });
        if (j == v.end()) {
            return r;
        }
        if (_fwd(j->start, q) <= 0) {
            r.at = j->tomb;
            r.next = &j->end;
            // What is in force from j's end: the next range, if it starts there.
            auto k = std::next(j);
            r.at_next = k != v.end() && _fwd(k->start, j->end) <= 0 ? k->tomb : tombstone{};
        } else {
            r.next = &j->start;
            r.at_next = j->tomb;
        }
        return r;
    }

    // The first range bound strictly after stream position q, as the
    // list's (forward) bound: the stream position is the bound itself
    // forward, the bound reversed() in a reversed read. Null for none.
    // Valid until the list changes.
    const position_in_partition* next_bound_after(const position_in_partition& q) const {
        auto& v = _list.ranges();
        if (v.empty()) {
            return nullptr;
        }
        if (!_reversed) {
            auto j = std::partition_point(v.begin(), v.end(), [&](auto& e) { return _fwd(e.end, q) <= 0; });
            if (j == v.end()) {
                return nullptr;
            }
            return _fwd(j->start, q) > 0 ? &j->start : &j->end;
        }
        // The greatest forward bound below f: the last range starting below
        // f ends below it or contains it.
        auto f = q.reversed();
        auto j = std::partition_point(v.begin(), v.end(), [&](auto& e) { return _fwd(e.start, f) < 0; });
        if (j == v.begin()) {
            return nullptr;
        }
        --j;
        return _fwd(j->end, f) < 0 ? &j->end : &j->start;
    }

private:
    const range_tombstone_list& _list;
    const position_in_partition_comparator& _fwd;
    bool _reversed;
};

// The part of each slice range inside the window, in the read's order.
clustering_ranges intersect(const clustering_ranges& slice, const position_range& w, const stream_order& order) {
    clustering_ranges out;
    for (auto& r : slice) {
        const auto& s = order(r.start, w.start) < 0 ? w.start : r.start;
        const auto& e = order(r.end, w.end) < 0 ? r.end : w.end;
        if (order(s, e) < 0) {
            out.push_back({s, e});
        }
    }
    return out;
}

const memtable& checked(const std::shared_ptr<const memtable>& mt) {
    if (!mt) {
        throw std::invalid_argument("make_memtable_reader: no memtable");
    }
    return *mt;
}

class memtable_reader final : public mutation_reader_impl {
public:
    memtable_reader(std::shared_ptr<const memtable> mt, schema_ptr s, dht::partition_range range,
                    clustering_ranges slice, bool reversed, streamed_forwarding fwd, size_t buffer_size)
        : mutation_reader_impl(std::move(s)), _mt(std::move(mt)), _range(std::move(range)), _slice(std::move(slice)),
          _reversed(reversed), _forwarding(fwd == streamed_forwarding::yes),
          _order(checked(_mt).position_order(reversed)), _forward_order(_mt->position_order(false)) {
        if (buffer_size) {
            _max_buffer_fragments = buffer_size;
        }
        enable_slow_start();
    }

    future<> fill_buffer() override {
        try {
            fill();
        } catch (...) {
            return make_exception_future<>(std::current_exception());
        }
        return make_ready_future<>();
    }

    future<> next_partition() override {
        if (_state == state::in_partition) {
            _state = state::after_partition;
            _filter.reset();
        }
        _end_of_stream = false;
        return make_ready_future<>();
    }

    future<> fast_forward_to(const dht::partition_range& pr) override {
        // Partitions come from a fresh lookup: pr is after everything read.
        _range = pr;
        _state = state::seek;
        _filter.reset();
        return make_ready_future<>();
    }

    future<> fast_forward_to(position_range pr) override {
        if (!_forwarding) {
            return make_exception_future<>(std::make_exception_ptr(
                std::logic_error("fast_forward_to(position_range) on a memtable reader without forwarding")));
        }
        if (_state != state::in_partition) {
            _end_of_stream = true;
            return make_ready_future<>();
        }
        try {
            _filter.emplace(_order.comparator(), intersect(_slice, pr, _order));
            // A window opened in the middle of the last one starts at or
            // after everything produced, but the walk may have moved past
            // its start (over range tombstone changes that produced
            // nothing, or to the next slice range): step back, so that the
            // tombstone in force is emitted where the window starts. Only
            // rows outside the slice lie in between; they are fed again and
            // dropped again.
            if (_order(pr.start, pos()) < 0) {
                _pos = pr.start;
                _pos_at = nullptr;
                seek_rows_to(_pos);
                save_resume_key();
            }
        } catch (...) {
            return make_exception_future<>(std::current_exception());
        }
        // The new filter starts with no tombstone in force: the walk tells
        // it the one at the position before anything else.
        _in_force = {};
        _synced = false;
        _next_known = false;
        return make_ready_future<>();
    }

    future<> close() noexcept override {
        _filter.reset();
        _mt.reset();
        return make_ready_future<>();
    }

private:
    enum class state {
        seek,             // look up the range's first partition
        entering,         // _part is the next partition to read, if in range
        in_partition,     // reading _part's clustered fragments
        after_partition,  // _part is done; the next one is its successor now
    };

    void fill() {
        auto& parts = _mt->partitions();
        while (!is_buffer_full() && !_end_of_stream) {
            switch (_state) {
            case state::seek:
                _part = _mt->lower_bound(_range);
                _state = state::entering;
                break;
            case state::after_partition:
                // Incremented now, not when the partition ended, so that a
                // partition inserted meanwhile just after it is read.
                ++_part;
                _state = state::entering;
                break;
            case state::entering:
                if (_part == parts.end() || _range.after(_part->first)) {
                    _end_of_stream = true;  // later partitions only come with a new range
                } else {
                    enter_partition();
                }
                break;
            case state::in_partition:
                if (!_filter) {
                    _end_of_stream = true;  // forwarding: waits for a window
                } else {
                    walk();
                }
                break;
            }
        }
        if (_state == state::in_partition) {
            save_resume_key();
        }
    }

    void enter_partition() {
        _p = &_part->second;
        push(partition_start{_part->first, _p->partition_tombstone()});
        if (!_p->static_row().empty()) {
            push(static_row{_p->static_row()});
        }
        _pos = position_in_partition::before_all_clustered_rows();
        _pos_at = nullptr;
        _pos_after_row = false;
        _synced = false;
        _next_known = false;
        _in_force = {};
        _row = _reversed ? _p->rows().end() : _p->rows().begin();
        _resume_row.reset();
        _generation = _mt->generation();
        if (_forwarding) {
            _filter.reset();
        } else {
            _filter.emplace(_order.comparator(), &_slice);
        }
        _state = state::in_partition;
    }

    // The position the walk is at (see _pos_after_row and _pos_at).
    const position_in_partition& pos() {
        if (_pos_after_row) {
            _pos = position_in_partition::after_key(!_reversed ? std::prev(_row)->first : _row->first);
            _pos_after_row = false;
            _pos_at = nullptr;
        }
        return _pos_at ? *_pos_at : _pos;
    }

    // The next row in the read's order, or null.
    const rows_type::value_type* next_row() const {
        auto& rows = _p->rows();
        if (!_reversed) {
            return _row != rows.end() ? &*_row : nullptr;
        }
        return _row != rows.begin() ? &*std::prev(_row) : nullptr;
    }
    void advance_row() {
        if (_reversed) {
            --_row;
        } else {
            ++_row;
        }
    }

    // The last row passed: rows up to it are behind the reader, whatever
    // is inserted later. Map iterators survive inserts (rows are never
    // removed), but a row inserted between that row and _row would be
    // missed; a later fill re-seeks from it when the memtable changed.
    void save_resume_key() {
        auto& rows = _p->rows();
        if (!_reversed ? _row == rows.begin() : _row == rows.end()) {
            _resume_row.reset();
        } else {
            _resume_row = !_reversed ? std::prev(_row) : _row;
        }
    }

    // After a write: _row to the first row after the resume row that is
    // not behind _pos (rows inserted behind the position stay unread): the
    // later, in the read's order, of the row just after the resume row and
    // the first row at or after _pos (found by lookup).
    void reseek_rows() {
        auto& rows = _p->rows();
        if (_pos_after_row) {
            // The row just before _row may be a new one now: the position
            // is after the resume row, the one passed last.
            _pos = position_in_partition::after_key((*_resume_row)->first);
            _pos_after_row = false;
            _pos_at = nullptr;
        }
        auto at_pos = rows_at(_pos_at ? *_pos_at : _pos);
        if (!_resume_row) {
            _row = at_pos;
            return;
        }
        auto less = rows.key_comp();
        if (!_reversed) {
            auto after_resume = std::next(*_resume_row);
            bool resume_later = at_pos == rows.end()         ? false
                                : after_resume == rows.end() ? true
                                                             : less(at_pos->first, after_resume->first);
            _row = resume_later ? after_resume : at_pos;
        } else {
            // The next row is the one before _row: the earlier iterator.
            auto before_resume = *_resume_row;
            bool resume_earlier = at_pos == rows.end() || less(before_resume->first, at_pos->first);
            _row = resume_earlier ? before_resume : at_pos;
        }
    }

    // _row to the first row at or after stream position p.
    void seek_rows_to(const position_in_partition& p) { _row = rows_at(p); }

    // Where _row goes for the first row at or after stream position p. The
    // rows of p's prefix come first after lower_bound(p's key); only those
    // are stepped. The lower_bound goes through the partition's row lookup
    // index when it has one (a row cache entry read again and again); only
    // the map iterator it gives is kept.
    rows_type::const_iterator rows_at(const position_in_partition& p) const {
        auto& rows = _p->rows();
        auto it = _p->rows_lower_bound(*_mt->schema(), p.key());
        if (!_reversed) {
            while (it != rows.end() && _order.key_vs(it->first, p) < 0) {
                ++it;
            }
        } else {
            while (it != rows.end() && _order.key_vs(it->first, p) >= 0) {
                ++it;
            }
        }
        return it;
    }

    // Feeds the partition's clustered fragments, merged by position, to the
    // filter until the buffer is full or the partition (or window) ends.
    // Invariants: everything before _pos was fed or skipped; _in_force is
    // the tombstone last given to the filter; when _synced, it is the one
    // in force at _pos (else that is still to be checked).
    void walk() {
        if (_generation != _mt->generation()) {
            reseek_rows();
            _synced = false;
            _next_known = false;
            _generation = _mt->generation();
        }
        range_tombstone_view rts(_p->range_tombstones(), _forward_order, _reversed);
        while (!is_buffer_full()) {
            if (auto* target = _filter->skip_target_position(); target && _order(*target, pos()) > 0) {
                // Between ranges: what lies before the next range is not
                // emitted, but the filter must know the tombstone in force
                // where the range opens. Told at _pos, outside any range.
                tombstone before = rts.value_before(*target);
                if (before != _in_force) {
                    _out.clear();
                    _filter->consume_change(pos(), before, _out);
                    _in_force = before;
                }
                if (!_forwarding) {
                    // The slice's range start, which the reader holds: no copy.
                    _pos_at = target;
                } else {
                    // A window's range dies with its window's filter.
                    _pos = *target;
                    _pos_at = nullptr;
                }
                _synced = false;
                _next_known = false;
                seek_rows_to(pos());
            }
            // The change to feed next, if any: its position is _pos itself (the
            // sync change), a bound of the list, or _next_reversed_bound; the
            // filter copies it only if it emits it.
            change_view sync;
            change_view* change = nullptr;
            // Forward: what is in force at pos() and the next change, from one search (at most one per step).
            std::optional<range_tombstone_view::lookup_result> found;
            auto lookup = [&]() -> const range_tombstone_view::lookup_result& {
                if (!found) {
                    found = rts.lookup(pos());
                }
                return *found;
            };
            if (!_synced) {
                // Without range tombstones, no need to build the position.
                tombstone t = rts.empty() ? tombstone{} : !_reversed ? lookup().at : rts.value_at(pos());
                if (t != _in_force) {
                    sync = {&pos(), t};
                    change = &sync;
                } else {
                    _synced = true;
                }
            }
            if (!change && !rts.empty()) {
                if (!_next_known) {
                    _next_change.reset();
                    if (!_reversed) {
                        if (auto& l = lookup(); l.next) {
                            _next_change = change_view{l.next, l.at_next};
                        }
                    } else if (auto* b = rts.next_bound_after(pos())) {
                        const position_in_partition* p = b;
                        if (_reversed) {
                            _next_reversed_bound = b->reversed();
                            p = &_next_reversed_bound;
                        }
                        _next_change = change_view{p, rts.value_at(*p)};
                    }
                    _next_known = true;
                }
                if (_next_change) {
                    change = &*_next_change;
                }
            }
            auto* r = next_row();
            if (!r && !change) {
                end_of_clustered();
                return;
            }
            bool take_row = r && (!change || _order.key_vs(r->first, *change->position) < 0);
            bool more;
            if (take_row) {
                // The row is copied only when the slice wants it.
                if (_filter->consume_row_key(r->first, _buffer)) {
                    _buffer.emplace_back(std::in_place_type<clustering_row>, r->first, r->second.marker,
                                         r->second.tomb, r->second.cells);
                }
                more = _filter->has_ranges_left();
            } else {
                more = _filter->consume_change(*change->position, change->tomb, _buffer);
            }
            if (!more) {
                // Past the last range. Forwarding: the fragment stays for a
                // later window, so nothing moves.
                end_of_clustered();
                return;
            }
            if (take_row) {
                // _pos is after this row; built only when asked for (pos()).
                // With no range bound between the old position and the new
                // one, the tombstone in force and the next change stay as
                // they are (no binary search per row).
                if (!(_synced && _next_known && (!_next_change || _order.after_key_vs(r->first, *_next_change->position) < 0))) {
                    _synced = false;
                    _next_known = false;
                }
                _pos_after_row = true;
                _pos_at = nullptr;
                advance_row();
            } else {
                if (change->position != &_pos && change->position != _pos_at) {  // not the sync change
                    _pos = *change->position;
                    _pos_at = nullptr;
                }
                _pos_after_row = false;
                _in_force = change->tomb;
                _synced = true;
                _next_known = false;
            }
        }
    }

    // The partition (or, forwarding, the window) has nothing more.
    void end_of_clustered() {
        _filter->finish(_buffer);
        if (_forwarding) {
            _filter.reset();
            _end_of_stream = true;
        } else {
            push(partition_end{});
            _state = state::after_partition;
            _filter.reset();
        }
    }

    std::shared_ptr<const memtable> _mt;
    dht::partition_range _range;
    clustering_ranges _slice;
    bool _reversed;
    bool _forwarding;
    stream_order _order;
    position_in_partition_comparator _forward_order;

    state _state = state::seek;
    memtable::partitions_type::const_iterator _part;

    // The partition being read.
    const mutation_partition* _p = nullptr;
    position_in_partition _pos = position_in_partition::before_all_clustered_rows();
    // _pos is stale: the position is after the row just passed (the one
    // before _row in the read's order). Saves a key copy per row. A write
    // may insert a row just before _row, but then reseek_rows() first
    // moves _row to just after the resume key, the row passed.
    bool _pos_after_row = false;
    // When set, the position is this range start of _slice instead of _pos
    // (never with forwarding, whose windows' ranges die with their filter):
    // a skip to the slice's next range copies no key.
    const position_in_partition* _pos_at = nullptr;
    bool _synced = false;
    tombstone _in_force;
    // When _next_known: the first range tombstone change after _pos (none:
    // nothing ahead), valid until the walk passes it or moves otherwise.
    bool _next_known = false;
    // A range tombstone change not built: where (the list's bound, _pos, or _next_reversed_bound) and what.
    struct change_view {
        const position_in_partition* position = nullptr;
        tombstone tomb;
    };
    // Points into the range tombstone list (or to _next_reversed_bound): walk() forgets it after a write.
    std::optional<change_view> _next_change;
    position_in_partition _next_reversed_bound = position_in_partition::before_all_clustered_rows();
    // Forward: the next row. Reversed: the next row is the one before it.
    rows_type::const_iterator _row;
    std::optional<rows_type::const_iterator> _resume_row;
    uint64_t _generation = 0;
    std::optional<mutation_fragment_filter> _filter;
    std::vector<mutation_fragment> _out;  // what the filter says outside its ranges: nothing (never allocates)
};

} // namespace

mutation_reader make_memtable_reader(std::shared_ptr<const memtable> mt, schema_ptr s, read_options opts,
                                     size_t buffer_size) {
    return mutation_reader(std::make_unique<memtable_reader>(std::move(mt), std::move(s), std::move(opts.range),
                                                             std::move(opts.slice), opts.reversed(), opts.forwarding,
                                                             buffer_size));
}

} // namespace reef
