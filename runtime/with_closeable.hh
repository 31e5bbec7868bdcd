// with_closeable: runs a coroutine on an object that must be closed (a file, a stream, a data source) and
// closes it afterwards whether the coroutine returned or threw, then returns the value or rethrows; and
// close_on_error, which closes the object only when the coroutine threw (building something that owns files).
#pragma once

#include "runtime/future.hh"

#include <exception>
#include <optional>
#include <type_traits>
#include <utility>

namespace reef {

// Closes obj (an object with close(), or a pointer to one: a shared or unique pointer); an exception from close() is
// kept in err unless err already holds one.
template <typename Closeable>
future<> close_quietly(Closeable& obj, std::exception_ptr& err) {
    try {
        if constexpr (requires { obj.close(); }) {
            co_await obj.close();
        } else {
            co_await obj->close();
        }
    } catch (...) {
        if (!err) {
            err = std::current_exception();
        }
    }
}

// Seastar's with_closeable / with_file. `fn(obj)` returns a future; obj lives
// in this coroutine's frame until close() is done, and fn is kept alive there
// too (so a capturing lambda coroutine may be passed as a temporary). An
// exception from fn wins over one from close().
template <typename Closeable, typename Fn>
auto with_closeable(Closeable obj, Fn fn) -> std::invoke_result_t<Fn&, Closeable&> {
    using result_type = typename std::invoke_result_t<Fn&, Closeable&>::value_type;
    std::exception_ptr err;
    if constexpr (std::is_void_v<result_type>) {
        try {
            co_await fn(obj);
        } catch (...) {
            err = std::current_exception();
        }
        co_await close_quietly(obj, err);
        if (err) {
            std::rethrow_exception(err);
        }
    } else {
        std::optional<result_type> result;
        try {
            result.emplace(co_await fn(obj));
        } catch (...) {
            err = std::current_exception();
        }
        co_await close_quietly(obj, err);
        if (err) {
            std::rethrow_exception(err);
        }
        co_return std::move(*result);
    }
}

// Runs fn(obj) on an object the caller owns and keeps: when fn throws, obj is closed (an exception from close() is
// dropped: fn's wins) and fn's exception rethrown; when fn returns, obj stays open. fn is kept alive here as in
// with_closeable. For opening something whose parts must not stay open when opening fails half-way.
template <typename Closeable, typename Fn>
auto close_on_error(Closeable& obj, Fn fn) -> std::invoke_result_t<Fn&, Closeable&> {
    using result_type = typename std::invoke_result_t<Fn&, Closeable&>::value_type;
    std::exception_ptr err;
    if constexpr (std::is_void_v<result_type>) {
        try {
            co_await fn(obj);
            co_return;
        } catch (...) {
            err = std::current_exception();
        }
        co_await close_quietly(obj, err);
        std::rethrow_exception(err);
    } else {
        try {
            co_return co_await fn(obj);
        } catch (...) {
            err = std::current_exception();
        }
        co_await close_quietly(obj, err);
        std::rethrow_exception(err);
    }
}

} // namespace reef
