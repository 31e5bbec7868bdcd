// Tests of the CQL types: class names and CQL type strings both ways, fixed lengths, validation, and
// comparisons against the order of the native values (randomized) and against Cassandra's special cases.
#include "schema/types.hh"
#include "schema/value_format.hh"
#include "test/lib/test_rng.hh"

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <random>

using namespace reef;

namespace {

constexpr std::string_view m = "org.apache.cassandra.db.marshal.";

std::string cls(std::string_view s) {
    // Expands "M." to the marshal package, to keep the expected names readable.
    std::string out;
    for (size_t i = 0; i < s.size(); ++i) {
        if (s.substr(i, 2) == "M.") {
            out += m;
            ++i;
        } else {
            out += s[i];
        }
    }
    return out;
}

int sign(int x) {
    return (x > 0) - (x < 0);
}

// Checks that t orders the serialized forms of values as less orders the values.
template <typename T, typename Less>
void check_order(const data_type& t, const std::vector<T>& values, auto serialize, Less less) {
    std::vector<bytes> ser;
    for (const auto& v : values) {
        ser.push_back(serialize(v));
    }
    auto rev = reversed_type(t);
    for (size_t i = 0; i < values.size(); ++i) {
        for (size_t j = 0; j < values.size(); ++j) {
            int expected = less(values[i], values[j]) ? -1 : less(values[j], values[i]) ? 1 : 0;
            int got = sign(t->compare(ser[i], ser[j]));
            if (got != expected) {
                BOOST_FAIL(t->cql_name() << ": compare(" << t->to_cql_literal(ser[i]) << ", "
                                         << t->to_cql_literal(ser[j]) << ") = " << got << ", expected " << expected);
            }
            BOOST_REQUIRE_EQUAL(sign(rev->compare(ser[i], ser[j])), -expected);
        }
    }
}

} // namespace

BOOST_AUTO_TEST_CASE(class_names_of_native_types) {
    BOOST_CHECK_EQUAL(int32_type()->class_name(), cls("M.Int32Type"));
    BOOST_CHECK_EQUAL(text_type()->class_name(), cls("M.UTF8Type"));
    BOOST_CHECK_EQUAL(bigint_type()->class_name(), cls("M.LongType"));
    BOOST_CHECK_EQUAL(date_type()->class_name(), cls("M.SimpleDateType"));
    BOOST_CHECK_EQUAL(tinyint_type()->class_name(), cls("M.ByteType"));
    BOOST_CHECK_EQUAL(smallint_type()->class_name(), cls("M.ShortType"));
    BOOST_CHECK_EQUAL(varint_type()->class_name(), cls("M.IntegerType"));
    BOOST_CHECK_EQUAL(counter_type()->class_name(), cls("M.CounterColumnType"));
    BOOST_CHECK_EQUAL(reversed_type(int32_type())->class_name(), cls("M.ReversedType(M.Int32Type)"));
}

BOOST_AUTO_TEST_CASE(class_names_round_trip) {
    // The first ones are copied from the serialization headers of the corpus (Statistics.db).
    std::vector<std::string> names = {
        cls("M.SetType(M.UTF8Type)"),
        cls("M.FrozenType(M.UserType(corpus,61646472,737472656574:M.UTF8Type,7a6970:M.Int32Type,"
            "74616773:M.SetType(M.UTF8Type)))"),
        cls("M.UserType(corpus,61646472,737472656574:M.UTF8Type,7a6970:M.Int32Type,"
            "74616773:M.FrozenType(M.SetType(M.UTF8Type)))"),
        cls("M.FrozenType(M.ListType(M.Int32Type))"),
        cls("M.FrozenType(M.MapType(M.Int32Type,M.UTF8Type))"),
        cls("M.FrozenType(M.SetType(M.UTF8Type))"),
        cls("M.MapType(M.UTF8Type,M.FrozenType(M.ListType(M.Int32Type)))"),
        cls("M.TupleType(M.Int32Type,M.UTF8Type,M.BooleanType)"),
        cls("M.ListType(M.UTF8Type)"),
        cls("M.MapType(M.UTF8Type,M.LongType)"),
        cls("M.CompositeType(M.Int32Type,M.UTF8Type,M.UUIDType)"),
        cls("M.ReversedType(M.DecimalType)"),
        cls("M.ReversedType(M.BytesType)"),
        cls("M.ReversedType(M.TimeType)"),
        cls("M.ReversedType(M.FrozenType(M.ListType(M.Int32Type)))"),
        cls("M.FrozenType(M.ListType(M.ListType(M.Int32Type)))"),
        cls("M.ListType(M.FrozenType(M.MapType(M.Int32Type,M.SetType(M.UTF8Type))))"),
        cls("M.TupleType(M.ListType(M.Int32Type),M.TupleType(M.ByteType,M.ShortType))"),
    };
    for (auto* t : {"AsciiType", "LongType", "BytesType", "BooleanType", "CounterColumnType", "SimpleDateType",
                    "DecimalType", "DoubleType", "DurationType", "FloatType", "InetAddressType", "Int32Type",
                    "ShortType", "UTF8Type", "TimeType", "TimestampType", "TimeUUIDType", "ByteType", "UUIDType",
                    "IntegerType", "EmptyType"}) {
        names.push_back(std::string(m) + t);
    }
    for (auto& n : names) {
        auto t = parse_class_name(n);
        BOOST_CHECK_EQUAL(t->class_name(), n);
        // And through CQL, for everything CQL can name.
        if (!t->is_composite() && !t->is_reversed() && t->kind() != type_kind::empty) {
            auto again = parse_cql_type(t->cql_name(), [&](std::string_view, std::string_view name) -> data_type {
                if (name == "addr") {
                    return parse_class_name(names[2]);
                }
                return nullptr;
            });
            BOOST_CHECK_EQUAL(again->class_name(), n);
        }
    }
    // Short names and blanks, as Cassandra's TypeParser accepts them.
    BOOST_CHECK_EQUAL(parse_class_name(" ListType( Int32Type ) ")->class_name(), cls("M.ListType(M.Int32Type)"));
    BOOST_CHECK_THROW(parse_class_name(cls("M.NoSuchType")), type_parse_error);
    BOOST_CHECK_THROW(parse_class_name(cls("M.ListType(M.Int32Type")), type_parse_error);
    BOOST_CHECK_THROW(parse_class_name(cls("M.Int32Type)")), type_parse_error);
    BOOST_CHECK_THROW(parse_class_name(cls("M.MapType(M.Int32Type)")), type_parse_error);
}

BOOST_AUTO_TEST_CASE(user_type_parts) {
    auto t = parse_class_name(cls("M.UserType(ks,61646472,737472656574:M.UTF8Type,7a6970:M.Int32Type)"));
    BOOST_REQUIRE(t->is_user_type());
    BOOST_CHECK(t->is_multi_cell());
    auto& u = static_cast<const user_type_impl&>(*t);
    BOOST_CHECK_EQUAL(u.keyspace(), "ks");
    BOOST_CHECK_EQUAL(u.type_name(), "addr");
    BOOST_REQUIRE_EQUAL(u.field_names().size(), 2u);
    BOOST_CHECK_EQUAL(u.field_names()[0], "street");
    BOOST_CHECK_EQUAL(u.field_names()[1], "zip");
    BOOST_CHECK_EQUAL(t->cql_name(), "addr");
    BOOST_CHECK_EQUAL(t->freeze()->cql_name(), "frozen<addr>");
    BOOST_CHECK(!t->freeze()->is_multi_cell());
}

BOOST_AUTO_TEST_CASE(cql_type_strings) {
    auto check = [](std::string_view cql, std::string_view expected_class, std::string_view expected_cql) {
        auto t = parse_cql_type(cql);
        BOOST_CHECK_EQUAL(t->class_name(), cls(expected_class));
        BOOST_CHECK_EQUAL(t->cql_name(), expected_cql);
        BOOST_CHECK_EQUAL(parse_cql_type(t->cql_name())->class_name(), t->class_name());
    };
    check("int", "M.Int32Type", "int");
    check("VARCHAR", "M.UTF8Type", "text");
    check("frozen<map<text, int>>", "M.FrozenType(M.MapType(M.UTF8Type,M.Int32Type))", "frozen<map<text, int>>");
    check("map<text, frozen<list<int>>>", "M.MapType(M.UTF8Type,M.FrozenType(M.ListType(M.Int32Type)))",
          "map<text, frozen<list<int>>>");
    check("set < timeuuid >", "M.SetType(M.TimeUUIDType)", "set<timeuuid>");
    check("tuple<int, text, boolean>", "M.TupleType(M.Int32Type,M.UTF8Type,M.BooleanType)",
          "frozen<tuple<int, text, boolean>>");
    check("frozen<list<frozen<set<bigint>>>>", "M.FrozenType(M.ListType(M.SetType(M.LongType)))",
          "frozen<list<frozen<set<bigint>>>>");
    check("'org.apache.cassandra.db.marshal.Int32Type'", "M.Int32Type", "int");
    BOOST_CHECK_THROW(parse_cql_type("map<int>"), type_parse_error);
    BOOST_CHECK_THROW(parse_cql_type("list<int"), type_parse_error);
    BOOST_CHECK_THROW(parse_cql_type("nosuchtype"), type_parse_error);
    BOOST_CHECK_THROW(parse_cql_type("int int"), type_parse_error);
}

BOOST_AUTO_TEST_CASE(fixed_value_lengths) {
    auto len = [](const data_type& t) { return t->value_length_if_fixed(); };
    BOOST_CHECK(len(int32_type()) == 4u);
    BOOST_CHECK(len(bigint_type()) == 8u);
    BOOST_CHECK(len(uuid_type()) == 16u);
    BOOST_CHECK(len(timeuuid_type()) == 16u);
    BOOST_CHECK(len(boolean_type()) == 1u);
    BOOST_CHECK(len(float_type()) == 4u);
    BOOST_CHECK(len(double_type()) == 8u);
    BOOST_CHECK(len(timestamp_type()) == 8u);
    BOOST_CHECK(len(reversed_type(int32_type())) == 4u);
    for (auto& t : {text_type(), ascii_type(), blob_type(), varint_type(), decimal_type(), inet_type(),
                    duration_type(), smallint_type(), tinyint_type(), date_type(), time_type(), counter_type(), list_type(int32_type(), false)}) {
        BOOST_CHECK_MESSAGE(!len(t), t->cql_name() << " is variable-length");
    }
}

BOOST_AUTO_TEST_CASE(validation) {
    BOOST_CHECK_NO_THROW(int32_type()->validate(serialize_be<int32_t>(5)));
    BOOST_CHECK_NO_THROW(int32_type()->validate(bytes{}));
    BOOST_CHECK_THROW(int32_type()->validate(bytes{1, 2, 3}), marshal_exception);
    BOOST_CHECK_THROW(ascii_type()->validate(bytes{0x80}), marshal_exception);
    BOOST_CHECK_NO_THROW(text_type()->validate(to_bytes("日本語 😀")));
    BOOST_CHECK_THROW(text_type()->validate(bytes{0xC3}), marshal_exception);
    BOOST_CHECK_THROW(text_type()->validate(bytes{0xED, 0xA0, 0x80}), marshal_exception);
    BOOST_CHECK_THROW(timeuuid_type()->validate(uuid_type()->from_string("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11")),
                      marshal_exception);
    BOOST_CHECK_THROW(time_type()->validate(serialize_be<int64_t>(86400LL * 1000000000)), marshal_exception);
    BOOST_CHECK_THROW(inet_type()->validate(bytes{1, 2, 3}), marshal_exception);
    BOOST_CHECK_THROW(list_type(int32_type(), false)->validate(bytes{0, 0, 0, 1, 0, 0, 0, 4, 1}), marshal_exception);
    BOOST_CHECK_THROW(list_type(int32_type(), false)->validate(serialize_collection({bytes{1, 2}})), marshal_exception);
    BOOST_CHECK_NO_THROW(list_type(int32_type(), false)->validate(serialize_collection({serialize_be<int32_t>(1)})));
}

BOOST_AUTO_TEST_CASE(randomized_integer_order) {
    auto& r = testing::test_rng();
    auto ints = [&](auto lo, auto hi) {
        using T = decltype(lo);
        std::vector<T> v = {lo, hi, T(0), T(1)};
        if (lo < 0) {
            v.push_back(T(-1));
        }
        std::uniform_int_distribution<int64_t> d(lo, hi);
        for (int i = 0; i < 60; ++i) {
            v.push_back(T(d(r)));
        }
        return v;
    };
    auto less = [](auto a, auto b) { return a < b; };
    check_order(int32_type(), ints(INT32_MIN, INT32_MAX), [](int32_t v) { return serialize_be(v); }, less);
    check_order(bigint_type(), ints(INT64_MIN, INT64_MAX), [](int64_t v) { return serialize_be(v); }, less);
    check_order(smallint_type(), ints(int16_t(INT16_MIN), int16_t(INT16_MAX)), [](int16_t v) { return serialize_be(v); }, less);
    check_order(tinyint_type(), ints(int8_t(INT8_MIN), int8_t(INT8_MAX)), [](int8_t v) { return serialize_be(v); }, less);
    check_order(timestamp_type(), ints(INT64_MIN, INT64_MAX), [](int64_t v) { return serialize_be(v); }, less);
    // Dates: days since the epoch stored unsigned with a 2^31 offset.
    check_order(date_type(), ints(INT32_MIN, INT32_MAX),
                [](int32_t days) { return serialize_be<uint32_t>(uint32_t(int64_t(days) + (int64_t(1) << 31))); }, less);
    check_order(time_type(), ints(int64_t(0), int64_t(86400LL * 1000000000 - 1)), [](int64_t v) { return serialize_be(v); }, less);
}

BOOST_AUTO_TEST_CASE(randomized_varint_and_decimal_order) {
    auto& r = testing::test_rng();
    // Values as long double cover the magnitudes checked; serialized through their decimal text, including
    // non-minimal encodings (extra sign bytes) that Cassandra also accepts.
    std::vector<int64_t> ints = {0, 1, -1, 127, 128, -128, -129, 255, 256, -256, -257, INT64_MAX, INT64_MIN};
    std::uniform_int_distribution<int> bits(0, 63);
    for (int i = 0; i < 60; ++i) {
        int64_t v = int64_t(r() >> bits(r));
        ints.push_back(i % 2 ? v : -v);
    }
    check_order(varint_type(), ints, [](int64_t v) { return big_int(v).to_bytes(); }, std::less<>());
    auto padded = [](int64_t v) {
        auto b = big_int(v).to_bytes();
        b.insert(b.begin(), v < 0 ? 0xFF : 0x00);
        return b;
    };
    for (size_t i = 0; i < ints.size(); ++i) {
        BOOST_CHECK_EQUAL(varint_type()->compare(padded(ints[i]), big_int(ints[i]).to_bytes()), 0);
    }
    // Random two's complement byte strings, redundant sign bytes included.
    std::uniform_int_distribution<int> len(1, 20), byte(0, 255), pad(0, 3);
    for (int i = 0; i < 300; ++i) {
        bytes x, y;
        for (auto* v : {&x, &y}) {
            for (int n = len(r); n > 0; --n) {
                v->push_back(uint8_t(byte(r)));
            }
            for (int n = pad(r); n > 0; --n) {
                v->insert(v->begin(), (*v)[0] & 0x80 ? 0xFF : 0x00);
            }
        }
        int expected = big_int::from_bytes(x).compare(big_int::from_bytes(y));
        BOOST_REQUIRE_EQUAL(sign(varint_type()->compare(x, y)), sign(expected));
        BOOST_REQUIRE_EQUAL(varint_type()->to_string(big_int::from_bytes(x).to_bytes()), varint_type()->to_string(x));
    }
    // Big ones, compared through their text: 10^k and -(10^k) for growing k.
    std::vector<std::string> big;
    for (int k = 0; k < 60; k += 7) {
        big.push_back("1" + std::string(size_t(k), '0'));
        big.push_back("-1" + std::string(size_t(k), '0'));
        big.push_back("9" + std::string(size_t(k), '9'));
    }
    auto big_less = [](const std::string& a, const std::string& b) {
        return big_int::from_string(a).compare(big_int::from_string(b)) < 0;
    };
    check_order(varint_type(), big, [](const std::string& s) { return varint_type()->from_string(s); }, big_less);
    for (auto& s : big) {
        BOOST_CHECK_EQUAL(varint_type()->to_string(varint_type()->from_string(s)), s);
    }

    // Decimals: equal values with different scales compare equal (BigDecimal.compareTo).
    std::vector<std::pair<int64_t, int32_t>> decs = {{0, 0}, {0, 5}, {1, 0}, {10, 1}, {100, 2}, {-1, 0}, {15, -9},
                                                     {1, -300}, {-1, 30}, {314159, 5}, {-100, 2}};
    std::uniform_int_distribution<int32_t> scale(-20, 20);
    for (int i = 0; i < 50; ++i) {
        decs.emplace_back(int64_t(r()) >> bits(r), scale(r));
    }
    auto ser = [](const std::pair<int64_t, int32_t>& d) {
        big_decimal x;
        x.unscaled = big_int(d.first);
        x.scale = d.second;
        return x.to_bytes();
    };
    // An independent exact order: value = sign * 0.DIGITS * 10^exp with DIGITS free of trailing zeros.
    struct canon {
        int sign;
        std::string digits;
        int64_t exp;
    };
    auto canonical = [](const std::pair<int64_t, int32_t>& d) {
        if (d.first == 0) {
            return canon{0, "", 0};
        }
        uint64_t mag = d.first < 0 ? ~uint64_t(d.first) + 1 : uint64_t(d.first);
        std::string digits = std::to_string(mag);
        int64_t scale = d.second;
        while (digits.back() == '0') {
            digits.pop_back();
            --scale;
        }
        return canon{d.first < 0 ? -1 : 1, digits, int64_t(digits.size()) - scale};
    };
    auto dless = [&](const auto& a, const auto& b) {
        auto x = canonical(a), y = canonical(b);
        if (x.sign != y.sign) {
            return x.sign < y.sign;
        }
        if (x.sign == 0) {
            return false;
        }
        bool mag_less = x.exp != y.exp ? x.exp < y.exp : x.digits < y.digits;
        bool mag_equal = x.exp == y.exp && x.digits == y.digits;
        if (mag_equal) {
            return false;
        }
        return x.sign > 0 ? mag_less : !mag_less;
    };
    check_order(decimal_type(), decs, ser, dless);
}

BOOST_AUTO_TEST_CASE(randomized_floating_order) {
    auto& r = testing::test_rng();
    std::vector<double> d = {0.0, -0.0, 1.0, -1.0, std::numeric_limits<double>::infinity(),
                             -std::numeric_limits<double>::infinity(), std::numeric_limits<double>::quiet_NaN(),
                             std::numeric_limits<double>::max(), std::numeric_limits<double>::denorm_min(), 1e-300};
    std::uniform_real_distribution<double> u(-1e6, 1e6);
    for (int i = 0; i < 50; ++i) {
        d.push_back(u(r));
    }
    // Java's Double.compare: -0.0 < 0.0, NaN last and equal to itself.
    auto java_less = [](double a, double b) {
        if (std::isnan(a)) {
            return false;
        }
        if (std::isnan(b)) {
            return true;
        }
        if (a == 0 && b == 0) {
            return std::signbit(a) && !std::signbit(b);
        }
        return a < b;
    };
    check_order(double_type(), d, [](double v) { return serialize_be(std::bit_cast<uint64_t>(v)); }, java_less);
    std::vector<float> f;
    for (double x : d) {
        f.push_back(float(x));
    }
    check_order(float_type(), f, [](float v) { return serialize_be(std::bit_cast<uint32_t>(v)); }, java_less);
}

BOOST_AUTO_TEST_CASE(randomized_byte_order_types) {
    auto& r = testing::test_rng();
    std::vector<std::string> s = {"", "a", "b", "ab", "zzz", "\x7f", "A", "~~~"};
    std::vector<std::string> u = {"é", "日本語", "😀", "ß"};
    std::uniform_int_distribution<int> len(0, 6), ch(0, 255), ach(0, 127);
    std::vector<std::string> blobs = s;
    for (int i = 0; i < 40; ++i) {
        std::string a, b;
        for (int n = len(r); n > 0; --n) {
            a += char(ach(r));
            b += char(ch(r));
        }
        s.push_back(a);
        blobs.push_back(b);
    }
    // Unsigned byte order, which for UTF-8 is code point order.
    auto uless = [](const std::string& a, const std::string& b) {
        return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end(),
                                            [](char x, char y) { return uint8_t(x) < uint8_t(y); });
    };
    check_order(ascii_type(), s, [](const std::string& v) { return to_bytes(v); }, uless);
    auto text = s;
    text.insert(text.end(), u.begin(), u.end());
    check_order(text_type(), text, [](const std::string& v) { return to_bytes(v); }, uless);
    check_order(blob_type(), blobs, [](const std::string& v) { return to_bytes(v); }, uless);
    std::vector<bool> bools = {false, true};
    check_order(boolean_type(), bools, [](bool v) { return bytes{uint8_t(v)}; }, std::less<>());
}

BOOST_AUTO_TEST_CASE(empty_values_sort_first) {
    for (auto& t : {int32_type(), bigint_type(), varint_type(), decimal_type(), double_type(), text_type(),
                    uuid_type(), timeuuid_type(), boolean_type(), timestamp_type()}) {
        auto v = t->from_cql_literal(t->kind() == type_kind::text ? "'a'" :
                                     t->kind() == type_kind::uuid || t->kind() == type_kind::timeuuid ?
                                     "50554d6e-29bb-11e5-b345-feff819cdc9f" :
                                     t->kind() == type_kind::boolean ? "false" :
                                     t->kind() == type_kind::timestamp ? "'1969-01-01'" : "-5");
        BOOST_CHECK_MESSAGE(t->compare(bytes{}, v) < 0, t->cql_name());
        BOOST_CHECK_MESSAGE(t->compare(v, bytes{}) > 0, t->cql_name());
        BOOST_CHECK_EQUAL(t->compare(bytes{}, bytes{}), 0);
        BOOST_CHECK_MESSAGE(reversed_type(t)->compare(bytes{}, v) > 0, t->cql_name());
    }
}

BOOST_AUTO_TEST_CASE(uuid_order) {
    auto u = [](std::string_view s) { return uuid_type()->from_string(s); };
    // UUIDType: version first (v1 < v4 whatever the bytes).
    BOOST_CHECK_LT(uuid_type()->compare(u("ffffffff-ffff-1fff-bfff-ffffffffffff"), u("00000000-0000-4000-8000-000000000000")), 0);
    // Version 1: time_hi, then time_mid, then time_low.
    BOOST_CHECK_LT(uuid_type()->compare(u("ffffffff-0000-1000-8000-000000000000"), u("00000000-0001-1000-8000-000000000000")), 0);
    BOOST_CHECK_LT(uuid_type()->compare(u("ffffffff-ffff-1000-8000-000000000000"), u("00000000-0000-1001-8000-000000000000")), 0);
    // Other versions: unsigned bytes.
    BOOST_CHECK_LT(uuid_type()->compare(u("7fffffff-0000-4000-8000-000000000000"), u("80000000-0000-4000-8000-000000000000")), 0);
    // The low half: unsigned for UUIDType, signed bytes for TimeUUIDType.
    auto a = u("00000000-0000-1000-7f00-000000000000"), b = u("00000000-0000-1000-8000-000000000000");
    BOOST_CHECK_LT(uuid_type()->compare(a, b), 0);
    BOOST_CHECK_GT(timeuuid_type()->compare(a, b), 0);
    auto c = u("00000000-0000-1000-0000-000000000001"), d = u("00000000-0000-1000-0000-0000000000ff");
    BOOST_CHECK_GT(timeuuid_type()->compare(c, d), 0);
    BOOST_CHECK_LT(uuid_type()->compare(c, d), 0);
    // TimeUUIDType: time first.
    BOOST_CHECK_LT(timeuuid_type()->compare(u("50554d6e-29bb-11e5-b345-feff819cdc9f"), u("50554d6f-29bb-11e5-b345-feff819cdc9f")), 0);
    BOOST_CHECK_LT(timeuuid_type()->compare(u("ffffffff-ffff-11e4-b345-feff819cdc9f"), u("00000000-0000-11e5-b345-feff819cdc9f")), 0);
}

BOOST_AUTO_TEST_CASE(collection_tuple_and_composite_order) {
    auto l = list_type(int32_type(), false);
    auto lit = [](const data_type& t, std::string_view s) { return t->from_cql_literal(s); };
    BOOST_CHECK_LT(l->compare(lit(l, "[1, 2]"), lit(l, "[1, 3]")), 0);
    BOOST_CHECK_LT(l->compare(lit(l, "[1, 2]"), lit(l, "[1, 2, 0]")), 0);
    BOOST_CHECK_LT(l->compare(lit(l, "[-1, 9]"), lit(l, "[1]")), 0);
    BOOST_CHECK_LT(l->compare(bytes{}, lit(l, "[]")), 0);
    auto mp = map_type(text_type(), int32_type(), false);
    BOOST_CHECK_LT(mp->compare(lit(mp, "{'a': 2}"), lit(mp, "{'b': 1}")), 0);
    BOOST_CHECK_LT(mp->compare(lit(mp, "{'a': 1}"), lit(mp, "{'a': 2}")), 0);
    auto tup = tuple_type({int32_type(), text_type()});
    BOOST_CHECK_LT(tup->compare(lit(tup, "(1, 'b')"), lit(tup, "(2, 'a')")), 0);
    BOOST_CHECK_LT(tup->compare(lit(tup, "(1, null)"), lit(tup, "(1, 'a')")), 0);
    BOOST_CHECK_EQUAL(tup->compare(lit(tup, "(1, null)"), lit(tup, "(1)")), 0);
    auto comp = composite_type({int32_type(), text_type()});
    auto c1 = serialize_composite({serialize_be<int32_t>(-1), to_bytes("b")});
    auto c2 = serialize_composite({serialize_be<int32_t>(1), to_bytes("a")});
    BOOST_CHECK_LT(comp->compare(c1, c2), 0);
    BOOST_CHECK_EQUAL(comp->to_string(c1), "-1:b");
    BOOST_CHECK(comp->from_string("-1:b") == c1);
    auto parts = split_composite(c2);
    BOOST_REQUIRE_EQUAL(parts.size(), 2u);
    BOOST_CHECK_EQUAL(to_string_view(parts[1]), "a");
}

BOOST_AUTO_TEST_CASE(sets_and_maps_are_sorted_and_deduplicated) {
    auto s = set_type(int32_type(), false);
    BOOST_CHECK_EQUAL(s->to_cql_literal(s->from_cql_literal("{3, -1, 2, 3}")), "{-1, 2, 3}");
    auto mp = map_type(text_type(), int32_type(), false);
    BOOST_CHECK_EQUAL(mp->to_cql_literal(mp->from_cql_literal("{'b': 1, 'a': 2, 'b': 3}")), "{'a': 2, 'b': 3}");
    auto l = list_type(int32_type(), false);
    BOOST_CHECK_EQUAL(l->to_cql_literal(l->from_cql_literal("[3, 1, 3]")), "[3, 1, 3]");
}

BOOST_AUTO_TEST_CASE(randomized_malformed_values) {
    // Whatever the bytes, validate() accepts them or throws marshal_exception; accepted values print without
    // throwing and compare with themselves as equal. Run under ASan in debug mode, this also checks bounds.
    auto udt = user_type("ks", "u", {"a", "b"}, {int32_type(), text_type()}, false);
    std::vector<data_type> types;
    for (int k = 0; k <= int(type_kind::empty); ++k) {
        types.push_back(native_type(type_kind(k)));
    }
    types.push_back(list_type(int32_type(), false));
    types.push_back(set_type(text_type(), false));
    types.push_back(map_type(text_type(), decimal_type(), false));
    types.push_back(tuple_type({int32_type(), duration_type()}));
    types.push_back(udt->freeze());
    types.push_back(composite_type({int32_type(), text_type()}));
    types.push_back(reversed_type(varint_type()));
    auto& r = testing::test_rng();
    std::uniform_int_distribution<int> len(0, 24), byte(0, 255), small(0, 3);
    size_t valid = 0;
    for (int i = 0; i < 20000; ++i) {
        auto& t = types[size_t(i) % types.size()];
        bytes v;
        for (int n = len(r); n > 0; --n) {
            // Mostly small bytes, so that lengths inside collections are often plausible.
            v.push_back(uint8_t(small(r) ? byte(r) % 8 : byte(r)));
        }
        try {
            t->validate(v);
        } catch (const marshal_exception&) {
            continue;
        }
        ++valid;
        BOOST_TEST_CONTEXT(t->cql_name() << " 0x" << hex_encode(v)) {
            BOOST_CHECK_NO_THROW(t->to_json_string(v));
            BOOST_CHECK_NO_THROW(t->to_string(v));
            BOOST_CHECK_NO_THROW(t->to_cql_literal(v));
            int c = 1;
            BOOST_CHECK_NO_THROW(c = t->compare(v, v));
            BOOST_CHECK_EQUAL(c, 0);
        }
    }
    BOOST_TEST_MESSAGE(valid << " valid random values");
    BOOST_CHECK_GT(valid, 1000u);
}
