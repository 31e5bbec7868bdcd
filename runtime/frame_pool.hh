// Per-shard free lists for coroutine frames, by 16-byte size class.
// Allocation and release touch only thread-local state: no locks, no atomics.
#pragma once

#include <cstddef>
#include <new>

namespace reef::internal {

// Frames up to max_pooled_size come from the calling thread's free lists;
// larger ones go to the global allocator. A block freed on another thread
// simply joins that thread's list: memory may migrate, nothing is corrupted.
struct frame_pool {
    static constexpr std::size_t granularity = 16;
    static constexpr std::size_t max_pooled_size = 2048;
    static constexpr std::size_t classes = max_pooled_size / granularity + 1;
    struct free_block { free_block* next; };
    free_block* heads[classes];
};

// Zero-initialized with a trivial destructor, so access needs no TLS guard.
inline thread_local frame_pool tl_frame_pool;

#ifdef REEF_DEBUG
// Debug builds allocate every frame afresh so that AddressSanitizer sees each
// frame's lifetime (a pool would hide use-after-free).
inline void* frame_alloc(std::size_t size) { return ::operator new(size); }
inline void frame_free(void* p, std::size_t size) noexcept { ::operator delete(p, size); }
#else
inline void* frame_alloc(std::size_t size) {
    if (size > frame_pool::max_pooled_size) [[unlikely]] {
        return ::operator new(size);
    }
    std::size_t cls = (size + frame_pool::granularity - 1) / frame_pool::granularity;
    auto& head = tl_frame_pool.heads[cls];
    if (auto* b = head) [[likely]] {
        head = b->next;
        return b;
    }
    return ::operator new(cls * frame_pool::granularity);
}

inline void frame_free(void* p, std::size_t size) noexcept {
    if (size > frame_pool::max_pooled_size) [[unlikely]] {
        ::operator delete(p, size);
        return;
    }
    std::size_t cls = (size + frame_pool::granularity - 1) / frame_pool::granularity;
    auto* b = static_cast<frame_pool::free_block*>(p);
    b->next = tl_frame_pool.heads[cls];
    tl_frame_pool.heads[cls] = b;
}
#endif

#ifdef REEF_DEBUG
inline void frame_pool_release() noexcept {}
#else
// Returns the calling thread's cached frames to the global allocator; a
// shard thread calls it before it exits.
inline void frame_pool_release() noexcept {
    for (std::size_t cls = 0; cls < frame_pool::classes; ++cls) {
        auto*& head = tl_frame_pool.heads[cls];
        while (head) {
            auto* b = head;
            head = b->next;
            ::operator delete(b, cls * frame_pool::granularity);
        }
    }
}
#endif

} // namespace reef::internal
