// mutation_fragment_filter: applies a read's clustering ranges to one partition's fragments.
// It drops what is outside the ranges, clips range tombstones to them, and says when the rest can be skipped.
#pragma once

#include "mutation/fragment.hh"
#include "reader/position_range.hh"
#include "schema/schema.hh"

#include <optional>
#include <vector>

namespace reef {

class fragment_buffer;

// A cursor over the query's ranges, in the read's order. The filter moves
// it forward as positions arrive; it never moves back. It owns its ranges or
// borrows them (a reader's slice, the same for each of its partitions: no
// copy per partition).
class clustering_ranges_walker {
public:
    clustering_ranges_walker(const schema& s, clustering_ranges ranges, bool reversed);
    // `cmp` orders the read (built with its direction).
    clustering_ranges_walker(position_in_partition_comparator cmp, clustering_ranges ranges)
        : _cmp(std::move(cmp)), _owned(std::move(ranges)) {}
    // Borrows `ranges`: they must outlive the walker and not change.
    clustering_ranges_walker(position_in_partition_comparator cmp, const clustering_ranges* ranges)
        : _cmp(std::move(cmp)), _ranges(ranges) {}
    clustering_ranges_walker(const clustering_ranges_walker& o)
        : _cmp(o._cmp), _owned(o._owned), _ranges(o.borrowed() ? o._ranges : &_owned), _i(o._i) {}
    clustering_ranges_walker(clustering_ranges_walker&& o) noexcept
        : _cmp(std::move(o._cmp)), _owned(std::move(o._owned)), _ranges(o.borrowed() ? o._ranges : &_owned), _i(o._i) {}
    clustering_ranges_walker& operator=(const clustering_ranges_walker& o) {
        if (this != &o) {
            *this = clustering_ranges_walker(o);
        }
        return *this;
    }
    clustering_ranges_walker& operator=(clustering_ranges_walker&& o) noexcept {
        if (this != &o) {
            _cmp = std::move(o._cmp);
            _owned = std::move(o._owned);
            _ranges = o.borrowed() ? o._ranges : &_owned;
            _i = o._i;
        }
        return *this;
    }

    // The range not yet passed, or nothing when every range is behind.
    const position_range* current() const noexcept { return _i < _ranges->size() ? &(*_ranges)[_i] : nullptr; }
    void next() noexcept { ++_i; }
    // Whether pos is at or after the current range's end (so the range is behind it).
    bool passed_current(const position_in_partition& pos) const { return _cmp((*_ranges)[_i].end, pos) <= 0; }
    // Whether pos is before the current range's start.
    bool before_current(const position_in_partition& pos) const { return _cmp(pos, (*_ranges)[_i].start) < 0; }
    // The same for the row at key k, without building its position.
    bool passed_current(const clustering_key_prefix& k) const {
        return _cmp.compare_key(k, bound_weight::equal, (*_ranges)[_i].end) >= 0;
    }
    bool before_current(const clustering_key_prefix& k) const {
        return _cmp.compare_key(k, bound_weight::equal, (*_ranges)[_i].start) < 0;
    }
    const position_in_partition_comparator& comparator() const noexcept { return _cmp; }

private:
    bool borrowed() const noexcept { return _ranges != &_owned; }

    position_in_partition_comparator _cmp;
    clustering_ranges _owned;
    const clustering_ranges* _ranges = &_owned;  // &_owned, or the borrowed ranges
    size_t _i = 0;
};

class mutation_fragment_filter {
public:
    mutation_fragment_filter(const schema& s, clustering_ranges ranges, bool reversed = false);
    // With the read's comparator (no comparator built), owning the ranges.
    mutation_fragment_filter(position_in_partition_comparator cmp, clustering_ranges ranges)
        : _walker(std::move(cmp), std::move(ranges)) {}
    // With the read's comparator, borrowing the ranges (they must outlive the filter): nothing is allocated.
    mutation_fragment_filter(position_in_partition_comparator cmp, const clustering_ranges* ranges)
        : _walker(std::move(cmp), ranges) {}

    // Feeds the next fragment of the partition (after partition_start, up to
    // and including partition_end) and appends what the consumer should see
    // to out: range_tombstone_changes that open or close the tombstone in
    // force at range boundaries, then the fragment if it is inside a range.
    // Returns false once the fragment is past the last range: the caller may
    // skip the rest of the partition, and must then call finish().
    // `out`: a std::vector<mutation_fragment> or a reader's fragment_buffer.
    template <typename Out>
    bool consume(mutation_fragment f, Out& out);
    // The row at key k, without the row: moves on to it as consume() would,
    // emitting the same range_tombstone_changes, and returns whether the row
    // is inside a range (the caller then appends the row itself). A reader
    // that holds its rows builds a copy only of those that are wanted.
    // has_ranges_left() then says what consume() would have returned.
    template <typename Out>
    bool consume_row_key(const clustering_key_prefix& k, Out& out);
    // A range_tombstone_change at `pos` to `t`, without the fragment: what
    // consume() does with it (the position is copied only if emitted).
    // Returns what consume() returns.
    template <typename Out>
    bool consume_change(const position_in_partition& pos, tombstone t, Out& out);
    // Whether a range is still ahead or open (false: the rest of the
    // partition can be skipped).
    bool has_ranges_left() const noexcept { return _walker.current() != nullptr; }
    // The tombstone the input has in force before the next fragment: for a
    // reader that starts filtering in the middle of a partition (a window
    // opened after fragments it has passed).
    void set_tombstone_in_force(tombstone t) noexcept { _in_force = t; }
    // Closes the partition: emits what ends an open range tombstone, then
    // nothing more; the caller emits partition_end itself.
    template <typename Out>
    void finish(Out& out);

    // Where a reader may skip to (through the index) before the next fragment
    // of interest: the start of the next range, when the read is between
    // ranges; nothing when inside a range or when no range is left.
    std::optional<position_in_partition> skip_target() const;
    // The same without a copy: null for nothing (valid while the filter is and its ranges are).
    const position_in_partition* skip_target_position() const noexcept;
    // The end of the range the read is in or before: the first fragment at or after it moves the filter on to the
    // next range (nothing when no range is left).
    std::optional<position_in_partition> current_end() const;
    // The same without a copy: null for nothing (valid while the filter is and its ranges are).
    const position_in_partition* current_end_position() const noexcept;

private:
    // Moves the walker up to pos, emitting the changes that open and close
    // the tombstone in force on each range boundary crossed. Returns whether
    // pos is inside a range.
    // `pos`: a position, or a row's key (its position, not built).
    template <typename Pos, typename Out>
    bool move_to(const Pos& pos, Out& out);
    template <typename Out>
    void emit_change(position_in_partition pos, tombstone t, Out& out);

    clustering_ranges_walker _walker;
    tombstone _in_force;   // the tombstone in force in the input stream
    tombstone _emitted;    // the tombstone in force in the output stream
    bool _inside = false;  // inside _walker.current()
};

} // namespace reef
