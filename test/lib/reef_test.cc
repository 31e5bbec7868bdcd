// Helpers behind REEF_TEST_CASE. See reef_test.hh.
#include "test/lib/reef_test.hh"

#include <cstdlib>
#include <string>

namespace reef::testing {

runtime_config test_runtime_config() {
    runtime_config cfg;
    cfg.smp = 2;
    if (const char* s = std::getenv("REEF_TEST_SMP")) {
        cfg.smp = std::stoul(s);
    }
    if (const char* b = std::getenv("REEF_IO_BACKEND")) {
        cfg.io_backend = parse_io_backend_kind(b);
    }
    cfg.pin_threads = false;
    return cfg;
}

void run_in_runtime(const runtime_config& cfg, std::function<future<>()> body) {
    run(cfg, [&body]() -> future<int> {
        co_await body();
        co_return 0;
    });
}

std::vector<io_backend_kind> available_io_backends() {
    std::vector<io_backend_kind> out;
    for (auto k : {io_backend_kind::uring, io_backend_kind::aio, io_backend_kind::pread}) {
        try {
            (void)make_io_backend(k, 8);
            out.push_back(k);
        } catch (const std::exception&) {
        }
    }
    return out;
}

void on_every_backend(const std::function<future<>(std::string backend)>& body) {
    for (auto kind : available_io_backends()) {
        BOOST_TEST_MESSAGE("backend " << to_string(kind));
        auto cfg = test_runtime_config();
        cfg.io_backend = kind;
        run_in_runtime(cfg, [&]() -> future<> {
            BOOST_CHECK(current_io_backend() == kind);
            co_await body(std::string(to_string(kind)));
        });
    }
}

} // namespace reef::testing
