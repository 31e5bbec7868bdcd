// future<T>: a lazy coroutine task, resumed by whoever awaits it (symmetric transfer).
// Frames come from the shard's frame pool; nothing on the await path uses atomics.
#pragma once

// GCC 12 destroys an aggregate temporary that appears inside a co_await
// expression twice: a lambda whose captures own memory (`[s] {...}` with a
// std::string s), or a brace-initialized awaiter with such members. Within a
// coroutine, capture by reference in lambdas passed inside co_await (the
// awaited call keeps the caller's frame alive), or name the object first.
// Clang 16 is not affected. See ARCHITECTURE.md, "Coroutine rules".

#include "runtime/frame_pool.hh"

#include <coroutine>
#include <exception>
#include <optional>
#include <type_traits>
#include <utility>
#include <variant>

namespace reef {

template <typename T = void>
class future;

template <typename T = void, typename... A>
future<T> make_ready_future(A&&... a);
template <typename T = void>
future<T> make_exception_future(std::exception_ptr ex) noexcept;

namespace internal {

// Puts a suspended coroutine on the calling shard's run queue.
void schedule(std::coroutine_handle<> h) noexcept;
// Queues h in the background class when `background`, else as schedule() (reactor.hh).
void schedule_in(std::coroutine_handle<> h, bool background) noexcept;

// True while a background round resumes tasks: the class of the running task (reactor.hh, background_yield).
inline thread_local bool in_background_round = false;

// A suspended coroutine and the scheduling class it suspended in, woken back into that class: every wait (I/O,
// semaphore, condition variable) parks its waiter here, so that background work stays in the background across its
// waits, as a Seastar task keeps its scheduling group.
struct parked_task {
    std::coroutine_handle<> handle;
    bool background = false;

    void park(std::coroutine_handle<> h) noexcept {
        handle = h;
        background = in_background_round;
    }
    explicit operator bool() const noexcept { return bool(handle); }
    // Defined in reactor.hh (it queues on the shard's reactor).
    void wake() noexcept;
};
// Called when a detached (spawned) coroutine ends with an exception.
void report_detached_exception(std::exception_ptr ex) noexcept;

template <typename T>
using stored_t = std::conditional_t<std::is_void_v<T>, std::monostate, T>;

#ifdef REEF_DEBUG
// The reactor's task loop on this thread (set before each task it runs): the top of every task's stack.
inline thread_local const char* debug_task_stack_base = nullptr;
// True far below the task loop. At -O0 GCC 12 does not make symmetric transfer a tail call, so a loop awaiting
// coroutines that finish without suspending grows the stack until something truly suspends (coroutine rule 5).
inline bool debug_stack_deep() noexcept {
    auto* here = static_cast<const char*>(__builtin_frame_address(0));
    return debug_task_stack_base && debug_task_stack_base - here > 256 * 1024;
}
#endif

struct promise_base {
    std::coroutine_handle<> _continuation;
    std::exception_ptr _exception;

    static void* operator new(std::size_t size) { return frame_alloc(size); }
    static void operator delete(void* p, std::size_t size) noexcept { frame_free(p, size); }

    // Lazy: the body starts only when the future is awaited.
    std::suspend_always initial_suspend() noexcept { return {}; }

    struct final_awaiter {
        bool await_ready() noexcept { return false; }
        template <typename P>
        std::coroutine_handle<> await_suspend(std::coroutine_handle<P> h) noexcept {
            auto c = h.promise()._continuation;
#ifdef REEF_DEBUG
            // Deep below the task loop, the caller resumes from the run queue, on a fresh stack.
            if (c && debug_stack_deep()) {
                schedule(c);
                return std::noop_coroutine();
            }
#endif
            return c ? c : std::noop_coroutine();
        }
        void await_resume() noexcept {}
    };
    final_awaiter final_suspend() noexcept { return {}; }
    void unhandled_exception() noexcept { _exception = std::current_exception(); }
};

template <typename T>
struct future_promise : promise_base {
    std::optional<T> _value;
    future<T> get_return_object() noexcept;
    template <typename U = T>
    void return_value(U&& v) { _value.emplace(std::forward<U>(v)); }
    T take() {
        if (_exception) {
            std::rethrow_exception(std::move(_exception));
        }
        return std::move(*_value);
    }
};

template <>
struct future_promise<void> : promise_base {
    future<void> get_return_object() noexcept;
    void return_void() noexcept {}
    void take() {
        if (_exception) {
            std::rethrow_exception(std::move(_exception));
        }
    }
};

// A coroutine that starts at once and frees itself at the end; the vehicle
// for spawn() and for running children concurrently (when_all).
struct detached_task {
    struct promise_type {
        static void* operator new(std::size_t size) { return frame_alloc(size); }
        static void operator delete(void* p, std::size_t size) noexcept { frame_free(p, size); }
        detached_task get_return_object() noexcept { return {}; }
        std::suspend_never initial_suspend() noexcept { return {}; }
        std::suspend_never final_suspend() noexcept { return {}; }
        void return_void() noexcept {}
        void unhandled_exception() noexcept { report_detached_exception(std::current_exception()); }
    };
};

} // namespace internal

// A future is either a coroutine that has not finished yet, or a ready value
// or exception (make_ready_future, make_exception_future) that needs no frame.
// Awaiting it runs the coroutine; destroying an unawaited future frees it
// without ever running the body.
template <typename T>
class [[nodiscard]] future {
public:
    using promise_type = internal::future_promise<T>;
    using handle_type = std::coroutine_handle<promise_type>;
    using value_type = T;

    future(future&& o) noexcept
        : _h(std::exchange(o._h, nullptr)), _ready(std::move(o._ready)), _ex(std::move(o._ex)) {}
    future& operator=(future&& o) noexcept {
        if (this != &o) {
            destroy();
            _h = std::exchange(o._h, nullptr);
            _ready = std::move(o._ready);
            _ex = std::move(o._ex);
        }
        return *this;
    }
    future(const future&) = delete;
    future& operator=(const future&) = delete;
    ~future() { destroy(); }

    bool await_ready() const noexcept { return !_h; }
    std::coroutine_handle<> await_suspend(std::coroutine_handle<> caller) noexcept {
        _h.promise()._continuation = caller;
        return _h;
    }
    T await_resume() {
        if (_h) {
            return _h.promise().take();
        }
        if (_ex) {
            std::rethrow_exception(std::move(_ex));
        }
        if constexpr (!std::is_void_v<T>) {
            return std::move(*_ready);
        }
    }

    // True for a future made ready without a coroutine.
    bool available() const noexcept { return !_h; }

private:
    explicit future(handle_type h) noexcept : _h(h) {}
    future(std::in_place_t, internal::stored_t<T> v) : _ready(std::move(v)) {}
    explicit future(std::exception_ptr ex) noexcept : _ex(std::move(ex)) {}
    void destroy() noexcept {
        if (_h) {
            _h.destroy();
            _h = nullptr;
        }
    }

    handle_type _h;
    std::optional<internal::stored_t<T>> _ready;
    std::exception_ptr _ex;

    friend struct internal::future_promise<T>;
    template <typename U, typename... A>
    friend future<U> make_ready_future(A&&... a);
    template <typename U>
    friend future<U> make_exception_future(std::exception_ptr ex) noexcept;
};

template <typename T>
future<T> internal::future_promise<T>::get_return_object() noexcept {
    return future<T>(std::coroutine_handle<future_promise<T>>::from_promise(*this));
}

inline future<void> internal::future_promise<void>::get_return_object() noexcept {
    return future<void>(std::coroutine_handle<future_promise<void>>::from_promise(*this));
}

template <typename T, typename... A>
future<T> make_ready_future(A&&... a) {
    if constexpr (std::is_void_v<T>) {
        static_assert(sizeof...(A) == 0);
        return future<T>(std::in_place, std::monostate{});
    } else {
        return future<T>(std::in_place, T(std::forward<A>(a)...));
    }
}

template <typename T>
future<T> make_exception_future(std::exception_ptr ex) noexcept {
    return future<T>(std::move(ex));
}

template <typename T = void, typename E>
future<T> make_exception_future(E&& ex) noexcept {
    return make_exception_future<T>(std::make_exception_ptr(std::forward<E>(ex)));
}

template <typename T>
struct is_future : std::false_type {};
template <typename T>
struct is_future<future<T>> : std::true_type {};

// The future type that calling F with Args yields once "futurized":
// future<R> stays, a plain R becomes future<R>.
template <typename R>
struct futurize {
    using type = future<R>;
};
template <typename R>
struct futurize<future<R>> {
    using type = future<R>;
};
template <typename F, typename... Args>
using futurize_result_t = typename futurize<std::invoke_result_t<F, Args...>>::type;

// Calls f(args...) and returns a future in every case: a thrown exception
// becomes an exceptional future, a plain value a ready one.
template <typename F, typename... Args>
futurize_result_t<F, Args...> futurize_invoke(F&& f, Args&&... args) noexcept {
    using R = std::invoke_result_t<F, Args...>;
    try {
        if constexpr (is_future<R>::value) {
            return std::forward<F>(f)(std::forward<Args>(args)...);
        } else if constexpr (std::is_void_v<R>) {
            std::forward<F>(f)(std::forward<Args>(args)...);
            return make_ready_future<>();
        } else {
            return make_ready_future<R>(std::forward<F>(f)(std::forward<Args>(args)...));
        }
    } catch (...) {
        return make_exception_future<typename futurize_result_t<F, Args...>::value_type>(
            std::current_exception());
    }
}

// Runs f in the background on this shard. An exception that escapes it is
// logged, never lost silently.
template <typename T>
void spawn(future<T> f) {
    [](future<T> f) -> internal::detached_task { (void)co_await std::move(f); }(std::move(f));
}

// Runs fn() in the background, keeping fn itself alive until it finishes.
// Prefer this for lambdas with captures: `spawn([&] () -> future<> {...}())`
// would run a coroutine whose closure object dies at the end of the statement.
template <typename Func>
    requires std::is_invocable_v<Func>
void spawn(Func fn) {
    [](Func fn) -> internal::detached_task { (void)co_await futurize_invoke(fn); }(std::move(fn));
}

} // namespace reef
