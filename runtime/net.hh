// net: TCP sockets on the shard's loop (listen, accept, connect, read, write, close), for the CQL and REST servers.
// All I/O goes through engine().backend(); a socket is used only on the shard that made it, and failures throw std::system_error naming the address.
#pragma once

#include "runtime/future.hh"
#include "runtime/temporary_buffer.hh"
#include "runtime/timer.hh"

#include <algorithm>
#include <cstdint>
#include <fmt/core.h>
#include <iosfwd>
#include <memory>
#include <netinet/in.h>
#include <string>
#include <string_view>
#include <sys/socket.h>

namespace reef {

// An IPv4 or IPv6 address and port.
class socket_address {
public:
    // No address (AF_UNSPEC); to_string() gives "unspecified".
    socket_address() noexcept;
    // Copies a sockaddr_in or sockaddr_in6; throws std::invalid_argument for
    // other families.
    socket_address(const sockaddr* sa, socklen_t len);
    // A numeric IPv4 ("127.0.0.1") or IPv6 ("::1", without brackets) host.
    // Throws std::invalid_argument naming the bad host.
    socket_address(std::string_view host, uint16_t port);
    // Parses "127.0.0.1:9042" or "[::1]:9042". Throws std::invalid_argument.
    static socket_address parse(std::string_view host_and_port);

    int family() const noexcept { return _u.sa.sa_family; }
    bool is_ipv4() const noexcept { return family() == AF_INET; }
    bool is_ipv6() const noexcept { return family() == AF_INET6; }
    uint16_t port() const noexcept;
    void set_port(uint16_t port) noexcept;
    // "127.0.0.1" or "::1".
    std::string host() const;
    // "127.0.0.1:9042" or "[::1]:9042".
    std::string to_string() const;

    const sockaddr* as_sockaddr() const noexcept { return &_u.sa; }
    socklen_t length() const noexcept;

    bool operator==(const socket_address& o) const noexcept;

private:
    union {
        sockaddr sa;
        sockaddr_in in;
        sockaddr_in6 in6;
    } _u;
};

std::ostream& operator<<(std::ostream& os, const socket_address& a);

namespace internal {
struct socket_state;
}

// One end of a TCP connection. Move-only. At most one read and one write may
// be in flight at a time (a reader fiber and a writer fiber). Destroying it
// cancels what is in flight; the fd is closed once that has finished.
class connected_socket {
public:
    connected_socket() noexcept;
    // Adopts fd, a connected stream socket (any family), and makes it
    // nonblocking; remote only names it in error messages.
    explicit connected_socket(int fd, socket_address remote = {});
    connected_socket(connected_socket&&) noexcept;
    connected_socket& operator=(connected_socket&&) noexcept;
    ~connected_socket();

    // True until close(); false for a default-constructed socket.
    explicit operator bool() const noexcept;

    // The next bytes that arrived (at least one), or an empty buffer at end
    // of stream. Throws std::system_error with ECANCELED if close() stops it.
    future<temporary_buffer> read();
    // Writes all the bytes (short writes are continued); the caller keeps
    // them alive until the future resolves.
    future<> write(const char* data, size_t len);
    future<> write(std::string_view data);
    // Keeps buf alive itself.
    future<> write(temporary_buffer buf);

    // Sends FIN once written bytes are out; reading still works.
    void shutdown_output();
    // Later reads see end of stream.
    void shutdown_input();
    // Cancels a pending read or write (they throw ECANCELED), waits for them
    // to finish, then closes the fd. Idempotent.
    future<> close();

    // Gives up the fd, which the caller then owns: how a connection accepted on one shard moves to another, which
    // adopts it with connected_socket(fd, remote). Throws std::logic_error while an operation is in flight, and
    // std::system_error (EBADF) when the socket is closed.
    int release_fd();

    // TCP_NODELAY; on by default for sockets made by connect() and accept().
    void set_nodelay(bool on);
    void set_keepalive(bool on);
    socket_address local_address() const;
    socket_address remote_address() const;

private:
    explicit connected_socket(std::shared_ptr<internal::socket_state> s) noexcept;
    friend class server_socket;
    friend future<connected_socket> connect(socket_address);
    friend future<connected_socket> connect(socket_address, steady_clock_type::duration);
    std::shared_ptr<internal::socket_state> _s;
};

struct accept_result {
    connected_socket connection;
    socket_address remote_address;
};

struct listen_options {
    // SO_REUSEPORT: every shard listens on the same port and the kernel
    // spreads connections among them.
    bool reuse_port = true;
    // SO_REUSEADDR: a restarted node can bind while old connections linger.
    bool reuse_address = true;
    int backlog = 1024;
};

// A listening TCP socket. Move-only; destroying it cancels a pending accept.
class server_socket {
public:
    server_socket() noexcept;
    server_socket(server_socket&&) noexcept;
    server_socket& operator=(server_socket&&) noexcept;
    ~server_socket();

    explicit operator bool() const noexcept;

    // The next connection, with TCP_NODELAY set. Throws std::system_error
    // with ECANCELED once close() is called; one accept at a time.
    future<accept_result> accept();
    // Cancels a pending accept, waits for it, then closes the fd. Idempotent.
    future<> close();
    // The bound address: the port the kernel chose when listening on port 0.
    socket_address local_address() const;

private:
    explicit server_socket(std::shared_ptr<internal::socket_state> s) noexcept;
    friend server_socket listen(socket_address, listen_options);
    std::shared_ptr<internal::socket_state> _s;
};

// Binds and listens on addr (port 0: any free port, see local_address()).
server_socket listen(socket_address addr, listen_options opts = {});
// Connects to remote; throws std::system_error naming it on failure (e.g.
// ECONNREFUSED: "connect to 127.0.0.1:9042: Connection refused").
future<connected_socket> connect(socket_address remote);
// The same, given up after timeout (zero: no limit): the attempt is cancelled and std::system_error with ETIMEDOUT thrown
// ("connect to 10.0.0.1:9042: Connection timed out"), so a peer that drops SYNs costs no more than timeout.
future<connected_socket> connect(socket_address remote, steady_clock_type::duration timeout);

} // namespace reef

// "{}" prints to_string(); no format spec.
template <>
struct fmt::formatter<reef::socket_address> {
    constexpr auto parse(fmt::format_parse_context& ctx) { return ctx.begin(); }
    template <typename FormatContext>
    auto format(const reef::socket_address& a, FormatContext& ctx) const {
        auto s = a.to_string();
        return std::copy(s.begin(), s.end(), ctx.out());
    }
};
