// The per-shard cache tracker. See tracker.hh.
#include "cache/tracker.hh"

namespace reef::cache {

cache_tracker& shard_cache_tracker() noexcept {
    // Shard threads end with the runtime; caches live inside it, so they
    // are gone before this is destroyed.
    thread_local cache_tracker tracker;
    return tracker;
}

} // namespace reef::cache
