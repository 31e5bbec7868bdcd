// The pread backend, for kernels that allow neither io_uring nor libaio: a few
// helper threads per shard run pread/pwrite/fdatasync; sockets by epoll readiness.
#include "runtime/backends.hh"
#include "runtime/epoll_poller.hh"
#include "runtime/syscall_pool.hh"

#include <cerrno>
#include <cstdint>

namespace reef::internal {

namespace {

// Two threads keep one slow request (a cold read, an fdatasync) from holding
// up every other file operation of the shard, without crowding the cores the
// shards themselves run on.
constexpr unsigned pread_threads = 2;

class pread_backend final : public io_backend {
public:
    // queue_depth does not bound anything here: jobs queue without limit
    // and the threads take them in order.
    explicit pread_backend(unsigned) : _pool(pread_threads, "reef-pread") { _poller.watch(_pool.notifier()); }

    io_backend_kind kind() const noexcept override { return io_backend_kind::pread; }

    void read(int fd, uint64_t pos, void* buf, size_t len, io_completion* c) override {
        _pool.read(fd, pos, buf, len, c);
    }
    void write(int fd, uint64_t pos, const void* buf, size_t len, io_completion* c) override {
        _pool.write(fd, pos, buf, len, c);
    }
    void fdatasync(int fd, io_completion* c) override { _pool.fdatasync(fd, c); }

    void accept(int fd, io_completion* c) override { _poller.accept(fd, c); }
    void connect(int fd, const sockaddr* addr, socklen_t len, io_completion* c) override {
        _poller.connect(fd, addr, len, c);
    }
    void recv(int fd, void* buf, size_t len, io_completion* c) override { _poller.recv(fd, buf, len, c); }
    void send(int fd, const void* buf, size_t len, io_completion* c) override { _poller.send(fd, buf, len, c); }

    void cancel(io_completion* c) override {
        if (_poller.cancel(c)) {
            return;
        }
        // A file job no thread has picked up yet can still be withdrawn.
        if (_pool.cancel(c)) {
            _poller.complete_later(c, -ECANCELED);
        }
    }

    bool poll() override {
        bool delivered = _pool.poll();
        delivered |= _poller.poll();
        return delivered;
    }

    void wait(std::optional<std::chrono::nanoseconds> timeout) override {
        // Drained before looking, so a job finishing after the look rings
        // the eventfd again and ends the epoll_wait.
        _pool.drain_notifier();
        if (_pool.has_completions()) {
            return;
        }
        _poller.wait(timeout);
    }

    void wake() noexcept override { _poller.wake(); }

private:
    // Declared first, destroyed last: the pool's threads are joined while
    // the epoll set still watches their eventfd.
    epoll_poller _poller;
    syscall_pool _pool;
};

} // namespace

std::unique_ptr<io_backend> make_pread_backend(unsigned queue_depth) {
    return std::make_unique<pread_backend>(queue_depth);
}

} // namespace reef::internal
