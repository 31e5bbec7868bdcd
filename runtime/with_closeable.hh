// with_closeable: runs a coroutine on an object that must be closed (a file, a stream, a data source) and
// closes it afterwards whether the coroutine returned or threw, then returns the value or rethrows.
#pragma once

#include "runtime/future.hh"

#include <exception>
#include <optional>
#include <type_traits>
#include <utility>

namespace reef {

// Closes obj; an exception from close() is kept in err unless err already holds one.
template <typename Closeable>
future<> close_quietly(Closeable& obj, std::exception_ptr& err) {
    try {
        co_await obj.close();
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

} // namespace reef
