#include "node/systemd_notify.hh"

#include "runtime/log.hh"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

namespace reef::node {

namespace {
logger slog("systemd");
}

void systemd_notify(std::string_view state) noexcept {
    const char* path = std::getenv("NOTIFY_SOCKET");
    if (!path || !*path) {
        return;
    }
    std::string_view p(path);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    // A leading '@' names a socket in the abstract namespace (a leading NUL byte).
    if (p.size() >= sizeof(addr.sun_path) || (p[0] != '/' && p[0] != '@')) {
        slog.warn("NOTIFY_SOCKET '{}' is not a socket path: not telling systemd '{}'", p, state);
        return;
    }
    std::memcpy(addr.sun_path, p.data(), p.size());
    if (p[0] == '@') {
        addr.sun_path[0] = '\0';
    }
    socklen_t len = socklen_t(offsetof(sockaddr_un, sun_path) + p.size());
    int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        slog.warn("cannot tell systemd '{}': socket: {}", state, std::strerror(errno));
        return;
    }
    if (::sendto(fd, state.data(), state.size(), MSG_NOSIGNAL | MSG_DONTWAIT, reinterpret_cast<sockaddr*>(&addr),
                 len) < 0) {
        slog.warn("cannot tell systemd '{}' through {}: {}", state, p, std::strerror(errno));
    }
    ::close(fd);
}

} // namespace reef::node
