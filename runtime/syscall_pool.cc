// Helper threads for blocking file syscalls. See syscall_pool.hh.
#include "runtime/syscall_pool.hh"

#include <algorithm>
#include <cerrno>
#include <pthread.h>
#include <signal.h>
#include <string>
#include <sys/eventfd.h>
#include <system_error>
#include <unistd.h>

namespace reef::internal {

syscall_pool::syscall_pool(unsigned threads, const char* name) {
    _notifier = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (_notifier < 0) {
        throw std::system_error(errno, std::system_category(), "eventfd (syscall pool notifier)");
    }
    // Signals belong to the shard threads; helpers must never take them.
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    try {
        for (unsigned i = 0; i < threads; ++i) {
            _threads.emplace_back([this, i, name] { worker(i, name); });
        }
    } catch (...) {
        pthread_sigmask(SIG_SETMASK, &old, nullptr);
        stop();
        throw;
    }
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

syscall_pool::~syscall_pool() { stop(); }

void syscall_pool::stop() noexcept {
    {
        std::lock_guard lk(_jobs_mutex);
        _stopping = true;
    }
    _jobs_cv.notify_all();
    for (auto& t : _threads) {
        t.join();
    }
    ::close(_notifier);
}

void syscall_pool::drain_notifier() noexcept {
    uint64_t v;
    [[maybe_unused]] auto r = ::read(_notifier, &v, sizeof(v));
}

void syscall_pool::read(int fd, uint64_t pos, void* buf, size_t len, io_completion* c) {
    submit(job{c, op_kind::read, fd, pos, buf, len});
}

void syscall_pool::write(int fd, uint64_t pos, const void* buf, size_t len, io_completion* c) {
    submit(job{c, op_kind::write, fd, pos, const_cast<void*>(buf), len});
}

void syscall_pool::fdatasync(int fd, io_completion* c) {
    submit(job{c, op_kind::fdatasync, fd, 0, nullptr, 0});
}

void syscall_pool::submit(const job& j) {
    {
        std::lock_guard lk(_jobs_mutex);
        _jobs.push_back(j);
    }
    _jobs_cv.notify_one();
}

bool syscall_pool::cancel(io_completion* c) {
    std::lock_guard lk(_jobs_mutex);
    auto it = std::find_if(_jobs.begin(), _jobs.end(), [c](const job& j) { return j.c == c; });
    if (it == _jobs.end()) {
        return false;
    }
    _jobs.erase(it);
    return true;
}

ssize_t syscall_pool::execute(const job& j) noexcept {
    for (;;) {
        ssize_t r = 0;
        switch (j.kind) {
        case op_kind::read:
            r = ::pread(j.fd, j.buf, j.len, off_t(j.pos));
            break;
        case op_kind::write:
            r = ::pwrite(j.fd, j.buf, j.len, off_t(j.pos));
            break;
        case op_kind::fdatasync:
            r = ::fdatasync(j.fd);
            break;
        }
        if (r >= 0) {
            return r;
        }
        if (errno != EINTR) {
            return -errno;
        }
    }
}

void syscall_pool::worker(unsigned index, const char* name) {
    // "name-N" shows in top and gdb; the kernel keeps at most 15 characters.
    std::string tname = std::string(name).substr(0, 12) + "-" + std::to_string(index);
    pthread_setname_np(pthread_self(), tname.c_str());
    for (;;) {
        job j;
        {
            std::unique_lock lk(_jobs_mutex);
            _jobs_cv.wait(lk, [this] { return _stopping || !_jobs.empty(); });
            if (_stopping) {
                return;
            }
            j = _jobs.front();
            _jobs.pop_front();
        }
        ssize_t r = execute(j);
        bool was_empty;
        {
            std::lock_guard lk(_done_mutex);
            was_empty = _done.empty();
            _done.emplace_back(j.c, r);
            _has_done.store(true, std::memory_order_release);
        }
        // One ring per batch: while _done is non-empty the shard has been
        // told already and will take the whole batch at once.
        if (was_empty) {
            uint64_t one = 1;
            [[maybe_unused]] auto w = ::write(_notifier, &one, sizeof(one));
        }
    }
}

bool syscall_pool::poll() {
    if (!_has_done.load(std::memory_order_acquire)) {
        return false;
    }
    {
        std::lock_guard lk(_done_mutex);
        _delivering.swap(_done);
        _has_done.store(false, std::memory_order_relaxed);
    }
    for (auto& [c, r] : _delivering) {
        c->complete(r);
    }
    bool any = !_delivering.empty();
    _delivering.clear();
    return any;
}

} // namespace reef::internal
