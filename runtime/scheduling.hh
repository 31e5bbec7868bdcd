// scheduling: the calling shard's background class shares (Seastar's scheduling-group shares, for the two classes
// of reactor.hh); while both classes have work ready, the background one gets shares / (1000 + shares) of the time.
#pragma once

namespace reef {

// The foreground class's shares, against which the background's count.
inline constexpr unsigned foreground_shares = 1000;

// The background class runs in rounds of reactor_config::background_quota, by credit (runtime/README.md,
// "Scheduling"): the thread's CPU time outside its rounds earns shares / 1000 of itself, a round run while the
// foreground had work ready costs its CPU time. Until set, the shard's reactor_config gives them: background_quota * 1000 /
// background_max_wait (125 with the defaults: a ninth). Clamped to [1, 100000]. Compaction's backlog controller
// is what sets them (compaction/backlog.hh).
void set_background_shares(unsigned shares) noexcept;
unsigned background_shares() noexcept;

} // namespace reef
