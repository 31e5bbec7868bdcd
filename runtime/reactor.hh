// reactor: one shard's event loop: a run queue of coroutines, timers, the I/O
// backend and the cross-shard queues. It polls while busy and sleeps when idle.
#pragma once

#include "runtime/future.hh"
#include "runtime/io_backend.hh"
#include "runtime/shard.hh"
#include "runtime/timer.hh"

#include <atomic>
#include <chrono>
#include <coroutine>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <signal.h>
#include <vector>

namespace reef {

namespace internal {
class blocking_executor;
blocking_executor& local_blocking_executor();
}

// Per-shard I/O counters, bumped by the file layer; perf tools read deltas.
struct io_stats {
    uint64_t reads = 0;              // read operations submitted to the backend
    uint64_t writes = 0;             // write operations submitted
    uint64_t bytes_read = 0;
    uint64_t bytes_written = 0;
    uint64_t reads_blocked = 0;      // stream reads that had to wait for the disk
    uint64_t read_ahead_dropped = 0; // read-ahead buffers discarded unused (skip, close)
    uint64_t fsyncs = 0;
    // File operations submitted and not completed yet; a stopping shard
    // waits for them, since their buffers belong to it.
    uint64_t in_flight = 0;
};

struct reactor_config {
    // How long an idle loop keeps polling before it sleeps on the backend.
    std::chrono::microseconds idle_poll_time{100};
    // How long tasks may run before the loop polls I/O again (maybe_yield).
    std::chrono::microseconds task_quota{500};
    // The background class (README, "Scheduling"): its tasks run when no foreground task is ready, and by the
    // credit of its shares (scheduling.hh) otherwise, in rounds of at least background_quota that last the credit.
    // Until its shares are set, they are background_quota * 1000 / background_max_wait: a round this often under a
    // busy foreground.
    std::chrono::microseconds background_max_wait{2000};
    std::chrono::microseconds background_quota{250};
};

class reactor {
public:
    reactor(shard_id id, std::unique_ptr<io_backend> backend, reactor_config cfg);
    reactor(const reactor&) = delete;
    ~reactor();

    shard_id id() const noexcept { return _id; }
    // Runs the loop on the calling thread until stop().
    void run();
    // Ends run() after the current iteration. Only from this shard's thread.
    void stop() noexcept { _stopping = true; }

    void schedule(std::coroutine_handle<> h) noexcept { _run_queue.push_back(h); }
    // Queues h in the background class (background_yield): behind every foreground task.
    void schedule_background(std::coroutine_handle<> h) noexcept { _background_queue.push_back(h); }
    uint64_t background_tasks_processed() const noexcept { return _background_tasks_processed; }
    bool need_preempt() const noexcept { return steady_clock_type::now() >= _preempt_at; }

    io_backend& backend() noexcept { return *_backend; }
    io_stats& io() noexcept { return _io_stats; }
    const io_stats& io() const noexcept { return _io_stats; }
    uint64_t tasks_processed() const noexcept { return _tasks_processed; }
    uint64_t sleeps() const noexcept { return _sleeps; }

    // Thread-safe: wakes this reactor if it sleeps (after a cross-shard push).
    void wakeup() noexcept;

    // Runs handler on this shard's loop (never inside the signal handler) each time signo arrives, as Seastar's
    // engine().handle_signal. A signal is process-wide: the last shard to register it receives it. Replaces an
    // earlier handler of signo; the reactor's destructor puts back the action signo had before. Deliveries that
    // arrive before the loop gets to them coalesce into one call. Throws std::system_error if sigaction fails.
    void handle_signal(int signo, std::function<void()> handler);

private:
    friend class timer;
    class task_queue {
    public:
        bool empty() const noexcept { return _head == _tail; }
        size_t size() const noexcept { return _tail - _head; }
        void push_back(std::coroutine_handle<> h) noexcept;
        std::coroutine_handle<> pop_front() noexcept { return _items[_head++ & _mask]; }
    private:
        void grow();
        std::vector<std::coroutine_handle<>> _items = std::vector<std::coroutine_handle<>>(1024);
        size_t _mask = 1023;
        size_t _head = 0;
        size_t _tail = 0;
    };

    void run_tasks();
    void run_background_tasks();
    bool expire_timers();
    bool poll_signals();
    // The sigaction handler: marks signo pending on the reactor that owns it and wakes that reactor.
    static void on_signal(int signo) noexcept;
    void restore_signals() noexcept;
    bool poll_once();
    void sleep();

    friend internal::blocking_executor& internal::local_blocking_executor();

    shard_id _id;
    std::unique_ptr<io_backend> _backend;
    std::unique_ptr<internal::blocking_executor> _blocking;
    reactor_config _cfg;
    task_queue _run_queue;
    task_queue _background_queue;
    uint64_t _background_tasks_processed = 0;
    std::multimap<steady_clock_type::time_point, timer*> _timers;
    io_stats _io_stats;
    steady_clock_type::time_point _preempt_at{};
    uint64_t _tasks_processed = 0;
    uint64_t _sleeps = 0;
    bool _stopping = false;
    // Signals this reactor registered: handler and the action to put back.
    struct signal_slot {
        std::function<void()> handler;
        struct sigaction previous {};
    };
    std::map<int, std::unique_ptr<signal_slot>> _signal_handlers;
    alignas(64) std::atomic<bool> _sleeping{false};
    // Set by the signal handler (any thread), cleared by poll_signals(): bit signo.
    std::atomic<uint64_t> _pending_signals{0};

};

namespace internal {
inline thread_local reactor* local_reactor = nullptr;
}

// The calling shard's reactor.
inline reactor& engine() noexcept { return *internal::local_reactor; }

inline void internal::schedule(std::coroutine_handle<> h) noexcept { engine().schedule(h); }

// Whether the running task is in the background class (what internal::parked_task records when a task waits).
inline bool running_in_background() noexcept { return internal::in_background_round; }
inline void internal::schedule_in(std::coroutine_handle<> h, bool background) noexcept {
    background ? engine().schedule_background(h) : engine().schedule(h);
}
inline void internal::parked_task::wake() noexcept { schedule_in(handle, background); }

// Suspends the caller and puts it at the back of the run queue.
struct yield_awaiter {
    bool await_ready() const noexcept { return false; }
    void await_suspend(std::coroutine_handle<> h) noexcept { engine().schedule(h); }
    void await_resume() const noexcept {}
};
inline yield_awaiter yield() noexcept { return {}; }

// Yields only when this shard's task quota is used up: cheap to call in loops.
struct maybe_yield_awaiter {
    bool await_ready() const noexcept { return !engine().need_preempt(); }
    void await_suspend(std::coroutine_handle<> h) noexcept { engine().schedule(h); }
    void await_resume() const noexcept {}
};
inline maybe_yield_awaiter maybe_yield() noexcept { return {}; }

// Suspends the caller into the background class (Seastar's scheduling groups, reduced to two): it resumes once no
// foreground task is ready, or when the class's shares have earned it a round (scheduling.hh). Work that must not
// starve the shard's reads (compaction) awaits it between steps, so that its next step, and the I/O that step
// submits, come after what the foreground has ready.
struct background_yield_awaiter {
    bool await_ready() const noexcept { return false; }
    void await_suspend(std::coroutine_handle<> h) noexcept { engine().schedule_background(h); }
    void await_resume() const noexcept {}
};
inline background_yield_awaiter background_yield() noexcept { return {}; }

// Completes after d has passed.
future<> sleep(steady_clock_type::duration d);

} // namespace reef
