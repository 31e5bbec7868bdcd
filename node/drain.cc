// The drain chain. See drain.hh for the contract.
#include "node/drain.hh"

#include "runtime/log.hh"
#include "runtime/timer.hh"

#include <exception>

namespace reef::node {

namespace {
logger dlog("drain");
}

void drain::add(std::string name, step fn) {
    _steps.push_back({std::move(name), std::move(fn)});
}

future<size_t> drain::run() {
    size_t failed = 0;
    while (!_steps.empty()) {
        named_step s = std::move(_steps.back());
        _steps.pop_back();
        auto start = steady_clock_type::now();
        dlog.info("draining: {}", s.name);
        std::exception_ptr error;
        try {
            co_await s.fn();
        } catch (...) {
            error = std::current_exception();
        }
        double ms = std::chrono::duration<double, std::milli>(steady_clock_type::now() - start).count();
        if (error) {
            ++failed;
            try {
                std::rethrow_exception(error);
            } catch (const std::exception& e) {
                dlog.error("drain step {} failed after {:.1f} ms: {}", s.name, ms, e.what());
            } catch (...) {
                dlog.error("drain step {} failed after {:.1f} ms", s.name, ms);
            }
        } else {
            dlog.info("drained: {} in {:.1f} ms", s.name, ms);
        }
    }
    co_return failed;
}

} // namespace reef::node
