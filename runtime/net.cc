// TCP sockets over the shard's io_backend. See net.hh.
#include "runtime/net.hh"

#include "runtime/reactor.hh"

#include <arpa/inet.h>
#include <cerrno>
#include <charconv>
#include <coroutine>
#include <cstring>
#include <fcntl.h>
#include <netinet/tcp.h>
#include <ostream>
#include <stdexcept>
#include <sys/ioctl.h>
#include <system_error>
#include <unistd.h>
#include <vector>

namespace reef {

// ---- socket_address ----

socket_address::socket_address() noexcept {
    std::memset(&_u, 0, sizeof(_u));
    _u.sa.sa_family = AF_UNSPEC;
}

socket_address::socket_address(const sockaddr* sa, socklen_t len) : socket_address() {
    if (sa->sa_family == AF_INET && len >= socklen_t(sizeof(sockaddr_in))) {
        std::memcpy(&_u.in, sa, sizeof(sockaddr_in));
    } else if (sa->sa_family == AF_INET6 && len >= socklen_t(sizeof(sockaddr_in6))) {
        std::memcpy(&_u.in6, sa, sizeof(sockaddr_in6));
    } else {
        throw std::invalid_argument("socket_address: unsupported address family " + std::to_string(sa->sa_family));
    }
}

socket_address::socket_address(std::string_view host, uint16_t port) : socket_address() {
    std::string h(host);
    if (inet_pton(AF_INET, h.c_str(), &_u.in.sin_addr) == 1) {
        _u.in.sin_family = AF_INET;
        _u.in.sin_port = htons(port);
    } else if (inet_pton(AF_INET6, h.c_str(), &_u.in6.sin6_addr) == 1) {
        _u.in6.sin6_family = AF_INET6;
        _u.in6.sin6_port = htons(port);
    } else {
        throw std::invalid_argument("socket_address: '" + h + "' is not a numeric IPv4 or IPv6 address");
    }
}

socket_address socket_address::parse(std::string_view s) {
    auto bad = [&](const char* why) {
        return std::invalid_argument("socket_address: cannot parse '" + std::string(s) + "': " + why);
    };
    std::string_view host, port;
    if (!s.empty() && s.front() == '[') {
        auto close = s.find(']');
        if (close == std::string_view::npos) {
            throw bad("no ']' after an IPv6 address");
        }
        host = s.substr(1, close - 1);
        if (close + 1 >= s.size() || s[close + 1] != ':') {
            throw bad("expected ':port' after ']'");
        }
        port = s.substr(close + 2);
    } else {
        auto colon = s.rfind(':');
        if (colon == std::string_view::npos) {
            throw bad("expected host:port");
        }
        host = s.substr(0, colon);
        if (host.find(':') != std::string_view::npos) {
            throw bad("an IPv6 address needs brackets, as in [::1]:9042");
        }
        port = s.substr(colon + 1);
    }
    unsigned p = 0;
    auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), p);
    if (port.empty() || ec != std::errc() || end != port.data() + port.size() || p > 65535) {
        throw bad("the port must be a number from 0 to 65535");
    }
    socket_address a;
    try {
        a = socket_address(host, uint16_t(p));
    } catch (const std::invalid_argument&) {
        throw bad("the host is not a numeric IPv4 or IPv6 address");
    }
    if (a.is_ipv4() && s.front() == '[') {
        throw bad("brackets are for IPv6 addresses only");
    }
    return a;
}

uint16_t socket_address::port() const noexcept {
    switch (family()) {
    case AF_INET: return ntohs(_u.in.sin_port);
    case AF_INET6: return ntohs(_u.in6.sin6_port);
    }
    return 0;
}

void socket_address::set_port(uint16_t port) noexcept {
    if (is_ipv4()) {
        _u.in.sin_port = htons(port);
    } else if (is_ipv6()) {
        _u.in6.sin6_port = htons(port);
    }
}

socklen_t socket_address::length() const noexcept {
    switch (family()) {
    case AF_INET: return sizeof(sockaddr_in);
    case AF_INET6: return sizeof(sockaddr_in6);
    }
    return sizeof(sa_family_t);
}

std::string socket_address::host() const {
    char buf[INET6_ADDRSTRLEN] = {};
    if (is_ipv4()) {
        inet_ntop(AF_INET, &_u.in.sin_addr, buf, sizeof(buf));
    } else if (is_ipv6()) {
        inet_ntop(AF_INET6, &_u.in6.sin6_addr, buf, sizeof(buf));
    } else {
        return "unspecified";
    }
    return buf;
}

std::string socket_address::to_string() const {
    if (is_ipv4()) {
        return host() + ":" + std::to_string(port());
    }
    if (is_ipv6()) {
        return "[" + host() + "]:" + std::to_string(port());
    }
    return "unspecified";
}

bool socket_address::operator==(const socket_address& o) const noexcept {
    if (family() != o.family()) {
        return false;
    }
    if (is_ipv4()) {
        return _u.in.sin_port == o._u.in.sin_port && _u.in.sin_addr.s_addr == o._u.in.sin_addr.s_addr;
    }
    if (is_ipv6()) {
        return _u.in6.sin6_port == o._u.in6.sin6_port &&
               std::memcmp(&_u.in6.sin6_addr, &o._u.in6.sin6_addr, sizeof(in6_addr)) == 0 &&
               _u.in6.sin6_scope_id == o._u.in6.sin6_scope_id;
    }
    return true;
}

std::ostream& operator<<(std::ostream& os, const socket_address& a) { return os << a.to_string(); }

// ---- the shared state of a socket and its in-flight operations ----

namespace internal {

class socket_op;

// Shared by the socket object and the coroutines of its operations, so that
// destroying a socket with an operation in flight frees nothing that
// operation still uses; the fd is closed with the last owner.
struct socket_state {
    int fd = -1;
    socket_address remote;  // for error messages
    socket_op* reading = nullptr;  // recv or accept in flight
    socket_op* writing = nullptr;  // send or connect in flight
    bool closing = false;
    std::vector<std::coroutine_handle<>> closers;
    // Adapts to the traffic: doubles when a read fills it, halves when reads
    // use little of it, so idle connections do not pin large buffers.
    size_t read_size = 8192;

    socket_state(int fd_, socket_address remote_) noexcept : fd(fd_), remote(remote_) {}
    socket_state(const socket_state&) = delete;
    ~socket_state() {
        if (fd >= 0) {
            ::close(fd);
        }
    }
    bool busy() const noexcept { return reading || writing; }
    // Asks the backend to end what is in flight early; each operation still
    // completes (with -ECANCELED or its real result) through the loop.
    void cancel_all();
    // What the socket objects' destructors do: the operations in flight hold
    // the state, so the fd closes when the last of them is done.
    void abandon() noexcept;
};

// One operation on a socket: the awaiter and its io_completion at once. It
// lives in the awaiting coroutine's frame until complete() reschedules it.
class socket_op final : public io_completion {
public:
    using starter = void (*)(socket_state&, void* ctx, io_completion* c);

    socket_op(socket_state& s, socket_op* socket_state::*slot, starter start, void* ctx) noexcept
        : _s(s), _slot(slot), _start(start), _ctx(ctx) {}

    bool await_ready() const noexcept { return false; }
    void await_suspend(std::coroutine_handle<> h) {
        _waiter = h;
        _s.*_slot = this;
        try {
            _start(_s, _ctx, this);
        } catch (...) {
            _s.*_slot = nullptr;
            throw;
        }
    }
    ssize_t await_resume() const noexcept { return _result; }

    void complete(ssize_t r) noexcept override {
        _result = r;
        _s.*_slot = nullptr;
        // The operation's owner runs before any close() waiting for it, so
        // it is done with the socket by the time close() returns.
        internal::schedule(_waiter);
        if (!_s.busy() && !_s.closers.empty()) {
            for (auto h : _s.closers) {
                internal::schedule(h);
            }
            _s.closers.clear();
        }
    }

private:
    socket_state& _s;
    socket_op* socket_state::*_slot;
    starter _start;
    void* _ctx;
    std::coroutine_handle<> _waiter;
    ssize_t _result = 0;
};

void socket_state::cancel_all() {
    // Both are read first: a backend may complete an operation at once.
    socket_op* r = reading;
    socket_op* w = writing;
    if (r) {
        engine().backend().cancel(r);
    }
    if (w) {
        engine().backend().cancel(w);
    }
}

void socket_state::abandon() noexcept {
    if (busy()) {
        closing = true;
        try {
            cancel_all();
        } catch (...) {
            // Only io_uring's cancel can throw (no submission slot); the
            // operation then ends by itself, e.g. when the peer goes away.
        }
    }
}

namespace {

struct idle_awaiter {
    socket_state& s;
    bool await_ready() const noexcept { return !s.busy(); }
    void await_suspend(std::coroutine_handle<> h) { s.closers.push_back(h); }
    void await_resume() const noexcept {}
};

[[noreturn]] void throw_errno(int err, const std::string& what) {
    throw std::system_error(err, std::system_category(), what);
}

// Checks that an operation may start: open, not closing, slot free.
socket_state& usable(const std::shared_ptr<socket_state>& s, socket_op* socket_state::*slot, const char* verb,
                     const char* what) {
    if (!s || s->fd < 0 || s->closing) {
        std::string target = s ? " " + s->remote.to_string() : "";
        throw_errno(EBADF, std::string(verb) + target + ": the socket is closed");
    }
    if ((*s).*slot) {
        throw std::logic_error(std::string(what) + " while another one is in flight on the same socket");
    }
    return *s;
}

void set_int_option(int fd, int level, int name, int value, const char* what) {
    if (setsockopt(fd, level, name, &value, sizeof(value)) < 0) {
        throw_errno(errno, std::string("setsockopt(") + what + ")");
    }
}

void make_nonblocking(int fd) {
    int on = 1;
    if (ioctl(fd, FIONBIO, &on) < 0) {
        throw_errno(errno, "ioctl(FIONBIO)");
    }
}

bool is_tcp(int family) { return family == AF_INET || family == AF_INET6; }

socket_address sock_name(int fd, bool peer) {
    sockaddr_storage ss{};
    socklen_t len = sizeof(ss);
    int r = peer ? getpeername(fd, reinterpret_cast<sockaddr*>(&ss), &len)
                 : getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len);
    if (r < 0) {
        throw_errno(errno, peer ? "getpeername" : "getsockname");
    }
    if (!is_tcp(ss.ss_family)) {
        return socket_address();
    }
    return socket_address(reinterpret_cast<sockaddr*>(&ss), len);
}

// Closes an fd not yet owned by a socket_state if setting it up throws.
struct fd_guard {
    int fd;
    ~fd_guard() {
        if (fd >= 0) {
            ::close(fd);
        }
    }
    int release() noexcept { return std::exchange(fd, -1); }
};

} // namespace

} // namespace internal

using internal::socket_op;
using internal::socket_state;

// ---- connected_socket ----

connected_socket::connected_socket() noexcept = default;

connected_socket::connected_socket(std::shared_ptr<internal::socket_state> s) noexcept : _s(std::move(s)) {}

connected_socket::connected_socket(int fd, socket_address remote) {
    internal::fd_guard g{fd};
    internal::make_nonblocking(fd);
    _s = std::make_shared<socket_state>(g.release(), remote);
}

connected_socket::connected_socket(connected_socket&&) noexcept = default;

connected_socket& connected_socket::operator=(connected_socket&& o) noexcept {
    if (this != &o) {
        if (_s) {
            _s->abandon();
        }
        _s = std::move(o._s);
    }
    return *this;
}

connected_socket::~connected_socket() {
    if (_s) {
        _s->abandon();
    }
}

connected_socket::operator bool() const noexcept { return _s && _s->fd >= 0 && !_s->closing; }

future<temporary_buffer> connected_socket::read() {
    auto keep = _s;
    auto& s = internal::usable(keep, &socket_state::reading, "read from", "connected_socket::read()");
    temporary_buffer buf(s.read_size);
    struct ctx_t {
        temporary_buffer& buf;
    } ctx{buf};
    socket_op op(s, &socket_state::reading,
                 [](socket_state& s, void* ctx, io_completion* c) {
                     auto& b = static_cast<ctx_t*>(ctx)->buf;
                     engine().backend().recv(s.fd, b.get_write(), b.size(), c);
                 },
                 &ctx);
    ssize_t r = co_await op;
    if (r < 0) {
        if (r == -ECANCELED) {
            internal::throw_errno(ECANCELED, "read from " + s.remote.to_string() + ": the socket was closed");
        }
        internal::throw_errno(int(-r), "read from " + s.remote.to_string());
    }
    size_t n = size_t(r);
    if (n == 0) {
        co_return temporary_buffer();
    }
    size_t cap = buf.size();
    if (n == cap && s.read_size < 128 * 1024) {
        s.read_size *= 2;
    } else if (n < cap / 4 && s.read_size > 8192) {
        s.read_size /= 2;
    }
    if (n < cap / 4) {
        // A few bytes should not pin a large block for as long as the
        // caller keeps them.
        co_return temporary_buffer(buf.get(), n);
    }
    buf.trim(n);
    co_return buf;
}

future<> connected_socket::write(const char* data, size_t len) {
    auto keep = _s;
    while (len > 0) {
        auto& s = internal::usable(keep, &socket_state::writing, "write to", "connected_socket::write()");
        struct ctx_t {
            const char* data;
            size_t len;
        } ctx{data, len};
        socket_op op(s, &socket_state::writing,
                     [](socket_state& s, void* ctx, io_completion* c) {
                         auto* x = static_cast<ctx_t*>(ctx);
                         engine().backend().send(s.fd, x->data, x->len, c);
                     },
                     &ctx);
        ssize_t r = co_await op;
        if (r < 0) {
            if (r == -ECANCELED) {
                internal::throw_errno(ECANCELED, "write to " + s.remote.to_string() + ": the socket was closed");
            }
            internal::throw_errno(int(-r), "write to " + s.remote.to_string());
        }
        if (r == 0) {
            internal::throw_errno(EIO, "write to " + s.remote.to_string() + ": the kernel took no bytes");
        }
        data += r;
        len -= size_t(r);
    }
}

future<> connected_socket::write(std::string_view data) { return write(data.data(), data.size()); }

future<> connected_socket::write(temporary_buffer buf) { co_await write(buf.get(), buf.size()); }

void connected_socket::shutdown_output() {
    if (!*this) {
        internal::throw_errno(EBADF, "shutdown_output: the socket is closed");
    }
    if (::shutdown(_s->fd, SHUT_WR) < 0 && errno != ENOTCONN) {
        internal::throw_errno(errno, "shutdown(SHUT_WR) of the connection to " + _s->remote.to_string());
    }
}

void connected_socket::shutdown_input() {
    if (!*this) {
        internal::throw_errno(EBADF, "shutdown_input: the socket is closed");
    }
    if (::shutdown(_s->fd, SHUT_RD) < 0 && errno != ENOTCONN) {
        internal::throw_errno(errno, "shutdown(SHUT_RD) of the connection to " + _s->remote.to_string());
    }
}

future<> connected_socket::close() {
    auto keep = _s;
    if (!keep || keep->fd < 0) {
        co_return;
    }
    keep->closing = true;
    keep->cancel_all();
    internal::idle_awaiter idle{*keep};
    co_await idle;
    if (keep->fd >= 0) {
        ::close(std::exchange(keep->fd, -1));
    }
}

int connected_socket::release_fd() {
    if (!*this) {
        internal::throw_errno(EBADF, "release_fd: the socket is closed");
    }
    if (_s->busy()) {
        throw std::logic_error("connected_socket::release_fd() while an operation is in flight");
    }
    int fd = std::exchange(_s->fd, -1);
    _s.reset();
    return fd;
}

void connected_socket::set_nodelay(bool on) {
    if (!*this) {
        internal::throw_errno(EBADF, "set_nodelay: the socket is closed");
    }
    internal::set_int_option(_s->fd, IPPROTO_TCP, TCP_NODELAY, on, "TCP_NODELAY");
}

void connected_socket::set_keepalive(bool on) {
    if (!*this) {
        internal::throw_errno(EBADF, "set_keepalive: the socket is closed");
    }
    internal::set_int_option(_s->fd, SOL_SOCKET, SO_KEEPALIVE, on, "SO_KEEPALIVE");
}

socket_address connected_socket::local_address() const {
    if (!*this) {
        internal::throw_errno(EBADF, "local_address: the socket is closed");
    }
    return internal::sock_name(_s->fd, false);
}

socket_address connected_socket::remote_address() const {
    if (!_s) {
        internal::throw_errno(EBADF, "remote_address: the socket is not connected");
    }
    return _s->remote;
}

// A timeout of zero waits as long as the kernel does.
future<connected_socket> connect(socket_address remote, steady_clock_type::duration timeout) {
    if (!internal::is_tcp(remote.family())) {
        throw std::invalid_argument("connect: the address is unspecified");
    }
    int fd = ::socket(remote.family(), SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        internal::throw_errno(errno, "socket() for a connection to " + remote.to_string());
    }
    auto s = std::make_shared<socket_state>(fd, remote);
    internal::set_int_option(fd, IPPROTO_TCP, TCP_NODELAY, 1, "TCP_NODELAY");
    // The timer cancels the attempt; the operation then completes with -ECANCELED through the loop.
    bool timed_out = false;
    timer deadline([&timed_out, raw = s.get()] {
        timed_out = true;
        raw->cancel_all();
    });
    if (timeout.count() > 0) {
        deadline.arm(timeout);
    }
    // remote lives in this frame until the operation ends: io_uring reads the
    // address only when the request is submitted.
    socket_op op(*s, &socket_state::writing,
                 [](socket_state& s, void* ctx, io_completion* c) {
                     auto* a = static_cast<socket_address*>(ctx);
                     engine().backend().connect(s.fd, a->as_sockaddr(), a->length(), c);
                 },
                 &remote);
    ssize_t r = co_await op;
    deadline.cancel();
    if (r < 0) {
        if (r == -ECANCELED && timed_out) {
            internal::throw_errno(ETIMEDOUT, "connect to " + remote.to_string());
        }
        if (r == -ECANCELED) {
            internal::throw_errno(ECANCELED, "connect to " + remote.to_string() + ": cancelled");
        }
        internal::throw_errno(int(-r), "connect to " + remote.to_string());
    }
    co_return connected_socket(std::move(s));
}

future<connected_socket> connect(socket_address remote) {
    return connect(remote, steady_clock_type::duration::zero());
}

// ---- server_socket ----

server_socket::server_socket() noexcept = default;

server_socket::server_socket(std::shared_ptr<internal::socket_state> s) noexcept : _s(std::move(s)) {}

server_socket::server_socket(server_socket&&) noexcept = default;

server_socket& server_socket::operator=(server_socket&& o) noexcept {
    if (this != &o) {
        if (_s) {
            _s->abandon();
        }
        _s = std::move(o._s);
    }
    return *this;
}

server_socket::~server_socket() {
    if (_s) {
        _s->abandon();
    }
}

server_socket::operator bool() const noexcept { return _s && _s->fd >= 0 && !_s->closing; }

future<accept_result> server_socket::accept() {
    auto keep = _s;
    for (;;) {
        auto& s = internal::usable(keep, &socket_state::reading, "accept on", "server_socket::accept()");
        socket_op op(s, &socket_state::reading,
                     [](socket_state& s, void*, io_completion* c) { engine().backend().accept(s.fd, c); },
                     nullptr);
        ssize_t r = co_await op;
        if (r == -ECONNABORTED) {
            continue;  // the client gave up before we got to it
        }
        if (r < 0) {
            if (r == -ECANCELED) {
                internal::throw_errno(ECANCELED, "accept on " + s.remote.to_string() + ": the server socket was closed");
            }
            internal::throw_errno(int(-r), "accept on " + s.remote.to_string());
        }
        internal::fd_guard g{int(r)};
        // Backends are not bound to create it nonblocking and close-on-exec.
        internal::make_nonblocking(g.fd);
        if (fcntl(g.fd, F_SETFD, FD_CLOEXEC) < 0) {
            internal::throw_errno(errno, "fcntl(FD_CLOEXEC) of an accepted socket");
        }
        socket_address peer;
        try {
            peer = internal::sock_name(g.fd, true);
        } catch (const std::system_error& e) {
            if (e.code().value() == ENOTCONN) {
                continue;  // reset before we could ask who it was
            }
            throw;
        }
        if (internal::is_tcp(peer.family())) {
            internal::set_int_option(g.fd, IPPROTO_TCP, TCP_NODELAY, 1, "TCP_NODELAY");
        }
        auto cs = std::make_shared<socket_state>(g.release(), peer);
        co_return accept_result{connected_socket(std::move(cs)), peer};
    }
}

future<> server_socket::close() {
    auto keep = _s;
    if (!keep || keep->fd < 0) {
        co_return;
    }
    keep->closing = true;
    keep->cancel_all();
    internal::idle_awaiter idle{*keep};
    co_await idle;
    if (keep->fd >= 0) {
        ::close(std::exchange(keep->fd, -1));
    }
}

socket_address server_socket::local_address() const {
    if (!*this) {
        internal::throw_errno(EBADF, "local_address: the server socket is closed");
    }
    return internal::sock_name(_s->fd, false);
}

server_socket listen(socket_address addr, listen_options opts) {
    if (!internal::is_tcp(addr.family())) {
        throw std::invalid_argument("listen: the address is unspecified");
    }
    int fd = ::socket(addr.family(), SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        internal::throw_errno(errno, "socket() to listen on " + addr.to_string());
    }
    internal::fd_guard g{fd};
    if (opts.reuse_address) {
        internal::set_int_option(fd, SOL_SOCKET, SO_REUSEADDR, 1, "SO_REUSEADDR");
    }
    if (opts.reuse_port) {
        internal::set_int_option(fd, SOL_SOCKET, SO_REUSEPORT, 1, "SO_REUSEPORT");
    }
    if (::bind(fd, addr.as_sockaddr(), addr.length()) < 0) {
        internal::throw_errno(errno, "bind to " + addr.to_string());
    }
    if (::listen(fd, opts.backlog) < 0) {
        internal::throw_errno(errno, "listen on " + addr.to_string());
    }
    // The bound address (with the chosen port) names the socket in errors.
    auto bound = internal::sock_name(fd, false);
    return server_socket(std::make_shared<socket_state>(g.release(), bound));
}

} // namespace reef
