// with_timeout: waits for a future until a deadline, then fails with timed_out_error.
// The timed-out work is not cancelled: it finishes in the background, its result dropped.
#pragma once

#include "runtime/future.hh"
#include "runtime/reactor.hh"
#include "runtime/timer.hh"

#include <memory>
#include <optional>
#include <stdexcept>

namespace reef {

class timed_out_error : public std::runtime_error {
public:
    timed_out_error() : std::runtime_error("timed out") {}
};

namespace internal {
template <typename T>
struct timeout_state {
    std::optional<stored_t<T>> value;
    std::exception_ptr error;
    std::coroutine_handle<> waiter;
    bool done = false;
    timer t;

    void finish() noexcept {
        done = true;
        t.cancel();
        if (waiter) {
            schedule(std::exchange(waiter, nullptr));
        }
    }
};

template <typename T>
detached_task run_with_timeout_child(future<T> f, std::shared_ptr<timeout_state<T>> st) {
    std::optional<stored_t<T>> v;
    std::exception_ptr ex;
    try {
        if constexpr (std::is_void_v<T>) {
            co_await std::move(f);
            v.emplace();
        } else {
            v.emplace(co_await std::move(f));
        }
    } catch (...) {
        ex = std::current_exception();
    }
    if (!st->done) {
        st->value = std::move(v);
        st->error = ex;
        st->finish();
    }
}

template <typename T>
struct timeout_awaiter {
    timeout_state<T>& st;
    bool await_ready() const noexcept { return st.done; }
    void await_suspend(std::coroutine_handle<> h) noexcept { st.waiter = h; }
    void await_resume() const noexcept {}
};
} // namespace internal

template <typename T>
future<T> with_timeout(steady_clock_type::time_point deadline, future<T> f) {
    auto st = std::make_shared<internal::timeout_state<T>>();
    internal::run_with_timeout_child(std::move(f), st);
    if (!st->done) {
        auto* raw = st.get();
        st->t.set_callback([raw] {
            if (!raw->done) {
                raw->error = std::make_exception_ptr(timed_out_error());
                raw->finish();
            }
        });
        st->t.arm(deadline);
        co_await internal::timeout_awaiter<T>{*st};
    }
    if (st->error) {
        std::rethrow_exception(st->error);
    }
    if constexpr (!std::is_void_v<T>) {
        co_return std::move(*st->value);
    }
}

template <typename T>
future<T> with_timeout(steady_clock_type::duration timeout, future<T> f) {
    return with_timeout(steady_clock_type::now() + timeout, std::move(f));
}

} // namespace reef
