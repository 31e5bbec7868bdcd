#include "transport/connection.hh"

#include "runtime/log.hh"
#include "runtime/smp.hh"
#include "runtime/when_all.hh"
#include "transport/request_reader.hh"
#include "transport/response_writer.hh"
#include "transport/server.hh"

#include <fmt/format.h>

#include <algorithm>

namespace reef::transport {

namespace {

logger tlog("transport");

cql::cql_error protocol_error(const std::string& message) {
    return cql::cql_error(cql::error_code::protocol_error, message);
}

} // namespace

connection::connection(cql_server& server, connected_socket socket, socket_address remote)
    : _server(server), _socket(std::move(socket)), _remote(remote),
      _slots(server.config().max_in_flight_per_connection) {}

future<> connection::run() {
    co_await when_all(read_loop(), write_loop());
    co_await _socket.close();
}

void connection::shutdown() {
    if (!_reading) {
        return;
    }
    _reading = false;
    _out_drained.broadcast();
    try {
        // Wakes a pending read with end of stream.
        _socket.shutdown_input();
    } catch (...) {
        // Already closed: the read loop is ending anyway.
    }
}

future<bool> connection::fill(size_t n) {
    while (_in.size() - _in_pos < n) {
        if (_in_pos > 0) {
            _in.erase(_in.begin(), _in.begin() + ptrdiff_t(_in_pos));
            _in_pos = 0;
        }
        auto buf = co_await _socket.read();
        if (buf.size() == 0) {
            co_return false;
        }
        _server._stats.request_bytes += buf.size();
        auto p = reinterpret_cast<const uint8_t*>(buf.get());
        _in.insert(_in.end(), p, p + buf.size());
    }
    co_return true;
}

future<> connection::skip_body(uint32_t n) {
    size_t left = n;
    for (;;) {
        size_t here = std::min(left, _in.size() - _in_pos);
        _in_pos += here;
        left -= here;
        if (left == 0) {
            co_return;
        }
        _in.clear();
        _in_pos = 0;
        if (!co_await fill(1)) {
            co_return;
        }
    }
}

future<> connection::read_loop() {
    auto& cfg = _server.config();
    try {
        while (_reading) {
            co_await _out_drained.wait(
                [this, &cfg] { return !_reading || _write_failed || _out.size() < cfg.max_pending_response_bytes; });
            if (!_reading || _write_failed) {
                break;
            }
            semaphore_units slot = co_await get_units(_slots, 1);
            // The header: decoded as soon as its bytes decide it (a bad version after 3 or 4 bytes).
            std::optional<frame_header> h;
            std::optional<frame_error> bad;
            bool eof = false;
            for (;;) {
                try {
                    h = decode_frame_header(bytes_view(_in).subspan(_in_pos), cfg.max_frame_size);
                } catch (const frame_error& e) {
                    bad = e;
                }
                if (h || bad) {
                    break;
                }
                if (!co_await fill(_in.size() - _in_pos + 1)) {
                    eof = true;
                    break;
                }
            }
            if (eof) {
                break;
            }
            if (bad) {
                ++_server._stats.errors;
                send(bad->stream(), opcode::error, encode_error(*bad), true);
                if (bad->fatal()) {
                    tlog.debug("closing the connection from {}: {}", _remote, bad->what());
                    break;
                }
                _in_pos += frame_header_size;
                co_await skip_body(bad->skip());
                continue;
            }
            size_t want = std::min<size_t>(h->length, cfg.request_memory_per_shard);
            semaphore_units memory;
            if (auto u = try_get_units(_server._memory, want)) {
                memory = std::move(*u);
            } else {
                ++_server._stats.requests_blocked_memory;
                memory = co_await get_units(_server._memory, want);
            }
            if (!co_await fill(frame_header_size + h->length)) {
                break;
            }
            auto start = _in.begin() + ptrdiff_t(_in_pos + frame_header_size);
            bytes body(start, start + h->length);
            _in_pos += frame_header_size + h->length;
            if (_in_pos == _in.size()) {
                _in.clear();
                _in_pos = 0;
            }
            spawn(process(*h, std::move(body), std::move(memory), std::move(slot), _requests.hold()));
        }
    } catch (const std::system_error& e) {
        tlog.debug("connection from {}: {}", _remote, e.what());
    }
    _reading = false;
    co_await _requests.close();
    _writer_done = true;
    _out_ready.signal();
}

future<> connection::write_loop() {
    for (;;) {
        co_await _out_ready.wait([this] { return !_out.empty() || _writer_done; });
        if (_out.empty()) {
            break;
        }
        bytes chunk;
        chunk.swap(_out);
        _out_drained.broadcast();
        bool failed = false;
        try {
            co_await _socket.write(reinterpret_cast<const char*>(chunk.data()), chunk.size());
        } catch (const std::exception& e) {
            tlog.debug("connection from {}: {}", _remote, e.what());
            failed = true;
        }
        if (failed) {
            // Nothing more can reach the client: stop reading too, drop what the requests in flight answer.
            _write_failed = true;
            _out.clear();
            shutdown();
            _out_drained.broadcast();
            break;
        }
    }
}

void connection::send(int16_t stream, opcode op, bytes body, bool may_compress) {
    if (_write_failed) {
        return;
    }
    frame_header h;
    h.stream = stream;
    h.op = uint8_t(op);
    if (may_compress && _compression != compression_algorithm::none && !body.empty()) {
        body = compress_body(_compression, body);
        h.flags |= frame_flags::compression;
    }
    h.length = uint32_t(body.size());
    auto head = encode_frame_header(h);
    _out.insert(_out.end(), head.begin(), head.end());
    _out.insert(_out.end(), body.begin(), body.end());
    _server._stats.response_bytes += head.size() + body.size();
    _out_ready.signal();
}

void connection::on_schema_change(const cql::schema_change& change) {
    if (_schema_events && !_writer_done) {
        send(-1, opcode::event, encode_schema_change_event(change), true);
    }
}

future<> connection::process(frame_header h, bytes body, semaphore_units memory, semaphore_units slot,
                             gate::holder in_gate) {
    auto& st = _server._stats;
    auto& cfg = _server.config();
    if (_server._concurrent >= cfg.max_concurrent_requests_per_shard) {
        ++st.requests_shed;
        ++st.errors;
        auto e = cql::cql_error(cql::error_code::overloaded,
                                fmt::format("too many in-flight requests (configured via "
                                            "max_concurrent_requests_per_shard): {}",
                                            _server._concurrent));
        send(h.stream, opcode::error, encode_error(e), true);
        co_return;
    }
    ++_server._concurrent;
    ++st.requests_serving;
    std::pair<opcode, bytes> r;
    std::exception_ptr failure;
    try {
        r = co_await respond(h, std::move(body));
    } catch (...) {
        failure = std::current_exception();
    }
    --_server._concurrent;
    --st.requests_serving;
    ++st.requests_served;
    ++st.requests_by_opcode[h.op];
    if (failure) {
        ++st.errors;
        try {
            std::rethrow_exception(failure);
        } catch (const cql::cql_error&) {
        } catch (const std::exception& e) {
            tlog.warn("{} from {} (stream {}) failed: {}", opcode_name(h.op), _remote, h.stream, e.what());
        } catch (...) {
        }
        r = std::make_pair(opcode::error, encode_error(failure));
    }
    // STARTUP's answer is never compressed: the client turns compression on once it has it.
    send(h.stream, r.first, std::move(r.second), h.op != uint8_t(opcode::startup));
}

std::pair<opcode, bytes> connection::supported() const {
    std::map<std::string, std::vector<std::string>> m;
    m["CQL_VERSION"] = {"3.3.1"};
    m["COMPRESSION"] = {"lz4", "snappy"};
    m["SCYLLA_SHARD"] = {std::to_string(this_shard_id())};
    m["SCYLLA_NR_SHARDS"] = {std::to_string(smp::count())};
    m["SCYLLA_PARTITIONER"] = {"org.apache.cassandra.dht.Murmur3Partitioner"};
    m["SCYLLA_SHARDING_ALGORITHM"] = {"biased-token-round-robin"};
    m["SCYLLA_SHARDING_IGNORE_MSB"] = {"12"};
    if (auto port = _server.config().shard_aware_port) {
        m["SCYLLA_SHARD_AWARE_PORT"] = {std::to_string(port)};
    }
    return {opcode::supported, encode_supported(m)};
}

std::pair<opcode, bytes> connection::startup(request_reader& in) {
    auto options = read_startup(in);
    if (_started) {
        throw protocol_error("STARTUP: the connection is already started");
    }
    if (!options.contains("CQL_VERSION")) {
        throw protocol_error("Missing value CQL_VERSION in STARTUP message");
    }
    auto algo = compression_algorithm::none;
    if (auto it = options.find("COMPRESSION"); it != options.end()) {
        auto parsed = parse_compression(it->second);
        if (!parsed) {
            throw protocol_error("Unknown compression algorithm: " + it->second);
        }
        algo = *parsed;
    }
    _compression = algo;
    _started = true;
    return {opcode::ready, {}};
}

future<std::pair<opcode, bytes>> connection::respond(const frame_header& h, bytes body) {
    auto op = opcode(h.op);
    std::string name = opcode_name(h.op);
    if (h.flags & frame_flags::compression) {
        if (_compression == compression_algorithm::none) {
            throw protocol_error(name + ": the frame's compression flag (0x01) is set, but STARTUP chose no "
                                        "compression");
        }
        body = decompress_body(_compression, body, _server.config().max_frame_size);
    }
    request_reader in(body, name);
    if (h.flags & frame_flags::custom_payload) {
        in.read_bytes_map("[bytes map] custom payload");
    }
    if (!_started && op != opcode::options && op != opcode::startup) {
        throw protocol_error("Unexpected message " + name + ", expecting STARTUP or OPTIONS");
    }
    auto& handler = _server.handler();
    switch (op) {
    case opcode::options:
        co_return supported();
    case opcode::startup:
        co_return startup(in);
    case opcode::register_: {
        for (auto& t : read_register(in)) {
            if (t == "SCHEMA_CHANGE") {
                _schema_events = true;
            } else if (t != "TOPOLOGY_CHANGE" && t != "STATUS_CHANGE") {
                throw protocol_error("REGISTER: unknown event type '" + t +
                                     "' (TOPOLOGY_CHANGE, STATUS_CHANGE or SCHEMA_CHANGE)");
            }
        }
        co_return std::make_pair(opcode::ready, bytes());
    }
    case opcode::query: {
        auto q = read_query(in);
        bool skip = q.options.skip_metadata;
        auto f = handler.execute(std::move(q.query), _client_state, std::move(q.options));
        auto r = co_await std::move(f);
        co_return std::make_pair(opcode::result, encode_result(r, skip));
    }
    case opcode::prepare: {
        auto query = read_prepare(in);
        auto f = handler.prepare(std::move(query), _client_state);
        auto r = co_await std::move(f);
        co_return std::make_pair(opcode::result, encode_result(r, false));
    }
    case opcode::execute: {
        auto e = read_execute(in);
        bool skip = e.options.skip_metadata;
        auto f = handler.execute_prepared(std::move(e.id), _client_state, std::move(e.options));
        auto r = co_await std::move(f);
        co_return std::make_pair(opcode::result, encode_result(r, skip));
    }
    case opcode::batch: {
        auto b = read_batch(in);
        auto f = handler.execute_batch(b.type, std::move(b.entries), _client_state, std::move(b.options));
        auto r = co_await std::move(f);
        co_return std::make_pair(opcode::result, encode_result(r, false));
    }
    case opcode::auth_response:
        throw protocol_error("Unexpected message AUTH_RESPONSE: the server asked for no authentication");
    default:
        break;
    }
    throw protocol_error("Unknown or unsupported opcode " + name);
}

} // namespace reef::transport
