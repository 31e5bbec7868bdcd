// backlog: a table's compaction backlog (the bytes its strategy still has to rewrite) and the backlog controller
// that turns it into the background class's shares; pure functions, monotone from a floor to a cap.
#pragma once

#include "compaction/compaction_strategy.hh"

#include <cstdint>
#include <vector>

namespace reef::compaction {

// Size-tiered backlog (ScyllaDB's idea): each byte of an sstable of `size` in a set of `total` bytes will be
// rewritten about log4(total / size) more times before the set is one sstable (each STCS round merges about four
// of a size into one of the next tier): the sum over the sstables of size * log4(total / size). 0 for no sstable or
// one; k equal sstables of s: k * s * log4(k).
double size_tiered_backlog(const std::vector<uint64_t>& sizes);

// A table's backlog in bytes: size-tiered over all its sstables (those being compacted too); time-window: summed
// over each window's sstables (windows are never merged together); 0 when its compaction is disabled.
double table_backlog(const compaction_options& o, const std::vector<candidate>& sstables);

// The backlog in units of the table's mean sstable size (backlog * count / total): about how many sstables' worth
// of rewriting is due, whatever the table's size. k equal sstables: k * log4(k) (4: 4, 8: 12, 16: 32); STCS at rest
// (under min_threshold per tier) stays at a few. 0 for no sstable or a backlog <= 0.
double normalized_backlog(double backlog, const std::vector<uint64_t>& sizes);

// Shares as a function of the normalized backlog: piecewise linear through control points (backlog ascending,
// shares not decreasing), the first point's shares below it (the floor), the last's above it (the cap).
class backlog_controller {
public:
    struct control_point {
        double backlog;
        unsigned shares;
    };
    // The default curve: 50 shares (a twenty-first of a busy shard) with no backlog, 100 at 4 (one STCS round due),
    // 1000 (half the shard, ScyllaDB's cap) at 12 (eight equal sstables), 4000 (four fifths) from 32 on (sixteen):
    // past half, compaction is behind the writes, and taking their time from them is what bounds the pile.
    static std::vector<control_point> default_points();
    // ScyllaDB's curve, capped at the foreground's shares (the baseline of `perf-compaction --wa-cap-at-half`).
    static std::vector<control_point> capped_at_half();

    backlog_controller() : backlog_controller(default_points()) {}
    // Throws std::invalid_argument naming the point when the curve is empty, not ascending, or decreasing.
    explicit backlog_controller(std::vector<control_point> points);

    unsigned shares(double normalized) const noexcept;
    unsigned floor() const noexcept { return _points.front().shares; }
    unsigned cap() const noexcept { return _points.back().shares; }

private:
    std::vector<control_point> _points;
};

} // namespace reef::compaction
