#include "transport/server.hh"

#include "runtime/log.hh"
#include "runtime/reactor.hh"
#include "transport/connection.hh"

#include <algorithm>
#include <cerrno>
#include <system_error>
#include <unistd.h>

namespace reef::transport {

namespace {
logger slog("cql_server");
}

struct cql_server::listener {
    server_socket socket;
    port_kind kind;
};

cql_server::cql_server(sharded<cql_server>* container, std::function<cql::query_handler&()> handler,
                       server_config cfg)
    : _container(container), _handler(std::move(handler)), _cfg(cfg), _memory(cfg.request_memory_per_shard),
      _self(std::make_shared<cql_server*>(this)) {
    if (this_shard_id() == 0) {
        _load.assign(smp::count(), 0);
    }
    std::weak_ptr<cql_server*> self = _self;
    // The handler keeps its listeners for its whole life, which may be longer than this server's.
    _handler().add_schema_change_listener([self](const cql::schema_change& c) {
        if (auto s = self.lock()) {
            (*s)->on_schema_change(c);
        }
    });
    register_metrics();
}

cql_server::~cql_server() = default;

void cql_server::register_metrics() {
    namespace m = metrics;
    std::vector<m::metric_definition> defs = {
        m::make_counter("requests_served", _stats.requests_served, m::description("requests answered")),
        m::make_gauge("requests_serving", _stats.requests_serving, m::description("requests being processed")),
        m::make_gauge("current_connections", _stats.current_connections, m::description("open CQL connections")),
        m::make_counter("cql_connections", _stats.connections_created,
                        m::description("CQL connections accepted on this shard")),
        m::make_counter("requests_shed", _stats.requests_shed,
                        m::description("requests refused with overloaded: max_concurrent_requests_per_shard")),
        m::make_counter("requests_blocked_memory", _stats.requests_blocked_memory,
                        m::description("requests that waited for request memory")),
        m::make_gauge("requests_memory_available", [this] { return _memory.available_units(); },
                      m::description("request memory left on this shard, in bytes")),
        m::make_counter("cql_request_bytes", _stats.request_bytes, m::description("bytes read from clients")),
        m::make_counter("cql_response_bytes", _stats.response_bytes, m::description("bytes queued to clients")),
        m::make_counter("cql_errors", _stats.errors, m::description("ERROR responses")),
    };
    for (opcode o : {opcode::startup, opcode::options, opcode::query, opcode::prepare, opcode::execute,
                     opcode::register_, opcode::batch, opcode::auth_response}) {
        auto op = uint8_t(o);
        defs.push_back(m::make_counter(
            "cql_requests_count", [this, op] { return _stats.requests_by_opcode[op]; },
            m::description("requests answered, by opcode"), {m::label("kind", opcode_name(op))}));
    }
    _metrics.add_group("transport", std::move(defs));
}

socket_address cql_server::listen(socket_address addr, port_kind kind) {
    if (this_shard_id() != 0) {
        throw std::logic_error("cql_server::listen runs on shard 0");
    }
    listen_options opts;
    opts.reuse_port = false;
    auto l = std::make_unique<listener>(listener{reef::listen(addr, opts), kind});
    auto bound = l->socket.local_address();
    auto& ref = *l;
    _listeners.push_back(std::move(l));
    spawn(accept_loop(ref));
    return bound;
}

shard_id cql_server::pick_shard(port_kind kind, const socket_address& remote) const {
    if (kind == port_kind::shard_aware) {
        return shard_id(remote.port() % smp::count());
    }
    return shard_id(std::min_element(_load.begin(), _load.end()) - _load.begin());
}

future<> cql_server::accept_loop(listener& l) {
    auto in_gate = _gate.hold();
    for (;;) {
        accept_result ar;
        std::exception_ptr failed;
        try {
            ar = co_await l.socket.accept();
        } catch (...) {
            failed = std::current_exception();
        }
        if (failed) {
            if (_stopping) {
                co_return;
            }
            try {
                std::rethrow_exception(failed);
            } catch (const std::exception& e) {
                slog.warn("accept failed: {}; retrying in 100 ms", e.what());
            }
            co_await sleep(std::chrono::milliseconds(100));
            continue;
        }
        shard_id target = pick_shard(l.kind, ar.remote_address);
        int fd = ar.connection.release_fd();
        socket_address remote = ar.remote_address;
        ++_load[target];
        auto hand_over = [fd, remote](cql_server& s) { return s.adopt(fd, remote); };
        bool taken = co_await _container->invoke_on(target, hand_over);
        if (!taken) {
            --_load[target];
        }
    }
}

bool cql_server::adopt(int fd, socket_address remote) {
    if (_stopping) {
        ::close(fd);
        return false;
    }
    connected_socket socket(fd, remote);
    auto c = std::make_shared<connection>(*this, std::move(socket), remote);
    _connections.push_back(c);
    ++_stats.current_connections;
    ++_stats.connections_created;
    spawn(serve(std::move(c), _gate.hold()));
    return true;
}

future<> cql_server::serve(std::shared_ptr<connection> c, gate::holder in_gate) {
    try {
        co_await c->run();
    } catch (const std::exception& e) {
        slog.warn("connection from {}: {}", c->remote(), e.what());
    }
    _connections.remove(c);
    --_stats.current_connections;
    auto me = this_shard_id();
    auto unload = [me](cql_server& s) { --s._load[me]; };
    co_await _container->invoke_on(0, unload);
}

void cql_server::on_schema_change(const cql::schema_change& change) {
    for (auto& c : _connections) {
        c->on_schema_change(change);
    }
}

future<> cql_server::stop() {
    _stopping = true;
    for (auto& l : _listeners) {
        co_await l->socket.close();
    }
    for (auto& c : _connections) {
        c->shutdown();
    }
    co_await _gate.close();
    _listeners.clear();
    _metrics.clear();
}

} // namespace reef::transport
