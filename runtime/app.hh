// Starting and stopping the shards: run() brings up one loop per shard, runs a
// function on shard 0, then stops every shard and returns the function's result.
#pragma once

#include "runtime/future.hh"
#include "runtime/io_backend.hh"
#include "runtime/reactor.hh"

#include <functional>

namespace reef {

struct runtime_config {
    // Number of shards; 0 means one per CPU this process may run on.
    unsigned smp = 0;
    io_backend_kind io_backend = io_backend_kind::automatic;
    // Pin shard i to the i-th allowed CPU (wrapping around).
    bool pin_threads = true;
    // Operations each shard's backend can have in flight at once.
    unsigned io_queue_depth = 256;
    reactor_config reactor;
};

// CPUs this process may run on (its affinity mask).
unsigned available_cpus();

// Runs main_fn on shard 0 of a fresh set of shards (the calling thread is
// shard 0) and returns its result once every shard has stopped. An exception
// from main_fn is rethrown here. Not reentrant; may be called again after it
// returns (tests run one runtime per I/O backend).
int run(const runtime_config& cfg, std::function<future<int>()> main_fn);

// The backend kind the running runtime uses.
io_backend_kind current_io_backend() noexcept;

} // namespace reef
