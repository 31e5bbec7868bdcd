// Constructors of the concrete I/O backends, for make_io_backend() only.
// Each throws std::system_error when the kernel refuses what it needs.
#pragma once

#include "runtime/io_backend.hh"

#include <memory>

namespace reef::internal {

std::unique_ptr<io_backend> make_uring_backend(unsigned queue_depth);
std::unique_ptr<io_backend> make_aio_backend(unsigned queue_depth);
std::unique_ptr<io_backend> make_pread_backend(unsigned queue_depth);

} // namespace reef::internal
