// The frame codec: the header (every prefix, every refusal and whether it is fatal), the primitive readers against
// the writers (random round trips), the request messages (every flag; every truncation and random corruption of a
// valid body is a protocol_error naming the field and offset, never a crash), RESULT and ERROR bodies decoded by
// an independent reader of the spec, and LZ4 / Snappy round trips and refusals.
#include "transport/compression.hh"
#include "transport/frame.hh"
#include "transport/request_reader.hh"
#include "transport/response_writer.hh"

#include <boost/test/unit_test.hpp>

#include <random>

using namespace reef;
using namespace reef::transport;

namespace {

bytes request_header(uint8_t version, uint8_t flags, int16_t stream, uint8_t op, uint32_t length) {
    return bytes{version, flags, uint8_t(uint16_t(stream) >> 8), uint8_t(stream), op, uint8_t(length >> 24),
                 uint8_t(length >> 16), uint8_t(length >> 8), uint8_t(length)};
}

template <typename F>
std::string protocol_error_of(F f) {
    try {
        f();
    } catch (const cql::cql_error& e) {
        BOOST_REQUIRE(e.code() == cql::error_code::protocol_error);
        return e.what();
    }
    BOOST_FAIL("no protocol_error");
    return {};
}

// A reader of response bodies written from the spec, independent of response_writer.
struct spec_reader {
    bytes_view in;
    size_t pos = 0;
    uint8_t byte() {
        BOOST_REQUIRE(pos < in.size());
        return in[pos++];
    }
    uint16_t u16() {
        uint16_t a = byte();
        return uint16_t(a << 8 | byte());
    }
    int32_t i32() {
        uint32_t v = 0;
        for (int i = 0; i < 4; ++i) {
            v = v << 8 | byte();
        }
        return int32_t(v);
    }
    std::string str() {
        uint16_t n = u16();
        BOOST_REQUIRE(pos + n <= in.size());
        std::string s(reinterpret_cast<const char*>(in.data() + pos), n);
        pos += n;
        return s;
    }
    std::optional<bytes> bytes_() {
        int32_t n = i32();
        if (n < 0) {
            return std::nullopt;
        }
        BOOST_REQUIRE(pos + size_t(n) <= in.size());
        bytes b(in.begin() + pos, in.begin() + pos + n);
        pos += n;
        return b;
    }
    // A type option as text: native ids by their spec names, collections with their parameters.
    std::string option() {
        uint16_t id = u16();
        switch (id) {
        case 0x0000: return "custom(" + str() + ")";
        case 0x0001: return "ascii";
        case 0x0002: return "bigint";
        case 0x0003: return "blob";
        case 0x0004: return "boolean";
        case 0x0005: return "counter";
        case 0x0006: return "decimal";
        case 0x0007: return "double";
        case 0x0008: return "float";
        case 0x0009: return "int";
        case 0x000B: return "timestamp";
        case 0x000C: return "uuid";
        case 0x000D: return "varchar";
        case 0x000E: return "varint";
        case 0x000F: return "timeuuid";
        case 0x0010: return "inet";
        case 0x0011: return "date";
        case 0x0012: return "time";
        case 0x0013: return "smallint";
        case 0x0014: return "tinyint";
        case 0x0020: return "list<" + option() + ">";
        case 0x0021: {
            auto k = option();
            return "map<" + k + "," + option() + ">";
        }
        case 0x0022: return "set<" + option() + ">";
        case 0x0030: {
            auto ks = str();
            auto name = str();
            std::string s = "udt " + ks + "." + name + "{";
            uint16_t n = u16();
            for (uint16_t i = 0; i < n; ++i) {
                s += (i ? "," : "") + str();
                s += ":" + option();
            }
            return s + "}";
        }
        case 0x0031: {
            std::string s = "tuple<";
            uint16_t n = u16();
            for (uint16_t i = 0; i < n; ++i) {
                s += (i ? "," : "") + option();
            }
            return s + ">";
        }
        }
        BOOST_FAIL("unknown option id " << id);
        return {};
    }
    bool done() const { return pos == in.size(); }
};

} // namespace

BOOST_AUTO_TEST_SUITE(frame_header_tests)

BOOST_AUTO_TEST_CASE(test_header_decodes_and_every_prefix_waits) {
    auto h = request_header(0x04, 0x05, -2, 0x07, 1234);
    for (size_t n = 0; n < h.size(); ++n) {
        BOOST_CHECK(!decode_frame_header(bytes_view(h).first(n), default_max_frame_size));
    }
    auto d = decode_frame_header(h, default_max_frame_size);
    BOOST_REQUIRE(d);
    BOOST_CHECK_EQUAL(d->flags, 0x05);
    BOOST_CHECK_EQUAL(d->stream, -2);
    BOOST_CHECK_EQUAL(d->op, 0x07);
    BOOST_CHECK_EQUAL(d->length, 1234u);
}

BOOST_AUTO_TEST_CASE(test_response_header_encoding) {
    frame_header h;
    h.flags = frame_flags::compression;
    h.stream = -1;
    h.op = uint8_t(opcode::event);
    h.length = 0x01020304;
    auto e = encode_frame_header(h);
    bytes expected{0x84, 0x01, 0xff, 0xff, 0x0c, 0x01, 0x02, 0x03, 0x04};
    BOOST_CHECK(bytes(e.begin(), e.end()) == expected);
}

BOOST_AUTO_TEST_CASE(test_unsupported_versions_are_fatal_with_cassandras_text) {
    for (uint8_t v : {1, 2, 3, 5, 6, 0x41, 0x7f}) {
        auto h = request_header(v, 0, 7, 0x05, 0);
        if (v < 3) {
            h = bytes{v, 0, 7, 0x05, 0, 0, 0, 0};  // versions 1 and 2: a 1-byte stream, 8-byte header
        }
        try {
            decode_frame_header(h, default_max_frame_size);
            BOOST_FAIL("version " << int(v) << " accepted");
        } catch (const frame_error& e) {
            BOOST_CHECK(e.fatal());
            BOOST_CHECK_EQUAL(e.stream(), 7);
            BOOST_CHECK_EQUAL(std::string(e.what()),
                              "Invalid or unsupported protocol version (" + std::to_string(v) +
                                  "); the lowest supported version is 4 and the greatest is 4");
        }
    }
    // Decided before the whole header is there.
    BOOST_CHECK_THROW(decode_frame_header(bytes{0x02, 0, 1}, default_max_frame_size), frame_error);
    BOOST_CHECK(!decode_frame_header(bytes{0x05, 0, 0}, default_max_frame_size));
    BOOST_CHECK_THROW(decode_frame_header(bytes{0x05, 0, 0, 1}, default_max_frame_size), frame_error);
}

BOOST_AUTO_TEST_CASE(test_response_direction_and_negative_length_are_fatal) {
    try {
        decode_frame_header(request_header(0x84, 0, 3, 0x05, 0), default_max_frame_size);
        BOOST_FAIL("a response header accepted");
    } catch (const frame_error& e) {
        BOOST_CHECK(e.fatal());
        BOOST_CHECK(std::string(e.what()).find("direction") != std::string::npos);
    }
    try {
        decode_frame_header(request_header(0x04, 0, 3, 0x07, 0x80000000u), default_max_frame_size);
        BOOST_FAIL("a negative length accepted");
    } catch (const frame_error& e) {
        BOOST_CHECK(e.fatal());
        BOOST_CHECK(std::string(e.what()).find("offset 5") != std::string::npos);
    }
}

BOOST_AUTO_TEST_CASE(test_too_big_and_unknown_opcode_are_skipped) {
    try {
        decode_frame_header(request_header(0x04, 0, 9, 0x07, 992), 1000);
        BOOST_FAIL("a too big frame accepted");
    } catch (const frame_error& e) {
        // Cassandra's answer: Invalid, the length counting the header.
        BOOST_CHECK(!e.fatal());
        BOOST_CHECK(e.code() == cql::error_code::invalid);
        BOOST_CHECK_EQUAL(e.skip(), 992u);
        BOOST_CHECK_EQUAL(e.stream(), 9);
        BOOST_CHECK_EQUAL(std::string(e.what()), "Request is too big: length 1001 exceeds maximum allowed length 1000.");
    }
    BOOST_CHECK(decode_frame_header(request_header(0x04, 0, 9, 0x07, 991), 1000));
    for (uint8_t op : {0x00, 0x02, 0x03, 0x04, 0x06, 0x08, 0x0c, 0x0e, 0x10, 0x11, 0xff}) {
        try {
            decode_frame_header(request_header(0x04, 0, 1, op, 12), default_max_frame_size);
            BOOST_FAIL("opcode " << int(op) << " accepted");
        } catch (const frame_error& e) {
            BOOST_CHECK(!e.fatal());
            BOOST_CHECK_EQUAL(e.skip(), 12u);
            BOOST_CHECK(std::string(e.what()).find("Unknown or unsupported opcode") != std::string::npos);
        }
    }
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(primitives)

// Random values written by response_writer read back by request_reader, interleaved in a random order.
BOOST_AUTO_TEST_CASE(test_random_round_trips) {
    std::mt19937_64 rng(17);
    auto rand_string = [&](size_t max) {
        std::string s(rng() % (max + 1), '\0');
        for (auto& c : s) {
            c = char(rng());
        }
        return s;
    };
    for (int iter = 0; iter < 300; ++iter) {
        response_writer w;
        std::vector<std::function<void(request_reader&)>> checks;
        int n = 1 + rng() % 12;
        for (int i = 0; i < n; ++i) {
            switch (rng() % 9) {
            case 0: {
                uint8_t v = uint8_t(rng());
                w.write_byte(v);
                checks.push_back([v](request_reader& r) { BOOST_CHECK_EQUAL(r.read_byte("b"), v); });
                break;
            }
            case 1: {
                uint16_t v = uint16_t(rng());
                w.write_short(v);
                checks.push_back([v](request_reader& r) { BOOST_CHECK_EQUAL(r.read_short("s"), v); });
                break;
            }
            case 2: {
                int32_t v = int32_t(rng());
                w.write_int(v);
                checks.push_back([v](request_reader& r) { BOOST_CHECK_EQUAL(r.read_int("i"), v); });
                break;
            }
            case 3: {
                int64_t v = int64_t(rng());
                w.write_long(v);
                checks.push_back([v](request_reader& r) { BOOST_CHECK_EQUAL(r.read_long("l"), v); });
                break;
            }
            case 4: {
                auto s = rand_string(300);
                w.write_string(s);
                checks.push_back([s](request_reader& r) { BOOST_CHECK(r.read_string("str") == s); });
                break;
            }
            case 5: {
                auto s = rand_string(3000);
                w.write_long_string(s);
                checks.push_back([s](request_reader& r) { BOOST_CHECK(r.read_long_string("ls") == s); });
                break;
            }
            case 6: {
                std::optional<bytes> b;
                if (rng() % 4) {
                    auto s = rand_string(100);
                    b = bytes(s.begin(), s.end());
                }
                w.write_bytes(b);
                checks.push_back([b](request_reader& r) { BOOST_CHECK(r.read_bytes("bytes") == b); });
                break;
            }
            case 7: {
                std::vector<std::string> l;
                for (size_t k = rng() % 5; k > 0; --k) {
                    l.push_back(rand_string(20));
                }
                w.write_string_list(l);
                checks.push_back([l](request_reader& r) { BOOST_CHECK(r.read_string_list("list") == l); });
                break;
            }
            case 8: {
                std::map<std::string, std::vector<std::string>> m;
                for (size_t k = rng() % 4; k > 0; --k) {
                    m[rand_string(10)] = {rand_string(5), rand_string(5)};
                }
                w.write_string_multimap(m);
                checks.push_back([m](request_reader& r) { BOOST_CHECK(r.read_string_multimap("mm") == m); });
                break;
            }
            }
        }
        auto body = w.release();
        request_reader r(body, "TEST");
        for (auto& c : checks) {
            c(r);
        }
        BOOST_CHECK_EQUAL(r.remaining(), 0u);
    }
}

BOOST_AUTO_TEST_CASE(test_values_null_unset_and_bad_lengths) {
    response_writer w;
    w.write_int(-1);
    w.write_int(-2);
    w.write_int(3);
    w.write_raw(bytes{1, 2, 3});
    w.write_int(-3);
    auto body = w.release();
    request_reader r(body, "EXECUTE");
    BOOST_CHECK(r.read_value("v").is_null());
    BOOST_CHECK(r.read_value("v").is_unset());
    auto v = r.read_value("v");
    BOOST_CHECK(v.is_value() && v.data == (bytes{1, 2, 3}));
    auto msg = protocol_error_of([&] { r.read_value("[value] bound value"); });
    BOOST_CHECK_EQUAL(msg, "EXECUTE: [value] bound value at offset 15: [value] length -3 is invalid (-1 is null, -2 unset)");
}

BOOST_AUTO_TEST_CASE(test_counts_that_cannot_fit_are_refused_before_allocating) {
    bytes body{0xff, 0xff, 0, 0};
    request_reader r(body, "STARTUP");
    auto msg = protocol_error_of([&] { r.read_string_map("[string map] options"); });
    BOOST_CHECK(msg.find("STARTUP: [string map] options at offset 0: 65535 elements cannot fit") == 0);
    bytes consistency{0x00, 0x0b};
    request_reader c(consistency, "QUERY");
    BOOST_CHECK(protocol_error_of([&] { c.read_consistency("[consistency] consistency"); })
                    .find("unknown consistency level 0x000b") != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()

namespace {

bytes query_body(uint8_t flags, bool names) {
    response_writer w;
    w.write_long_string("SELECT * FROM ks.t WHERE pk = ?");
    w.write_short(uint16_t(cql::consistency_level::local_quorum));
    w.write_byte(flags);
    if (flags & 0x01) {
        w.write_short(3);
        for (int i = 0; i < 3; ++i) {
            if (names) {
                w.write_string("n" + std::to_string(i));
            }
            if (i == 0) {
                w.write_int(2);
                w.write_raw(bytes{0xca, 0xfe});
            } else {
                w.write_int(i == 1 ? -1 : -2);
            }
        }
    }
    if (flags & 0x04) {
        w.write_int(100);
    }
    if (flags & 0x08) {
        w.write_bytes(bytes{9, 8, 7});
    }
    if (flags & 0x10) {
        w.write_short(uint16_t(cql::consistency_level::local_serial));
    }
    if (flags & 0x20) {
        w.write_long(1234567890123);
    }
    return w.release();
}

bytes batch_body() {
    response_writer w;
    w.write_byte(1);
    w.write_short(2);
    w.write_byte(0);
    w.write_long_string("INSERT INTO ks.t (pk) VALUES (?)");
    w.write_short(1);
    w.write_int(1);
    w.write_raw(bytes{42});
    w.write_byte(1);
    w.write_short_bytes(bytes{1, 2, 3, 4});
    w.write_short(0);
    w.write_short(uint16_t(cql::consistency_level::quorum));
    w.write_byte(0x30);
    w.write_short(uint16_t(cql::consistency_level::serial));
    w.write_long(77);
    return w.release();
}

} // namespace

BOOST_AUTO_TEST_SUITE(messages)

BOOST_AUTO_TEST_CASE(test_query_options_every_flag) {
    for (uint8_t flags = 0; flags < 0x80; ++flags) {
        bool names = flags & 0x40;
        auto body = query_body(flags, names);
        request_reader r(body, "QUERY");
        auto q = read_query(r);
        BOOST_CHECK_EQUAL(r.remaining(), 0u);
        BOOST_CHECK_EQUAL(q.query, "SELECT * FROM ks.t WHERE pk = ?");
        auto& o = q.options;
        BOOST_CHECK(o.consistency == cql::consistency_level::local_quorum);
        if (flags & 0x01) {
            BOOST_REQUIRE_EQUAL(o.values.size(), 3u);
            BOOST_CHECK(o.values[0].is_value() && o.values[0].data == (bytes{0xca, 0xfe}));
            BOOST_CHECK(o.values[1].is_null());
            BOOST_CHECK(o.values[2].is_unset());
            BOOST_CHECK_EQUAL(o.names.size(), names ? 3u : 0u);
        } else {
            BOOST_CHECK(o.values.empty());
        }
        BOOST_CHECK_EQUAL(o.skip_metadata, bool(flags & 0x02));
        BOOST_CHECK_EQUAL(o.page_size, (flags & 0x04) ? 100 : -1);
        BOOST_CHECK(o.paging_state == ((flags & 0x08) ? std::optional<bytes>(bytes{9, 8, 7}) : std::nullopt));
        BOOST_CHECK(o.serial_consistency ==
                    ((flags & 0x10) ? cql::consistency_level::local_serial : cql::consistency_level::serial));
        BOOST_CHECK(o.timestamp == ((flags & 0x20) ? std::optional<int64_t>(1234567890123) : std::nullopt));
    }
    auto body = query_body(0x80, false);
    request_reader r(body, "QUERY");
    BOOST_CHECK(protocol_error_of([&] { read_query(r); }).find("QUERY: [byte] flags at offset 37") == 0);
}

BOOST_AUTO_TEST_CASE(test_batch_decodes) {
    auto body = batch_body();
    request_reader r(body, "BATCH");
    auto b = read_batch(r);
    BOOST_CHECK(b.type == cql::batch_type::unlogged);
    BOOST_REQUIRE_EQUAL(b.entries.size(), 2u);
    BOOST_CHECK(std::get<std::string>(b.entries[0].query_or_id) == "INSERT INTO ks.t (pk) VALUES (?)");
    BOOST_REQUIRE_EQUAL(b.entries[0].values.size(), 1u);
    BOOST_CHECK(b.entries[0].values[0].data == bytes{42});
    BOOST_CHECK(std::get<bytes>(b.entries[1].query_or_id) == (bytes{1, 2, 3, 4}));
    BOOST_CHECK(b.entries[1].values.empty());
    BOOST_CHECK(b.options.consistency == cql::consistency_level::quorum);
    BOOST_CHECK(b.options.timestamp == std::optional<int64_t>(77));
}

// Every strict prefix of a valid body fails cleanly, naming a field and an offset inside the prefix.
BOOST_AUTO_TEST_CASE(test_every_truncation_is_a_protocol_error) {
    std::vector<std::pair<std::string, bytes>> bodies = {
        {"QUERY", query_body(0x7f & ~0x40, false)}, {"QUERY", query_body(0x7f, true)}, {"BATCH", batch_body()}};
    {
        response_writer w;
        w.write_short_bytes(bytes(16, 0xab));
        auto q = query_body(0x25, false);
        bytes opts(q.begin() + 4 + 31, q.end());  // the options after the query string
        w.write_raw(opts);
        bodies.push_back({"EXECUTE", w.release()});
    }
    {
        response_writer w;
        w.write_short(2);
        w.write_string("CQL_VERSION");
        w.write_string("3.0.0");
        w.write_string("COMPRESSION");
        w.write_string("lz4");
        bodies.push_back({"STARTUP", w.release()});
    }
    for (auto& [name, full] : bodies) {
        for (size_t n = 0; n < full.size(); ++n) {
            bytes cut(full.begin(), full.begin() + n);
            request_reader r(cut, name);
            auto msg = protocol_error_of([&] {
                if (name == "QUERY") {
                    read_query(r);
                } else if (name == "BATCH") {
                    read_batch(r);
                } else if (name == "EXECUTE") {
                    read_execute(r);
                } else {
                    read_startup(r);
                }
            });
            BOOST_CHECK_MESSAGE(msg.find(name + ": ") == 0 && msg.find(" at offset ") != std::string::npos,
                                name << " cut at " << n << ": " << msg);
        }
    }
}

// Random corruption: each read either succeeds or throws a protocol_error; nothing else escapes.
BOOST_AUTO_TEST_CASE(test_random_corruption_never_escapes) {
    std::mt19937_64 rng(4);
    std::vector<bytes> seeds = {query_body(0x3f, false), query_body(0x7f, true), batch_body()};
    size_t refused = 0, parsed = 0;
    for (int iter = 0; iter < 20000; ++iter) {
        auto b = seeds[rng() % seeds.size()];
        for (int k = 1 + rng() % 4; k > 0; --k) {
            b[rng() % b.size()] = uint8_t(rng());
        }
        if (rng() % 3 == 0) {
            b.resize(rng() % b.size());
        }
        for (int which = 0; which < 4; ++which) {
            request_reader r(b, "X");
            try {
                switch (which) {
                case 0: read_query(r); break;
                case 1: read_batch(r); break;
                case 2: read_execute(r); break;
                case 3: read_register(r); break;
                }
                ++parsed;
            } catch (const cql::cql_error& e) {
                BOOST_REQUIRE(e.code() == cql::error_code::protocol_error);
                ++refused;
            }
        }
    }
    BOOST_TEST_MESSAGE(parsed << " parsed, " << refused << " refused");
    BOOST_CHECK(refused > 0 && parsed > 0);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(responses)

BOOST_AUTO_TEST_CASE(test_type_options_of_every_type) {
    auto udt = user_type("ks", "addr", {"street", "zip"}, {text_type(), int32_type()}, true);
    std::vector<std::pair<data_type, std::string>> cases = {
        {ascii_type(), "ascii"},
        {bigint_type(), "bigint"},
        {blob_type(), "blob"},
        {boolean_type(), "boolean"},
        {counter_type(), "counter"},
        {decimal_type(), "decimal"},
        {double_type(), "double"},
        {float_type(), "float"},
        {int32_type(), "int"},
        {timestamp_type(), "timestamp"},
        {uuid_type(), "uuid"},
        {text_type(), "varchar"},
        {varint_type(), "varint"},
        {timeuuid_type(), "timeuuid"},
        {inet_type(), "inet"},
        {date_type(), "date"},
        {time_type(), "time"},
        {smallint_type(), "smallint"},
        {tinyint_type(), "tinyint"},
        {duration_type(), "custom(org.apache.cassandra.db.marshal.DurationType)"},
        {empty_type(), "custom(org.apache.cassandra.db.marshal.EmptyType)"},
        {reversed_type(int32_type()), "int"},
        {list_type(int32_type(), true), "list<int>"},
        {set_type(text_type(), false), "set<varchar>"},
        {map_type(text_type(), list_type(bigint_type(), false), true), "map<varchar,list<bigint>>"},
        {tuple_type({int32_type(), text_type(), duration_type()}),
         "tuple<int,varchar,custom(org.apache.cassandra.db.marshal.DurationType)>"},
        {udt, "udt ks.addr{street:varchar,zip:int}"},
        {udt->freeze(), "udt ks.addr{street:varchar,zip:int}"},
        {reversed_type(list_type(udt->freeze(), false)), "list<udt ks.addr{street:varchar,zip:int}>"},
    };
    for (auto& [t, expected] : cases) {
        response_writer w;
        w.write_type_option(t);
        auto b = w.release();
        spec_reader r{b};
        BOOST_CHECK_EQUAL(r.option(), expected);
        BOOST_CHECK(r.done());
    }
}

namespace {

cql::result_set two_rows(bool same_table, bool more_pages) {
    cql::result_metadata md;
    md.columns = {{"ks", "t", "pk", int32_type()}, {"ks", same_table ? "t" : "u", "v", text_type()}};
    if (more_pages) {
        md.paging_state = bytes{1, 2, 3};
    }
    cql::result_set rs(md);
    rs.add_row({bytes{0, 0, 0, 1}, to_bytes("a")});
    rs.add_row({bytes{0, 0, 0, 2}, std::nullopt});
    return rs;
}

void check_two_rows(spec_reader& r) {
    BOOST_CHECK_EQUAL(r.i32(), 2);
    BOOST_CHECK(r.bytes_() == (bytes{0, 0, 0, 1}));
    BOOST_CHECK(r.bytes_() == to_bytes("a"));
    BOOST_CHECK(r.bytes_() == (bytes{0, 0, 0, 2}));
    BOOST_CHECK(!r.bytes_());
    BOOST_CHECK(r.done());
}

} // namespace

BOOST_AUTO_TEST_CASE(test_rows_with_global_spec) {
    auto b = encode_result(two_rows(true, false), false);
    spec_reader r{b};
    BOOST_CHECK_EQUAL(r.i32(), 2);
    BOOST_CHECK_EQUAL(r.i32(), 0x0001);
    BOOST_CHECK_EQUAL(r.i32(), 2);
    BOOST_CHECK_EQUAL(r.str(), "ks");
    BOOST_CHECK_EQUAL(r.str(), "t");
    BOOST_CHECK_EQUAL(r.str(), "pk");
    BOOST_CHECK_EQUAL(r.option(), "int");
    BOOST_CHECK_EQUAL(r.str(), "v");
    BOOST_CHECK_EQUAL(r.option(), "varchar");
    check_two_rows(r);
}

BOOST_AUTO_TEST_CASE(test_rows_per_column_spec_and_paging) {
    auto b = encode_result(two_rows(false, true), false);
    spec_reader r{b};
    BOOST_CHECK_EQUAL(r.i32(), 2);
    BOOST_CHECK_EQUAL(r.i32(), 0x0002);
    BOOST_CHECK_EQUAL(r.i32(), 2);
    BOOST_CHECK(r.bytes_() == (bytes{1, 2, 3}));
    for (auto [table, name, type] : {std::tuple{"t", "pk", "int"}, std::tuple{"u", "v", "varchar"}}) {
        BOOST_CHECK_EQUAL(r.str(), "ks");
        BOOST_CHECK_EQUAL(r.str(), table);
        BOOST_CHECK_EQUAL(r.str(), name);
        BOOST_CHECK_EQUAL(r.option(), type);
    }
    check_two_rows(r);
}

BOOST_AUTO_TEST_CASE(test_rows_no_metadata) {
    auto b = encode_result(two_rows(true, true), true);
    spec_reader r{b};
    BOOST_CHECK_EQUAL(r.i32(), 2);
    BOOST_CHECK_EQUAL(r.i32(), 0x0002 | 0x0004);
    BOOST_CHECK_EQUAL(r.i32(), 2);
    BOOST_CHECK(r.bytes_() == (bytes{1, 2, 3}));
    check_two_rows(r);
}

BOOST_AUTO_TEST_CASE(test_void_set_keyspace_schema_change) {
    {
        auto b = encode_result(cql::void_result{}, false);
        BOOST_CHECK(b == (bytes{0, 0, 0, 1}));
    }
    {
        auto b = encode_result(cql::set_keyspace_result{"ks1"}, false);
        spec_reader r{b};
        BOOST_CHECK_EQUAL(r.i32(), 3);
        BOOST_CHECK_EQUAL(r.str(), "ks1");
        BOOST_CHECK(r.done());
    }
    using sc = cql::schema_change;
    struct c {
        sc change;
        std::vector<std::string> expected;
    };
    std::vector<c> cases = {
        {{sc::change_type::created, sc::target_type::keyspace, "ks", "", {}}, {"CREATED", "KEYSPACE", "ks"}},
        {{sc::change_type::updated, sc::target_type::table, "ks", "t", {}}, {"UPDATED", "TABLE", "ks", "t"}},
        {{sc::change_type::dropped, sc::target_type::type, "ks", "ty", {}}, {"DROPPED", "TYPE", "ks", "ty"}},
        {{sc::change_type::created, sc::target_type::function, "ks", "f", {"int", "text"}},
         {"CREATED", "FUNCTION", "ks", "f", "2", "int", "text"}},
    };
    for (auto& [change, expected] : cases) {
        for (bool event : {false, true}) {
            auto b = event ? encode_schema_change_event(change) : encode_result(change, false);
            spec_reader r{b};
            if (event) {
                BOOST_CHECK_EQUAL(r.str(), "SCHEMA_CHANGE");
            } else {
                BOOST_CHECK_EQUAL(r.i32(), 5);
            }
            for (size_t i = 0; i < expected.size(); ++i) {
                if (expected[1] == "FUNCTION" && i == 4) {
                    BOOST_CHECK_EQUAL(std::to_string(r.u16()), expected[i]);
                } else {
                    BOOST_CHECK_EQUAL(r.str(), expected[i]);
                }
            }
            BOOST_CHECK(r.done());
        }
    }
}

BOOST_AUTO_TEST_CASE(test_prepared) {
    cql::prepared_result p;
    p.id = bytes(16, 0x11);
    p.bind_variables = {{"ks", "t", "pk", int32_type()}, {"ks", "t", "ck", text_type()}};
    p.partition_key_bind_indexes = {0};
    p.result_columns = {{"ks", "t", "v", map_type(int32_type(), int32_type(), true)}};
    auto b = encode_result(p, false);
    spec_reader r{b};
    BOOST_CHECK_EQUAL(r.i32(), 4);
    BOOST_CHECK_EQUAL(r.u16(), 16);
    r.pos += 16;
    BOOST_CHECK_EQUAL(r.i32(), 0x0001);
    BOOST_CHECK_EQUAL(r.i32(), 2);
    BOOST_CHECK_EQUAL(r.i32(), 1);
    BOOST_CHECK_EQUAL(r.u16(), 0);
    BOOST_CHECK_EQUAL(r.str(), "ks");
    BOOST_CHECK_EQUAL(r.str(), "t");
    BOOST_CHECK_EQUAL(r.str(), "pk");
    BOOST_CHECK_EQUAL(r.option(), "int");
    BOOST_CHECK_EQUAL(r.str(), "ck");
    BOOST_CHECK_EQUAL(r.option(), "varchar");
    BOOST_CHECK_EQUAL(r.i32(), 0x0001);
    BOOST_CHECK_EQUAL(r.i32(), 1);
    BOOST_CHECK_EQUAL(r.str(), "ks");
    BOOST_CHECK_EQUAL(r.str(), "t");
    BOOST_CHECK_EQUAL(r.str(), "v");
    BOOST_CHECK_EQUAL(r.option(), "map<int,int>");
    BOOST_CHECK(r.done());
    // No result columns: No_metadata, as Cassandra sends for statements without rows.
    p.result_columns.clear();
    b = encode_result(p, false);
    BOOST_CHECK((bytes(b.end() - 8, b.end()) == bytes{0, 0, 0, 4, 0, 0, 0, 0}));
}

BOOST_AUTO_TEST_CASE(test_error_bodies) {
    using cql::error_code;
    cql::error_details d;
    d.consistency = cql::consistency_level::quorum;
    d.received = 1;
    d.block_for = 2;
    d.data_present = true;
    d.wtype = cql::write_type::unlogged_batch;
    d.keyspace = "ks";
    d.table = "t";
    d.unprepared_id = bytes{0xaa, 0xbb};
    auto check = [&](error_code c, std::function<void(spec_reader&)> extra) {
        auto b = encode_error(cql::cql_error(c, "msg", d));
        spec_reader r{b};
        BOOST_CHECK_EQUAL(r.i32(), int32_t(c));
        BOOST_CHECK_EQUAL(r.str(), "msg");
        extra(r);
        BOOST_CHECK_MESSAGE(r.done(), "code " << int32_t(c) << " has extra bytes");
    };
    auto cl_recv_block = [](spec_reader& r, int32_t a, int32_t b) {
        BOOST_CHECK_EQUAL(r.u16(), 4);
        BOOST_CHECK_EQUAL(r.i32(), a);
        BOOST_CHECK_EQUAL(r.i32(), b);
    };
    check(error_code::unavailable, [&](spec_reader& r) { cl_recv_block(r, 2, 1); });
    check(error_code::write_timeout, [&](spec_reader& r) {
        cl_recv_block(r, 1, 2);
        BOOST_CHECK_EQUAL(r.str(), "UNLOGGED_BATCH");
    });
    check(error_code::read_timeout, [&](spec_reader& r) {
        cl_recv_block(r, 1, 2);
        BOOST_CHECK_EQUAL(r.byte(), 1);
    });
    check(error_code::read_failure, [&](spec_reader& r) {
        cl_recv_block(r, 1, 2);
        BOOST_CHECK_EQUAL(r.i32(), 1);
        BOOST_CHECK_EQUAL(r.byte(), 1);
    });
    check(error_code::write_failure, [&](spec_reader& r) {
        cl_recv_block(r, 1, 2);
        BOOST_CHECK_EQUAL(r.i32(), 1);
        BOOST_CHECK_EQUAL(r.str(), "UNLOGGED_BATCH");
    });
    check(error_code::function_failure, [&](spec_reader& r) {
        BOOST_CHECK_EQUAL(r.str(), "ks");
        BOOST_CHECK_EQUAL(r.str(), "t");
        BOOST_CHECK_EQUAL(r.u16(), 0);
    });
    check(error_code::already_exists, [&](spec_reader& r) {
        BOOST_CHECK_EQUAL(r.str(), "ks");
        BOOST_CHECK_EQUAL(r.str(), "t");
    });
    check(error_code::unprepared, [&](spec_reader& r) {
        BOOST_CHECK_EQUAL(r.u16(), 2);
        BOOST_CHECK_EQUAL(r.byte(), 0xaa);
        BOOST_CHECK_EQUAL(r.byte(), 0xbb);
    });
    for (auto c : {error_code::server_error, error_code::protocol_error, error_code::overloaded,
                   error_code::syntax_error, error_code::invalid, error_code::config_error, error_code::unauthorized,
                   error_code::truncate_error, error_code::is_bootstrapping, error_code::bad_credentials}) {
        check(c, [](spec_reader&) {});
    }
    // Anything else is a server_error with its text.
    auto b = encode_error(std::make_exception_ptr(std::runtime_error("disk on fire")));
    spec_reader r{b};
    BOOST_CHECK_EQUAL(r.i32(), 0);
    BOOST_CHECK_EQUAL(r.str(), "disk on fire");
    BOOST_CHECK(r.done());
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(compression)

BOOST_AUTO_TEST_CASE(test_round_trips) {
    std::mt19937_64 rng(9);
    for (auto algo : {compression_algorithm::lz4, compression_algorithm::snappy}) {
        for (size_t size : {size_t(0), size_t(1), size_t(17), size_t(4096), size_t(300000)}) {
            bytes in(size);
            // Half random, half repetitive: both paths of the compressors.
            for (size_t i = 0; i < size; ++i) {
                in[i] = i < size / 2 ? uint8_t(rng()) : uint8_t(i % 7);
            }
            auto c = compress_body(algo, in);
            BOOST_CHECK(decompress_body(algo, c, size) == in);
            if (algo == compression_algorithm::lz4) {
                // The protocol's 4-byte big-endian uncompressed length first.
                BOOST_CHECK_EQUAL((uint32_t(c[0]) << 24 | uint32_t(c[1]) << 16 | uint32_t(c[2]) << 8 | c[3]), size);
            }
            if (size > 0) {
                BOOST_CHECK(protocol_error_of([&] { decompress_body(algo, c, size - 1); }).find("exceeds the maximum") !=
                            std::string::npos);
            }
        }
    }
    BOOST_CHECK(parse_compression("LZ4") == compression_algorithm::lz4);
    BOOST_CHECK(parse_compression("snappy") == compression_algorithm::snappy);
    BOOST_CHECK(!parse_compression("zstd"));
}

BOOST_AUTO_TEST_CASE(test_garbage_is_refused) {
    std::mt19937_64 rng(5);
    BOOST_CHECK(protocol_error_of([] { decompress_body(compression_algorithm::lz4, bytes{0, 0}, 100); })
                    .find("Invalid lz4 compressed body") == 0);
    bytes text(2000);
    for (size_t i = 0; i < text.size(); ++i) {
        text[i] = uint8_t("the quick brown fox "[i % 20]);
    }
    for (auto algo : {compression_algorithm::lz4, compression_algorithm::snappy}) {
        auto good = compress_body(algo, text);
        size_t refused = 0;
        for (int iter = 0; iter < 3000; ++iter) {
            auto b = good;
            for (int k = 1 + rng() % 3; k > 0; --k) {
                b[rng() % b.size()] = uint8_t(rng());
            }
            if (rng() % 2) {
                b.resize(rng() % b.size());
            }
            try {
                auto out = decompress_body(algo, b, 4000);
                BOOST_CHECK(out.size() <= 4000);
            } catch (const cql::cql_error& e) {
                BOOST_REQUIRE(e.code() == cql::error_code::protocol_error);
                ++refused;
            }
        }
        BOOST_CHECK(refused > 0);
    }
}

BOOST_AUTO_TEST_SUITE_END()
