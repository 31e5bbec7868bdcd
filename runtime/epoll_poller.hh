// epoll_poller: stream-socket operations by readiness, a wake-up doorbell and a deferred-completion list, for the libaio and pread backends.
// Single shard thread except wake(); every operation completes exactly once, from poll(), never inside the call that started it.
#pragma once

#include "runtime/io_backend.hh"

#include <array>
#include <chrono>
#include <cstdint>
#include <optional>
#include <sys/epoll.h>
#include <utility>
#include <vector>

namespace reef::internal {

class epoll_poller {
public:
    epoll_poller();
    epoll_poller(const epoll_poller&) = delete;
    epoll_poller& operator=(const epoll_poller&) = delete;
    ~epoll_poller();

    // Makes wait() return when fd (an eventfd its owner drains) is readable.
    void watch(int fd);

    // Nonblocking fds: the syscall is tried at once; on EAGAIN the fd is
    // armed (EPOLLONESHOT) and the syscall retried when it is ready.
    void accept(int fd, io_completion* c);
    void connect(int fd, const sockaddr* addr, socklen_t len, io_completion* c);
    void recv(int fd, void* buf, size_t len, io_completion* c);
    void send(int fd, const void* buf, size_t len, io_completion* c);
    // Completes a socket operation waiting here with -ECANCELED and drops its
    // interest. Returns false if c is not waiting here.
    bool cancel(io_completion* c);

    // Hands result to c at the next poll().
    void complete_later(io_completion* c, ssize_t result);

    // Retries operations whose fds are ready and delivers every finished
    // completion, without blocking. Returns true if it delivered any.
    bool poll();
    // True if poll() would deliver something without any fd becoming ready.
    bool has_ready() const noexcept { return !_ready.empty() || _waited_events > 0; }
    // Sleeps until a socket or watched fd is ready, wake(), or the timeout.
    void wait(std::optional<std::chrono::nanoseconds> timeout);
    // Thread-safe.
    void wake() noexcept;

private:
    enum class op_kind : uint8_t { accept, connect, recv, send };
    struct pending_op {
        io_completion* c = nullptr;
        op_kind kind = op_kind::recv;
        void* buf = nullptr;
        size_t len = 0;
    };
    // At most one reader (accept, recv) and one writer (connect, send) per
    // fd, since an fd can be in an epoll set only once.
    struct fd_state {
        pending_op in;
        pending_op out;
        uint32_t armed = 0;       // events armed now (oneshot: 0 after firing)
        bool registered = false;  // believed to be in the epoll set
    };

    fd_state& state(int fd);
    void start(int fd, pending_op op, bool is_out);
    // Runs op's syscall once; returns nullopt if it would block.
    std::optional<ssize_t> attempt(int fd, const pending_op& op);
    // Makes the armed interest of fd match its pending operations.
    void update_interest(int fd, fd_state& s);
    void process_events(const epoll_event* ev, int n);
    void handle_event(int fd, uint32_t events);
    void drain(int fd) noexcept;

    int _epfd = -1;
    int _doorbell = -1;
    std::vector<fd_state> _fds;
    unsigned _waiting_ops = 0;  // socket operations parked on readiness
    std::vector<std::pair<io_completion*, ssize_t>> _ready;
    std::vector<std::pair<io_completion*, ssize_t>> _delivering;
    // Events wait() collected, processed by the next poll().
    std::array<epoll_event, 128> _events{};
    int _waited_events = 0;
    bool _have_pwait2 = true;
};

} // namespace reef::internal
