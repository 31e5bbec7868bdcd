// The per-shard event loop. See reactor.hh for the contract.
#include "runtime/reactor.hh"

#include "runtime/blocking.hh"
#include "runtime/log.hh"
#include "runtime/metrics.hh"
#include "runtime/scheduling.hh"
#include "runtime/smp.hh"

#include <algorithm>
#include <ctime>
#include <exception>

namespace reef {

namespace {
logger rlog("runtime");
}

void internal::report_detached_exception(std::exception_ptr ex) noexcept {
    // A background coroutine has nobody to hand its failure to; losing it
    // silently would hide bugs, so it is logged with the shard that ran it.
    try {
        std::rethrow_exception(ex);
    } catch (const std::exception& e) {
        rlog.error("background task failed: {}", e.what());
    } catch (...) {
        rlog.error("background task failed: unknown exception");
    }
}

void reactor::task_queue::push_back(std::coroutine_handle<> h) noexcept {
    if (_tail - _head == _items.size()) [[unlikely]] {
        grow();
    }
    _items[_tail++ & _mask] = h;
}

void reactor::task_queue::grow() {
    std::vector<std::coroutine_handle<>> bigger(_items.size() * 2);
    size_t n = size();
    for (size_t i = 0; i < n; ++i) {
        bigger[i] = _items[(_head + i) & _mask];
    }
    _items = std::move(bigger);
    _mask = _items.size() - 1;
    _head = 0;
    _tail = n;
}

reactor::reactor(shard_id id, std::unique_ptr<io_backend> backend, reactor_config cfg)
    : _id(id), _backend(std::move(backend)), _blocking(std::make_unique<internal::blocking_executor>(*this)),
      _cfg(cfg) {}

internal::blocking_executor& internal::local_blocking_executor() { return *engine()._blocking; }

reactor::~reactor() { restore_signals(); }

// future.hh's final_suspend (debug builds) calls internal::schedule from translation units that do not see its
// inline definition; taking its address here keeps an out-of-line copy for them (clang inlines every other use).
extern void (*const keep_schedule)(std::coroutine_handle<>) noexcept;
void (*const keep_schedule)(std::coroutine_handle<>) noexcept = &internal::schedule;

namespace {

// Debug builds: where tasks start on this thread's stack (see internal::debug_stack_deep).
inline void note_task_stack_base() noexcept {
#ifdef REEF_DEBUG
    internal::debug_task_stack_base = static_cast<const char*>(__builtin_frame_address(0));
#endif
}

} // namespace

void reactor::run_tasks() {
    _preempt_at = steady_clock_type::now() + _cfg.task_quota;
    // Only the tasks queued before this round: a task that keeps yielding
    // must not starve I/O and cross-shard polling for a whole task quota.
    size_t n = _run_queue.size();
    for (size_t i = 1; i <= n; ++i) {
        auto h = _run_queue.pop_front();
        note_task_stack_base();
        h.resume();
        ++_tasks_processed;
        // Reading the clock per task would cost as much as a small task.
        if ((i & 15) == 0 && need_preempt()) {
            break;
        }
    }
    run_background_tasks();
}

namespace {
// The shard's background shares (scheduling.hh); 0: not set, the reactor_config's (background_shares_default).
thread_local unsigned background_shares_set = 0;
thread_local unsigned background_shares_default = 125;
// The background class's credit: the thread's CPU time outside its rounds adds shares / 1000 of itself (up to twice
// what a task quota earns, and two quotas at least), a round run while the foreground had work ready lasts the credit
// and takes its CPU time off. A round may outrun its credit (a task runs to its next suspension): the debt is paid
// back, so that the shares hold whatever the length of the steps; a round cut short (its tasks wait for I/O) keeps
// the rest, so that the class resumes at once when its I/O completes. CPU time, not wall time: a thread the kernel
// deschedules (a loaded machine) would otherwise charge the wait to whichever class was running.
thread_local steady_clock_type::duration background_credit{};
thread_local steady_clock_type::duration credit_cpu_at{};

steady_clock_type::duration thread_cpu_time() noexcept {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec);
}
}

void set_background_shares(unsigned shares) noexcept {
    background_shares_set = std::clamp(shares, 1u, 100000u);
}

unsigned background_shares() noexcept {
    return background_shares_set ? background_shares_set : background_shares_default;
}

void reactor::run_background_tasks() {
    if (_background_queue.empty()) {
        return;  // the credit is brought up to date when it fills (capped: what it missed while empty is lost)
    }
    auto cpu = thread_cpu_time();
    auto quota = std::chrono::duration_cast<steady_clock_type::duration>(_cfg.background_quota);
    // The cap lets a round match what a full task quota of foreground earned it: with one quota a round, the class
    // could never have more than quota / (task_quota + quota) of the time, whatever its shares.
    auto shares = background_shares();
    auto task_quota = std::chrono::duration_cast<steady_clock_type::duration>(_cfg.task_quota);
    auto cap = 2 * std::max(quota, task_quota * shares / foreground_shares);
    background_credit = std::min(background_credit + (cpu - credit_cpu_at) * shares / foreground_shares, cap);
    credit_cpu_at = cpu;
    // With foreground work ready, a round once a quota's credit is there, lasting its credit; with none, at once,
    // for a quota.
    bool contended = !_run_queue.empty();
    if (contended && background_credit < quota) {
        return;
    }
    auto now = steady_clock_type::now();
    _preempt_at = now + (contended ? std::max(quota, background_credit) : quota);
    // The whole round, or until no background task is ready: one that yields again (background_yield) runs again
    // in this round, so that the class gets its share of the time and not one step per round.
    internal::in_background_round = true;
    while (!_background_queue.empty()) {
        auto h = _background_queue.pop_front();
        note_task_stack_base();
        h.resume();
        ++_tasks_processed;
        ++_background_tasks_processed;
        if (need_preempt()) {
            break;
        }
    }
    internal::in_background_round = false;
    auto end = thread_cpu_time();
    if (contended) {
        background_credit -= end - cpu;
    }
    credit_cpu_at = end;
}

bool reactor::expire_timers() {
    if (_timers.empty()) {
        return false;
    }
    auto now = steady_clock_type::now();
    bool fired = false;
    while (!_timers.empty() && _timers.begin()->first <= now) {
        timer* t = _timers.begin()->second;
        _timers.erase(_timers.begin());
        t->_armed = false;
        if (t->_period) {
            t->arm(now + *t->_period, t->_period);
        }
        fired = true;
        // The callback may destroy or re-arm t; nothing touches t after it.
        t->_cb();
    }
    return fired;
}

bool reactor::poll_once() {
    bool did = _backend->poll();
    did |= internal::smp_poll(_id);
    did |= _blocking->poll();
    did |= expire_timers();
    did |= poll_signals();
    return did;
}

void reactor::sleep() {
    _sleeping.store(true, std::memory_order_seq_cst);
    // Pairs with the fence in wakeup(): either the sender sees us sleeping
    // and rings the doorbell, or we see its message here and stay awake.
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (!_run_queue.empty() || !_background_queue.empty() || internal::smp_pending(_id) || _blocking->has_finished() || _stopping ||
        _pending_signals.load(std::memory_order_relaxed)) {
        _sleeping.store(false, std::memory_order_relaxed);
        return;
    }
    std::optional<std::chrono::nanoseconds> timeout;
    if (!_timers.empty()) {
        auto left = _timers.begin()->first - steady_clock_type::now();
        timeout = std::max(std::chrono::nanoseconds(0),
                           std::chrono::duration_cast<std::chrono::nanoseconds>(left));
    }
    ++_sleeps;
    _backend->wait(timeout);
    _sleeping.store(false, std::memory_order_relaxed);
}

void reactor::wakeup() noexcept {
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (_sleeping.load(std::memory_order_seq_cst)) {
        _backend->wake();
    }
}

void reactor::run() {
    // Shard state kept per thread: a runtime started again on this thread starts afresh.
    background_shares_set = 0;
    background_credit = {};
    credit_cpu_at = thread_cpu_time();
    background_shares_default = unsigned(std::clamp<int64_t>(
        _cfg.background_quota.count() * foreground_shares / std::max<int64_t>(1, _cfg.background_max_wait.count()), 1,
        100000));
    // Registered here, on the shard's own thread: the registry is per shard.
    metrics::metric_groups metrics;
    metrics.add_group("reactor", {
        metrics::make_counter("tasks_processed", [this] { return _tasks_processed; },
                              metrics::description("coroutines resumed from the run queue")),
        metrics::make_counter("sleeps", [this] { return _sleeps; },
                              metrics::description("times the idle loop slept in its I/O backend")),
        metrics::make_counter("background_tasks_processed", [this] { return _background_tasks_processed; },
                              metrics::description("coroutines resumed from the background class (compaction)")),
        metrics::make_gauge("tasks_pending", [this] { return int64_t(_run_queue.size()); },
                            metrics::description("coroutines waiting on the run queue")),
    });
    // ScyllaDB's reactor names for file I/O (scylla_reactor_aio_*, _fsyncs); the rest has no ScyllaDB name.
    metrics.add_group("reactor", {
        metrics::make_counter("aio_reads", [this] { return _io_stats.reads; }, metrics::description("file reads submitted")),
        metrics::make_counter("aio_writes", [this] { return _io_stats.writes; }, metrics::description("file writes submitted")),
        metrics::make_counter("aio_bytes_read", [this] { return _io_stats.bytes_read; }, metrics::description("bytes read from files")),
        metrics::make_counter("aio_bytes_write", [this] { return _io_stats.bytes_written; },
                              metrics::description("bytes written to files")),
        metrics::make_counter("fsyncs", [this] { return _io_stats.fsyncs; }, metrics::description("fdatasync calls")),
    });
    metrics.add_group("io", {
        metrics::make_counter("reads_blocked", [this] { return _io_stats.reads_blocked; },
                              metrics::description("stream reads that had to wait for the disk")),
        metrics::make_counter("read_ahead_dropped", [this] { return _io_stats.read_ahead_dropped; },
                              metrics::description("read-ahead buffers discarded unused")),
    });
    bool idle = false;
    steady_clock_type::time_point idle_since{};
    while (!_stopping) {
        run_tasks();
        if (poll_once() || !_run_queue.empty() || !_background_queue.empty()) {
            idle = false;
            continue;
        }
        auto now = steady_clock_type::now();
        if (!idle) {
            idle = true;
            idle_since = now;
        } else if (now - idle_since >= _cfg.idle_poll_time) {
            sleep();
            idle = false;
        }
    }
    // Replies still parked in overflow lists (a full ring) must reach their
    // shards, or a caller waiting on this shard would wait forever.
    internal::smp_drain_outgoing(_id);
    // File I/O still in flight (a stream destroyed with read-ahead pending)
    // writes into this shard's buffers and frees them on completion: let it
    // finish before the backend goes away.
    auto give_up = steady_clock_type::now() + std::chrono::seconds(30);
    while (_io_stats.in_flight && steady_clock_type::now() < give_up) {
        if (!_backend->poll()) {
            _backend->wait(std::chrono::milliseconds(1));
        }
    }
    if (_io_stats.in_flight) {
        rlog.error("shard stopped with {} file operations still in flight", _io_stats.in_flight);
    }
}

void timer::arm(clock::time_point when, std::optional<clock::duration> period) {
    cancel();
    _when = when;
    _period = period;
    _armed = true;
    _pos = engine()._timers.emplace(when, this);
}

bool timer::cancel() noexcept {
    if (!_armed) {
        return false;
    }
    engine()._timers.erase(_pos);
    _armed = false;
    return true;
}

namespace {
struct sleep_awaiter {
    steady_clock_type::duration d;
    timer t;
    bool await_ready() const noexcept { return d <= steady_clock_type::duration::zero(); }
    void await_suspend(std::coroutine_handle<> h) {
        t.set_callback([h] { internal::schedule(h); });
        t.arm(d);
    }
    void await_resume() const noexcept {}
};
}

future<> sleep(steady_clock_type::duration d) {
    // A named awaiter: GCC 12 may destroy a non-trivial temporary awaiter twice.
    sleep_awaiter aw{d, {}};
    co_await aw;
}

} // namespace reef
