// Choosing an I/O backend: names, parsing, and the start-up probe.
#include "runtime/io_backend.hh"

#include "runtime/backends.hh"

#include <liburing.h>
#include <libaio.h>
#include <stdexcept>
#include <string>

namespace reef {

std::string_view to_string(io_backend_kind k) noexcept {
    switch (k) {
    case io_backend_kind::automatic: return "auto";
    case io_backend_kind::uring: return "io_uring";
    case io_backend_kind::aio: return "aio";
    case io_backend_kind::pread: return "pread";
    }
    return "?";
}

io_backend_kind parse_io_backend_kind(std::string_view s) {
    if (s == "auto") {
        return io_backend_kind::automatic;
    }
    if (s == "io_uring" || s == "uring") {
        return io_backend_kind::uring;
    }
    if (s == "aio" || s == "libaio") {
        return io_backend_kind::aio;
    }
    if (s == "pread") {
        return io_backend_kind::pread;
    }
    throw std::invalid_argument("unknown I/O backend '" + std::string(s) +
                                "' (expected auto, io_uring, aio or pread)");
}

io_backend_kind probe_io_backend() {
    // io_uring is refused outright under some seccomp profiles (Docker's
    // default among them), so it is tried, not assumed.
    io_uring ring;
    if (io_uring_queue_init(4, &ring, 0) == 0) {
        io_uring_queue_exit(&ring);
        return io_backend_kind::uring;
    }
    io_context_t ctx{};
    if (io_setup(4, &ctx) == 0) {
        io_destroy(ctx);
        return io_backend_kind::aio;
    }
    return io_backend_kind::pread;
}

std::unique_ptr<io_backend> make_io_backend(io_backend_kind kind, unsigned queue_depth) {
    if (kind == io_backend_kind::automatic) {
        kind = probe_io_backend();
    }
    switch (kind) {
    case io_backend_kind::uring: return internal::make_uring_backend(queue_depth);
    case io_backend_kind::aio: return internal::make_aio_backend(queue_depth);
    case io_backend_kind::pread: return internal::make_pread_backend(queue_depth);
    case io_backend_kind::automatic: break;
    }
    throw std::logic_error("make_io_backend: unreachable");
}

} // namespace reef
