// Per-thread counters for the benchmarks: operator new calls (the reef binary replaces operator new to count them)
// and user-space instructions retired; each is nullopt where it cannot be counted, never a made-up zero.
#pragma once

#include <cstdint>
#include <optional>

namespace reef::perf {

// operator new calls on this thread so far; nullopt where they are not counted (sanitizer builds).
std::optional<uint64_t> allocations();
// The instructions this thread retired in user space (perf_event_open); nullopt where the kernel refuses.
std::optional<uint64_t> instructions_retired();

} // namespace reef::perf
