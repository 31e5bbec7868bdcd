// abort_source: a one-shot "stop now" signal with subscribers (cancellation).
// Subscriptions unlink themselves when destroyed; shard-local, not thread-safe.
#pragma once

#include <exception>
#include <functional>
#include <optional>
#include <stdexcept>
#include <utility>

namespace reef {

class abort_requested_exception : public std::runtime_error {
public:
    abort_requested_exception() : std::runtime_error("abort requested") {}
};

class abort_source {
public:
    class subscription {
    public:
        subscription() noexcept = default;
        subscription(subscription&& o) noexcept { take(o); }
        subscription& operator=(subscription&& o) noexcept {
            if (this != &o) {
                unlink();
                take(o);
            }
            return *this;
        }
        ~subscription() { unlink(); }
        explicit operator bool() const noexcept { return _src != nullptr; }
    private:
        friend class abort_source;
        subscription(abort_source& src, std::function<void()> cb) : _src(&src), _cb(std::move(cb)) {
            _prev = src._tail;
            (_prev ? _prev->_next : src._head) = this;
            src._tail = this;
        }
        void unlink() noexcept {
            if (!_src) {
                return;
            }
            (_prev ? _prev->_next : _src->_head) = _next;
            (_next ? _next->_prev : _src->_tail) = _prev;
            _src = nullptr;
            _prev = _next = nullptr;
        }
        void take(subscription& o) noexcept {
            _src = std::exchange(o._src, nullptr);
            _cb = std::move(o._cb);
            _prev = std::exchange(o._prev, nullptr);
            _next = std::exchange(o._next, nullptr);
            if (_src) {
                (_prev ? _prev->_next : _src->_head) = this;
                (_next ? _next->_prev : _src->_tail) = this;
            }
        }
        abort_source* _src = nullptr;
        std::function<void()> _cb;
        subscription* _prev = nullptr;
        subscription* _next = nullptr;
    };

    abort_source() = default;
    abort_source(const abort_source&) = delete;
    ~abort_source() {
        while (_head) {
            _head->unlink();
        }
    }

    // Runs cb when abort is requested. Returns nothing (an empty optional)
    // if it already was: the caller must act at once.
    std::optional<subscription> subscribe(std::function<void()> cb) {
        if (_requested) {
            return std::nullopt;
        }
        return subscription(*this, std::move(cb));
    }

    // Runs every subscriber once, in subscription order; later calls do nothing.
    void request_abort(std::exception_ptr ex = nullptr) noexcept {
        if (_requested) {
            return;
        }
        _requested = true;
        _ex = ex ? ex : std::make_exception_ptr(abort_requested_exception());
        while (_head) {
            subscription* s = _head;
            auto cb = std::move(s->_cb);
            s->unlink();
            cb();
        }
    }
    bool abort_requested() const noexcept { return _requested; }
    void check() const {
        if (_requested) {
            std::rethrow_exception(_ex);
        }
    }
    std::exception_ptr abort_exception() const noexcept { return _ex; }

private:
    bool _requested = false;
    std::exception_ptr _ex;
    subscription* _head = nullptr;
    subscription* _tail = nullptr;
};

} // namespace reef
