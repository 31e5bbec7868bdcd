// gate: counts operations in progress so that close() can wait for them all.
// Once closed, entering throws gate_closed_exception: no new work starts.
#pragma once

#include "runtime/future.hh"
#include "runtime/reactor.hh"

#include <coroutine>
#include <stdexcept>

namespace reef {

class gate_closed_exception : public std::runtime_error {
public:
    gate_closed_exception() : std::runtime_error("gate closed") {}
};

class gate {
public:
    gate() = default;
    gate(const gate&) = delete;

    void enter() {
        if (_closed) {
            throw gate_closed_exception();
        }
        ++_count;
    }
    bool try_enter() noexcept {
        if (_closed) {
            return false;
        }
        ++_count;
        return true;
    }
    void leave() noexcept {
        if (--_count == 0 && _closer) {
            internal::schedule(std::exchange(_closer, nullptr));
        }
    }
    // Closes the gate and completes when every holder has left.
    future<> close() {
        _closed = true;
        if (_count) {
            co_await closer_awaiter{*this};
        }
    }
    bool is_closed() const noexcept { return _closed; }
    size_t get_count() const noexcept { return _count; }
    void check() const {
        if (_closed) {
            throw gate_closed_exception();
        }
    }

    // RAII entry.
    class holder {
    public:
        holder() noexcept = default;
        explicit holder(gate& g) : _g(&g) { g.enter(); }
        holder(holder&& o) noexcept : _g(std::exchange(o._g, nullptr)) {}
        holder& operator=(holder&& o) noexcept {
            if (this != &o) {
                release();
                _g = std::exchange(o._g, nullptr);
            }
            return *this;
        }
        ~holder() { release(); }
        void release() noexcept {
            if (auto* g = std::exchange(_g, nullptr)) {
                g->leave();
            }
        }
    private:
        gate* _g = nullptr;
    };
    holder hold() { return holder(*this); }

private:
    struct closer_awaiter {
        gate& g;
        bool await_ready() const noexcept { return g._count == 0; }
        void await_suspend(std::coroutine_handle<> h) noexcept { g._closer = h; }
        void await_resume() const noexcept {}
    };
    size_t _count = 0;
    bool _closed = false;
    std::coroutine_handle<> _closer;
};

// Runs fn() inside the gate.
template <typename Func>
futurize_result_t<Func> with_gate(gate& g, Func fn) {
    auto h = g.hold();
    co_return co_await futurize_invoke(fn);
}

} // namespace reef
