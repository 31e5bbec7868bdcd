// connection: one client connection on its shard: reads frames, runs each request in its own fiber (stream ids
// let them overlap), writes responses as they complete, and pushes SCHEMA_CHANGE events if registered. A
// malformed frame gets an ERROR on its stream; only a frame that cannot be delimited closes the connection.
#pragma once

#include "cql/cql_statement.hh"
#include "runtime/condition_variable.hh"
#include "runtime/gate.hh"
#include "runtime/net.hh"
#include "runtime/semaphore.hh"
#include "transport/compression.hh"
#include "transport/frame.hh"

#include <cstdint>
#include <exception>
#include <map>
#include <utility>
#include <string>
#include <vector>

namespace reef::transport {

class cql_server;
class request_reader;

class connection {
public:
    connection(cql_server& server, connected_socket socket, socket_address remote);

    // Serves until the client closes, a fatal frame error, or shutdown(); returns once every request has been
    // answered and the responses written (or the socket failed), with the socket closed.
    future<> run();
    // Stops reading new requests: the requests in flight still get their responses. Idempotent.
    void shutdown();
    // Queues a SCHEMA_CHANGE event if the client registered for it.
    void on_schema_change(const cql::schema_change& change);

    const socket_address& remote() const noexcept { return _remote; }

private:
    future<> read_loop();
    future<> write_loop();
    // Makes the read buffer hold at least n unread bytes; false at end of stream.
    future<bool> fill(size_t n);
    future<> skip_body(uint32_t n);
    future<> process(frame_header h, bytes body, semaphore_units memory, semaphore_units slot,
                     gate::holder in_gate);
    // The response to one request: its opcode and body; throws what the request's handling throws.
    future<std::pair<opcode, bytes>> respond(const frame_header& h, bytes body);
    std::pair<opcode, bytes> startup(request_reader& in);
    std::pair<opcode, bytes> supported() const;
    void send(int16_t stream, opcode op, bytes body, bool may_compress);

    cql_server& _server;
    connected_socket _socket;
    socket_address _remote;
    cql::client_state _client_state;
    compression_algorithm _compression = compression_algorithm::none;
    bool _started = false;
    bool _schema_events = false;
    // Reading: a buffer and the offset of its first unread byte.
    bytes _in;
    size_t _in_pos = 0;
    bool _reading = true;
    // Requests of this connection in flight.
    semaphore _slots;
    gate _requests;
    // Writing: frames waiting for the writer.
    bytes _out;
    bool _writer_done = false;  // no more frames: write what is left, then end
    bool _write_failed = false;
    condition_variable _out_ready;
    condition_variable _out_drained;
};

} // namespace reef::transport
