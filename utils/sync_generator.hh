// sync_generator<T>: a synchronous C++20 generator coroutine. resume() runs the body until its next
// co_yield and returns the yielded value (nothing once the body has returned); the body's exceptions come out
// of resume(). It never suspends on anything else (co_await does not compile), so all of its state is its frame.
#pragma once

#include <coroutine>
#include <exception>
#include <optional>
#include <type_traits>
#include <utility>

namespace reef::utils {

template <typename T>
class sync_generator {
public:
    struct promise_type {
        std::optional<T> value;
        std::exception_ptr error;

        sync_generator get_return_object() noexcept {
            return sync_generator(std::coroutine_handle<promise_type>::from_promise(*this));
        }
        // Lazy: the body starts at the first resume().
        std::suspend_always initial_suspend() noexcept { return {}; }
        std::suspend_always final_suspend() noexcept { return {}; }
        std::suspend_always yield_value(T v) noexcept(std::is_nothrow_move_constructible_v<T>) {
            value.emplace(std::move(v));
            return {};
        }
        void return_void() noexcept {}
        void unhandled_exception() noexcept { error = std::current_exception(); }
        // Synchronous: the body may only yield.
        template <typename U>
        void await_transform(U&&) = delete;
    };

    sync_generator() noexcept = default;
    sync_generator(sync_generator&& o) noexcept : _h(std::exchange(o._h, {})) {}
    sync_generator& operator=(sync_generator&& o) noexcept {
        if (this != &o) {
            destroy();
            _h = std::exchange(o._h, {});
        }
        return *this;
    }
    sync_generator(const sync_generator&) = delete;
    sync_generator& operator=(const sync_generator&) = delete;
    ~sync_generator() { destroy(); }

    // True once the body has returned or thrown (or for a default-constructed generator).
    bool done() const noexcept { return !_h || _h.done(); }

    // Runs the body to its next co_yield and returns the value; nothing when the body returns. If the body
    // throws, the exception comes out here and the generator is done.
    std::optional<T> resume() {
        if (done()) {
            return std::nullopt;
        }
        auto& p = _h.promise();
        p.value.reset();
        _h.resume();
        if (p.error) {
            std::rethrow_exception(std::exchange(p.error, nullptr));
        }
        if (_h.done()) {
            return std::nullopt;
        }
        return std::move(p.value);
    }

private:
    explicit sync_generator(std::coroutine_handle<promise_type> h) noexcept : _h(h) {}
    void destroy() noexcept {
        if (_h) {
            _h.destroy();
            _h = {};
        }
    }

    std::coroutine_handle<promise_type> _h;
};

} // namespace reef::utils
