// Direct file I/O. See file.hh.
#include "runtime/file.hh"

#include "runtime/blocking.hh"
#include "runtime/with_closeable.hh"
#include "runtime/reactor.hh"

#include <cerrno>
#include <fcntl.h>
#include <fmt/core.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <system_error>
#include <unistd.h>

namespace reef {

namespace internal {

struct file_impl {
    int fd = -1;
    std::string path;
    bool direct = true;
    file_io_counters counters;
    uint64_t memory_align = 4096;
    uint64_t read_align = 4096;
    uint64_t write_align = 4096;
    // On tmpfs or ramfs: a read is a copy from memory that cannot wait for a device, and io_uring would hand each
    // one to a kernel worker thread (these filesystems take no non-blocking reads), two context switches and the
    // reactor's idle spin for a copy. Reads of such a file are done at once on the shard (pread).
    bool memory_backed = false;

    // The bytes read at pos, or -errno: the read of a memory-backed file.
    ssize_t read_now(uint64_t pos, char* buf, size_t len) const noexcept {
        ssize_t r = ::pread(fd, buf, len, off_t(pos));
        return r < 0 ? -errno : r;
    }

    ~file_impl() {
        if (fd >= 0) {
            ::close(fd);
        }
    }
    void check_open(const char* op) const {
        if (fd < 0) {
            throw std::system_error(EBADF, std::system_category(), fmt::format("{} {}: file is closed", op, path));
        }
    }
};

namespace {

// One backend operation awaited by a coroutine.
struct io_awaiter final : io_completion {
    enum class kind { read, write, fdatasync } op;
    int fd;
    uint64_t pos;
    char* buf;
    size_t len;
    ssize_t result = 0;
    internal::parked_task waiter;

    io_awaiter(kind k, int fd, uint64_t pos, char* buf, size_t len) : op(k), fd(fd), pos(pos), buf(buf), len(len) {}
    void complete(ssize_t r) noexcept override {
        result = r;
        --engine().io().in_flight;
        waiter.wake();
    }
    bool await_ready() const noexcept { return false; }
    void await_suspend(std::coroutine_handle<> h) {
        waiter.park(h);
        auto& r = engine();
        switch (op) {
        case kind::read:
            ++r.io().reads;
            r.backend().read(fd, pos, buf, len, this);
            break;
        case kind::write:
            ++r.io().writes;
            r.backend().write(fd, pos, buf, len, this);
            break;
        case kind::fdatasync:
            ++r.io().fsyncs;
            r.backend().fdatasync(fd, this);
            break;
        }
        // Counted once submitted: backends complete operations only from poll().
        ++r.io().in_flight;
    }
    ssize_t await_resume() const noexcept { return result; }
};

uint64_t align_down(uint64_t v, uint64_t a) { return v / a * a; }
uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

} // namespace
} // namespace internal

const std::string& file::path() const noexcept { return _impl->path; }
bool file::is_direct() const noexcept { return _impl->direct; }
const file_io_counters& file::io_counters() const noexcept { return _impl->counters; }
uint64_t file::memory_dma_alignment() const noexcept { return _impl->memory_align; }
uint64_t file::disk_read_dma_alignment() const noexcept { return _impl->read_align; }
uint64_t file::disk_write_dma_alignment() const noexcept { return _impl->write_align; }

temporary_buffer file::allocate_aligned_buffer(size_t size) const {
    return temporary_buffer::aligned(_impl->memory_align, size);
}

void file::submit_read(uint64_t pos, char* buf, size_t len, io_completion* c) const {
    _impl->check_open("read");
    ++engine().io().reads;
    ++_impl->counters.reads;
    _impl->counters.bytes += len;
    if (_impl->memory_backed) {
        ++engine().io().in_flight;
        c->complete(_impl->read_now(pos, buf, len));
        return;
    }
    engine().backend().read(_impl->fd, pos, buf, len, c);
    ++engine().io().in_flight;
}

future<size_t> file::dma_read(uint64_t pos, char* buf, size_t len) {
    auto impl = _impl;
    impl->check_open("read");
    size_t done = 0;
    while (done < len) {
        ++impl->counters.reads;
        impl->counters.bytes += len - done;
        ssize_t r = 0;
        if (impl->memory_backed) {
            ++engine().io().reads;
            r = impl->read_now(pos + done, buf + done, len - done);
        } else {
            internal::io_awaiter aw(internal::io_awaiter::kind::read, impl->fd, pos + done, buf + done, len - done);
            r = co_await aw;
        }
        if (r < 0) {
            throw std::system_error(int(-r), std::system_category(),
                                    fmt::format("read {} at offset {} ({} bytes)", impl->path, pos + done, len - done));
        }
        engine().io().bytes_read += size_t(r);
        done += size_t(r);
        // A short read means end of file, except that a direct read can
        // only continue at an aligned offset.
        if (r == 0 || (impl->direct && done % impl->read_align)) {
            break;
        }
    }
    co_return done;
}

future<temporary_buffer> file::dma_read(uint64_t pos, size_t len) {
    auto impl = _impl;
    uint64_t start = internal::align_down(pos, impl->read_align);
    uint64_t end = internal::align_up(pos + len, impl->read_align);
    auto buf = temporary_buffer::aligned(impl->memory_align, end - start);
    size_t got = co_await dma_read(start, buf.get_write(), end - start);
    size_t front = pos - start;
    if (got <= front) {
        co_return temporary_buffer();
    }
    buf.trim_front(front);
    buf.trim(std::min<size_t>(len, got - front));
    co_return buf;
}

future<temporary_buffer> file::dma_read_exactly(uint64_t pos, size_t len) {
    auto buf = co_await dma_read(pos, len);
    if (buf.size() != len) {
        throw std::system_error(EIO, std::system_category(),
                                fmt::format("read {}: wanted {} bytes at offset {}, the file ends after {}",
                                            _impl->path, len, pos, buf.size()));
    }
    co_return buf;
}

future<size_t> file::dma_write(uint64_t pos, const char* buf, size_t len) {
    auto impl = _impl;
    impl->check_open("write");
    size_t done = 0;
    while (done < len) {
        internal::io_awaiter aw(internal::io_awaiter::kind::write, impl->fd, pos + done,
                                const_cast<char*>(buf) + done, len - done);
        ssize_t r = co_await aw;
        if (r < 0) {
            throw std::system_error(int(-r), std::system_category(),
                                    fmt::format("write {} at offset {} ({} bytes)", impl->path, pos + done, len - done));
        }
        if (r == 0) {
            throw std::system_error(EIO, std::system_category(),
                                    fmt::format("write {} at offset {}: no progress", impl->path, pos + done));
        }
        engine().io().bytes_written += size_t(r);
        done += size_t(r);
    }
    co_return done;
}

future<> file::flush() {
    auto impl = _impl;
    impl->check_open("fdatasync");
    internal::io_awaiter aw(internal::io_awaiter::kind::fdatasync, impl->fd, 0, nullptr, 0);
    ssize_t r = co_await aw;
    if (r < 0) {
        throw std::system_error(int(-r), std::system_category(), fmt::format("fdatasync {}", impl->path));
    }
}

future<uint64_t> file::size() {
    auto impl = _impl;
    impl->check_open("fstat");
    int fd = impl->fd;
    struct stat st;
    // fstat on an open descriptor does not wait for the disk.
    if (::fstat(fd, &st) < 0) {
        throw std::system_error(errno, std::system_category(), fmt::format("fstat {}", impl->path));
    }
    co_return uint64_t(st.st_size);
}

future<> file::truncate(uint64_t length) {
    auto impl = _impl;
    impl->check_open("ftruncate");
    int fd = impl->fd;
    int err = co_await run_blocking([fd, length] { return ::ftruncate(fd, off_t(length)) < 0 ? errno : 0; });
    if (err) {
        throw std::system_error(err, std::system_category(), fmt::format("ftruncate {} to {}", impl->path, length));
    }
}

future<> file::close() {
    auto impl = _impl;
    if (!impl || impl->fd < 0) {
        co_return;
    }
    int fd = std::exchange(impl->fd, -1);
    int err = co_await run_blocking([fd] { return ::close(fd) < 0 ? errno : 0; });
    if (err) {
        throw std::system_error(err, std::system_category(), fmt::format("close {}", impl->path));
    }
}

namespace {

// Opens with O_DIRECT when try_direct (and the filesystem takes it), through the page cache otherwise.
future<std::shared_ptr<internal::file_impl>> open_impl(std::string path, open_flags flags, mode_t mode,
                                                      bool try_direct) {
    auto impl = std::make_shared<internal::file_impl>();
    impl->path = path;
    struct open_result {
        int fd;
        int err;
        bool direct;
    };
    auto res = co_await run_blocking([&path, flags, mode, try_direct]() -> open_result {
        auto attempt = [&](int f) -> open_result {
            if (try_direct) {
                int fd = ::open(path.c_str(), f | O_DIRECT, mode);
                if (fd >= 0) {
                    return {fd, 0, true};
                }
                if (errno != EINVAL) {
                    return {-1, errno, false};
                }
            }
            int fd = ::open(path.c_str(), f, mode);
            return {fd, fd < 0 ? errno : 0, false};
        };
        int f = int(flags) | O_CLOEXEC;
        // A read-only open leaves the access time alone (checking it is work on every read, updating it a write);
        // the kernel refuses O_NOATIME on another owner's file, which then opens without it.
        if ((f & O_ACCMODE) == O_RDONLY) {
            auto r = attempt(f | O_NOATIME);
            if (r.fd >= 0 || r.err != EPERM) {
                return r;
            }
        }
        return attempt(f);
    });
    if (res.fd < 0) {
        throw std::system_error(res.err, std::system_category(), fmt::format("open {}", path));
    }
    impl->fd = res.fd;
    impl->direct = res.direct;
    struct statfs fs {};
    impl->memory_backed = ::fstatfs(res.fd, &fs) == 0 && (fs.f_type == TMPFS_MAGIC || fs.f_type == RAMFS_MAGIC);
    if (impl->memory_backed && res.direct) {
        // tmpfs takes O_DIRECT since Linux 6.6 but is memory all the same: without it, a read copies the bytes asked
        // for, not the aligned blocks around them.
        int fl = ::fcntl(res.fd, F_GETFL);
        if (fl >= 0 && ::fcntl(res.fd, F_SETFL, fl & ~O_DIRECT) == 0) {
            res.direct = false;
            impl->direct = false;
        }
    }
    if (!res.direct) {
        impl->memory_align = impl->read_align = impl->write_align = 1;
    } else {
#ifdef STATX_DIOALIGN
        struct statx stx;
        if (::statx(res.fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &stx) == 0 && (stx.stx_mask & STATX_DIOALIGN) &&
            stx.stx_dio_offset_align) {
            // Never finer than 512: the I/O sizes we choose stay portable.
            impl->read_align = impl->write_align = std::max<uint64_t>(512, stx.stx_dio_offset_align);
            impl->memory_align = std::max<uint64_t>(512, stx.stx_dio_mem_align);
        }
#endif
    }
    co_return impl;
}

} // namespace

future<file> open_file_dma(std::string path, open_flags flags, mode_t mode) {
    co_return file(co_await open_impl(std::move(path), flags, mode, true));
}

future<file> open_file_buffered(std::string path, open_flags flags, mode_t mode) {
    co_return file(co_await open_impl(std::move(path), flags, mode, false));
}

namespace {
future<> check_errno(int err, std::string what) {
    if (err) {
        throw std::system_error(err, std::system_category(), what);
    }
    co_return;
}
}

future<bool> file_exists(std::string path) {
    co_return co_await run_blocking([&path] { return ::access(path.c_str(), F_OK) == 0; });
}

future<> remove_file(std::string path) {
    int err = co_await run_blocking([&path] { return ::unlink(path.c_str()) < 0 ? errno : 0; });
    co_await check_errno(err, fmt::format("remove {}", path));
}

future<> rename_file(std::string from, std::string to) {
    int err = co_await run_blocking([&from, &to] { return ::rename(from.c_str(), to.c_str()) < 0 ? errno : 0; });
    co_await check_errno(err, fmt::format("rename {} to {}", from, to));
}

future<> make_directory(std::string path, mode_t mode) {
    int err = co_await run_blocking([&path, mode] { return ::mkdir(path.c_str(), mode) < 0 ? errno : 0; });
    co_await check_errno(err, fmt::format("mkdir {}", path));
}

future<> sync_directory(std::string path) {
    int err = co_await run_blocking([&path] {
        int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0) {
            return errno;
        }
        int e = ::fsync(fd) < 0 ? errno : 0;
        ::close(fd);
        return e;
    });
    co_await check_errno(err, fmt::format("fsync directory {}", path));
}

future<std::string> read_entire_file(std::string path) {
    auto f = co_await open_file_dma(std::move(path), open_flags::ro);
    co_return co_await with_closeable(std::move(f), [](file& f) -> future<std::string> {
        auto size = co_await f.size();
        auto buf = co_await f.dma_read_exactly(0, size);
        co_return std::string(buf.get(), buf.size());
    });
}

} // namespace reef
