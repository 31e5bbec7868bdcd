// when_all: runs several futures concurrently on this shard and waits for all.
// Every child finishes before it returns; then the first failure is rethrown.
#pragma once

#include "runtime/future.hh"

#include <cstddef>
#include <exception>
#include <optional>
#include <tuple>
#include <vector>

namespace reef {

namespace internal {

struct when_all_state {
    size_t remaining = 0;
    std::coroutine_handle<> waiter;
    std::exception_ptr first_error;

    void child_done() noexcept {
        if (--remaining == 0 && waiter) {
            schedule(waiter);
        }
    }
    void fail(std::exception_ptr ex) noexcept {
        if (!first_error) {
            first_error = std::move(ex);
        }
    }
};

struct when_all_awaiter {
    when_all_state& st;
    bool await_ready() const noexcept { return st.remaining == 0; }
    void await_suspend(std::coroutine_handle<> h) noexcept { st.waiter = h; }
    void await_resume() const noexcept {}
};

template <typename T>
detached_task when_all_child(future<T>& f, std::optional<stored_t<T>>& slot, when_all_state& st) {
    try {
        if constexpr (std::is_void_v<T>) {
            co_await std::move(f);
            slot.emplace();
        } else {
            slot.emplace(co_await std::move(f));
        }
    } catch (...) {
        st.fail(std::current_exception());
    }
    st.child_done();
}

} // namespace internal

// Waits for every future in fs; returns their values in order (nothing for
// void). The frame of the caller owns fs and the slots, so children can
// never outlive what they write to.
template <typename T>
auto when_all(std::vector<future<T>> fs)
    -> future<std::conditional_t<std::is_void_v<T>, void, std::vector<internal::stored_t<T>>>> {
    std::vector<std::optional<internal::stored_t<T>>> slots(fs.size());
    internal::when_all_state st;
    st.remaining = fs.size() + 1;  // +1 keeps it from firing while we launch
    for (size_t i = 0; i < fs.size(); ++i) {
        internal::when_all_child(fs[i], slots[i], st);
    }
    --st.remaining;
    co_await internal::when_all_awaiter{st};
    if (st.first_error) {
        std::rethrow_exception(st.first_error);
    }
    if constexpr (!std::is_void_v<T>) {
        std::vector<internal::stored_t<T>> out;
        out.reserve(slots.size());
        for (auto& s : slots) {
            out.push_back(std::move(*s));
        }
        co_return out;
    }
}

// Variadic form: when_all(f1, f2, ...) -> tuple of their values, with
// std::monostate standing for void.
template <typename... T>
future<std::tuple<internal::stored_t<T>...>> when_all(future<T>... fs) {
    std::tuple<future<T>...> futures(std::move(fs)...);
    std::tuple<std::optional<internal::stored_t<T>>...> slots;
    internal::when_all_state st;
    st.remaining = sizeof...(T) + 1;
    [&]<size_t... I>(std::index_sequence<I...>) {
        (internal::when_all_child(std::get<I>(futures), std::get<I>(slots), st), ...);
    }(std::index_sequence_for<T...>{});
    --st.remaining;
    co_await internal::when_all_awaiter{st};
    if (st.first_error) {
        std::rethrow_exception(st.first_error);
    }
    co_return std::apply([](auto&... s) { return std::tuple<internal::stored_t<T>...>(std::move(*s)...); }, slots);
}

// Calls fn(item) for every item of range concurrently and waits for all.
template <typename Range, typename Func>
future<> parallel_for_each(Range&& range, Func fn) {
    std::vector<future<>> fs;
    for (auto&& item : range) {
        fs.push_back(futurize_invoke(fn, item));
    }
    co_await when_all(std::move(fs));
}

} // namespace reef
