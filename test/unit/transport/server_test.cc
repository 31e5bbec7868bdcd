// The CQL server on loopback with a fake cql::query_handler and a client written here: OPTIONS (ScyllaDB's shard
// keys), STARTUP, REGISTER and SCHEMA_CHANGE events, QUERY, PREPARE, EXECUTE (and unprepared ids), BATCH, LZ4 and
// Snappy, concurrent streams answered out of order, unsupported versions, malformed and too-big frames (the
// connection survives), garbage bytes (the server survives), connection routing (least loaded, client port %
// shards), shedding, a port in use, and stop() answering what is in flight.
#include "runtime/metrics.hh"
#include "runtime/net.hh"
#include "runtime/reactor.hh"
#include "runtime/sharded.hh"
#include "runtime/smp.hh"
#include "test/lib/reef_test.hh"
#include "transport/compression.hh"
#include "transport/request_reader.hh"
#include "transport/response_writer.hh"
#include "transport/server.hh"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <random>
#include <set>

using namespace reef;
using namespace reef::transport;
using namespace std::chrono_literals;

namespace {

// Answers QUERY "SLEEP n" after n ms, "SYNTAX" with a syntax error, "THROW" with a plain exception, "USE k" with
// Set_keyspace, "SCHEMA k" by announcing a keyspace creation to every shard's listeners; any other query with one
// row (query, number of values, consistency, page size, the connection's keyspace). Prepared ids are the query.
class fake_handler final : public cql::query_handler {
public:
    explicit fake_handler(sharded<fake_handler>* container) : _container(container) {}

    static cql::result_set echo(const std::string& query, const cql::query_options& o, const cql::client_state& st) {
        cql::result_metadata md;
        md.columns = {{"ks", "t", "query", text_type()},
                      {"ks", "t", "values", int32_type()},
                      {"ks", "t", "consistency", int32_type()},
                      {"ks", "t", "page_size", int32_type()},
                      {"ks", "t", "keyspace", text_type()}};
        cql::result_set rs(md);
        auto i32 = [](int32_t v) {
            return bytes{uint8_t(uint32_t(v) >> 24), uint8_t(uint32_t(v) >> 16), uint8_t(uint32_t(v) >> 8),
                         uint8_t(v)};
        };
        rs.add_row({to_bytes(query), i32(int32_t(o.values.size())), i32(int32_t(o.consistency)), i32(o.page_size),
                    to_bytes(st.keyspace)});
        return rs;
    }

    future<cql::result_message> execute(std::string query, cql::client_state& state,
                                        cql::query_options options) override {
        ++executed;
        if (query.starts_with("SLEEP ")) {
            co_await sleep(std::chrono::milliseconds(std::stoi(query.substr(6))));
        } else if (query == "SYNTAX") {
            throw cql::syntax_error("line 1:0 no viable alternative at input 'SYNTAX'");
        } else if (query == "THROW") {
            throw std::runtime_error("something broke");
        } else if (query.starts_with("USE ")) {
            state.keyspace = query.substr(4);
            co_return cql::result_message(cql::set_keyspace_result{state.keyspace});
        } else if (query.starts_with("SCHEMA ")) {
            cql::schema_change c;
            c.keyspace = query.substr(7);
            auto announce = [c](fake_handler& h) {
                for (auto& l : h._listeners) {
                    l(c);
                }
            };
            co_await _container->invoke_on_all(announce);
            co_return cql::result_message(c);
        }
        co_return cql::result_message(echo(query, options, state));
    }
    future<cql::result_message> prepare(std::string query, cql::client_state&) override {
        cql::prepared_result p;
        p.id = to_bytes(query);
        p.bind_variables = {{"ks", "t", "pk", int32_type()}};
        p.partition_key_bind_indexes = {0};
        co_return cql::result_message(std::move(p));
    }
    future<cql::result_message> execute_prepared(bytes id, cql::client_state& state,
                                                 cql::query_options options) override {
        if (id.empty() || id[0] != 'S') {
            cql::error_details d;
            d.unprepared_id = id;
            throw cql::cql_error(cql::error_code::unprepared, "Prepared query not found", d);
        }
        co_return cql::result_message(echo("prepared:" + std::string(id.begin(), id.end()), options, state));
    }
    future<cql::result_message> execute_batch(cql::batch_type type, std::vector<cql::batch_entry> entries,
                                              cql::client_state& state, cql::query_options options) override {
        std::string s = "batch" + std::to_string(int(type));
        for (auto& e : entries) {
            if (auto* q = std::get_if<std::string>(&e.query_or_id)) {
                s += ":" + *q;
            } else {
                auto& id = std::get<bytes>(e.query_or_id);
                s += ":id=" + std::string(id.begin(), id.end());
            }
            s += "/" + std::to_string(e.values.size());
        }
        co_return cql::result_message(echo(s, options, state));
    }
    void add_schema_change_listener(std::function<void(const cql::schema_change&)> l) override {
        _listeners.push_back(std::move(l));
    }

    size_t executed = 0;

private:
    sharded<fake_handler>* _container;
    std::vector<std::function<void(const cql::schema_change&)>> _listeners;
};

struct frame {
    uint8_t version = 0;
    uint8_t flags = 0;
    int16_t stream = 0;
    uint8_t op = 0;
    bytes body;
};

// A protocol client: frames out, frames in (decompressed when flagged).
class client {
public:
    explicit client(connected_socket s) : _s(std::move(s)) {}

    future<> send_raw(bytes b) { co_await _s.write(reinterpret_cast<const char*>(b.data()), b.size()); }

    future<> send(int16_t stream, opcode op, bytes body, uint8_t version = 4) {
        uint8_t flags = 0;
        if (compression != compression_algorithm::none && !body.empty()) {
            body = compress_body(compression, body);
            flags = frame_flags::compression;
        }
        bytes b = header(version, flags, stream, uint8_t(op), uint32_t(body.size()));
        b.insert(b.end(), body.begin(), body.end());
        co_await send_raw(std::move(b));
    }

    static bytes header(uint8_t version, uint8_t flags, int16_t stream, uint8_t op, uint32_t len) {
        return bytes{version, flags, uint8_t(uint16_t(stream) >> 8), uint8_t(stream), op, uint8_t(len >> 24),
                     uint8_t(len >> 16), uint8_t(len >> 8), uint8_t(len)};
    }

    // The next frame; std::nullopt at end of stream.
    future<std::optional<frame>> recv() {
        if (!co_await fill(9)) {
            co_return std::nullopt;
        }
        frame f;
        f.version = _in[0];
        f.flags = _in[1];
        f.stream = int16_t(_in[2] << 8 | _in[3]);
        f.op = _in[4];
        uint32_t len = uint32_t(_in[5]) << 24 | uint32_t(_in[6]) << 16 | uint32_t(_in[7]) << 8 | _in[8];
        BOOST_REQUIRE(co_await fill(9 + len));
        f.body.assign(_in.begin() + 9, _in.begin() + 9 + len);
        _in.erase(_in.begin(), _in.begin() + 9 + len);
        if (f.flags & frame_flags::compression) {
            BOOST_REQUIRE(compression != compression_algorithm::none);
            f.body = decompress_body(compression, f.body, 1 << 30);
        }
        co_return f;
    }

    future<frame> request(int16_t stream, opcode op, bytes body) {
        co_await send(stream, op, std::move(body));
        auto f = co_await recv();
        BOOST_REQUIRE(f);
        BOOST_CHECK_EQUAL(f->stream, stream);
        co_return std::move(*f);
    }

    future<> close() { co_await _s.close(); }
    connected_socket& socket() { return _s; }

    compression_algorithm compression = compression_algorithm::none;

private:
    future<bool> fill(size_t n) {
        while (_in.size() < n) {
            auto b = co_await _s.read();
            if (b.size() == 0) {
                co_return false;
            }
            _in.insert(_in.end(), b.get(), b.get() + b.size());
        }
        co_return true;
    }
    connected_socket _s;
    bytes _in;
};

bytes string_map(const std::map<std::string, std::string>& m) {
    response_writer w;
    w.write_short(uint16_t(m.size()));
    for (auto& [k, v] : m) {
        w.write_string(k);
        w.write_string(v);
    }
    return w.release();
}

bytes query_body(const std::string& q, uint8_t flags = 0, std::vector<bytes> values = {}) {
    response_writer w;
    w.write_long_string(q);
    w.write_short(uint16_t(cql::consistency_level::local_one));
    if (!values.empty()) {
        flags |= 0x01;
    }
    w.write_byte(flags | 0x04);
    if (!values.empty()) {
        w.write_short(uint16_t(values.size()));
        for (auto& v : values) {
            w.write_bytes(v);
        }
    }
    w.write_int(50);
    return w.release();
}

// The error code and message of an ERROR body.
std::pair<int32_t, std::string> error_of(const frame& f) {
    BOOST_REQUIRE_EQUAL(f.op, uint8_t(opcode::error));
    request_reader r(f.body, "ERROR");
    int32_t code = r.read_int("code");
    return {code, r.read_string("message")};
}

// The first row's first cell of a Rows result with metadata, and the row as strings/ints.
std::string first_cell(const frame& f) {
    BOOST_REQUIRE_MESSAGE(f.op == uint8_t(opcode::result), "op " << int(f.op) << " " <<
                          (f.op == 0 ? error_of(f).second : std::string()));
    request_reader r(f.body, "RESULT");
    BOOST_REQUIRE_EQUAL(r.read_int("kind"), 2);
    int32_t flags = r.read_int("flags");
    int32_t cols = r.read_int("count");
    if (flags & 0x0002) {
        r.read_bytes("paging");
    }
    if (!(flags & 0x0004)) {
        if (flags & 0x0001) {
            r.read_string("ks");
            r.read_string("t");
        }
        for (int i = 0; i < cols; ++i) {
            r.read_string("name");
            r.read_short("type");
        }
    }
    BOOST_REQUIRE_EQUAL(r.read_int("rows"), 1);
    auto b = r.read_bytes("cell");
    BOOST_REQUIRE(b);
    return std::string(b->begin(), b->end());
}

std::map<std::string, std::vector<std::string>> supported_of(const frame& f) {
    BOOST_REQUIRE_EQUAL(f.op, uint8_t(opcode::supported));
    request_reader r(f.body, "SUPPORTED");
    return r.read_string_multimap("options");
}

bytes string_list(std::initializer_list<std::string> l) {
    response_writer w;
    w.write_string_list(std::vector<std::string>(l));
    return w.release();
}

bytes startup_body(std::string compression) {
    std::map<std::string, std::string> opts = {{"CQL_VERSION", "3.0.0"}, {"DRIVER_NAME", "test"}};
    if (!compression.empty()) {
        opts["COMPRESSION"] = compression;
    }
    return string_map(opts);
}

bytes startup_without_version() { return string_map({{"DRIVER_NAME", "x"}}); }
bytes startup_with_compression(std::string c) { return string_map({{"CQL_VERSION", "3.4.0"}, {"COMPRESSION", c}}); }
bytes startup_with_scylla_key() {
    return string_map({{"CQL_VERSION", "3.4.0"}, {"SCYLLA_LWT_ADD_METADATA_MARK", ""}});
}
bytes some_bytes(size_t n, uint8_t v) { return bytes(n, v); }
std::vector<std::string> algorithms() { return {"lz4", "snappy"}; }
std::vector<uint8_t> bad_versions() { return {3, 5, 0x42}; }
bytes not_lz4() { return {0, 0, 0, 50, 1, 2, 3}; }
bytes query_with_two_values(const std::string& q) { return query_body(q, 0, {bytes{1}, bytes{2}}); }

struct test_server {
    sharded<fake_handler> handlers;
    sharded<cql_server> servers;
    socket_address address;

    future<> start(server_config cfg = {}, port_kind kind = port_kind::least_loaded) {
        co_await handlers.start(&handlers);
        auto* h = &handlers;
        std::function<cql::query_handler&()> of_shard = [h]() -> cql::query_handler& { return h->local(); };
        co_await servers.start(&servers, of_shard, cfg);
        address = servers.local().listen(socket_address("127.0.0.1", 0), kind);
    }
    future<> stop() {
        co_await servers.stop();
        co_await handlers.stop();
    }
    future<client> connect_client() {
        auto s = co_await reef::connect(address);
        co_return client(std::move(s));
    }
};

future<client> started_client(test_server& srv, std::string compression = "") {
    auto c = co_await srv.connect_client();
    auto body = startup_body(compression);
    auto f = co_await c.request(1, opcode::startup, std::move(body));
    BOOST_CHECK_EQUAL(f.op, uint8_t(opcode::ready));
    BOOST_CHECK_EQUAL(f.flags, 0);
    BOOST_CHECK_EQUAL(f.version, 0x84);
    if (!compression.empty()) {
        c.compression = *parse_compression(compression);
    }
    co_return c;
}

} // namespace

REEF_TEST_CASE(test_options_startup_query_prepare_execute_batch) {
    test_server srv;
    co_await srv.start();
    auto c = co_await srv.connect_client();

    auto f = co_await c.request(0, opcode::options, bytes());
    auto sup = supported_of(f);
    BOOST_CHECK(sup["CQL_VERSION"] == std::vector<std::string>{"3.3.1"});
    BOOST_CHECK((sup["COMPRESSION"] == std::vector<std::string>{"lz4", "snappy"}));
    BOOST_CHECK(sup["SCYLLA_NR_SHARDS"] == std::vector<std::string>{std::to_string(smp::count())});
    BOOST_CHECK(sup["SCYLLA_PARTITIONER"] ==
                std::vector<std::string>{"org.apache.cassandra.dht.Murmur3Partitioner"});
    BOOST_CHECK(sup["SCYLLA_SHARDING_ALGORITHM"] == std::vector<std::string>{"biased-token-round-robin"});
    BOOST_CHECK(sup["SCYLLA_SHARDING_IGNORE_MSB"] == std::vector<std::string>{"12"});
    BOOST_CHECK_EQUAL(sup["SCYLLA_SHARD"].size(), 1u);
    BOOST_CHECK(!sup.contains("SCYLLA_SHARD_AWARE_PORT"));

    f = co_await c.request(2, opcode::query, query_body("SELECT 1"));
    auto err = error_of(f);
    BOOST_CHECK_EQUAL(err.first, 0x000A);
    BOOST_CHECK_EQUAL(err.second, "Unexpected message QUERY, expecting STARTUP or OPTIONS");

    f = co_await c.request(3, opcode::startup, startup_without_version());
    BOOST_CHECK_EQUAL(error_of(f).second, "Missing value CQL_VERSION in STARTUP message");
    f = co_await c.request(3, opcode::startup, startup_with_compression("zip"));
    BOOST_CHECK_EQUAL(error_of(f).second, "Unknown compression algorithm: zip");
    f = co_await c.request(3, opcode::startup, startup_with_scylla_key());
    BOOST_CHECK_EQUAL(f.op, uint8_t(opcode::ready));
    BOOST_CHECK(f.body.empty());

    f = co_await c.request(4, opcode::query, query_with_two_values("SELECT x"));
    BOOST_CHECK_EQUAL(first_cell(f), "SELECT x");
    f = co_await c.request(5, opcode::query, query_body("USE ks1"));
    {
        request_reader r(f.body, "RESULT");
        BOOST_CHECK_EQUAL(r.read_int("kind"), 3);
        BOOST_CHECK_EQUAL(r.read_string("ks"), "ks1");
    }
    f = co_await c.request(6, opcode::query, query_body("SYNTAX"));
    BOOST_CHECK_EQUAL(error_of(f).first, 0x2000);
    f = co_await c.request(7, opcode::query, query_body("THROW"));
    BOOST_CHECK(error_of(f) == std::make_pair(int32_t(0), std::string("something broke")));

    // PREPARE, EXECUTE (skip_metadata: No_metadata), EXECUTE of an unknown id.
    {
        response_writer w;
        w.write_long_string("SELECT ?");
        f = co_await c.request(8, opcode::prepare, w.release());
        request_reader r(f.body, "RESULT");
        BOOST_CHECK_EQUAL(r.read_int("kind"), 4);
        BOOST_CHECK(r.read_short_bytes("id") == to_bytes("SELECT ?"));
    }
    {
        response_writer w;
        w.write_short_bytes(to_bytes("SELECT ?"));
        w.write_short(1);
        w.write_byte(0x03);
        w.write_short(1);
        w.write_int(4);
        w.write_int(7);
        f = co_await c.request(9, opcode::execute, w.release());
        BOOST_CHECK_EQUAL(first_cell(f), "prepared:SELECT ?");
        request_reader r(f.body, "RESULT");
        r.read_int("kind");
        BOOST_CHECK_EQUAL(r.read_int("flags"), 0x0004);
    }
    {
        response_writer w;
        w.write_short_bytes(bytes{0xde, 0xad});
        w.write_short(1);
        w.write_byte(0);
        f = co_await c.request(10, opcode::execute, w.release());
        BOOST_CHECK_EQUAL(error_of(f).first, 0x2500);
        request_reader r(f.body, "ERROR");
        r.read_int("code");
        r.read_string("msg");
        BOOST_CHECK(r.read_short_bytes("id") == (bytes{0xde, 0xad}));
    }
    {
        response_writer w;
        w.write_byte(1);
        w.write_short(2);
        w.write_byte(0);
        w.write_long_string("INSERT a");
        w.write_short(1);
        w.write_int(-1);
        w.write_byte(1);
        w.write_short_bytes(to_bytes("SID"));
        w.write_short(0);
        w.write_short(uint16_t(cql::consistency_level::quorum));
        w.write_byte(0);
        f = co_await c.request(11, opcode::batch, w.release());
        BOOST_CHECK_EQUAL(first_cell(f), "batch1:INSERT a/1:id=SID/0");
    }
    // AUTH_RESPONSE is refused; a custom payload is skipped.
    auto token = some_bytes(4, 0);
    f = co_await c.request(12, opcode::auth_response, std::move(token));
    BOOST_CHECK_EQUAL(error_of(f).first, 0x000A);
    {
        response_writer w;
        w.write_short(1);
        w.write_string("k");
        w.write_bytes(bytes{1, 2});
        auto q = query_body("SELECT payload");
        w.write_raw(q);
        bytes b = client::header(4, frame_flags::custom_payload | frame_flags::tracing, 13, uint8_t(opcode::query),
                                 uint32_t(w.data().size()));
        b.insert(b.end(), w.data().begin(), w.data().end());
        co_await c.send_raw(std::move(b));
        auto r = co_await c.recv();
        BOOST_CHECK_EQUAL(first_cell(*r), "SELECT payload");
    }
    co_await c.close();
    co_await srv.stop();
}

REEF_TEST_CASE(test_register_and_schema_change_events) {
    test_server srv;
    co_await srv.start();
    // Two registered connections (on both shards, least loaded) and one that did not register.
    std::vector<client> clients;
    for (int i = 0; i < 3; ++i) {
        clients.push_back(co_await started_client(srv));
    }
    auto reg = string_list({"SCHEMA_CHANGE", "TOPOLOGY_CHANGE"});
    for (int i = 0; i < 2; ++i) {
        auto f = co_await clients[i].request(5, opcode::register_, reg);
        BOOST_CHECK_EQUAL(f.op, uint8_t(opcode::ready));
    }
    {
        auto bad = string_list({"NOPE"});
        auto f = co_await clients[2].request(5, opcode::register_, std::move(bad));
        BOOST_CHECK(error_of(f).second.find("NOPE") != std::string::npos);
    }
    auto f = co_await clients[2].request(6, opcode::query, query_body("SCHEMA ks9"));
    BOOST_CHECK_EQUAL(f.op, uint8_t(opcode::result));
    for (int i = 0; i < 2; ++i) {
        auto e = co_await clients[i].recv();
        BOOST_REQUIRE(e);
        BOOST_CHECK_EQUAL(e->op, uint8_t(opcode::event));
        BOOST_CHECK_EQUAL(e->stream, -1);
        request_reader r(e->body, "EVENT");
        BOOST_CHECK_EQUAL(r.read_string("type"), "SCHEMA_CHANGE");
        BOOST_CHECK_EQUAL(r.read_string("change"), "CREATED");
        BOOST_CHECK_EQUAL(r.read_string("target"), "KEYSPACE");
        BOOST_CHECK_EQUAL(r.read_string("ks"), "ks9");
    }
    // The unregistered one got only its RESULT: its next frame answers its next request.
    f = co_await clients[2].request(7, opcode::query, query_body("SELECT after"));
    BOOST_CHECK_EQUAL(first_cell(f), "SELECT after");
    for (auto& c : clients) {
        co_await c.close();
    }
    co_await srv.stop();
}

REEF_TEST_CASE(test_compression_both_ways) {
    test_server srv;
    co_await srv.start();
    for (std::string algo : algorithms()) {
        auto c = co_await started_client(srv, algo);
        std::string big(20000, 'q');
        auto f = co_await c.request(2, opcode::query, query_body("SELECT " + big));
        BOOST_CHECK(f.flags & frame_flags::compression);
        BOOST_CHECK_EQUAL(first_cell(f), "SELECT " + big);
        // An uncompressed request is taken too.
        c.compression = compression_algorithm::none;
        co_await c.send(3, opcode::query, query_body("SELECT plain"));
        c.compression = *parse_compression(algo);
        auto g = co_await c.recv();
        BOOST_CHECK_EQUAL(first_cell(*g), "SELECT plain");
        // A body that does not decompress: a protocol_error, and the connection goes on.
        bytes junk = not_lz4();
        bytes b = client::header(4, frame_flags::compression, 4, uint8_t(opcode::query), uint32_t(junk.size()));
        b.insert(b.end(), junk.begin(), junk.end());
        co_await c.send_raw(std::move(b));
        auto e = co_await c.recv();
        BOOST_CHECK(error_of(*e).second.find("Invalid " + algo + " compressed body") == 0);
        f = co_await c.request(5, opcode::query, query_body("SELECT again"));
        BOOST_CHECK_EQUAL(first_cell(f), "SELECT again");
        co_await c.close();
    }
    // Compressed frames before STARTUP chose an algorithm are refused.
    auto c = co_await srv.connect_client();
    c.compression = compression_algorithm::lz4;
    auto one_byte = some_bytes(1, 0);
    co_await c.send(1, opcode::options, std::move(one_byte));
    c.compression = compression_algorithm::none;
    auto f = co_await c.recv();
    BOOST_CHECK(error_of(*f).second.find("compression flag") != std::string::npos);
    co_await c.close();
    co_await srv.stop();
}

REEF_TEST_CASE(test_concurrent_streams_answered_as_they_complete) {
    test_server srv;
    co_await srv.start();
    auto c = co_await started_client(srv);
    co_await c.send(1, opcode::query, query_body("SLEEP 300"));
    co_await c.send(2, opcode::query, query_body("SLEEP 0"));
    auto first = co_await c.recv();
    auto second = co_await c.recv();
    BOOST_CHECK_EQUAL(first->stream, 2);
    BOOST_CHECK_EQUAL(second->stream, 1);
    // Many at once, random delays: every stream answered once, with its own query.
    std::mt19937 rng(3);
    std::map<int16_t, std::string> sent;
    for (int16_t s = 10; s < 210; ++s) {
        auto q = "SLEEP " + std::to_string(rng() % 30) + " #" + std::to_string(s);
        sent[s] = q;
        co_await c.send(s, opcode::query, query_body(q));
    }
    std::map<int16_t, std::string> got;
    bool reordered = false;
    int16_t last = 0;
    for (size_t i = 0; i < sent.size(); ++i) {
        auto f = co_await c.recv();
        BOOST_REQUIRE(f);
        BOOST_CHECK(!got.contains(f->stream));
        got[f->stream] = first_cell(*f);
        reordered |= f->stream < last;
        last = f->stream;
    }
    BOOST_CHECK(got == sent);
    BOOST_CHECK(reordered);
    co_await c.close();
    co_await srv.stop();
}

REEF_TEST_CASE(test_unsupported_version_and_malformed_frames) {
    test_server srv;
    server_config cfg;
    cfg.max_frame_size = 1 << 20;
    co_await srv.start(cfg);
    for (uint8_t v : bad_versions()) {
        auto c = co_await srv.connect_client();
        co_await c.send(7, opcode::options, bytes(), v);
        auto f = co_await c.recv();
        BOOST_REQUIRE(f);
        BOOST_CHECK_EQUAL(f->version, 0x84);
        BOOST_CHECK_EQUAL(f->stream, 7);
        BOOST_CHECK(error_of(*f) == std::make_pair(int32_t(0x000A),
                                                   "Invalid or unsupported protocol version (" + std::to_string(v) +
                                                       "); the lowest supported version is 4 and the greatest is 4"));
        BOOST_CHECK(!co_await c.recv());  // closed
        co_await c.close();
    }
    auto c = co_await started_client(srv);
    // A truncated QUERY body: the error names the field; the connection goes on.
    auto body = query_body("SELECT cut");
    body.resize(body.size() - 3);
    auto f = co_await c.request(3, opcode::query, body);
    BOOST_CHECK_EQUAL(error_of(f).second, "QUERY: [int] result page size at offset 17: needs 4 bytes, 1 left in the 18-byte body");
    // Too big: refused, the body skipped without being buffered whole, the connection goes on.
    bytes big = client::header(4, 0, 4, uint8_t(opcode::query), (1 << 20) - 8);
    big.resize(big.size() + (1 << 20) - 8, 0xee);
    co_await c.send_raw(std::move(big));
    auto e = co_await c.recv();
    BOOST_CHECK_EQUAL(e->stream, 4);
    BOOST_CHECK(error_of(*e) == std::make_pair(int32_t(0x2200),
                                               std::string("Request is too big: length 1048577 exceeds maximum "
                                                           "allowed length 1048576.")));
    // An unknown opcode, then a good query.
    auto three = some_bytes(3, 1);
    co_await c.send(5, opcode(0x33), std::move(three));
    e = co_await c.recv();
    BOOST_CHECK(error_of(*e).second.find("Unknown or unsupported opcode") == 0);
    f = co_await c.request(6, opcode::query, query_body("SELECT still here"));
    BOOST_CHECK_EQUAL(first_cell(f), "SELECT still here");
    // A negative length closes the connection after the error.
    co_await c.send_raw(client::header(4, 0, 8, uint8_t(opcode::query), 0xffffffffu));
    e = co_await c.recv();
    BOOST_CHECK_EQUAL(error_of(*e).first, 0x000A);
    BOOST_CHECK(!co_await c.recv());
    co_await c.close();
    co_await srv.stop();
}

REEF_TEST_CASE(test_garbage_bytes_never_take_the_server_down) {
    test_server srv;
    server_config cfg;
    cfg.max_frame_size = 64 << 10;
    co_await srv.start(cfg);
    std::mt19937_64 rng(11);
    for (int i = 0; i < 30; ++i) {
        auto c = co_await srv.connect_client();
        bytes junk(1 + rng() % 2000);
        for (auto& b : junk) {
            b = uint8_t(rng());
        }
        if (i % 2) {
            junk[0] = 0x04;  // a v4 header, so the frames go further
        }
        co_await c.send_raw(std::move(junk));
        c.socket().shutdown_output();
        // Whatever comes back is whole frames, each an ERROR (or a response), then the end.
        for (;;) {
            auto f = co_await c.recv();
            if (!f) {
                break;
            }
            BOOST_CHECK_EQUAL(f->version, 0x84);
        }
        co_await c.close();
    }
    auto c = co_await started_client(srv);
    auto f = co_await c.request(1, opcode::query, query_body("SELECT alive"));
    BOOST_CHECK_EQUAL(first_cell(f), "SELECT alive");
    co_await c.close();
    co_await srv.stop();
}

REEF_TEST_CASE(test_connections_go_to_the_least_loaded_shard) {
    test_server srv;
    co_await srv.start();
    std::vector<client> clients;
    std::map<std::string, int> per_shard;
    for (unsigned i = 0; i < 2 * smp::count(); ++i) {
        clients.push_back(co_await srv.connect_client());
        auto f = co_await clients.back().request(0, opcode::options, bytes());
        per_shard[supported_of(f)["SCYLLA_SHARD"][0]]++;
    }
    BOOST_CHECK_EQUAL(per_shard.size(), smp::count());
    for (auto& [shard, n] : per_shard) {
        BOOST_CHECK_EQUAL(n, 2);
    }
    for (auto& c : clients) {
        co_await c.close();
    }
    co_await srv.stop();
}

REEF_TEST_CASE(test_shard_aware_port_routes_by_client_port) {
    test_server srv;
    server_config cfg;
    cfg.shard_aware_port = 19042;
    co_await srv.start(cfg, port_kind::shard_aware);
    unsigned checked = 0;
    for (uint16_t port = 50000; checked < 2 * smp::count() && port < 50200; ++port) {
        // A client bound to a chosen local port, as shard-aware drivers do.
        int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        BOOST_REQUIRE(fd >= 0);
        int one = 1;
        ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        socket_address local("127.0.0.1", port);
        if (::bind(fd, local.as_sockaddr(), local.length()) < 0) {
            ::close(fd);
            continue;
        }
        // Loopback connects complete in the kernel, before the server accepts.
        if (::connect(fd, srv.address.as_sockaddr(), srv.address.length()) < 0) {
            ::close(fd);
            continue;
        }
        client c{connected_socket(fd, srv.address)};
        auto f = co_await c.request(0, opcode::options, bytes());
        auto sup = supported_of(f);
        BOOST_CHECK_EQUAL(sup["SCYLLA_SHARD"][0], std::to_string(port % smp::count()));
        BOOST_CHECK(sup["SCYLLA_SHARD_AWARE_PORT"] == std::vector<std::string>{"19042"});
        co_await c.close();
        ++checked;
    }
    BOOST_CHECK_EQUAL(checked, 2 * smp::count());
    co_await srv.stop();
}

REEF_TEST_CASE(test_requests_over_the_shard_cap_are_shed) {
    test_server srv;
    server_config cfg;
    cfg.max_concurrent_requests_per_shard = 2;
    co_await srv.start(cfg);
    auto c = co_await started_client(srv);
    for (int16_t s = 1; s <= 5; ++s) {
        co_await c.send(s, opcode::query, query_body("SLEEP 200"));
    }
    int overloaded = 0, served = 0;
    for (int i = 0; i < 5; ++i) {
        auto f = co_await c.recv();
        if (f->op == uint8_t(opcode::error)) {
            BOOST_CHECK_EQUAL(error_of(*f).first, 0x1001);
            ++overloaded;
        } else {
            ++served;
        }
    }
    BOOST_CHECK_EQUAL(overloaded, 3);
    BOOST_CHECK_EQUAL(served, 2);
    auto shed = co_await srv.servers.map_reduce0([](cql_server& s) { return s.stats().requests_shed; }, uint64_t(0),
                                                 std::plus<uint64_t>());
    BOOST_CHECK_EQUAL(shed, 3u);
    // The metric carries ScyllaDB's name.
    auto on_shard = [](cql_server&) {
        uint64_t v = 0;
        for (auto& s : metrics::collect()) {
            if (s.group == "transport" && s.name == "requests_shed") {
                v += std::get<uint64_t>(s.value);
            }
        }
        return v;
    };
    auto from_metrics = co_await srv.servers.map_reduce0(on_shard, uint64_t(0), std::plus<uint64_t>());
    BOOST_CHECK_EQUAL(from_metrics, 3u);
    co_await c.close();
    co_await srv.stop();
}

REEF_TEST_CASE(test_a_port_in_use_names_the_address) {
    test_server srv;
    co_await srv.start();
    try {
        srv.servers.local().listen(srv.address, port_kind::least_loaded);
        BOOST_FAIL("listened twice on one port");
    } catch (const std::system_error& e) {
        BOOST_CHECK(std::string(e.what()).find(srv.address.to_string()) != std::string::npos);
        BOOST_CHECK_EQUAL(e.code().value(), EADDRINUSE);
    }
    co_await srv.stop();
}

REEF_TEST_CASE(test_stop_answers_requests_in_flight) {
    test_server srv;
    co_await srv.start();
    auto busy = co_await started_client(srv);
    auto idle = co_await started_client(srv);
    co_await busy.send(1, opcode::query, query_body("SLEEP 200"));
    co_await sleep(50ms);
    co_await srv.servers.stop();
    auto f = co_await busy.recv();
    BOOST_REQUIRE(f);
    BOOST_CHECK_EQUAL(first_cell(*f), "SLEEP 200");
    BOOST_CHECK(!co_await busy.recv());
    BOOST_CHECK(!co_await idle.recv());
    // Nobody listens any more.
    bool refused = false;
    try {
        auto s = co_await reef::connect(srv.address);
    } catch (const std::system_error&) {
        refused = true;
    }
    BOOST_CHECK(refused);
    co_await busy.close();
    co_await idle.close();
    co_await srv.handlers.stop();
}

namespace {

// Six 100 ms requests on one connection under cfg: all answered (never shed); returns how long they took and how
// many frames waited for request memory.
future<std::pair<int64_t, uint64_t>> six_slow_requests(server_config cfg) {
    test_server srv;
    co_await srv.start(cfg);
    auto c = co_await started_client(srv);
    auto start = steady_clock_type::now();
    for (int16_t s = 1; s <= 6; ++s) {
        co_await c.send(s, opcode::query, query_body("SLEEP 100 " + std::string(60, 'x')));
    }
    std::set<int16_t> streams;
    for (int i = 0; i < 6; ++i) {
        auto f = co_await c.recv();
        BOOST_REQUIRE(f);
        BOOST_CHECK_EQUAL(f->op, uint8_t(opcode::result));
        streams.insert(f->stream);
    }
    BOOST_CHECK_EQUAL(streams.size(), 6u);
    auto took = std::chrono::duration_cast<std::chrono::milliseconds>(steady_clock_type::now() - start).count();
    auto blocked = co_await srv.servers.map_reduce0([](cql_server& s) { return s.stats().requests_blocked_memory; },
                                                    uint64_t(0), std::plus<uint64_t>());
    co_await c.close();
    co_await srv.stop();
    co_return std::make_pair(int64_t(took), blocked);
}

} // namespace

REEF_TEST_CASE(test_in_flight_cap_and_request_memory_hold_requests_back) {
    // Two in flight per connection: three waves.
    server_config two;
    two.max_in_flight_per_connection = 2;
    auto [took, blocked] = co_await six_slow_requests(two);
    BOOST_CHECK_GE(took, 290);
    BOOST_CHECK_EQUAL(blocked, 0u);
    // Request memory for less than two bodies: one at a time.
    server_config small;
    small.request_memory_per_shard = 100;
    auto [took2, blocked2] = co_await six_slow_requests(small);
    BOOST_CHECK_GE(took2, 590);
    BOOST_CHECK_GT(blocked2, 0u);
    BOOST_TEST_MESSAGE("in-flight cap 2: " << took << " ms; memory for one body: " << took2 << " ms");
}

REEF_TEST_CASE(test_a_client_leaving_with_requests_in_flight) {
    test_server srv;
    co_await srv.start();
    for (int i = 0; i < 10; ++i) {
        auto c = co_await started_client(srv);
        for (int16_t s = 1; s <= 5; ++s) {
            co_await c.send(s, opcode::query, query_body("SLEEP " + std::to_string(s * 10)));
        }
        co_await c.close();
    }
    // Every connection ends once its requests are done, and is counted out on its shard and on shard 0.
    auto open = [&srv]() -> future<int64_t> {
        co_return co_await srv.servers.map_reduce0([](cql_server& s) { return s.stats().current_connections; },
                                                   int64_t(0), std::plus<int64_t>());
    };
    for (int i = 0; i < 100 && co_await open() > 0; ++i) {
        co_await sleep(20ms);
    }
    BOOST_CHECK_EQUAL(co_await open(), 0);
    auto c = co_await started_client(srv);
    auto f = co_await c.request(1, opcode::query, query_body("SELECT fine"));
    BOOST_CHECK_EQUAL(first_cell(f), "SELECT fine");
    co_await c.close();
    co_await srv.stop();
}
