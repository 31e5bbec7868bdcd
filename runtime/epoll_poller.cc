// Socket readiness and the doorbell for the epoll-based backends. See epoll_poller.hh.
#include "runtime/epoll_poller.hh"

#include <algorithm>
#include <cerrno>
#include <netinet/in.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <system_error>
#include <unistd.h>

namespace reef::internal {

namespace {

// epoll_event.data values that are not socket fds.
constexpr uint64_t doorbell_tag = ~uint64_t(0);
constexpr uint64_t watched_tag = ~uint64_t(0) - 1;

[[noreturn]] void throw_errno(int err, const char* what) {
    throw std::system_error(err, std::system_category(), what);
}

} // namespace

epoll_poller::epoll_poller() {
    _epfd = epoll_create1(EPOLL_CLOEXEC);
    if (_epfd < 0) {
        throw_errno(errno, "epoll_create1");
    }
    _doorbell = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (_doorbell < 0) {
        int e = errno;
        ::close(_epfd);
        throw_errno(e, "eventfd (epoll doorbell)");
    }
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = doorbell_tag;
    if (epoll_ctl(_epfd, EPOLL_CTL_ADD, _doorbell, &ev) < 0) {
        int e = errno;
        ::close(_doorbell);
        ::close(_epfd);
        throw_errno(e, "epoll_ctl(ADD doorbell)");
    }
}

epoll_poller::~epoll_poller() {
    ::close(_doorbell);
    ::close(_epfd);
}

void epoll_poller::watch(int fd) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = watched_tag;
    if (epoll_ctl(_epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
        throw_errno(errno, "epoll_ctl(ADD completion eventfd)");
    }
}

epoll_poller::fd_state& epoll_poller::state(int fd) {
    if (size_t(fd) >= _fds.size()) {
        _fds.resize(std::max<size_t>(size_t(fd) + 1, _fds.size() * 2));
    }
    return _fds[fd];
}

void epoll_poller::accept(int fd, io_completion* c) {
    start(fd, pending_op{c, op_kind::accept, nullptr, 0}, false);
}

void epoll_poller::recv(int fd, void* buf, size_t len, io_completion* c) {
    start(fd, pending_op{c, op_kind::recv, buf, len}, false);
}

void epoll_poller::send(int fd, const void* buf, size_t len, io_completion* c) {
    start(fd, pending_op{c, op_kind::send, const_cast<void*>(buf), len}, true);
}

void epoll_poller::connect(int fd, const sockaddr* addr, socklen_t len, io_completion* c) {
    int r;
    do {
        r = ::connect(fd, addr, len);
    } while (r < 0 && errno == EINTR);
    if (r == 0) {
        complete_later(c, 0);
        return;
    }
    if (errno != EINPROGRESS) {
        complete_later(c, -errno);
        return;
    }
    // The address is needed no more: completion is read from SO_ERROR.
    auto& s = state(fd);
    if (s.out.c) {
        complete_later(c, -EBUSY);
        return;
    }
    s.out = pending_op{c, op_kind::connect, nullptr, 0};
    ++_waiting_ops;
    update_interest(fd, s);
}

void epoll_poller::start(int fd, pending_op op, bool is_out) {
    if (fd < 0) {
        complete_later(op.c, -EBADF);
        return;
    }
    auto& s = state(fd);
    pending_op& slot = is_out ? s.out : s.in;
    if (slot.c) {
        // A second reader (or writer) on one fd would steal the first one's
        // readiness; the socket layer never does this.
        complete_later(op.c, -EBUSY);
        return;
    }
    if (auto r = attempt(fd, op)) {
        complete_later(op.c, *r);
        return;
    }
    slot = op;
    ++_waiting_ops;
    update_interest(fd, s);
}

std::optional<ssize_t> epoll_poller::attempt(int fd, const pending_op& op) {
    for (;;) {
        ssize_t r = 0;
        switch (op.kind) {
        case op_kind::accept:
            r = ::accept4(fd, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
            break;
        case op_kind::recv:
            r = ::recv(fd, op.buf, op.len, 0);
            break;
        case op_kind::send:
            r = ::send(fd, op.buf, op.len, MSG_NOSIGNAL);
            break;
        case op_kind::connect: {
            int err = 0;
            socklen_t len = sizeof(err);
            if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0) {
                return -errno;
            }
            if (err) {
                return -err;
            }
            // No error may also mean "not finished yet" (a stale event).
            sockaddr_storage peer;
            socklen_t plen = sizeof(peer);
            if (getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &plen) == 0) {
                return 0;
            }
            if (errno == ENOTCONN) {
                return std::nullopt;
            }
            return -errno;
        }
        }
        if (r >= 0) {
            return r;
        }
        if (errno == EINTR) {
            continue;
        }
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            return std::nullopt;
        }
        return -errno;
    }
}

void epoll_poller::update_interest(int fd, fd_state& s) {
    uint32_t want = (s.in.c ? uint32_t(EPOLLIN) : 0u) | (s.out.c ? uint32_t(EPOLLOUT) : 0u);
    if (want == s.armed) {
        return;
    }
    epoll_event ev{};
    ev.data.u64 = uint64_t(fd);
    int r;
    if (want == 0) {
        r = epoll_ctl(_epfd, EPOLL_CTL_DEL, fd, &ev);
        s.registered = false;
        s.armed = 0;
        // ENOENT/EBADF: the fd was closed, which removed it already.
        (void)r;
        return;
    }
    ev.events = want | EPOLLONESHOT;
    // The "registered" belief goes stale when an fd is closed (the kernel
    // drops it from the set) and its number reused, hence the fallbacks.
    if (s.registered) {
        r = epoll_ctl(_epfd, EPOLL_CTL_MOD, fd, &ev);
        if (r < 0 && errno == ENOENT) {
            r = epoll_ctl(_epfd, EPOLL_CTL_ADD, fd, &ev);
        }
    } else {
        r = epoll_ctl(_epfd, EPOLL_CTL_ADD, fd, &ev);
        if (r < 0 && errno == EEXIST) {
            r = epoll_ctl(_epfd, EPOLL_CTL_MOD, fd, &ev);
        }
    }
    if (r == 0) {
        s.registered = true;
        s.armed = want;
        return;
    }
    // The fd cannot be polled (EPERM for a regular file, EBADF): its
    // operations fail with that error instead of waiting forever.
    int err = errno;
    s.registered = false;
    s.armed = 0;
    for (pending_op* op : {&s.in, &s.out}) {
        if (op->c) {
            complete_later(op->c, -err);
            op->c = nullptr;
            --_waiting_ops;
        }
    }
}

bool epoll_poller::cancel(io_completion* c) {
    for (size_t fd = 0; fd < _fds.size(); ++fd) {
        auto& s = _fds[fd];
        for (pending_op* op : {&s.in, &s.out}) {
            if (op->c == c) {
                op->c = nullptr;
                --_waiting_ops;
                update_interest(int(fd), s);
                complete_later(c, -ECANCELED);
                return true;
            }
        }
    }
    return false;
}

void epoll_poller::complete_later(io_completion* c, ssize_t result) {
    _ready.emplace_back(c, result);
}

void epoll_poller::handle_event(int fd, uint32_t events) {
    if (size_t(fd) >= _fds.size()) {
        return;
    }
    auto& s = _fds[fd];
    // The event disarmed the oneshot registration.
    s.armed = 0;
    bool failed = events & (EPOLLERR | EPOLLHUP);
    bool readable = failed || (events & EPOLLIN);
    bool writable = failed || (events & EPOLLOUT);
    if (s.in.c && readable) {
        if (auto r = attempt(fd, s.in)) {
            complete_later(s.in.c, *r);
            s.in.c = nullptr;
            --_waiting_ops;
        }
    }
    if (s.out.c && writable) {
        if (auto r = attempt(fd, s.out)) {
            complete_later(s.out.c, *r);
            s.out.c = nullptr;
            --_waiting_ops;
        }
    }
    update_interest(fd, s);
}

void epoll_poller::process_events(const epoll_event* ev, int n) {
    for (int i = 0; i < n; ++i) {
        uint64_t tag = ev[i].data.u64;
        if (tag == doorbell_tag) {
            drain(_doorbell);
        } else if (tag != watched_tag) {
            handle_event(int(tag), ev[i].events);
        }
    }
}

bool epoll_poller::poll() {
    if (_waited_events > 0) {
        int n = std::exchange(_waited_events, 0);
        process_events(_events.data(), n);
    } else if (_waiting_ops > 0) {
        int n = epoll_wait(_epfd, _events.data(), int(_events.size()), 0);
        if (n > 0) {
            process_events(_events.data(), n);
        }
    }
    if (_ready.empty()) {
        return false;
    }
    // A completion may start new operations whose results land in _ready;
    // they wait for the next poll() so one call cannot loop forever.
    _delivering.swap(_ready);
    for (auto& [c, r] : _delivering) {
        c->complete(r);
    }
    _delivering.clear();
    return true;
}

void epoll_poller::wait(std::optional<std::chrono::nanoseconds> timeout) {
    if (has_ready()) {
        return;
    }
    int n;
    if (_have_pwait2) {
        timespec ts{};
        if (timeout) {
            ts.tv_sec = timeout->count() / 1'000'000'000;
            ts.tv_nsec = timeout->count() % 1'000'000'000;
        }
        n = epoll_pwait2(_epfd, _events.data(), int(_events.size()), timeout ? &ts : nullptr, nullptr);
        if (n < 0 && errno == ENOSYS) {
            // Kernels before 5.11 or a seccomp filter: milliseconds it is.
            _have_pwait2 = false;
        }
    }
    if (!_have_pwait2) {
        int ms = -1;
        if (timeout) {
            // Rounded up, so a timer is never woken for early.
            auto m = (timeout->count() + 999'999) / 1'000'000;
            ms = int(std::min<int64_t>(m, 1'000'000'000));
        }
        n = epoll_wait(_epfd, _events.data(), int(_events.size()), ms);
    }
    if (n < 0) {
        if (errno == EINTR) {
            return;
        }
        throw_errno(errno, "epoll_wait");
    }
    _waited_events = n;
}

void epoll_poller::wake() noexcept {
    uint64_t one = 1;
    // A full counter (EAGAIN) already means "wake up".
    [[maybe_unused]] auto r = ::write(_doorbell, &one, sizeof(one));
}

void epoll_poller::drain(int fd) noexcept {
    uint64_t v;
    [[maybe_unused]] auto r = ::read(fd, &v, sizeof(v));
}

} // namespace reef::internal
