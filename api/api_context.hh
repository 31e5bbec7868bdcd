// api_context: what the REST API's handlers reach, handed over by the node at start-up.
// Promises nothing of its own: it names the services (all on shard 0's side of sharded<>) that handlers may call.
#pragma once

#include "runtime/future.hh"
#include "runtime/reactor.hh"
#include "runtime/sharded.hh"

#include <functional>
#include <string>

namespace reef {
class database;
}

namespace reef::api {

struct api_context {
    sharded<database>& db;
    // When the node's process started (GET /system/uptime_ms).
    steady_clock_type::time_point process_start;
    // The node's drain chain (POST /storage_service/drain); the node then keeps serving nothing but the API.
    std::function<future<>()> drain;
    // Reef's own version (GET /storage_service/scylla_release_version): the node passes REEF_VERSION.
    std::string reef_version = {};
    // Whether the CQL server serves now (GET /storage_service/native_transport); null: the node runs none.
    std::function<bool()> native_transport_running = {};
};

} // namespace reef::api
