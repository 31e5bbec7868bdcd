// reader_permit and reader_concurrency_semaphore. See reader_permit.hh and reader_concurrency_semaphore.hh.
// The permit's state lives here because the two are one mechanism: a permit's death is a semaphore's release.
#include "reader/reader_concurrency_semaphore.hh"
#include "reader/reader_permit.hh"

#include "runtime/reactor.hh"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

namespace reef {

struct reader_permit::impl {
    reader_concurrency_semaphore* sem = nullptr;
    std::string description;
    read_clock::time_point timeout = no_timeout;
    bool admitted = false;
    size_t consumed = 0;
    // The semaphore's list of live permits.
    impl* prev = nullptr;
    impl* next = nullptr;

    impl(std::string d, read_clock::time_point t) : description(std::move(d)), timeout(t) {}
    impl(const impl&) = delete;
    ~impl() {
        if (auto* s = sem) {
            s->detach(this);
            if (admitted) {
                s->release_admission();
            }
            s->release(consumed);
        }
    }

    void consume(size_t n) noexcept {
        consumed += n;
        if (sem) {
            sem->consume(n);
        }
    }
    void release(size_t n) noexcept {
        consumed -= n;
        if (sem) {
            sem->release(n);
        }
    }
};

// ---- reader_permit

reader_permit::reader_permit() : reader_permit(std::string("read")) {}

reader_permit::reader_permit(std::string description, read_clock::time_point timeout)
    : _impl(std::make_shared<impl>(std::move(description), timeout)) {}

const std::string& reader_permit::description() const noexcept { return _impl->description; }
read_clock::time_point reader_permit::timeout() const noexcept { return _impl->timeout; }
void reader_permit::set_timeout(read_clock::time_point t) noexcept { _impl->timeout = t; }

void reader_permit::check_timeout(std::string_view what) const {
    // A read without a deadline does not read the clock (a call per I/O of every read).
    if (_impl->timeout == no_timeout || !timed_out()) {
        return;
    }
    if (_impl->sem) {
        ++_impl->sem->_stats.read_timeouts;
    }
    throw read_timeout_error(fmt::format("read timed out: {}, reading {}", _impl->description, what));
}

reader_permit::resource_units reader_permit::consume_memory(size_t n) { return resource_units(*this, n); }
size_t reader_permit::consumed_memory() const noexcept { return _impl->consumed; }
reader_concurrency_semaphore* reader_permit::semaphore() const noexcept { return _impl->sem; }
bool reader_permit::admitted() const noexcept { return _impl->admitted; }

// ---- resource_units

reader_permit::resource_units::resource_units(reader_permit p, size_t memory) noexcept
    : _permit(std::move(p)), _memory(memory) {
    _permit._impl->consume(memory);
}

reader_permit::resource_units::resource_units(resource_units&& o) noexcept
    : _permit(o._permit), _memory(std::exchange(o._memory, 0)) {}

reader_permit::resource_units& reader_permit::resource_units::operator=(resource_units&& o) noexcept {
    if (this != &o) {
        reset(0);
        _permit = o._permit;
        _memory = std::exchange(o._memory, 0);
    }
    return *this;
}

reader_permit::resource_units::~resource_units() { reset(0); }

void reader_permit::resource_units::reset(size_t n) noexcept {
    if (n > _memory) {
        _permit._impl->consume(n - _memory);
    } else if (n < _memory) {
        _permit._impl->release(_memory - n);
    }
    _memory = n;
}

void reader_permit::resource_units::add(resource_units&& o) {
    if (!(o._permit == _permit)) {
        throw std::invalid_argument("reader_permit::resource_units::add: units of another permit");
    }
    _memory += std::exchange(o._memory, 0);
}

// ---- reader_concurrency_semaphore

struct reader_concurrency_semaphore::admission_waiter : internal::waiter {
    size_t memory = 0;
    std::string description;
    read_clock::time_point timeout = no_timeout;
    std::shared_ptr<reader_permit::impl> permit;  // set when admitted
};

struct reader_concurrency_semaphore::admission_awaiter {
    reader_concurrency_semaphore& sem;
    admission_waiter& w;
    timer t;

    bool await_ready() const noexcept { return false; }
    void await_suspend(std::coroutine_handle<> h) {
        w.task.park(h);
        sem._waiters.push_back(&w);
        if (w.timeout != no_timeout) {
            t.set_callback([this] {
                if (!w.linked) {
                    return;  // admitted (or failed) already; its resumption is scheduled
                }
                sem._waiters.remove(&w);
                ++sem._stats.timed_out;
                w.error = std::make_exception_ptr(reader_admission_timed_out(fmt::format(
                    "reader concurrency semaphore: timed out while waiting for admission (semaphore {}, read {})",
                    sem._name, w.description)));
                w.task.wake();
                // A big request leaving the head may let smaller ones in.
                sem.admit_waiters();
            });
            t.arm(w.timeout);
        }
    }
    void await_resume() {
        t.cancel();
        if (w.error) {
            std::rethrow_exception(w.error);
        }
    }
};

reader_concurrency_semaphore::reader_concurrency_semaphore(size_t count, size_t memory, std::string name,
                                                           size_t max_queue_length)
    : _name(std::move(name)), _initial_count(count), _initial_memory(memory), _max_queue_length(max_queue_length),
      _count(ssize_t(count)), _memory(int64_t(memory)) {}

reader_concurrency_semaphore::~reader_concurrency_semaphore() {
    stop();
    while (auto* p = _permit_list) {
        detach(p);
        p->sem = nullptr;
    }
}

bool reader_concurrency_semaphore::can_admit(size_t memory) const noexcept {
    if (_count < 1) {
        return false;
    }
    if (_memory > 0 && int64_t(memory) <= _memory) {
        return true;
    }
    // Too big for what is free: only alone (memory held by tracking-only permits does not block this, or a
    // request larger than the whole budget would wait forever).
    return active_reads() == 0;
}

std::shared_ptr<reader_permit::impl> reader_concurrency_semaphore::make_permit(std::string description,
                                                                                read_clock::time_point timeout,
                                                                                bool admitted, size_t memory) {
    auto p = std::make_shared<reader_permit::impl>(std::move(description), timeout);
    p->sem = this;
    p->next = _permit_list;
    if (_permit_list) {
        _permit_list->prev = p.get();
    }
    _permit_list = p.get();
    ++_permits;
    ++_stats.permits_created;
    if (admitted) {
        p->admitted = true;
        --_count;
        ++_stats.admitted;
    }
    p->consume(memory);
    return p;
}

future<reader_permit> reader_concurrency_semaphore::obtain_permit(std::string description, size_t memory,
                                                                  read_clock::time_point timeout) {
    if (_stopped) {
        throw reader_semaphore_stopped(fmt::format("reader concurrency semaphore {} is stopped (read {})", _name,
                                                   description));
    }
    if (_waiters.empty() && can_admit(memory)) {
        co_return reader_permit(make_permit(std::move(description), timeout, true, memory));
    }
    if (_waiters.size() >= _max_queue_length) {
        ++_stats.rejected;
        throw reader_queue_overloaded(fmt::format(
            "reader concurrency semaphore: queue overloaded (semaphore {}, {} reads waiting, read {})", _name,
            _waiters.size(), description));
    }
    ++_stats.queued;
    admission_waiter w;
    w.memory = memory;
    w.description = std::move(description);
    w.timeout = timeout;
    // A named awaiter (coroutine rule 3).
    admission_awaiter aw{*this, w, {}};
    co_await aw;
    co_return reader_permit(std::move(w.permit));
}

reader_permit reader_concurrency_semaphore::make_tracking_only_permit(std::string description,
                                                                      read_clock::time_point timeout) {
    return reader_permit(make_permit(std::move(description), timeout, false, 0));
}

void reader_concurrency_semaphore::admit_waiters() noexcept {
    while (!_waiters.empty()) {
        auto* w = static_cast<admission_waiter*>(_waiters.front());
        if (!can_admit(w->memory)) {
            break;
        }
        _waiters.pop_front();
        try {
            w->permit = make_permit(w->description, w->timeout, true, w->memory);
        } catch (...) {
            w->error = std::current_exception();
        }
        w->task.wake();
    }
}

void reader_concurrency_semaphore::stop() noexcept {
    _stopped = true;
    while (!_waiters.empty()) {
        auto* w = static_cast<admission_waiter*>(_waiters.pop_front());
        try {
            w->error = std::make_exception_ptr(reader_semaphore_stopped(fmt::format(
                "reader concurrency semaphore {} was stopped while read {} waited for admission", _name,
                w->description)));
        } catch (...) {
            w->error = std::current_exception();
        }
        w->task.wake();
    }
}

void reader_concurrency_semaphore::consume(size_t n) noexcept {
    _memory -= int64_t(n);
    _stats.peak_memory = std::max<uint64_t>(_stats.peak_memory, uint64_t(std::max<int64_t>(consumed_memory(), 0)));
}

void reader_concurrency_semaphore::release(size_t n) noexcept {
    _memory += int64_t(n);
    admit_waiters();
}

void reader_concurrency_semaphore::release_admission() noexcept { ++_count; }

void reader_concurrency_semaphore::detach(reader_permit::impl* p) noexcept {
    (p->prev ? p->prev->next : _permit_list) = p->next;
    if (p->next) {
        p->next->prev = p->prev;
    }
    p->prev = p->next = nullptr;
    --_permits;
}

} // namespace reef
