// cql_server: one shard's part of the CQL native protocol server (sharded<cql_server>). Shard 0 listens on the
// node's ports and hands each accepted connection to a shard (least loaded, or client port % shards on the
// shard-aware port); that shard serves it with its own cql::query_handler. stop() stops accepting, then lets the
// requests in flight finish and their responses go out before the connections close.
#pragma once

#include "cql/query_handler.hh"
#include "runtime/gate.hh"
#include "runtime/metrics.hh"
#include "runtime/net.hh"
#include "runtime/semaphore.hh"
#include "runtime/sharded.hh"
#include "transport/frame.hh"

#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace reef::transport {

class connection;

struct server_config {
    uint32_t max_frame_size = default_max_frame_size;
    // A connection stops reading its socket while this many of its requests run.
    size_t max_in_flight_per_connection = 1024;
    // The bodies of the requests in flight on a shard share this many bytes; a frame waits for its share.
    size_t request_memory_per_shard = 64u << 20;
    // One request more than this on a shard is answered at once with ERROR overloaded (and counted as shed).
    size_t max_concurrent_requests_per_shard = 10000;
    // A connection stops reading while this many response bytes wait to be written.
    size_t max_pending_response_bytes = 16u << 20;
    // SUPPORTED's SCYLLA_SHARD_AWARE_PORT; 0: not advertised.
    uint16_t shard_aware_port = 0;
};

// How shard 0 picks the shard of a connection accepted on a port.
enum class port_kind { least_loaded, shard_aware };

struct server_stats {
    uint64_t requests_served = 0;
    int64_t requests_serving = 0;
    uint64_t requests_shed = 0;
    uint64_t requests_blocked_memory = 0;
    uint64_t connections_created = 0;
    int64_t current_connections = 0;
    uint64_t request_bytes = 0;
    uint64_t response_bytes = 0;
    uint64_t errors = 0;
    // By request opcode: requests answered.
    std::map<uint8_t, uint64_t> requests_by_opcode;
};

class cql_server {
public:
    // `handler` is called on each shard for that shard's handler (it outlives the server). Pointers and
    // std::function, so that sharded::start can copy them to every shard.
    cql_server(sharded<cql_server>* container, std::function<cql::query_handler&()> handler, server_config cfg);
    ~cql_server();

    // Shard 0 only: binds `addr` (no SO_REUSEPORT: a port in use throws std::system_error naming the address)
    // and accepts in the background. Returns the bound address (port 0 picks a free one).
    socket_address listen(socket_address addr, port_kind kind);

    // Stops accepting (shard 0), then ends every connection of this shard once its requests are answered.
    // sharded::stop calls it on every shard.
    future<> stop();

    // This shard's connections and counters.
    const server_stats& stats() const noexcept { return _stats; }
    size_t connection_count() const noexcept { return _connections.size(); }

    // For connections.
    const server_config& config() const noexcept { return _cfg; }
    cql::query_handler& handler() { return _handler(); }
    server_stats& mutable_stats() noexcept { return _stats; }
    semaphore& request_memory() noexcept { return _memory; }
    size_t& concurrent_requests() noexcept { return _concurrent; }

private:
    friend class connection;
    struct listener;
    future<> accept_loop(listener& l);
    shard_id pick_shard(port_kind kind, const socket_address& remote) const;
    // On the target shard: serve the fd shard 0 accepted.
    // False when this shard is stopping (the fd is closed).
    bool adopt(int fd, socket_address remote);
    future<> serve(std::shared_ptr<connection> c, gate::holder in_gate);
    void on_schema_change(const cql::schema_change& change);
    void register_metrics();

    sharded<cql_server>* _container;
    std::function<cql::query_handler&()> _handler;
    server_config _cfg;
    server_stats _stats;
    semaphore _memory;
    size_t _concurrent = 0;
    // Shard 0: the connections each shard serves, the load of least_loaded.
    std::vector<size_t> _load;
    std::list<std::unique_ptr<listener>> _listeners;
    std::list<std::shared_ptr<connection>> _connections;
    gate _gate;
    bool _stopping = false;
    // Tells the schema-change listener (which the handler keeps forever) whether this server still lives.
    std::shared_ptr<cql_server*> _self;
    metrics::metric_groups _metrics;
};

} // namespace reef::transport
