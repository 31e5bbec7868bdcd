// directory_lock: a directory created if missing and held by this process through a POSIX record lock on its
// `.lock` file (as ScyllaDB locks each of its directories). Promises: a second process asking for the same
// directory is refused with an error naming the directory and the pid that holds it; the lock goes when the
// object (or the process) does.
#pragma once

#include <stdexcept>
#include <string>

namespace reef::node {

class directory_lock_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

class directory_lock {
public:
    // Creates `dir` (and its parents) and locks `dir/.lock`, writing this process's pid into it. Blocking; called
    // before the shards start. Throws directory_lock_error.
    static directory_lock acquire(const std::string& dir);

    directory_lock(directory_lock&& o) noexcept : _dir(std::move(o._dir)), _fd(o._fd) { o._fd = -1; }
    directory_lock& operator=(directory_lock&&) = delete;
    directory_lock(const directory_lock&) = delete;
    ~directory_lock();

    const std::string& dir() const noexcept { return _dir; }

private:
    directory_lock(std::string dir, int fd) noexcept : _dir(std::move(dir)), _fd(fd) {}
    std::string _dir;
    int _fd = -1;
};

} // namespace reef::node
