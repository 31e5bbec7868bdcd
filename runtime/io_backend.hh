// The asynchronous I/O engine under one shard's loop: io_uring, libaio or a pread pool.
// Operations complete on the owning shard's thread, through io_completion::complete().
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <sys/socket.h>
#include <sys/types.h>

namespace reef {

enum class io_backend_kind { automatic, uring, aio, pread };

std::string_view to_string(io_backend_kind k) noexcept;
// Parses "auto", "io_uring" (or "uring"), "aio" (or "libaio"), "pread".
// Throws std::invalid_argument naming the bad value.
io_backend_kind parse_io_backend_kind(std::string_view s);

// Receives the result of one operation: a byte count or new fd (>= 0), or -errno.
class io_completion {
public:
    virtual void complete(ssize_t result) noexcept = 0;
protected:
    ~io_completion() = default;
};

// One instance per shard, used only from that shard's thread except wake().
// Every submitted operation completes exactly once (with -ECANCELED when
// cancelled), and the io_completion must stay alive until then.
class io_backend {
public:
    virtual ~io_backend() = default;
    virtual io_backend_kind kind() const noexcept = 0;

    // Files (fd opened with or without O_DIRECT).
    virtual void read(int fd, uint64_t pos, void* buf, size_t len, io_completion* c) = 0;
    virtual void write(int fd, uint64_t pos, const void* buf, size_t len, io_completion* c) = 0;
    virtual void fdatasync(int fd, io_completion* c) = 0;

    // Stream sockets. accept's result is the new fd, made SOCK_CLOEXEC and
    // SOCK_NONBLOCK by every backend.
    virtual void accept(int fd, io_completion* c) = 0;
    virtual void connect(int fd, const sockaddr* addr, socklen_t len, io_completion* c) = 0;
    virtual void recv(int fd, void* buf, size_t len, io_completion* c) = 0;
    virtual void send(int fd, const void* buf, size_t len, io_completion* c) = 0;
    // Asks an in-flight socket operation to complete early with -ECANCELED
    // (or its real result if it raced to finish). No-op if c is not in flight.
    virtual void cancel(io_completion* c) = 0;

    // Submits what is queued and delivers finished completions without
    // blocking. Returns true if it delivered any.
    virtual bool poll() = 0;
    // Blocks until a completion is ready, wake() is called, or the timeout
    // (none: forever) passes; may also return early (EINTR), so callers loop.
    // Completions are delivered by the next poll().
    virtual void wait(std::optional<std::chrono::nanoseconds> timeout) = 0;
    // Thread-safe: makes a wait() in progress (or the next one) return.
    virtual void wake() noexcept = 0;
};

// Probes what the kernel allows when kind is automatic: io_uring, else libaio,
// else the pread pool. Throws std::system_error if the forced kind cannot start.
std::unique_ptr<io_backend> make_io_backend(io_backend_kind kind, unsigned queue_depth);

// The backend make_io_backend(automatic, ...) would pick on this machine.
io_backend_kind probe_io_backend();

} // namespace reef
