// mutation_fragment_filter: applies a read's clustering ranges to one partition's fragments.
// It drops what is outside the ranges, clips range tombstones to them, and says when the rest can be skipped.
#pragma once

#include "mutation/fragment.hh"
#include "reader/position_range.hh"
#include "schema/schema.hh"

#include <optional>
#include <vector>

namespace reef {

// A cursor over the query's ranges, in the read's order. The filter moves
// it forward as positions arrive; it never moves back.
class clustering_ranges_walker {
public:
    clustering_ranges_walker(const schema& s, clustering_ranges ranges, bool reversed);

    // The range not yet passed, or nothing when every range is behind.
    const position_range* current() const noexcept { return _i < _ranges.size() ? &_ranges[_i] : nullptr; }
    void next() noexcept { ++_i; }
    // Whether pos is at or after the current range's end (so the range is behind it).
    bool passed_current(const position_in_partition& pos) const { return _cmp(_ranges[_i].end, pos) <= 0; }
    // Whether pos is before the current range's start.
    bool before_current(const position_in_partition& pos) const { return _cmp(pos, _ranges[_i].start) < 0; }
    // The same for the row at key k, without building its position.
    bool passed_current(const clustering_key_prefix& k) const {
        return _cmp.compare_key(k, bound_weight::equal, _ranges[_i].end) >= 0;
    }
    bool before_current(const clustering_key_prefix& k) const {
        return _cmp.compare_key(k, bound_weight::equal, _ranges[_i].start) < 0;
    }
    const position_in_partition_comparator& comparator() const noexcept { return _cmp; }

private:
    position_in_partition_comparator _cmp;
    clustering_ranges _ranges;
    size_t _i = 0;
};

class mutation_fragment_filter {
public:
    mutation_fragment_filter(const schema& s, clustering_ranges ranges, bool reversed = false);

    // Feeds the next fragment of the partition (after partition_start, up to
    // and including partition_end) and appends what the consumer should see
    // to out: range_tombstone_changes that open or close the tombstone in
    // force at range boundaries, then the fragment if it is inside a range.
    // Returns false once the fragment is past the last range: the caller may
    // skip the rest of the partition, and must then call finish().
    bool consume(mutation_fragment f, std::vector<mutation_fragment>& out);
    // The tombstone the input has in force before the next fragment: for a
    // reader that starts filtering in the middle of a partition (a window
    // opened after fragments it has passed).
    void set_tombstone_in_force(tombstone t) noexcept { _in_force = t; }
    // Closes the partition: emits what ends an open range tombstone, then
    // nothing more; the caller emits partition_end itself.
    void finish(std::vector<mutation_fragment>& out);

    // Where a reader may skip to (through the index) before the next fragment
    // of interest: the start of the next range, when the read is between
    // ranges; nothing when inside a range or when no range is left.
    std::optional<position_in_partition> skip_target() const;
    // The end of the range the read is in or before: the first fragment at or after it moves the filter on to the
    // next range (nothing when no range is left).
    std::optional<position_in_partition> current_end() const;

private:
    // Moves the walker up to pos, emitting the changes that open and close
    // the tombstone in force on each range boundary crossed. Returns whether
    // pos is inside a range.
    // `pos`: a position, or a row's key (its position, not built).
    template <typename Pos>
    bool move_to(const Pos& pos, std::vector<mutation_fragment>& out);
    void emit_change(position_in_partition pos, tombstone t, std::vector<mutation_fragment>& out);

    clustering_ranges_walker _walker;
    tombstone _in_force;   // the tombstone in force in the input stream
    tombstone _emitted;    // the tombstone in force in the output stream
    bool _inside = false;  // inside _walker.current()
};

} // namespace reef
