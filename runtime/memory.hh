// memory: the allocator behind malloc and operator new in this build (gperftools' tcmalloc in dev and release,
// glibc's malloc under the sanitizers). Promises: allocator_name() names it; serves(p) says whether it handed out p.
#pragma once

#include <string>

namespace reef::memory {

// "tcmalloc 2.10" or "glibc malloc", as `reef --version` prints it.
std::string allocator_name();

// Whether p (from malloc, aligned_alloc or operator new) came from the allocator allocator_name() names: false
// means the link lost it and glibc's malloc serves the process.
bool serves(const void* p) noexcept;

} // namespace reef::memory
