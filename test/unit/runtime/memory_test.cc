// Tests of reef::memory: the dev and release builds' malloc, aligned_alloc and operator new are tcmalloc's, as
// configure.py links it, and aligned allocations are aligned (O_DIRECT's buffers).
#include "runtime/memory.hh"

#include <boost/test/unit_test.hpp>

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

using namespace reef;

BOOST_AUTO_TEST_CASE(the_named_allocator_serves_malloc_and_new) {
#if defined(REEF_DEV) || defined(NDEBUG)
    BOOST_CHECK_EQUAL(memory::allocator_name().rfind("tcmalloc ", 0), 0u);
#else
    BOOST_CHECK_EQUAL(memory::allocator_name(), "glibc malloc");
#endif
    // Small and large, from each entry point: a link that let glibc keep any of them fails here.
    for (size_t size : {16, 4000, 1 << 20}) {
        void* p = std::malloc(size);
        auto q = std::make_unique<char[]>(size);
        void* a = std::aligned_alloc(4096, size < 4096 ? 4096 : size);
        BOOST_CHECK_MESSAGE(memory::serves(p), "malloc(" << size << ")");
        BOOST_CHECK_MESSAGE(memory::serves(q.get()), "new char[" << size << "]");
        BOOST_CHECK_MESSAGE(memory::serves(a), "aligned_alloc(4096, " << size << ")");
        std::free(a);
        std::free(p);
    }
}

// Debian's mimalloc 2.0.9 returned aligned_alloc(512, 512) 384 bytes past a 512-byte boundary, which O_DIRECT reads
// refuse (EINVAL): every alignment a file buffer uses, with sizes at, below and above it.
BOOST_AUTO_TEST_CASE(aligned_alloc_honours_the_alignment) {
    for (size_t align : {16, 512, 4096}) {
        for (size_t size : {align, 2 * align, 8 * align, size_t(1) << 17}) {
            for (int i = 0; i < 64; ++i) {
                void* p = std::aligned_alloc(align, size);
                BOOST_REQUIRE(p);
                BOOST_CHECK_MESSAGE(reinterpret_cast<uintptr_t>(p) % align == 0,
                                    "aligned_alloc(" << align << ", " << size << ") = " << p);
                std::free(p);
            }
        }
    }
}
