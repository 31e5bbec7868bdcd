// Cross-shard calls: smp::submit_to runs a function on another shard and brings
// its result (or exception) back; messages travel over single-producer rings.
#pragma once

#include "runtime/future.hh"
#include "runtime/reactor.hh"
#include "runtime/shard.hh"
#include "runtime/when_all.hh"

#include <atomic>
#include <coroutine>
#include <exception>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace reef {

namespace internal {

// One cross-shard call. It travels to the target in ring[from][to], runs
// there, and comes back in ring[to][from] with _replied set.
class smp_message {
public:
    smp_message(shard_id from, shard_id to) noexcept : _from(from), _to(to) {}
    virtual void run_on_target() noexcept = 0;
    virtual void complete_on_source() noexcept = 0;
    shard_id _from;
    shard_id _to;
    bool _replied = false;
protected:
    ~smp_message() = default;
};

// Pushes m towards its target (or back to its source once _replied is set).
// Only from shard m->_from's thread (or m->_to's for a reply).
void smp_send(smp_message* m) noexcept;
// Runs incoming calls and completes incoming replies of shard `me`; returns
// true if there were any.
bool smp_poll(shard_id me);
// True if shard `me` has incoming messages or outgoing ones not yet in a ring.
bool smp_pending(shard_id me) noexcept;
// Pushes every parked outgoing message of `me` into its ring, spinning until
// there is room (used when a shard stops).
void smp_drain_outgoing(shard_id me) noexcept;

// Sets up the rings for n shards and the reactors they wake. Not thread-safe:
// called by the runtime before shard threads start and after they end.
void smp_configure(unsigned n, std::vector<reactor*> reactors);
void smp_cleanup();

template <typename T>
class smp_call_base : public smp_message {
public:
    using smp_message::smp_message;
    void complete_on_source() noexcept override { schedule(_waiter); }
    T take() {
        if (_ex) {
            std::rethrow_exception(_ex);
        }
        if constexpr (!std::is_void_v<T>) {
            return std::move(*_result);
        }
    }
    std::optional<stored_t<T>> _result;
    std::exception_ptr _ex;
    std::coroutine_handle<> _waiter;
};

template <typename Func>
class smp_call final : public smp_call_base<typename futurize_result_t<Func>::value_type> {
    using T = typename futurize_result_t<Func>::value_type;
public:
    smp_call(shard_id from, shard_id to, Func&& fn)
        : smp_call_base<T>(from, to), _fn(std::move(fn)) {}
    void run_on_target() noexcept override { run(this); }
private:
    static detached_task run(smp_call* self) {
        // Moved here so that the function and its captures die on the target.
        Func fn = std::move(self->_fn);
        try {
            if constexpr (std::is_void_v<T>) {
                co_await futurize_invoke(fn);
                self->_result.emplace();
            } else {
                self->_result.emplace(co_await futurize_invoke(fn));
            }
        } catch (...) {
            self->_ex = std::current_exception();
        }
        self->_replied = true;
        smp_send(self);
    }
    Func _fn;
};

template <typename T>
struct smp_send_awaiter {
    smp_call_base<T>* msg;
    bool await_ready() const noexcept { return false; }
    void await_suspend(std::coroutine_handle<> h) noexcept {
        msg->_waiter = h;
        smp_send(msg);
    }
    void await_resume() const noexcept {}
};

} // namespace internal

namespace smp {

// Runs fn() on shard t and returns its result to the calling shard. fn may
// return a plain value or a future; an exception it throws is rethrown here.
// fn is moved to shard t and destroyed there.
template <typename Func>
futurize_result_t<Func> submit_to(shard_id t, Func fn) {
    using T = typename futurize_result_t<Func>::value_type;
    if (t >= count()) {
        throw std::invalid_argument("smp::submit_to: no shard " + std::to_string(t) +
                                    " (there are " + std::to_string(count()) + ")");
    }
    if (t == this_shard_id()) {
        co_return co_await futurize_invoke(fn);
    }
    internal::smp_call<Func> call(this_shard_id(), t, std::move(fn));
    co_await internal::smp_send_awaiter<T>{&call};
    co_return call.take();
}

// Runs fn() on every shard concurrently; completes when all have, rethrowing
// the first failure.
template <typename Func>
future<> invoke_on_all(Func fn) {
    std::vector<future<>> calls;
    calls.reserve(count());
    for (shard_id s = 0; s < count(); ++s) {
        calls.push_back(submit_to(s, [fn]() mutable { return futurize_invoke(fn); }));
    }
    co_await when_all(std::move(calls));
}

} // namespace smp
} // namespace reef
