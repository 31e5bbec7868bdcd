// syscall_pool: helper threads that run blocking file syscalls (pread, pwrite, fdatasync) for one shard.
// Results come back to the shard through a locked queue plus an eventfd; io_completion::complete() runs only in the shard's poll().
#pragma once

#include "runtime/io_backend.hh"

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace reef::internal {

class syscall_pool {
public:
    // Starts `threads` threads now; the destructor joins them (jobs not yet
    // started are dropped without completing: the shard is going away).
    syscall_pool(unsigned threads, const char* name);
    syscall_pool(const syscall_pool&) = delete;
    syscall_pool& operator=(const syscall_pool&) = delete;
    ~syscall_pool();

    // Readable (EPOLLIN) while finished jobs wait for poll(); drain it with
    // drain_notifier() before checking has_completions(), not after.
    int notifier() const noexcept { return _notifier; }
    void drain_notifier() noexcept;

    void read(int fd, uint64_t pos, void* buf, size_t len, io_completion* c);
    void write(int fd, uint64_t pos, const void* buf, size_t len, io_completion* c);
    void fdatasync(int fd, io_completion* c);
    // Removes a job no thread has started; returns false if there is none
    // for c (running or finished jobs cannot be stopped).
    bool cancel(io_completion* c);

    // Delivers finished jobs; returns true if it delivered any.
    bool poll();
    bool has_completions() const noexcept { return _has_done.load(std::memory_order_acquire); }

private:
    enum class op_kind : uint8_t { read, write, fdatasync };
    struct job {
        io_completion* c;
        op_kind kind;
        int fd;
        uint64_t pos;
        void* buf;
        size_t len;
    };
    void submit(const job& j);
    void worker(unsigned index, const char* name);
    // Joins the threads (jobs not started are dropped) and closes the notifier.
    void stop() noexcept;
    static ssize_t execute(const job& j) noexcept;

    int _notifier = -1;
    std::mutex _jobs_mutex;
    std::condition_variable _jobs_cv;
    std::deque<job> _jobs;
    bool _stopping = false;

    std::mutex _done_mutex;
    std::vector<std::pair<io_completion*, ssize_t>> _done;
    std::vector<std::pair<io_completion*, ssize_t>> _delivering;
    std::atomic<bool> _has_done{false};

    std::vector<std::thread> _threads;
};

} // namespace reef::internal
