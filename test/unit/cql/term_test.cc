// Terms: random values of random types printed as CQL literals parse, prepare and bind back to the same canonical
// bytes (as literals, inside collection/tuple literals, and through bind markers with shuffled sets and maps);
// Cassandra's messages for mismatched literals (the conformance corpus' error_type_mismatch_literals and types_*
// cases); marker specs for PREPARE; durations, special floats, functions, fromJson.
#include "cql/cql_error.hh"
#include "cql/term.hh"
#include "schema/value_format.hh"
#include "test/lib/random_mutation.hh"

#include <boost/test/unit_test.hpp>

#include <random>

using namespace reef;
using namespace reef::cql;

namespace {

column_spec col(std::string name, data_type t) { return column_spec{"ks", "t", std::move(name), std::move(t)}; }

struct parsed {
    term_parse_context ctx;
    raw_term_ptr raw;
};

parsed parse(std::string_view text) {
    parsed p;
    cql_token_stream ts(tokenize_cql(text));
    p.raw = parse_term(ts, p.ctx);
    if (!ts.at_end()) {
        ts.fail("end of term");
    }
    return p;
}

raw_value bind_text(std::string_view text, const column_spec& receiver, query_options opts = {}) {
    auto p = parse(text);
    bind_specs specs(p.ctx);
    auto t = p.raw->prepare(receiver, specs);
    return t->bind(opts);
}

std::string error_of(std::string_view text, const column_spec& receiver) {
    try {
        bind_text(text, receiver);
    } catch (const cql_error& e) {
        return e.what();
    } catch (const cql_parse_error& e) {
        return std::string("syntax: ") + e.what();
    }
    return "(no error)";
}

// A random value of t (serialized).
bytes random_value(const abstract_type& t, std::mt19937_64& rng, int depth = 0) {
    auto pick = [&](int n) { return int(rng() % uint64_t(n)); };
    switch (t.kind()) {
    case type_kind::int32: return serialize_be<int32_t>(int32_t(rng()) >> pick(32));
    case type_kind::bigint: return serialize_be<int64_t>(int64_t(rng()) >> pick(64));
    case type_kind::smallint: return serialize_be<int16_t>(int16_t(rng()));
    case type_kind::tinyint: return serialize_be<int8_t>(int8_t(rng()));
    case type_kind::boolean: return bytes{uint8_t(pick(2))};
    case type_kind::double_: {
        double specials[] = {0.0, -0.0, 1.5, -2.25e100, 1e-300, std::numeric_limits<double>::infinity()};
        double d = pick(3) ? double(int64_t(rng() >> 20)) / double(1 + pick(1000)) : specials[pick(6)];
        return serialize_be<uint64_t>(std::bit_cast<uint64_t>(d));
    }
    case type_kind::float_: {
        float f = float(int32_t(rng() >> 40)) / float(1 + pick(100));
        return serialize_be<uint32_t>(std::bit_cast<uint32_t>(f));
    }
    case type_kind::text:
    case type_kind::ascii: {
        std::string s;
        int n = pick(8);
        for (int i = 0; i < n; ++i) {
            s += "ab'c $x,:{}"[pick(11)];
        }
        if (t.kind() == type_kind::text && pick(3) == 0) {
            s += "é";
        }
        return to_bytes(s);
    }
    case type_kind::blob: {
        bytes b(size_t(pick(6)));
        for (auto& c : b) {
            c = uint8_t(rng());
        }
        return b;
    }
    case type_kind::uuid: {
        bytes b(16);
        for (auto& c : b) {
            c = uint8_t(rng());
        }
        return b;
    }
    case type_kind::varint: return big_int(int64_t(rng()) >> pick(64)).to_bytes();
    case type_kind::date: return serialize_be<uint32_t>(uint32_t((int64_t(1) << 31) + pick(40000) - 20000));
    case type_kind::timestamp: return serialize_be<int64_t>(int64_t(rng() >> 24) - (int64_t(1) << 39));
    case type_kind::duration: {
        duration_value d{pick(30), pick(30), int64_t(pick(1000000)) * 1000};
        if (pick(2)) {
            d = {-d.months, -d.days, -d.nanoseconds};
        }
        return encode_duration(d);
    }
    case type_kind::list:
    case type_kind::set: {
        std::vector<bytes> e;
        int n = depth > 1 ? 0 : pick(4);
        for (int i = 0; i < n; ++i) {
            e.push_back(random_value(*t.element_type(), rng, depth + 1));
        }
        return serialize_collection(e);
    }
    case type_kind::map: {
        std::vector<std::pair<bytes, bytes>> e;
        int n = depth > 1 ? 0 : pick(4);
        for (int i = 0; i < n; ++i) {
            e.emplace_back(random_value(*t.key_type(), rng, depth + 1), random_value(*t.value_type(), rng, depth + 1));
        }
        return serialize_map(e);
    }
    case type_kind::vector: {
        std::vector<bytes> e;
        for (uint32_t i = 0; i < t.vector_dimension(); ++i) {
            e.push_back(random_value(*t.element_type(), rng, depth + 1));
        }
        return serialize_vector(t, e);
    }
    case type_kind::tuple: {
        std::vector<std::optional<bytes>> f;
        for (auto& ft : t.field_types()) {
            if (pick(4) == 0) {
                f.emplace_back(std::nullopt);
            } else {
                f.emplace_back(random_value(*ft, rng, depth + 1));
            }
        }
        return serialize_tuple(f);
    }
    default: throw std::logic_error("random_value: type not covered");
    }
}

std::vector<data_type> test_types() {
    auto frozen_set = set_type(text_type(), false);
    return {
        int32_type(), bigint_type(), smallint_type(), tinyint_type(), boolean_type(), double_type(), float_type(),
        text_type(), ascii_type(), blob_type(), uuid_type(), varint_type(), date_type(), timestamp_type(),
        duration_type(), list_type(int32_type(), true), set_type(text_type(), true), map_type(int32_type(), text_type(), true),
        list_type(frozen_set, false), map_type(text_type(), list_type(int32_type(), false), true),
        tuple_type({int32_type(), text_type(), list_type(bigint_type(), false)}),
        vector_type(float_type(), 3), vector_type(text_type(), 2), vector_type(frozen_set, 2),
        vector_type(vector_type(bigint_type(), 2), 2),
    };
}

} // namespace

BOOST_AUTO_TEST_CASE(random_literals_bind_to_their_values) {
    uint64_t seed = testing::pick_seed();
    BOOST_TEST_MESSAGE("seed " << seed << " (set REEF_SEED to repeat)");
    std::mt19937_64 rng(seed);
    auto types = test_types();
    for (int iter = 0; iter < 3000; ++iter) {
        auto& t = types[rng() % types.size()];
        auto v = random_value(*t, rng);
        auto expected = canonical_value(*t, v);
        auto literal = t->to_cql_literal(v);
        BOOST_TEST_CONTEXT("type " << t->cql_name() << " literal " << literal) {
            auto got = bind_text(literal, col("v", t));
            BOOST_REQUIRE(got.is_value());
            BOOST_TEST((got.data == expected));
            // The same value through a marker: the client's bytes (sets and maps in any order) become canonical.
            query_options opts;
            opts.values.push_back(raw_value::of(v));
            auto marked = bind_text("?", col("v", t), opts);
            BOOST_TEST((marked.data == expected));
        }
    }
}

BOOST_AUTO_TEST_CASE(mismatched_literals_have_cassandras_messages) {
    // From error_type_mismatch_literals, types_integers, types_blob, types_boolean_inet, types_tuple, types_udt,
    // types_uuid_timeuuid, types_date_time, coll_map_ops.
    BOOST_TEST(error_of("'text'", col("v", int32_type())) == "Invalid STRING constant (text) for \"v\" of type int");
    BOOST_TEST(error_of("42", col("w", text_type())) == "Invalid INTEGER constant (42) for \"w\" of type text");
    BOOST_TEST(error_of("0x01", col("v", int32_type())) == "Invalid HEX constant (0x01) for \"v\" of type int");
    BOOST_TEST(error_of("true", col("v", int32_type())) == "Invalid BOOLEAN constant (true) for \"v\" of type int");
    BOOST_TEST(error_of("[1]", col("v", int32_type())) == "Unexpected receiver type 'int'; only list and vector are expected");
    BOOST_TEST(error_of("1.5", col("v", int32_type())) == "Invalid FLOAT constant (1.5) for \"v\" of type int");
    BOOST_TEST(error_of("1.5", col("c", counter_type())) == "Invalid FLOAT constant (1.5) for \"c\" of type counter");
    BOOST_TEST(error_of("99999999999", col("v", int32_type())) == "Unable to make int from '99999999999'");
    BOOST_TEST(error_of("128", col("ti", tinyint_type())) == "Unable to make byte from '128'");
    BOOST_TEST(error_of("32768", col("si", smallint_type())) == "Unable to make short from '32768'");
    BOOST_TEST(error_of("9223372036854775808", col("b", bigint_type())) == "Unable to make long from '9223372036854775808'");
    BOOST_TEST(error_of("0xabc", col("b", blob_type())) == "cannot parse 'abc' as hex bytes");
    BOOST_TEST(error_of("'true'", col("b", boolean_type())) == "Invalid STRING constant (true) for \"b\" of type boolean");
    BOOST_TEST(error_of("'300.1.1.1'", col("ip", inet_type())) == "Unable to make inet address from '300.1.1.1'");
    BOOST_TEST(error_of("'2023-02-29'", col("d", date_type())) == "Unable to coerce '2023-02-29' to a formatted date (long)");
    BOOST_TEST(error_of("'24:00:00'", col("tm", time_type())) == "(TimeType) Unable to coerce '24:00:00' to a formatted time (long)");
    BOOST_TEST(error_of("'not-a-uuid'", col("u", uuid_type())) == "Invalid STRING constant (not-a-uuid) for \"u\" of type uuid");
    BOOST_TEST(error_of("550e8400-e29b-41d4-a716-446655440000", col("tu", timeuuid_type())) ==
               "TimeUUID supports only version 1 UUIDs");
    auto tup = tuple_type({int32_type(), text_type(), double_type()});
    BOOST_TEST(error_of("(1, 'a', 1.5, 7)", col("t", tup)) ==
               "Invalid tuple literal for t: too many elements. Type frozen<tuple<int, text, double>> expects 3 but got 4");
    BOOST_TEST(error_of("('x', 'a', 1.5)", col("t", tup)) == "Invalid tuple literal for t: component 0 is not of type int");
    auto addr = user_type("ks", "addr", {"street", "Zip"}, {text_type(), int32_type()}, false);
    BOOST_TEST(error_of("{nope: 1}", col("a", addr)) == "Unknown field 'nope' in value of user defined type addr");
    auto m = map_type(text_type(), int32_type(), true);
    BOOST_TEST(error_of("{'x': null}", col("m", m)) == "null is not supported inside collections");
    BOOST_TEST(error_of("{null: 1}", col("m", m)) == "null is not supported inside collections");
    BOOST_TEST(error_of("1x", col("d", duration_type())).starts_with("syntax: no viable alternative at input 'x'"));
    BOOST_TEST(error_of("{1, 2}", col("l", list_type(int32_type(), true))) == "Invalid set literal for l of type list<int>");
    BOOST_TEST(error_of("{'a': 1}", col("s", set_type(text_type(), true))) == "Invalid map literal for s of type set<text>");
    BOOST_TEST(error_of("now()", col("v", int32_type())) ==
               "Type error: cannot assign result of function system.now (type timeuuid) to v (type int)");
    BOOST_TEST(error_of("nosuch(1)", col("v", int32_type())) == "Unknown function nosuch called");
}

BOOST_AUTO_TEST_CASE(special_literals) {
    auto d = [](std::string_view s) { return bind_text(s, col("d", duration_type())).data; };
    BOOST_TEST(format_duration(decode_duration(d("1y2mo3w4d5h6m7s8ms9us10ns"))) == "1y2mo25d5h6m7s8ms9us10ns");
    BOOST_TEST((d("P1Y2M3DT4H5M6S") == encode_duration(parse_duration("P1Y2M3DT4H5M6S"))));
    // types_duration: Cassandra stored 14mo3d14706000000000ns.
    BOOST_TEST((d("P0001-02-03T04:05:06") == encode_duration(duration_value{14, 3, 14706000000000})));
    BOOST_TEST((d("-1d") == encode_duration(duration_value{0, -1, 0})));
    BOOST_TEST((d("P2W") == encode_duration(duration_value{0, 14, 0})));
    auto dbl = [](std::string_view s) { return std::bit_cast<double>(read_be<uint64_t>(bind_text(s, col("d", double_type())).data.data())); };
    BOOST_TEST(std::isnan(dbl("NaN")));
    BOOST_TEST(dbl("Infinity") == std::numeric_limits<double>::infinity());
    BOOST_TEST(dbl("-Infinity") == -std::numeric_limits<double>::infinity());
    BOOST_TEST(std::signbit(dbl("-0.0")));
    BOOST_TEST(dbl("1e3") == 1000.0);
    BOOST_TEST(dbl("-3") == -3.0);
    auto f = bind_text("16777217", col("f", float_type())).data;
    BOOST_TEST(std::bit_cast<float>(read_be<uint32_t>(f.data())) == 16777216.0f);
    BOOST_TEST(bind_text("null", col("v", int32_type())).is_null());
    // A frozen UDT literal with a set inside: fields in declared order, the set sorted.
    auto addr = user_type("ks", "addr", {"street", "Zip", "tags"},
                          {text_type(), int32_type(), set_type(text_type(), false)}, false);
    auto v = bind_text("{tags: {'x', 'a'}, street: 'Main', \"Zip\": 1}", col("a", addr)).data;
    BOOST_TEST(addr->to_cql_literal(v) == addr->to_cql_literal(addr->from_cql_literal("{street: 'Main', \"Zip\": 1, tags: {'a', 'x'}}")));
    // Empty braces are an empty map or set.
    BOOST_TEST((bind_text("{}", col("m", map_type(int32_type(), int32_type(), true))).data == serialize_collection({})));
}

BOOST_AUTO_TEST_CASE(markers_report_their_specs_and_bind_values) {
    auto p = parse("{?: :val, 1: ?}");
    BOOST_TEST(p.ctx.marker_names.size() == 3u);
    bind_specs specs(p.ctx);
    auto m = map_type(int32_type(), text_type(), true);
    auto t = p.raw->prepare(col("m", m), specs);
    auto s = specs.specs();
    BOOST_TEST(s[0].name == "key(m)");
    BOOST_TEST(s[1].name == "val");
    BOOST_TEST(s[2].name == "value(m)");
    BOOST_TEST(s[0].type->cql_name() == "int");
    BOOST_TEST(s[1].type->cql_name() == "text");
    query_options opts;
    opts.values = {raw_value::of(serialize_be<int32_t>(5)), raw_value::of(to_bytes("five")), raw_value::of(to_bytes("one"))};
    auto v = t->bind(opts);
    BOOST_TEST(m->to_cql_literal(v.data) == "{1: 'one', 5: 'five'}");
    // An unset element makes the whole value unset; a null one is refused.
    opts.values[2] = raw_value::unset_value();
    BOOST_TEST(t->bind(opts).is_unset());
    opts.values[2] = raw_value::null_value();
    BOOST_CHECK_THROW(t->bind(opts), cql_error);
    // A bad bound value is refused with invalid.
    query_options bad;
    bad.values = {raw_value::of(bytes{1, 2, 3})};
    try {
        bind_text("?", col("v", int32_type()), bad);
        BOOST_FAIL("bad bound value accepted");
    } catch (const cql_error& e) {
        BOOST_TEST(int(e.code()) == int(error_code::invalid));
    }
    // Named values are put in marker order.
    std::vector<column_spec> vars = {col("a", int32_type()), col("b", int32_type())};
    query_options named;
    named.names = {"b", "a"};
    named.values = {raw_value::of(serialize_be<int32_t>(2)), raw_value::of(serialize_be<int32_t>(1))};
    auto pos = positional_options(vars, named);
    BOOST_TEST((pos.values[0].data == serialize_be<int32_t>(1)));
    query_options short_opts;
    BOOST_CHECK_THROW(positional_options(vars, short_opts), cql_error);
}

// Vectors.Literal: the count checked at prepare, null and unset elements refused at bind, markers inside.
BOOST_AUTO_TEST_CASE(vector_literals) {
    auto vf = col("vf", vector_type(float_type(), 3));
    BOOST_TEST(vf.type->to_cql_literal(bind_text("[1.0, -2.5, 3.25]", vf).data) == "[1.0, -2.5, 3.25]");
    BOOST_TEST(vf.type->to_cql_literal(bind_text("[0, 0, 0]", vf).data) == "[0.0, 0.0, 0.0]");
    BOOST_TEST(error_of("[1.0, 2.0]", vf) ==
               "Invalid vector literal for vf of type vector<float, 3>; expected 3 elements, but given 2");
    BOOST_TEST(error_of("[]", vf) ==
               "Invalid vector literal for vf of type vector<float, 3>; expected 3 elements, but given 0");
    BOOST_TEST(error_of("[1.0, null, 2.0]", vf) == "null is not supported inside vectors");
    BOOST_TEST(error_of("{1.0, 2.0, 3.0}", vf) == "Invalid set literal for vf of type vector<float, 3>");
    BOOST_TEST(error_of("[1.0, 'x', 2.0]", vf) == "Invalid STRING constant (x) for \"value(vf)\" of type float");

    auto p = parse("[?, :b, 3]");
    bind_specs specs(p.ctx);
    auto t = p.raw->prepare(vf, specs);
    auto s = specs.specs();
    BOOST_TEST(s[0].name == "value(vf)");
    BOOST_TEST(s[1].name == "b");
    BOOST_TEST(s[0].type->cql_name() == "float");
    query_options opts;
    auto f = [](float x) { return raw_value::of(serialize_be<uint32_t>(std::bit_cast<uint32_t>(x))); };
    opts.values = {f(1.5), f(-2)};
    BOOST_TEST(vf.type->to_cql_literal(t->bind(opts).data) == "[1.5, -2.0, 3.0]");
    for (auto bad : {raw_value::null_value(), raw_value::unset_value(), raw_value::of(bytes{})}) {
        opts.values[1] = bad;
        try {
            t->bind(opts);
            BOOST_FAIL("a null element accepted");
        } catch (const cql_error& e) {
            BOOST_TEST(std::string(e.what()) == "null is not supported inside vectors");
        }
    }
    // A whole vector bound as bytes: validated, with an invalid error for a bad one.
    query_options whole;
    whole.values = {raw_value::of(bytes(12, 0))};
    BOOST_TEST(bind_text("?", vf, whole).data == bytes(12, 0));
    whole.values = {raw_value::of(bytes(8, 0))};
    try {
        bind_text("?", vf, whole);
        BOOST_FAIL("a vector of 2 floats accepted for vector<float, 3>");
    } catch (const cql_error& e) {
        BOOST_TEST(int(e.code()) == int(error_code::invalid));
    }
}

BOOST_AUTO_TEST_CASE(functions) {
    auto now1 = bind_text("now()", col("u", timeuuid_type()));
    BOOST_TEST(now1.data.size() == 16u);
    BOOST_TEST((now1.data[6] >> 4) == 1);
    // now() is not folded at prepare: two binds give two UUIDs.
    auto p = parse("now()");
    bind_specs specs(p.ctx);
    auto t = p.raw->prepare(col("u", timeuuid_type()), specs);
    BOOST_TEST((t->bind({}).data != t->bind({}).data));
    BOOST_TEST(bind_text("uuid()", col("u", uuid_type())).data.size() == 16u);
    auto ts = bind_text("toTimestamp(now())", col("ts", timestamp_type()));
    BOOST_TEST(read_be<int64_t>(ts.data.data()) > 1700000000000LL);
    auto d = bind_text("toDate('2020-01-02 03:04:05+0000')", col("d", date_type()));
    BOOST_TEST(date_type()->to_string(d.data) == "2020-01-02");
    BOOST_TEST(bind_text("currentTimestamp()", col("ts", timestamp_type())).data.size() == 8u);
    BOOST_TEST((bind_text("textAsBlob('ab')", col("b", blob_type())).data == to_bytes("ab")));
    BOOST_TEST((bind_text("blobAsInt(0x00000005)", col("i", int32_type())).data == serialize_be<int32_t>(5)));
    auto mn = bind_text("minTimeuuid('2020-01-01 00:00:00+0000')", col("u", timeuuid_type())).data;
    auto mx = bind_text("maxTimeuuid('2020-01-01 00:00:00+0000')", col("u", timeuuid_type())).data;
    BOOST_TEST(timeuuid_type()->compare(mn, mx) < 0);
    auto l = list_type(int32_type(), true);
    BOOST_TEST(l->to_cql_literal(bind_text("fromJson('[3, 1, 2]')", col("l", l)).data) == "[3, 1, 2]");
    auto m = map_type(text_type(), int32_type(), true);
    BOOST_TEST(m->to_cql_literal(bind_text("fromJson('{\"b\": 2, \"a\": 1}')", col("m", m)).data) == "{'a': 1, 'b': 2}");
    BOOST_TEST(bind_text("fromJson('null')", col("v", text_type())).is_null());
    try {
        bind_text("fromJson('[1, \"x\"]')", col("l", l));
        BOOST_FAIL("bad JSON accepted");
    } catch (const cql_error& e) {
        BOOST_TEST(int(e.code()) == int(error_code::function_failure));
    }
    // A marker as a function argument is named after the argument.
    auto q = parse("fromJson(?)");
    bind_specs qs(q.ctx);
    q.raw->prepare(col("l", l), qs);
    BOOST_TEST(qs.specs()[0].name == "arg0(system.fromjson)");
}
