// Which shard the calling thread is, and how many shards this process runs.
// Valid on a shard's own thread once the runtime is up; 0 and 1 elsewhere.
#pragma once

#include <cstdint>

namespace reef {

using shard_id = unsigned;

namespace internal {
inline thread_local shard_id current_shard = 0;
inline unsigned shard_count = 1;
}

// The shard the calling thread runs; 0 outside the runtime.
inline shard_id this_shard_id() noexcept { return internal::current_shard; }

namespace smp {
// Number of shards of the running runtime (1 when none runs).
inline unsigned count() noexcept { return internal::shard_count; }
}

} // namespace reef
