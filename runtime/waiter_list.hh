// An intrusive FIFO of suspended coroutines, each node living in its awaiter.
// Used by semaphore and condition_variable; removal is O(1) (for timeouts).
#pragma once

#include "runtime/future.hh"

#include <exception>

namespace reef::internal {

struct waiter {
    waiter* prev = nullptr;
    waiter* next = nullptr;
    parked_task task;
    std::exception_ptr error;  // set when the wait fails (timeout, broken)
    bool linked = false;
};

class waiter_list {
public:
    bool empty() const noexcept { return _head == nullptr; }
    waiter* front() const noexcept { return _head; }
    size_t size() const noexcept { return _size; }

    void push_back(waiter* w) noexcept {
        w->prev = _tail;
        w->next = nullptr;
        (_tail ? _tail->next : _head) = w;
        _tail = w;
        w->linked = true;
        ++_size;
    }
    void remove(waiter* w) noexcept {
        if (!w->linked) {
            return;
        }
        (w->prev ? w->prev->next : _head) = w->next;
        (w->next ? w->next->prev : _tail) = w->prev;
        w->prev = w->next = nullptr;
        w->linked = false;
        --_size;
    }
    waiter* pop_front() noexcept {
        waiter* w = _head;
        remove(w);
        return w;
    }

private:
    waiter* _head = nullptr;
    waiter* _tail = nullptr;
    size_t _size = 0;
};

} // namespace reef::internal
