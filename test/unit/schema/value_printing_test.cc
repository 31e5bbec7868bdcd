// Tests of value printing and parsing: sstabledump's JSON for hand-built serialized values, CQL literals both
// ways, and every value of the peer corpus' expected.json read back and printed identically.
#include "test/lib/peer_corpus.hh"

#include "cql/cql_parser.hh"
#include "schema/types.hh"
#include "schema/value_format.hh"
#include "utils/json_reader.hh"

#include <boost/test/unit_test.hpp>


#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <unordered_set>

using namespace reef;
using namespace reef::testing;

namespace {

bytes hex(std::string_view h) {
    return hex_decode(h);
}

std::string json(const data_type& t, const bytes& v) {
    return t->to_json_string(v);
}

bytes dbl(double d) {
    return serialize_be(std::bit_cast<uint64_t>(d));
}

bytes flt(float f) {
    return serialize_be(std::bit_cast<uint32_t>(f));
}

} // namespace

BOOST_AUTO_TEST_CASE(json_of_native_values) {
    BOOST_CHECK_EQUAL(json(int32_type(), hex("7fffffff")), "2147483647");
    BOOST_CHECK_EQUAL(json(int32_type(), hex("80000000")), "-2147483648");
    BOOST_CHECK_EQUAL(json(bigint_type(), hex("8000000000000000")), "-9223372036854775808");
    BOOST_CHECK_EQUAL(json(smallint_type(), hex("ffff")), "-1");
    BOOST_CHECK_EQUAL(json(tinyint_type(), hex("7f")), "127");
    BOOST_CHECK_EQUAL(json(counter_type(), hex("0000000000000005")), "5");
    BOOST_CHECK_EQUAL(json(boolean_type(), hex("01")), "true");
    BOOST_CHECK_EQUAL(json(boolean_type(), hex("00")), "false");
    BOOST_CHECK_EQUAL(json(text_type(), to_bytes("it's \"quoted\"")), R"("it's \"quoted\"")");
    BOOST_CHECK_EQUAL(json(text_type(), to_bytes("tab\tnewline\n\x01\\")), R"("tab\tnewline\n\u0001\\")");
    BOOST_CHECK_EQUAL(json(text_type(), to_bytes("日本語 😀 é ß Ω")), "\"日本語 😀 é ß Ω\"");
    BOOST_CHECK_EQUAL(json(ascii_type(), bytes{}), "\"\"");
    BOOST_CHECK_EQUAL(json(blob_type(), hex("cafebabe")), "\"0xcafebabe\"");
    BOOST_CHECK_EQUAL(json(blob_type(), bytes{}), "\"0x\"");
    // varint: two's complement, any length.
    BOOST_CHECK_EQUAL(json(varint_type(), hex("00ff")), "255");
    BOOST_CHECK_EQUAL(json(varint_type(), hex("ff")), "-1");
    BOOST_CHECK_EQUAL(json(varint_type(), hex("ff7f")), "-129");
    BOOST_CHECK_EQUAL(json(varint_type(), hex("0080000000000000000000000000000000")), "170141183460469231731687303715884105728");
    BOOST_CHECK_EQUAL(json(varint_type(), hex("ff7fffffffffffffffffffffffffffffff")), "-170141183460469231731687303715884105729");
    // decimal: int32 scale + varint unscaled.
    BOOST_CHECK_EQUAL(json(decimal_type(), hex("fffffed401")), "1E+300");
    BOOST_CHECK_EQUAL(json(decimal_type(), hex("0000001eff")), "-1E-30");
    BOOST_CHECK_EQUAL(json(decimal_type(), hex("00000002ff9c")), "-1.00");
    BOOST_CHECK_EQUAL(json(decimal_type(), hex("000000050004cb2f")), "3.14159");
    BOOST_CHECK_EQUAL(json(decimal_type(), hex("fffffff70f")), "1.5E+10");
    BOOST_CHECK_EQUAL(json(decimal_type(), hex("0000000000")), "0");
    BOOST_CHECK_EQUAL(json(decimal_type(), hex("0000000701")), "1E-7");
    BOOST_CHECK_EQUAL(json(decimal_type(), hex("0000000601")), "0.000001");
    // double and float as Java prints them; no NaN or Infinity in JSON.
    BOOST_CHECK_EQUAL(json(double_type(), dbl(2.718281828459045)), "2.718281828459045");
    BOOST_CHECK_EQUAL(json(double_type(), dbl(1.7976931348623157E308)), "1.7976931348623157E308");
    BOOST_CHECK_EQUAL(json(double_type(), dbl(1e-300)), "1.0E-300");
    BOOST_CHECK_EQUAL(json(double_type(), dbl(0.0)), "0.0");
    BOOST_CHECK_EQUAL(json(double_type(), dbl(-0.0)), "-0.0");
    BOOST_CHECK_EQUAL(json(double_type(), dbl(100.0)), "100.0");
    BOOST_CHECK_EQUAL(json(double_type(), dbl(1e7)), "1.0E7");
    BOOST_CHECK_EQUAL(json(double_type(), dbl(0.001)), "0.001");
    BOOST_CHECK_EQUAL(json(double_type(), dbl(0.0001)), "1.0E-4");
    BOOST_CHECK_EQUAL(json(double_type(), dbl(std::numeric_limits<double>::denorm_min())), "4.9E-324");
    BOOST_CHECK_EQUAL(json(double_type(), dbl(1e23)), "9.999999999999999E22");  // Java 17, not the shortest
    BOOST_CHECK_EQUAL(json(double_type(), dbl(0.1)), "0.1");
    BOOST_CHECK_EQUAL(json(double_type(), dbl(-1234567.0)), "-1234567.0");
    BOOST_CHECK_EQUAL(json(float_type(), flt(std::numeric_limits<float>::denorm_min())), "1.4E-45");
    BOOST_CHECK_EQUAL(json(double_type(), dbl(std::nan(""))), "null");
    BOOST_CHECK_EQUAL(json(double_type(), dbl(-std::numeric_limits<double>::infinity())), "null");
    BOOST_CHECK_EQUAL(json(float_type(), flt(3.4028235E38f)), "3.4028235E38");
    BOOST_CHECK_EQUAL(json(float_type(), flt(0.1f)), "0.1");
    BOOST_CHECK_EQUAL(json(float_type(), flt(std::numeric_limits<float>::infinity())), "null");
    // date: days + 2^31, unsigned.
    BOOST_CHECK_EQUAL(json(date_type(), hex("80000000")), "\"1970-01-01\"");
    BOOST_CHECK_EQUAL(json(date_type(), hex("7fffffff")), "\"1969-12-31\"");
    BOOST_CHECK_EQUAL(json(date_type(), serialize_be<uint32_t>(uint32_t((1u << 31) + 19782))), "\"2024-02-29\"");
    BOOST_CHECK_EQUAL(json(time_type(), serialize_be<int64_t>(48654234000000)), "\"13:30:54.234000000\"");
    BOOST_CHECK_EQUAL(json(time_type(), serialize_be<int64_t>(1)), "\"00:00:00.000000001\"");
    BOOST_CHECK_EQUAL(json(timestamp_type(), serialize_be<int64_t>(1709210096789)), "\"2024-02-29 12:34:56.789Z\"");
    BOOST_CHECK_EQUAL(json(timestamp_type(), serialize_be<int64_t>(-1)), "\"1969-12-31 23:59:59.999Z\"");
    BOOST_CHECK_EQUAL(json(timestamp_type(), serialize_be<int64_t>(-62135596800000)), "\"0001-01-01 00:00:00.000Z\"");
    BOOST_CHECK_EQUAL(json(uuid_type(), hex("0123456701230123012301234567890a")), "\"01234567-0123-0123-0123-01234567890a\"");
    BOOST_CHECK_EQUAL(json(inet_type(), hex("c0a8010a")), "\"192.168.1.10\"");
    BOOST_CHECK_EQUAL(json(inet_type(), hex("20010db8000000000000ff0000428329")), "\"2001:db8:0:0:0:ff00:42:8329\"");
    BOOST_CHECK_EQUAL(json(inet_type(), hex("00000000000000000000000000000000")), "\"0:0:0:0:0:0:0:0\"");
    // Durations: three zigzag vints.
    BOOST_CHECK_EQUAL(json(duration_type(), encode_duration({0, 0, 5400000000000})), "\"1h30m\"");
    BOOST_CHECK_EQUAL(json(duration_type(), encode_duration({-14, -3, -14706007008009})), "\"-1y2mo3d4h5m6s7ms8us9ns\"");
    BOOST_CHECK_EQUAL(json(duration_type(), encode_duration({0, 0, 0})), "\"\"");
    BOOST_CHECK(encode_duration({1, 0, 0}) == hex("020000"));
    BOOST_CHECK(encode_duration({0, -1, 0}) == hex("000100"));
    BOOST_CHECK(encode_duration({0, 0, 64}) == hex("00008080"));
}

BOOST_AUTO_TEST_CASE(strings_of_values) {
    // AbstractType.getString, what sstabledump prints for partition keys.
    BOOST_CHECK_EQUAL(int32_type()->to_string(hex("ffffffff")), "-1");
    BOOST_CHECK_EQUAL(text_type()->to_string(to_bytes("a:b")), "a:b");
    BOOST_CHECK_EQUAL(blob_type()->to_string(hex("cafe")), "cafe");
    // Cassandra 5.0: BigDecimal.toString, not toPlainString (found by peer_gen_diff: "-9.8936689010E+11").
    BOOST_CHECK_EQUAL(decimal_type()->to_string(hex("fffffffd01")), "1E+3");
    BOOST_CHECK_EQUAL(decimal_type()->to_string(hex("0000000701")), "1E-7");
    BOOST_CHECK_EQUAL(decimal_type()->to_string(hex("00000002f6")), "-0.10");
    BOOST_CHECK_EQUAL(decimal_type()->to_string(hex("ffffb1e001")), "1E+20000");
    BOOST_CHECK(decimal_type()->from_string("1E+3") == hex("fffffffd01"));
    // TimestampSerializer.toString in 5.0: ISO 8601 with milliseconds, here in UTC.
    BOOST_CHECK_EQUAL(timestamp_type()->to_string(serialize_be<int64_t>(1709210096789)), "2024-02-29T12:34:56.789Z");
    BOOST_CHECK_EQUAL(timestamp_type()->to_string(serialize_be<int64_t>(-1)), "1969-12-31T23:59:59.999Z");
    BOOST_CHECK(timestamp_type()->from_string("2024-02-29T12:34:56.789Z") == serialize_be<int64_t>(1709210096789));
    BOOST_CHECK(timestamp_type()->from_string("2024-02-29 12:34Z") == serialize_be<int64_t>(1709210040000));
    // CollectionType.getString: hex of the frozen value.
    auto fl = list_type(int32_type(), false);
    auto lv = hex("000000010000000400000007");
    BOOST_CHECK_EQUAL(fl->to_string(lv), "000000010000000400000007");
    BOOST_CHECK(fl->from_string("000000010000000400000007") == lv);
    // TupleType.getString: ':'-joined, ':' and '@' escaped, '@' for null; UDTs the same.
    auto tup = tuple_type({int32_type(), text_type(), text_type()});
    auto tv = serialize_tuple({serialize_be<int32_t>(-2), to_bytes("a:b@c"), std::nullopt});
    BOOST_CHECK_EQUAL(tup->to_string(tv), "-2:a\\:b\\@c:@");
    BOOST_CHECK(tup->from_string("-2:a\\:b\\@c:@") == tv);
    auto udt = user_type("ks", "u", {"x", "y"}, {text_type(), timestamp_type()}, false);
    auto uv = serialize_tuple({to_bytes("@"), serialize_be<int64_t>(0)});
    BOOST_CHECK_EQUAL(udt->to_string(uv), "\\@:1970-01-01T00\\:00\\:00.000Z");
    BOOST_CHECK(udt->from_string("\\@:1970-01-01T00\\:00\\:00.000Z") == uv);
    BOOST_CHECK_EQUAL(double_type()->to_string(dbl(std::nan(""))), "NaN");
    BOOST_CHECK_EQUAL(uuid_type()->to_string(bytes{}), "");
    BOOST_CHECK_EQUAL(date_type()->to_string(hex("80000000")), "1970-01-01");
    auto comp = composite_type({int32_type(), text_type()});
    auto v = serialize_composite({serialize_be<int32_t>(7), to_bytes("x:y")});
    BOOST_CHECK_EQUAL(comp->to_string(v), "7:x\\:y");
    BOOST_CHECK(comp->from_string("7:x\\:y") == v);
}

BOOST_AUTO_TEST_CASE(json_of_collections_tuples_and_udts) {
    auto addr = user_type("corpus", "addr", {"street", "zip", "tags"},
                          {text_type(), int32_type(), set_type(text_type(), false)}, false);
    auto v = addr->from_cql_literal("{street: 'Main', zip: 1000, tags: {'t1'}}");
    BOOST_CHECK_EQUAL(json(addr, v), R"({"street": "Main", "zip": 1000, "tags": ["t1"]})");
    BOOST_CHECK_EQUAL(json(addr, addr->from_cql_literal("{zip: 5}")), R"({"street": null, "zip": 5, "tags": null})");
    auto fm = map_type(int32_type(), text_type(), false);
    BOOST_CHECK_EQUAL(json(fm, fm->from_cql_literal("{2: 'two', 1: 'one'}")), R"({"1": "one", "2": "two"})");
    BOOST_CHECK_EQUAL(json(fm, fm->from_cql_literal("{}")), "{}");
    auto tup = tuple_type({int32_type(), text_type(), boolean_type()});
    BOOST_CHECK_EQUAL(json(tup, tup->from_cql_literal("(7, 'seven', true)")), R"([7, "seven", true])");
    BOOST_CHECK_EQUAL(json(tup, tup->from_cql_literal("(7, null, true)")), R"([7, null, true])");
    auto fl = list_type(int32_type(), false);
    BOOST_CHECK_EQUAL(json(fl, fl->from_cql_literal("[3, 1, 2]")), "[3, 1, 2]");
    BOOST_CHECK_EQUAL(json(fl, fl->from_cql_literal("[]")), "[]");
    auto nested = map_type(text_type(), list_type(int32_type(), false), true);
    BOOST_CHECK_EQUAL(json(nested, nested->from_cql_literal("{'n': [1, 2]}")), R"({"n": [1, 2]})");
    auto upper = user_type("ks", "t", {"Name"}, {text_type()}, false);
    BOOST_CHECK_EQUAL(json(upper, upper->from_cql_literal(R"({"Name": 'x'})")), R"({"\"Name\"": "x"})");
}

BOOST_AUTO_TEST_CASE(cql_literals_round_trip) {
    struct c {
        data_type type;
        std::string literal;
    };
    auto udt = user_type("ks", "addr", {"street", "zip"}, {text_type(), int32_type()}, false);
    std::vector<c> cases = {
        {int32_type(), "-2147483648"}, {bigint_type(), "9223372036854775807"}, {smallint_type(), "-32768"},
        {tinyint_type(), "-128"}, {varint_type(), "-170141183460469231731687303715884105729"},
        {decimal_type(), "123456789.123456789"}, {decimal_type(), "1E+300"}, {double_type(), "2.718281828459045"},
        {double_type(), "NaN"}, {double_type(), "-Infinity"}, {float_type(), "1.5"}, {boolean_type(), "true"},
        {text_type(), "'it''s'"}, {ascii_type(), "'~~~'"}, {blob_type(), "0xcafebabe"}, {blob_type(), "0x"},
        {date_type(), "'0001-01-01'"}, {date_type(), "'9999-12-31'"}, {time_type(), "'23:59:59.999999999'"},
        {timestamp_type(), "'2024-02-29 12:34:56.789Z'"}, {uuid_type(), "01234567-0123-0123-0123-0123456789ab"},
        {timeuuid_type(), "50554d6e-29bb-11e5-b345-feff819cdc9f"}, {inet_type(), "'2001:db8:0:0:0:ff00:42:8329'"},
        {inet_type(), "'10.0.0.1'"}, {duration_type(), "89y11mo30d23h59m59s999ms999us999ns"},
        {duration_type(), "-5ns"}, {list_type(text_type(), true), "['a', 'b']"},
        {set_type(int32_type(), false), "{1, 2, 3}"}, {map_type(text_type(), bigint_type(), true), "{'k1': 1, 'k2': 2}"},
        {tuple_type({int32_type(), text_type()}), "(1, null)"}, {udt, "{street: 'Main', zip: 1000}"},
        {reversed_type(int32_type()), "5"}, {int32_type(), "''"},
    };
    for (auto& [t, lit] : cases) {
        auto v = t->from_cql_literal(lit);
        BOOST_CHECK_EQUAL(t->to_cql_literal(v), lit);
        BOOST_CHECK_NO_THROW(t->validate(v));
    }
    // Other accepted spellings.
    BOOST_CHECK_EQUAL(inet_type()->to_cql_literal(inet_type()->from_cql_literal("'::1'")), "'0:0:0:0:0:0:0:1'");
    BOOST_CHECK_EQUAL(inet_type()->to_cql_literal(inet_type()->from_cql_literal("'::ffff:1.2.3.4'")), "'1.2.3.4'");
    BOOST_CHECK_EQUAL(timestamp_type()->to_cql_literal(timestamp_type()->from_cql_literal("'2024-02-29T12:34:56+0100'")),
                      "'2024-02-29 11:34:56.000Z'");
    BOOST_CHECK_EQUAL(timestamp_type()->to_cql_literal(timestamp_type()->from_cql_literal("1")), "'1970-01-01 00:00:00.001Z'");
    BOOST_CHECK_EQUAL(duration_type()->to_cql_literal(duration_type()->from_cql_literal("P1Y2M3DT4H")), "1y2mo3d4h");
    BOOST_CHECK_EQUAL(duration_type()->to_cql_literal(duration_type()->from_cql_literal("2w")), "14d");
    BOOST_CHECK_EQUAL(decimal_type()->to_cql_literal(decimal_type()->from_cql_literal("1.50e3")), "1.50E+3");
    BOOST_CHECK_EQUAL(text_type()->to_cql_literal(text_type()->from_cql_literal("$$a'b$$")), "'a''b'");
    // Mistakes.
    BOOST_CHECK_THROW(int32_type()->from_cql_literal("2147483648"), marshal_exception);
    BOOST_CHECK_THROW(int32_type()->from_cql_literal("1.5"), marshal_exception);
    BOOST_CHECK_THROW(text_type()->from_cql_literal("abc"), marshal_exception);
    BOOST_CHECK_THROW(text_type()->from_cql_literal("'abc"), marshal_exception);
    BOOST_CHECK_THROW(list_type(int32_type(), true)->from_cql_literal("[1, 2"), marshal_exception);
    BOOST_CHECK_THROW(timeuuid_type()->from_cql_literal("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"), marshal_exception);
    BOOST_CHECK_THROW(udt->from_cql_literal("{nope: 1}"), marshal_exception);
    BOOST_CHECK_THROW(blob_type()->from_cql_literal("0xabc"), marshal_exception);
    BOOST_CHECK_THROW(date_type()->from_cql_literal("'2024-13-01'"), marshal_exception);
    BOOST_CHECK_THROW(int32_type()->from_cql_literal("1 2"), marshal_exception);
}

namespace {

// The serialized value that a JSON value of expected.json stands for: abstract_type::from_json of its text
// (what `reef sstable write` reads values with).
bytes from_json(const data_type& t, const json_value& j) {
    return t->from_json(utils::parse_json(j.raw));
}

struct corpus_counts {
    // (type, JSON) pairs already checked: the large datasets repeat values many times over.
    std::unordered_set<std::string> seen;
    bool first_time(const data_type& t, const std::string& raw) {
        return seen.insert(t->class_name() + '\0' + raw).second;
    }
    size_t keys = 0;
    size_t clusterings = 0;
    size_t cells = 0;
    size_t paths = 0;
};

void check_partition_json(const schema& s, const json_value& partition, corpus_counts& n) {
    auto* head = partition.get("partition");
    BOOST_REQUIRE(head);
    auto* key = head->get("key");
    BOOST_REQUIRE(key);
    BOOST_REQUIRE_EQUAL(key->items.size(), s.partition_key().size());
    for (size_t i = 0; i < key->items.size(); ++i) {
        auto& t = s.partition_key()[i].type;
        auto& text = key->items[i].text;
        if (!n.first_time(t, text)) {
            continue;
        }
        BOOST_CHECK_EQUAL(t->to_string(t->from_string(text)), text);
        ++n.keys;
    }
    auto* rows = partition.get("rows");
    if (!rows) {
        return;
    }
    for (auto& row : rows->items) {
        if (auto* clustering = row.get("clustering")) {
            auto types = s.clustering_types();
            for (size_t i = 0; i < clustering->items.size(); ++i) {
                auto& j = clustering->items[i];
                auto k = types[i]->without_reversal()->kind();
                bool floating = k == type_kind::double_ || k == type_kind::float_;
                if ((j.type == json_value::kind::null && !floating) || !n.first_time(types[i], j.raw)) {
                    // A null non-float value is a compact table's missing clustering column.
                    continue;
                }
                // NaN and Infinity print as null, and null reads back as NaN.
                BOOST_CHECK_EQUAL(types[i]->to_json_string(from_json(types[i], j)), j.raw);
                ++n.clusterings;
            }
        }
        for (auto* bound_name : {"start", "end"}) {
            auto* bound = row.get(bound_name);
            auto* clustering = bound ? bound->get("clustering") : nullptr;
            if (!clustering) {
                continue;
            }
            auto types = s.clustering_types();
            for (size_t i = 0; i < clustering->items.size(); ++i) {
                auto& j = clustering->items[i];
                // "*" stands for the components a bound prefix lacks.
                if (j.type != json_value::kind::null && j.raw != "\"*\"" && n.first_time(types[i], j.raw)) {
                    BOOST_CHECK_EQUAL(types[i]->to_json_string(from_json(types[i], j)), j.raw);
                    ++n.clusterings;
                }
            }
        }
        auto* cells = row.get("cells");
        if (!cells) {
            continue;
        }
        for (auto& cell : cells->items) {
            auto* name = cell.get("name");
            auto* value = cell.get("value");
            BOOST_REQUIRE(name);
            auto* col = s.find_column(name->text);
            BOOST_REQUIRE_MESSAGE(col, "no column " << name->text << " in " << s.table());
            auto* path = cell.get("path");
            if (path) {
                // A cell of a non-frozen collection or UDT: the path is the element key, the value its value.
                auto& t = col->type;
                data_type path_type, value_type;
                if (t->is_user_type()) {
                    auto& u = static_cast<const user_type_impl&>(*t);
                    auto it = std::find(u.field_names().begin(), u.field_names().end(), path->items[0].text);
                    BOOST_REQUIRE(it != u.field_names().end());
                    value_type = u.field_types()[size_t(it - u.field_names().begin())];
                } else {
                    path_type = t->name_comparator();
                    value_type = t->kind() == type_kind::map ? t->value_type() :
                                 t->kind() == type_kind::list ? t->element_type() : nullptr;
                    auto& p = path->items[0].text;
                    BOOST_CHECK_EQUAL(path_type->to_string(path_type->from_string(p)), p);
                    ++n.paths;
                }
                if (value && value_type) {
                    BOOST_CHECK_EQUAL(value_type->to_json_string(from_json(value_type, *value)), value->raw);
                    ++n.cells;
                }
                continue;
            }
            if (!value || !n.first_time(col->type, value->raw)) {
                continue;
            }
            if (col->type->is_counter()) {
                // The dump prints the first 8 bytes of the counter context, a long.
                BOOST_CHECK_EQUAL(bigint_type()->to_json_string(bigint_type()->from_string(value->raw)), value->raw);
                ++n.cells;
                continue;
            }
            BOOST_CHECK_EQUAL(col->type->to_json_string(from_json(col->type, *value)), value->raw);
            ++n.cells;
        }
    }
}

} // namespace

BOOST_AUTO_TEST_CASE(corpus_values_print_as_sstabledump_does) {
    auto dir = require_peer_corpus();
    if (!dir) {
        return;
    }
    corpus_counts n;
    size_t datasets = 0;
    for (auto& entry : std::filesystem::directory_iterator(*dir)) {
        auto schema_file = entry.path() / "schema.cql";
        auto json_file = entry.path() / "expected.json";
        auto gz_file = entry.path() / "expected.json.gz";
        if (!std::filesystem::exists(schema_file) ||
            (!std::filesystem::exists(json_file) && !std::filesystem::exists(gz_file))) {
            continue;
        }
        BOOST_TEST_CONTEXT("dataset " << entry.path().filename().string()) {
            auto s = parse_create_table(read_file(schema_file));
            // The largest dumps (up to 68 MB) repeat a few simple types; reading them would only slow the
            // debug build down.
            auto text = std::filesystem::exists(json_file) ? read_file(json_file) : read_corpus_file(gz_file, 4 << 20);
            if (!text) {
                BOOST_TEST_MESSAGE("skipped (over 4 MiB): " << gz_file);
                continue;
            }
            for (auto& doc : read_json_documents(*text)) {
                for (auto& partition : doc.items) {
                    check_partition_json(*s, partition, n);
                }
            }
            ++datasets;
        }
    }
    BOOST_TEST_MESSAGE(datasets << " datasets: " << n.keys << " keys, " << n.clusterings << " clustering values, "
                                << n.cells << " cell values, " << n.paths << " cell paths");
    BOOST_CHECK_GT(datasets, 65u);
    BOOST_CHECK_GT(n.cells, 1000u);
    BOOST_CHECK_GT(n.paths, 10u);
}

BOOST_AUTO_TEST_CASE(randomized_java_double_strings_read_back) {
    std::mt19937_64 r(std::random_device{}());
    for (int i = 0; i < 20000; ++i) {
        double d = std::bit_cast<double>(r());
        float f = std::bit_cast<float>(uint32_t(r()));
        if (std::isfinite(d)) {
            auto v = dbl(d);
            auto text = json(double_type(), v);
            BOOST_REQUIRE_MESSAGE(double_type()->from_string(text) == v, text);
        }
        if (std::isfinite(f)) {
            auto v = flt(f);
            auto text = json(float_type(), v);
            BOOST_REQUIRE_MESSAGE(float_type()->from_string(text) == v, text);
        }
    }
}

// from_json reads what to_json_string prints, and Cassandra's other JSON forms of the same values.
BOOST_AUTO_TEST_CASE(json_values_read_back) {
    auto udt = user_type("ks", "addr", {"street", "Zip"}, {text_type(), int32_type()}, false);
    struct c {
        data_type type;
        std::string literal;
    };
    std::vector<c> cases = {
        {int32_type(), "-2147483648"}, {bigint_type(), "9223372036854775807"}, {smallint_type(), "-32768"},
        {tinyint_type(), "-128"}, {varint_type(), "-170141183460469231731687303715884105729"},
        {decimal_type(), "123456789.123456789"}, {decimal_type(), "1E+300"}, {decimal_type(), "-0.00"},
        {double_type(), "2.718281828459045"}, {double_type(), "-0.0"}, {double_type(), "1.0E-300"},
        {float_type(), "1.5"}, {boolean_type(), "true"}, {text_type(), "'it''s \"q\" \\\\ \n'"}, {ascii_type(), "'~~~'"},
        {blob_type(), "0xcafebabe"}, {blob_type(), "0x"}, {date_type(), "'0001-01-01'"}, {date_type(), "'9999-12-31'"},
        {time_type(), "'23:59:59.999999999'"}, {timestamp_type(), "'2024-02-29 12:34:56.789Z'"},
        {timestamp_type(), "'1900-01-01 00:00:00.000Z'"}, {uuid_type(), "01234567-0123-0123-0123-0123456789ab"},
        {timeuuid_type(), "50554d6e-29bb-11e5-b345-feff819cdc9f"}, {inet_type(), "'2001:db8:0:0:0:ff00:42:8329'"},
        {inet_type(), "'10.0.0.1'"}, {duration_type(), "89y11mo30d23h59m59s999ms999us999ns"}, {duration_type(), "-5ns"},
        {list_type(text_type(), true), "['a', 'b']"}, {set_type(int32_type(), false), "{1, 2, 3}"},
        {map_type(text_type(), bigint_type(), true), "{'k1': 1, 'k2': 2}"},
        {map_type(int32_type(), text_type(), false), "{-1: 'a', 7: 'b'}"},
        {map_type(timestamp_type(), int32_type(), false), "{'2024-02-29 12:34:56.789Z': 1}"},
        {map_type(list_type(int32_type(), false), int32_type(), false), "{[1, 2]: 1, [3]: 2}"},
        {map_type(tuple_type({int32_type(), text_type()}), boolean_type(), false), "{(1, 'a:b'): true}"},
        {map_type(double_type(), int32_type(), false), "{-1.5: 1, NaN: 2}"},
        {map_type(blob_type(), uuid_type(), false), "{0x00ff: 01234567-0123-0123-0123-0123456789ab}"},
        {map_type(udt, int32_type(), false), "{{street: 'x', \"Zip\": 5}: 1}"},
        {tuple_type({int32_type(), text_type()}), "(1, null)"}, {udt, "{street: 'Main', \"Zip\": 1000}"},
        {udt, "{street: null, \"Zip\": 1}"}, {reversed_type(int32_type()), "5"}, {int32_type(), "''"},
        {list_type(tuple_type({double_type(), date_type()}), false), "[(1.0, '2020-01-01'), (2.5, '1970-01-01')]"},
    };
    for (auto& [t, lit] : cases) {
        BOOST_TEST_CONTEXT(t->cql_name() << " " << lit) {
            auto v = t->from_cql_literal(lit);
            auto printed = t->to_json_string(v);
            auto back = t->from_json(utils::parse_json(printed));
            BOOST_CHECK_EQUAL(t->to_json_string(back), printed);
            BOOST_CHECK(back == v);
        }
    }
    // JSON has no NaN or Infinity: null reads back as NaN.
    BOOST_CHECK_EQUAL(double_type()->to_json_string(double_type()->from_json(utils::parse_json("null"))), "null");
    BOOST_CHECK(std::isnan(std::bit_cast<double>(read_be<uint64_t>(double_type()->from_json(utils::parse_json("null")).data()))));
    BOOST_CHECK(std::isnan(std::bit_cast<float>(read_be<uint32_t>(float_type()->from_json(utils::parse_json("null")).data()))));
    // Cassandra's fromJSONObject forms: numbers as strings, timestamps as milliseconds, UDT names unquoted.
    BOOST_CHECK(int32_type()->from_json(utils::parse_json("\"42\"")) == int32_type()->from_cql_literal("42"));
    BOOST_CHECK(timestamp_type()->from_json(utils::parse_json("1")) == timestamp_type()->from_cql_literal("1"));
    BOOST_CHECK_EQUAL(udt->to_json_string(udt->from_json(utils::parse_json("{\"STREET\": \"a\"}"))),
                      udt->to_json_string(udt->from_cql_literal("{street: 'a'}")));
    // As in CQL, a field with capitals is named in quotes.
    BOOST_CHECK_THROW(udt->from_json(utils::parse_json("{\"zip\": 3}")), marshal_exception);
    // Empty values print as "" and read back empty.
    BOOST_CHECK(int32_type()->from_json(utils::parse_json("\"\"")).empty());
    BOOST_CHECK(timestamp_type()->from_json(utils::parse_json("\"\"")).empty());
    // Mistakes name the value and the type.
    auto bad = [](const data_type& t, std::string_view json) {
        BOOST_TEST_CONTEXT(t->cql_name() << " " << json) {
            BOOST_CHECK_THROW(t->from_json(utils::parse_json(json)), marshal_exception);
        }
    };
    bad(int32_type(), "1.5");
    bad(int32_type(), "2147483648");
    bad(int32_type(), "true");
    bad(text_type(), "1");
    bad(blob_type(), "\"cafe\"");
    bad(blob_type(), "\"0xcaf\"");
    bad(boolean_type(), "1");
    bad(uuid_type(), "\"nope\"");
    bad(list_type(int32_type(), false), "{}");
    bad(map_type(int32_type(), int32_type(), false), "{\"a\": 1}");
    bad(map_type(int32_type(), int32_type(), false), "{\"1\": 1, \"01\": 2}");
    bad(tuple_type({int32_type()}), "[1, 2]");
    bad(udt, "{\"nope\": 1}");
    bad(date_type(), "\"2024-13-01\"");
    try {
        int32_type()->from_json(utils::parse_json("\"x\""));
    } catch (const marshal_exception& e) {
        BOOST_CHECK_MESSAGE(std::string(e.what()).find("int") != std::string::npos, e.what());
    }
}

// A duration whose units overflow 64-bit nanoseconds (or 32-bit months and days) is refused, never computed with
// signed overflow (UBSan found "999999999999m" through the statement fuzzer).
BOOST_AUTO_TEST_CASE(duration_text_that_overflows_is_refused) {
    for (auto text : {"999999999999m", "9223372036854775807ns1ns", "99999999999999999999h", "PT999999999999M",
                      "9223372036854775807y", "2562048h", "P99999999999999Y", "-9999999999w"}) {
        BOOST_CHECK_THROW(parse_duration(text), std::invalid_argument);
    }
    auto d = parse_duration("2562047h");
    BOOST_CHECK_EQUAL(d.nanoseconds, int64_t(2562047) * 3600000000000LL);
}
