// Directory locks. See directory_lock.hh for the contract.
//
// fcntl(F_SETLK) record locks, not flock(): F_GETLK reports the holder's pid, which the refusal names. Their
// catch (closing any descriptor of the file drops the lock) does not bite: only this object opens the file.
#include "node/directory_lock.hh"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <unistd.h>

namespace reef::node {

directory_lock directory_lock::acquire(const std::string& dir) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) {
        throw directory_lock_error(fmt::format("cannot create directory {}: {}", dir, ec.message()));
    }
    std::string path = dir + "/.lock";
    int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        throw directory_lock_error(fmt::format("cannot open {}: {}", path, std::strerror(errno)));
    }
    struct flock fl {};
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    if (::fcntl(fd, F_SETLK, &fl) != 0) {
        int e = errno;
        std::string holder;
        struct flock who {};
        who.l_type = F_WRLCK;
        who.l_whence = SEEK_SET;
        if ((e == EAGAIN || e == EACCES) && ::fcntl(fd, F_GETLK, &who) == 0 && who.l_type != F_UNLCK) {
            holder = fmt::format(" (held by pid {})", who.l_pid);
        }
        ::close(fd);
        if (e == EAGAIN || e == EACCES) {
            throw directory_lock_error(fmt::format("directory {} is in use by another reef process{}: two nodes "
                                                   "cannot share a directory", dir, holder));
        }
        throw directory_lock_error(fmt::format("cannot lock {}: {}", path, std::strerror(e)));
    }
    // The pid, for people looking at the file; the lock itself is what counts.
    auto pid = fmt::format("{}\n", ::getpid());
    if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, pid.data(), pid.size(), 0) != ssize_t(pid.size())) {
        int e = errno;
        ::close(fd);
        throw directory_lock_error(fmt::format("cannot write {}: {}", path, std::strerror(e)));
    }
    return directory_lock(dir, fd);
}

directory_lock::~directory_lock() {
    if (_fd >= 0) {
        ::close(_fd);  // drops the lock; the file stays, its pid stale but harmless
    }
}

} // namespace reef::node
