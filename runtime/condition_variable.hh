// condition_variable: coroutines wait until another signals (one) or broadcasts (all).
// No spurious wake-ups; waits may carry a deadline; broken() fails all waiters.
#pragma once

#include "runtime/future.hh"
#include "runtime/reactor.hh"
#include "runtime/timer.hh"
#include "runtime/waiter_list.hh"

#include <optional>
#include <stdexcept>

namespace reef {

class condition_variable_timed_out : public std::runtime_error {
public:
    condition_variable_timed_out() : std::runtime_error("condition variable wait timed out") {}
};

class broken_condition_variable : public std::runtime_error {
public:
    broken_condition_variable() : std::runtime_error("condition variable broken") {}
};

class condition_variable {
public:
    condition_variable() = default;
    condition_variable(const condition_variable&) = delete;
    ~condition_variable() { broken(); }

    future<> wait() { return wait_until(std::nullopt); }
    future<> wait(steady_clock_type::time_point deadline) { return wait_until(deadline); }
    // Waits until pred() holds, checking it first and after every wake-up.
    template <typename Pred>
    future<> wait(Pred pred) {
        while (!pred()) {
            co_await wait();
        }
    }
    template <typename Pred>
    future<> wait(steady_clock_type::time_point deadline, Pred pred) {
        while (!pred()) {
            co_await wait(deadline);
        }
    }

    void signal() noexcept {
        if (!_waiters.empty()) {
            _waiters.pop_front()->task.wake();
        }
    }
    void broadcast() noexcept {
        while (!_waiters.empty()) {
            _waiters.pop_front()->task.wake();
        }
    }
    void broken(std::exception_ptr ex = std::make_exception_ptr(broken_condition_variable())) noexcept {
        _broken = ex;
        while (!_waiters.empty()) {
            auto* w = _waiters.pop_front();
            w->error = ex;
            w->task.wake();
        }
    }
    bool has_waiters() const noexcept { return !_waiters.empty(); }

private:
    struct awaiter {
        condition_variable& cv;
        internal::waiter w;
        std::optional<steady_clock_type::time_point> deadline;
        timer t;
        bool await_ready() const noexcept { return false; }
        void await_suspend(std::coroutine_handle<> h) {
            w.task.park(h);
            cv._waiters.push_back(&w);
            if (deadline) {
                t.set_callback([this] {
                    if (!w.linked) {
                        return;  // signalled (or broken) in this loop round already: its resumption is scheduled
                    }
                    cv._waiters.remove(&w);
                    w.error = std::make_exception_ptr(condition_variable_timed_out());
                    w.task.wake();
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

    future<> wait_until(std::optional<steady_clock_type::time_point> deadline) {
        if (_broken) {
            std::rethrow_exception(_broken);
        }
        // A named awaiter: GCC 12 may destroy a non-trivial temporary awaiter twice.
        awaiter aw{*this, {}, deadline, {}};
        co_await aw;
    }

    internal::waiter_list _waiters;
    std::exception_ptr _broken;
};

} // namespace reef
