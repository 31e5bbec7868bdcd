// range_tombstone_list: the range tombstones of a partition as sorted, non-overlapping clustering ranges,
// each with the tombstone that wins there; converts to and from the range_tombstone_change stream form.
#pragma once

#include "mutation/fragment.hh"
#include "mutation/position_in_partition.hh"
#include "mutation/tombstone.hh"
#include "schema/schema.hh"

#include <optional>
#include <vector>

namespace reef {

// One range [start, end) of clustering positions and its tombstone. Bounds
// are "before" or "after" positions (never a row's), so a row is either
// inside a range or outside it, and half-open needs no special case.
struct range_tombstone_entry {
    position_in_partition start;
    position_in_partition end;
    tombstone tomb;
    bool operator==(const range_tombstone_entry&) const = default;
};

// Kept canonical: ranges sorted, non-empty, non-overlapping, with non-empty
// tombstones, and two ranges that touch (one's end is the other's start)
// never carry equal tombstones. So a set of applied range tombstones has
// one representation whatever the order they were applied in, and the
// change stream built from it never repeats a tombstone.
class range_tombstone_list {
public:
    explicit range_tombstone_list(const schema& s) : _cmp(s) {}
    explicit range_tombstone_list(position_in_partition_comparator cmp) : _cmp(std::move(cmp)) {}

    // Deletes [start, end) with t: where it overlaps existing ranges, the
    // superseding tombstone stays (tombstone::supersedes). An empty t or an
    // empty range changes nothing. Throws std::invalid_argument when a bound
    // is not a before/after clustered position or start > end.
    void apply(const position_in_partition& start, const position_in_partition& end, tombstone t);
    void apply(const range_tombstone_entry& e) { apply(e.start, e.end, e.tomb); }
    void apply(const range_tombstone_list& o);

    // The range tombstone in force at p (a row's position, or any other);
    // empty if none covers it.
    tombstone search(const position_in_partition& p) const;

    const position_in_partition_comparator& comparator() const noexcept { return _cmp; }
    bool empty() const noexcept { return _ranges.empty(); }
    size_t size() const noexcept { return _ranges.size(); }
    const std::vector<range_tombstone_entry>& ranges() const noexcept { return _ranges; }
    auto begin() const noexcept { return _ranges.begin(); }
    auto end() const noexcept { return _ranges.end(); }

    // The change stream form: at each range's start the tombstone in force,
    // at its end the next range's tombstone or, in a gap, an empty one.
    // Reversed: ranges in descending clustering order, each change at a
    // reversed() position, as a reversed stream carries them.
    std::vector<range_tombstone_change> to_changes(bool reversed = false) const;
    // Applies the ranges a change stream describes (forward or reversed, as
    // produced by to_changes or read from a stream). Changes must be in
    // stream order; a stream left open at the end ends at the last change.
    void apply_changes(const std::vector<range_tombstone_change>& changes, bool reversed = false);

    bool operator==(const range_tombstone_list& o) const { return _ranges == o._ranges; }

private:
    int cmp(const position_in_partition& a, const position_in_partition& b) const { return _cmp(a, b); }

    position_in_partition_comparator _cmp;
    std::vector<range_tombstone_entry> _ranges;
};

// Folds a stream's range_tombstone_changes into ranges, one change at a
// time (what a builder reading fragments needs).
class range_tombstone_change_accumulator {
public:
    explicit range_tombstone_change_accumulator(bool reversed = false) : _reversed(reversed) {}
    void consume(const range_tombstone_change& c, range_tombstone_list& out);
    // The tombstone in force after the last change.
    tombstone current() const noexcept { return _current; }

private:
    bool _reversed;
    std::optional<position_in_partition> _pos;
    tombstone _current;
};

} // namespace reef
