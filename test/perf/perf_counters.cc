// The counters every `reef perf-*` benchmark may read around its work: operator new calls and user-space
// instructions retired by this thread. See perf_counters.hh.
#include "test/perf/perf_counters.hh"

#include <algorithm>
#include <cstdlib>
#include <linux/perf_event.h>
#include <new>
#include <sys/syscall.h>
#include <unistd.h>

// Counting operator new. Replacing the global operator new is program-wide; it is only
// linked into the reef binary (test/perf/), and not at all under AddressSanitizer, whose own operator new
// checks new/delete pairing.
#if defined(__SANITIZE_ADDRESS__)
#define REEF_PERF_COUNT_ALLOCS 0
#else
#define REEF_PERF_COUNT_ALLOCS 1
#endif

#if REEF_PERF_COUNT_ALLOCS
namespace {
thread_local uint64_t allocation_count = 0;

void* counted_alloc(std::size_t n) {
    ++allocation_count;
    if (void* p = std::malloc(n ? n : 1)) {
        return p;
    }
    throw std::bad_alloc();
}

void* counted_aligned_alloc(std::size_t n, std::align_val_t a) {
    ++allocation_count;
    void* p = nullptr;
    if (posix_memalign(&p, std::max(sizeof(void*), std::size_t(a)), n ? n : 1) != 0) {
        throw std::bad_alloc();
    }
    return p;
}
} // namespace

void* operator new(std::size_t n) { return counted_alloc(n); }
void* operator new[](std::size_t n) { return counted_alloc(n); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
    try {
        return counted_alloc(n);
    } catch (...) {
        return nullptr;
    }
}
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
    try {
        return counted_alloc(n);
    } catch (...) {
        return nullptr;
    }
}
void* operator new(std::size_t n, std::align_val_t a) { return counted_aligned_alloc(n, a); }
void* operator new[](std::size_t n, std::align_val_t a) { return counted_aligned_alloc(n, a); }
void* operator new(std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
    try {
        return counted_aligned_alloc(n, a);
    } catch (...) {
        return nullptr;
    }
}
void* operator new[](std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
    try {
        return counted_aligned_alloc(n, a);
    } catch (...) {
        return nullptr;
    }
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }
#endif

namespace reef::perf {

std::optional<uint64_t> allocations() {
#if REEF_PERF_COUNT_ALLOCS
    return allocation_count;
#else
    return std::nullopt;
#endif
}

namespace {

// A per-thread counter of user-space instructions retired; opened once on first use.
class instructions_counter {
public:
    instructions_counter() {
        perf_event_attr attr{};
        attr.type = PERF_TYPE_HARDWARE;
        attr.size = sizeof(attr);
        attr.config = PERF_COUNT_HW_INSTRUCTIONS;
        attr.exclude_kernel = 1;
        attr.exclude_hv = 1;
        _fd = int(syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0));
    }
    ~instructions_counter() {
        if (_fd >= 0) {
            ::close(_fd);
        }
    }
    std::optional<uint64_t> read() const {
        uint64_t v = 0;
        if (_fd < 0 || ::read(_fd, &v, sizeof(v)) != ssize_t(sizeof(v))) {
            return std::nullopt;
        }
        return v;
    }

private:
    int _fd = -1;
};

} // namespace

std::optional<uint64_t> instructions_retired() {
    static thread_local instructions_counter counter;
    return counter.read();
}

} // namespace reef::perf
