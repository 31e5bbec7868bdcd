// semaphore implementation. See semaphore.hh.
#include "runtime/semaphore.hh"

namespace reef {

struct semaphore::wait_awaiter {
    semaphore& sem;
    units_waiter& w;
    std::optional<steady_clock_type::time_point> deadline;
    std::exception_ptr timeout_error;
    timer t;

    bool await_ready() const noexcept { return false; }
    void await_suspend(std::coroutine_handle<> h) {
        w.task.park(h);
        sem._waiters.push_back(&w);
        if (deadline) {
            t.set_callback([this] {
                if (!w.linked) {
                    return;  // granted (or broken) in this loop round already: its resumption is scheduled
                }
                sem._waiters.remove(&w);
                w.error = timeout_error;
                w.task.wake();
                // A large waiter leaving the head may unblock smaller ones.
                sem.wake_waiters();
            });
            t.arm(*deadline);
        }
    }
    void await_resume() {
        t.cancel();
        if (w.error) {
            std::rethrow_exception(w.error);
        }
    }
};

future<> semaphore::wait_until(std::optional<steady_clock_type::time_point> deadline, size_t n) {
    if (_broken) {
        std::rethrow_exception(_broken);
    }
    if (try_wait(n)) {
        co_return;
    }
    units_waiter w;
    w.units = n;
    // A named awaiter: GCC 12 may destroy a non-trivial temporary awaiter twice.
    wait_awaiter aw{*this, w, deadline, deadline ? std::make_exception_ptr(semaphore_timed_out()) : nullptr, {}};
    co_await aw;
}

void semaphore::wake_waiters() noexcept {
    while (!_waiters.empty()) {
        auto* w = static_cast<units_waiter*>(_waiters.front());
        if (_count < ssize_t(w->units)) {
            break;
        }
        _count -= ssize_t(w->units);
        _waiters.pop_front();
        w->task.wake();
    }
}

void semaphore::signal(size_t n) noexcept {
    _count += ssize_t(n);
    wake_waiters();
}

void semaphore::broken(std::exception_ptr ex) noexcept {
    _broken = ex;
    while (!_waiters.empty()) {
        auto* w = _waiters.pop_front();
        w->error = ex;
        w->task.wake();
    }
}

future<semaphore_units> get_units(semaphore& s, size_t n) {
    co_await s.wait(n);
    co_return semaphore_units(s, n);
}

future<semaphore_units> get_units(semaphore& s, size_t n, steady_clock_type::time_point deadline) {
    co_await s.wait(deadline, n);
    co_return semaphore_units(s, n);
}

std::optional<semaphore_units> try_get_units(semaphore& s, size_t n) noexcept {
    if (s.try_wait(n)) {
        return semaphore_units(s, n);
    }
    return std::nullopt;
}

semaphore_units consume_units(semaphore& s, size_t n) noexcept {
    s.consume(n);
    return semaphore_units(s, n);
}

} // namespace reef
