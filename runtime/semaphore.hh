// semaphore: counted units for limiting concurrency and accounting memory.
// Waiters are served strictly in arrival order; a wait may carry a deadline.
#pragma once

#include "runtime/future.hh"
#include "runtime/reactor.hh"
#include "runtime/timer.hh"
#include "runtime/waiter_list.hh"

#include <cstddef>
#include <optional>
#include <stdexcept>
#include <sys/types.h>

namespace reef {

class semaphore_timed_out : public std::runtime_error {
public:
    semaphore_timed_out() : std::runtime_error("semaphore wait timed out") {}
};

class broken_semaphore : public std::runtime_error {
public:
    broken_semaphore() : std::runtime_error("semaphore broken") {}
};

class semaphore {
public:
    explicit semaphore(size_t count) noexcept : _count(ssize_t(count)) {}
    semaphore(const semaphore&) = delete;
    ~semaphore() { broken(); }

    // Takes n units, waiting for them if needed. A waiter that arrived
    // earlier is served first even if it needs more units than are free.
    future<> wait(size_t n = 1) { return wait_until(std::nullopt, n); }
    future<> wait(steady_clock_type::time_point deadline, size_t n = 1) { return wait_until(deadline, n); }
    future<> wait(steady_clock_type::duration timeout, size_t n = 1) {
        return wait_until(steady_clock_type::now() + timeout, n);
    }
    bool try_wait(size_t n = 1) noexcept {
        if (_waiters.empty() && _count >= ssize_t(n)) {
            _count -= ssize_t(n);
            return true;
        }
        return false;
    }
    void signal(size_t n = 1) noexcept;
    // Takes n units without waiting; the count may go negative (memory
    // already spent must be accounted even when over budget).
    void consume(size_t n = 1) noexcept { _count -= ssize_t(n); }
    ssize_t available_units() const noexcept { return _count; }
    size_t waiters() const noexcept { return _waiters.size(); }
    // Fails every current and future waiter with ex.
    void broken(std::exception_ptr ex = std::make_exception_ptr(broken_semaphore())) noexcept;

private:
    struct units_waiter : internal::waiter {
        size_t units;
    };
    struct wait_awaiter;
    future<> wait_until(std::optional<steady_clock_type::time_point> deadline, size_t n);
    void wake_waiters() noexcept;

    ssize_t _count;
    internal::waiter_list _waiters;
    std::exception_ptr _broken;
};

// Units held from a semaphore; returned on destruction.
class semaphore_units {
public:
    semaphore_units() noexcept = default;
    semaphore_units(semaphore& s, size_t n) noexcept : _sem(&s), _n(n) {}
    semaphore_units(semaphore_units&& o) noexcept : _sem(std::exchange(o._sem, nullptr)), _n(std::exchange(o._n, 0)) {}
    semaphore_units& operator=(semaphore_units&& o) noexcept {
        if (this != &o) {
            return_all();
            _sem = std::exchange(o._sem, nullptr);
            _n = std::exchange(o._n, 0);
        }
        return *this;
    }
    ~semaphore_units() { return_all(); }
    size_t count() const noexcept { return _n; }
    // Gives back k of the held units now.
    void return_units(size_t k) noexcept {
        k = std::min(k, _n);
        _n -= k;
        if (_sem && k) {
            _sem->signal(k);
        }
    }
    void return_all() noexcept { return_units(_n); }
    // Forgets the units without returning them.
    size_t release() noexcept { _sem = nullptr; return std::exchange(_n, 0); }
    // Adds units taken from the same semaphore.
    void adopt(semaphore_units&& o) noexcept { _n += o.release(); }

private:
    semaphore* _sem = nullptr;
    size_t _n = 0;
};

future<semaphore_units> get_units(semaphore& s, size_t n);
future<semaphore_units> get_units(semaphore& s, size_t n, steady_clock_type::time_point deadline);
std::optional<semaphore_units> try_get_units(semaphore& s, size_t n) noexcept;
semaphore_units consume_units(semaphore& s, size_t n) noexcept;

// Runs fn() while holding n units.
template <typename Func>
futurize_result_t<Func> with_semaphore(semaphore& s, size_t n, Func fn) {
    auto units = co_await get_units(s, n);
    co_return co_await futurize_invoke(fn);
}

} // namespace reef
