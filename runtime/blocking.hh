// run_blocking: runs a blocking call (open, fstat, rename, fsync of a directory)
// on a helper thread of this shard and resumes the caller on the shard with its result.
#pragma once

#include "runtime/future.hh"
#include "runtime/reactor.hh"

#include <condition_variable>
#include <coroutine>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace reef {

namespace internal {

// One job handed to the helper thread: run() there, resume() back on the shard.
struct blocking_job {
    std::function<void()> run;
    std::coroutine_handle<> waiter;
};

// Per-shard helper thread, started on first use. The reactor polls it.
class blocking_executor {
public:
    explicit blocking_executor(reactor& r) : _reactor(r) {}
    blocking_executor(const blocking_executor&) = delete;
    ~blocking_executor();

    void submit(blocking_job* job);
    // Resumes the coroutines whose jobs finished; true if any.
    bool poll();
    bool has_finished() const noexcept { return _has_done.load(std::memory_order_acquire); }

private:
    void worker();

    reactor& _reactor;
    std::mutex _mutex;
    std::condition_variable _cv;
    std::deque<blocking_job*> _queue;
    std::vector<blocking_job*> _done;
    std::vector<blocking_job*> _delivering;
    std::atomic<bool> _has_done{false};
    bool _stopping = false;
    std::optional<std::thread> _thread;
};

blocking_executor& local_blocking_executor();

} // namespace internal

// Runs fn() on this shard's helper thread (so the loop never blocks on it)
// and returns its result or rethrows its exception on the shard. fn must not
// touch shard-local state: it runs on another thread.
template <typename Func>
auto run_blocking(Func fn) -> future<std::invoke_result_t<Func>> {
    using T = std::invoke_result_t<Func>;
    std::optional<internal::stored_t<T>> result;
    std::exception_ptr error;
    internal::blocking_job job;
    job.run = [&] {
        try {
            if constexpr (std::is_void_v<T>) {
                fn();
                result.emplace();
            } else {
                result.emplace(fn());
            }
        } catch (...) {
            error = std::current_exception();
        }
    };
    struct awaiter {
        internal::blocking_job& job;
        bool await_ready() const noexcept { return false; }
        void await_suspend(std::coroutine_handle<> h) {
            job.waiter = h;
            internal::local_blocking_executor().submit(&job);
        }
        void await_resume() const noexcept {}
    };
    co_await awaiter{job};
    if (error) {
        std::rethrow_exception(error);
    }
    if constexpr (!std::is_void_v<T>) {
        co_return std::move(*result);
    }
}

} // namespace reef
