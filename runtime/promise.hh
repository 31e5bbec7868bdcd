// promise<T>: completes a future from outside a coroutine (a callback, another task).
// Destroying a promise that was never set fails its future with broken_promise.
#pragma once

#include "runtime/future.hh"
#include "runtime/reactor.hh"

#include <memory>
#include <optional>
#include <stdexcept>

namespace reef {

class broken_promise : public std::logic_error {
public:
    broken_promise() : std::logic_error("broken promise") {}
};

namespace internal {
template <typename T>
struct promise_state {
    std::optional<stored_t<T>> value;
    std::exception_ptr error;
    std::coroutine_handle<> waiter;
    bool ready = false;

    void complete() noexcept {
        ready = true;
        if (waiter) {
            schedule(std::exchange(waiter, nullptr));
        }
    }
};
template <typename T>
struct promise_awaiter {
    promise_state<T>& st;
    bool await_ready() const noexcept { return st.ready; }
    void await_suspend(std::coroutine_handle<> h) noexcept { st.waiter = h; }
    void await_resume() const noexcept {}
};
} // namespace internal

template <typename T = void>
class promise {
public:
    promise() : _st(std::make_shared<internal::promise_state<T>>()) {}
    promise(promise&&) noexcept = default;
    promise& operator=(promise&& o) noexcept {
        if (this != &o) {
            abandon();
            _st = std::move(o._st);
        }
        return *this;
    }
    ~promise() { abandon(); }

    // At most once per promise.
    future<T> get_future() {
        if (_future_taken) {
            throw std::logic_error("promise::get_future called twice");
        }
        _future_taken = true;
        return wait(_st);
    }
    template <typename... A>
    void set_value(A&&... a) {
        if (_st && !_st->ready) {
            _st->value.emplace(std::forward<A>(a)...);
            _st->complete();
        }
    }
    void set_exception(std::exception_ptr ex) noexcept {
        if (_st && !_st->ready) {
            _st->error = std::move(ex);
            _st->complete();
        }
    }
    template <typename E>
    void set_exception(E&& e) noexcept { set_exception(std::make_exception_ptr(std::forward<E>(e))); }

private:
    void abandon() noexcept {
        if (_st && !_st->ready) {
            set_exception(broken_promise());
        }
    }
    static future<T> wait(std::shared_ptr<internal::promise_state<T>> st) {
        co_await internal::promise_awaiter<T>{*st};
        if (st->error) {
            std::rethrow_exception(st->error);
        }
        if constexpr (!std::is_void_v<T>) {
            co_return std::move(*st->value);
        }
    }

    std::shared_ptr<internal::promise_state<T>> _st;
    bool _future_taken = false;
};

} // namespace reef
