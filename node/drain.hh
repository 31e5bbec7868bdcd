// node::drain: the node's stop steps. Services register a step as they start; drain runs them in reverse order
// of registration (the last started stops first: later the CQL server stops accepting, then memtables flush, then
// the commitlog closes), each logged with its duration. Promises: every step runs once, even when an earlier one
// failed (the failure is logged and run() reports it).
#pragma once

#include "runtime/future.hh"

#include <functional>
#include <string>
#include <vector>

namespace reef::node {

class drain {
public:
    using step = std::function<future<>()>;

    // Registers a stop step. Not while run() is running.
    void add(std::string name, step fn);
    size_t size() const noexcept { return _steps.size(); }

    // Runs the steps, last registered first. Returns the number that failed.
    future<size_t> run();

private:
    struct named_step {
        std::string name;
        step fn;
    };
    std::vector<named_step> _steps;
};

} // namespace reef::node
