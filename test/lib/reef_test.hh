// REEF_TEST_CASE: a Boost.Test case whose body is a coroutine run on shard 0
// of a fresh runtime; it fails if the body throws or a check fails.
#pragma once

#include "runtime/app.hh"
#include "runtime/future.hh"

#include <boost/test/unit_test.hpp>
#include <functional>
#include <string>
#include <vector>

namespace reef::testing {

// The runtime every REEF_TEST_CASE gets: REEF_TEST_SMP shards (default 2),
// the backend in REEF_IO_BACKEND (default: probed), threads not pinned so
// that parallel test processes share the CPUs.
runtime_config test_runtime_config();

// Runs body inside a runtime built from cfg; rethrows what the body throws.
void run_in_runtime(const runtime_config& cfg, std::function<future<>()> body);

// Every backend this machine can start (io_uring may be refused).
std::vector<io_backend_kind> available_io_backends();

// Runs body(backend name) in a fresh runtime once per available backend.
void on_every_backend(const std::function<future<>(std::string backend)>& body);

} // namespace reef::testing

#define REEF_TEST_CASE(name)                                                              \
    static ::reef::future<> name##_body();                                                \
    BOOST_AUTO_TEST_CASE(name) {                                                          \
        ::reef::testing::run_in_runtime(::reef::testing::test_runtime_config(), name##_body); \
    }                                                                                     \
    static ::reef::future<> name##_body()
