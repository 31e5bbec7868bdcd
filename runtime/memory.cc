// The allocator in use. See memory.hh. Built with REEF_TCMALLOC where configure.py links tcmalloc (dev and
// release): the shared library interposes malloc, free, aligned_alloc and operator new for the whole process.
#include "runtime/memory.hh"

#ifdef REEF_TCMALLOC
#include <gperftools/malloc_extension_c.h>
#include <gperftools/tcmalloc.h>
#endif

namespace reef::memory {

std::string allocator_name() {
#ifdef REEF_TCMALLOC
    int major = 0, minor = 0;
    const char* patch = nullptr;
    tc_version(&major, &minor, &patch);
    return "tcmalloc " + std::to_string(major) + "." + std::to_string(minor) + (patch ? patch : "");
#else
    return "glibc malloc";
#endif
}

bool serves(const void* p) noexcept {
#ifdef REEF_TCMALLOC
    return MallocExtension_GetOwnership(p) == MallocExtension_kOwned;
#else
    return p != nullptr;
#endif
}

} // namespace reef::memory
