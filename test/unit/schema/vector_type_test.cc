// Tests of vector<T, N> (Cassandra 5.0's VectorType): class names and CQL spellings both ways, the two serialized
// forms, fixed lengths, printing as Cassandra's marshal class does, literal errors, and a randomized round trip.
#include "schema/types.hh"
#include "test/lib/test_rng.hh"
#include "utils/json_reader.hh"

#include <boost/test/unit_test.hpp>

#include <bit>
#include <random>

using namespace reef;

namespace {

const std::string m = "org.apache.cassandra.db.marshal.";

bytes float_bytes(float f) {
    return serialize_be<uint32_t>(std::bit_cast<uint32_t>(f));
}

template <typename F>
void check_throws_with(F f, std::string_view text) {
    try {
        f();
    } catch (const std::exception& e) {
        BOOST_CHECK_MESSAGE(std::string_view(e.what()).find(text) != std::string_view::npos,
                            "error '" << e.what() << "' lacks '" << text << "'");
        return;
    }
    BOOST_FAIL("no error; expected one saying '" << text << "'");
}

} // namespace

BOOST_AUTO_TEST_CASE(class_names_both_ways) {
    auto f3 = vector_type(float_type(), 3);
    // VectorType.toString: TypeParser.stringifyVectorParameters puts " , " before the dimension.
    BOOST_CHECK_EQUAL(f3->class_name(), m + "VectorType(" + m + "FloatType , 3)");
    BOOST_CHECK(*parse_class_name(f3->class_name()) == *f3);
    BOOST_CHECK(*parse_class_name(m + "VectorType(" + m + "FloatType,3)") == *f3);
    BOOST_CHECK(*parse_class_name("VectorType(FloatType , 3)") == *f3);
    // The element is frozen and keeps its FrozenType; the vector itself is never wrapped.
    auto lists = vector_type(list_type(int32_type(), true), 2);
    BOOST_CHECK_EQUAL(lists->class_name(),
                      m + "VectorType(" + m + "FrozenType(" + m + "ListType(" + m + "Int32Type)) , 2)");
    BOOST_CHECK(*parse_class_name(lists->class_name()) == *lists);
    auto in_list = list_type(vector_type(text_type(), 2), true);
    BOOST_CHECK_EQUAL(in_list->class_name(), m + "ListType(" + m + "VectorType(" + m + "UTF8Type , 2))");
    BOOST_CHECK(*parse_class_name(in_list->class_name()) == *in_list);
    BOOST_CHECK_THROW(parse_class_name("VectorType(FloatType , 0)"), type_parse_error);
    BOOST_CHECK_THROW(parse_class_name("VectorType(FloatType , x)"), type_parse_error);
    BOOST_CHECK_THROW(parse_class_name("VectorType(FloatType)"), type_parse_error);
    // Java's int bounds the dimension; a huge one (a corrupt header) is refused or costs nothing to refuse.
    BOOST_CHECK_THROW(parse_class_name("VectorType(FloatType , 3000000000)"), type_parse_error);
    auto huge = parse_class_name("VectorType(UUIDType , 2000000000)");
    BOOST_CHECK(!huge->value_length_if_fixed());
    BOOST_CHECK_THROW(huge->validate(bytes(32, 0)), marshal_exception);
    BOOST_CHECK_THROW(parse_class_name("VectorType(UTF8Type , 2000000000)")->validate(bytes{1, 'a'}), marshal_exception);
}

BOOST_AUTO_TEST_CASE(cql_names_both_ways) {
    BOOST_CHECK_EQUAL(vector_type(float_type(), 3)->cql_name(), "vector<float, 3>");
    BOOST_CHECK_EQUAL(vector_type(list_type(int32_type(), true), 2)->cql_name(), "vector<frozen<list<int>>, 2>");
    for (auto s : {"vector<float, 3>", "vector<text, 2>", "vector<vector<int, 2>, 4>", "vector<frozen<list<int>>, 2>"}) {
        BOOST_CHECK_EQUAL(parse_cql_type(s)->cql_name(), s);
    }
    BOOST_CHECK(*parse_cql_type("VECTOR < FLOAT,3 >") == *vector_type(float_type(), 3));
    BOOST_CHECK(*parse_cql_type("vector<varchar, 2>") == *vector_type(text_type(), 2));
    BOOST_CHECK(*parse_cql_type("vector<list<int>, 2>") == *vector_type(list_type(int32_type(), false), 2));
    for (auto bad : {"vector<float, 0>", "vector<float, -1>", "vector<float, 1.5>", "vector<float>", "vector<float, x>"}) {
        BOOST_CHECK_THROW(parse_cql_type(bad), type_parse_error);
    }
    // Cassandra's INTEGER, refused by VectorType (an invalid request on the server's path).
    check_throws_with([] { parse_cql_type("vector<float, -3>"); }, "vectors may only have positive dimentions; given -3");
    BOOST_CHECK_THROW(vector_type(float_type(), 0), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(fixed_lengths) {
    BOOST_CHECK_EQUAL(vector_type(float_type(), 3)->value_length_if_fixed().value(), 12u);
    BOOST_CHECK_EQUAL(vector_type(int32_type(), 2)->value_length_if_fixed().value(), 8u);
    BOOST_CHECK_EQUAL(vector_type(uuid_type(), 5)->value_length_if_fixed().value(), 80u);
    BOOST_CHECK_EQUAL(vector_type(vector_type(double_type(), 2), 3)->value_length_if_fixed().value(), 48u);
    // smallint and date are variable-length in Cassandra's marshal classes, so their vectors are too.
    BOOST_CHECK(!vector_type(text_type(), 2)->value_length_if_fixed());
    BOOST_CHECK(!vector_type(smallint_type(), 2)->value_length_if_fixed());
    BOOST_CHECK(!vector_type(date_type(), 2)->value_length_if_fixed());
    BOOST_CHECK(!vector_type(float_type(), 2)->is_multi_cell());
}

BOOST_AUTO_TEST_CASE(serialized_forms) {
    auto f3 = vector_type(float_type(), 3);
    auto v = f3->from_cql_literal("[1.0, -2.5, 3.25]");
    bytes expected;
    for (float x : {1.0f, -2.5f, 3.25f}) {
        auto b = float_bytes(x);
        expected.insert(expected.end(), b.begin(), b.end());
    }
    BOOST_CHECK(v == expected);
    // Integer literals are fine for float elements.
    BOOST_CHECK(f3->from_cql_literal("[0, 0, 0]") == bytes(12, 0));

    // Variable-length elements: an unsigned vint length before each.
    auto t2 = vector_type(text_type(), 2);
    BOOST_CHECK(t2->from_cql_literal("['a', 'bcd']") == (bytes{1, 'a', 3, 'b', 'c', 'd'}));
    std::string long_text(200, 'x');
    auto lv = t2->from_cql_literal("['', '" + long_text + "']");
    BOOST_CHECK_EQUAL(lv.size(), 1u + 2u + 200u);
    BOOST_CHECK_EQUAL(lv[0], 0);
    BOOST_CHECK_EQUAL(lv[1], 0x80);
    BOOST_CHECK_EQUAL(lv[2], 200);
    auto parts = split_vector(*t2, lv);
    BOOST_REQUIRE_EQUAL(parts.size(), 2u);
    BOOST_CHECK_EQUAL(to_string_view(parts[1]), long_text);

    // Bad values: wrong length, extraneous bytes, a truncated vint, a bad element.
    BOOST_CHECK_THROW(f3->validate(bytes(8, 0)), marshal_exception);
    BOOST_CHECK_THROW(f3->validate(bytes(13, 0)), marshal_exception);
    BOOST_CHECK_THROW(t2->validate(bytes{1, 'a'}), marshal_exception);
    BOOST_CHECK_THROW(t2->validate(bytes{1, 'a', 1, 'b', 0}), marshal_exception);
    BOOST_CHECK_THROW(t2->validate(bytes{1, 'a', 0xff}), marshal_exception);
    BOOST_CHECK_THROW(t2->validate(bytes{1, 'a', 1, 0xff}), marshal_exception);
    BOOST_CHECK_NO_THROW(f3->validate(bytes{}));
    BOOST_CHECK_THROW(serialize_vector(*f3, {float_bytes(1), float_bytes(2)}), marshal_exception);
}

BOOST_AUTO_TEST_CASE(printing_as_cassandra) {
    auto f3 = vector_type(float_type(), 3);
    auto v = f3->from_cql_literal("[1.0, -2.5, 3.25]");
    // VectorType.toJSONString: a list of the elements' JSON; getString: BytesType's hex.
    BOOST_CHECK_EQUAL(f3->to_json_string(v), "[1.0, -2.5, 3.25]");
    BOOST_CHECK_EQUAL(f3->to_string(v), "3f800000c020000040500000");
    BOOST_CHECK(f3->from_string(f3->to_string(v)) == v);
    BOOST_CHECK_EQUAL(f3->to_cql_literal(v), "[1.0, -2.5, 3.25]");
    auto t2 = vector_type(text_type(), 2);
    auto tv = t2->from_cql_literal("['a', 'it''s']");
    BOOST_CHECK_EQUAL(t2->to_json_string(tv), "[\"a\", \"it's\"]");
    BOOST_CHECK_EQUAL(t2->to_cql_literal(tv), "['a', 'it''s']");
    BOOST_CHECK(t2->from_json(utils::parse_json("[\"a\", \"it's\"]")) == tv);
}

BOOST_AUTO_TEST_CASE(literal_errors) {
    auto f3 = vector_type(float_type(), 3);
    check_throws_with([&] { f3->from_cql_literal("[1.0, 2.0]"); }, "expected 3 elements for vector<float, 3>, but given 2");
    check_throws_with([&] { f3->from_cql_literal("[1.0, null, 2.0]"); }, "null is not supported inside vectors");
    check_throws_with([&] { f3->from_cql_literal("[1.0, 'x', 2.0]"); }, "cannot parse 'x' as a value of type float");
    check_throws_with([&] { f3->from_cql_literal("{1.0, 2.0, 3.0}"); }, "expected '['");
    check_throws_with([&] { f3->from_json(utils::parse_json("[1, 2]")); }, "List had incorrect size: expected 3 but given 2");
    check_throws_with([&] { f3->from_json(utils::parse_json("[1, null, 2]")); }, "Invalid null element in list");
    check_throws_with([&] { f3->from_json(utils::parse_json("{\"a\": 1}")); }, "expected an array");
    check_throws_with([&] { f3->from_string("zz"); }, "vector<float, 3>");
}

BOOST_AUTO_TEST_CASE(comparison_by_elements) {
    auto i2 = vector_type(int32_type(), 2);
    auto a = i2->from_cql_literal("[-1, 5]");
    auto b = i2->from_cql_literal("[0, -5]");
    auto c = i2->from_cql_literal("[0, 7]");
    // Signed element order, not byte order (0xffffffff of -1 sorts first).
    BOOST_CHECK_LT(i2->compare(a, b), 0);
    BOOST_CHECK_LT(i2->compare(b, c), 0);
    BOOST_CHECK_EQUAL(i2->compare(c, c), 0);
    BOOST_CHECK_LT(i2->compare(bytes{}, a), 0);
    auto t2 = vector_type(text_type(), 2);
    BOOST_CHECK_LT(t2->compare(t2->from_cql_literal("['a', 'z']"), t2->from_cql_literal("['ab', 'a']")), 0);
}

// Random vectors of a fixed- and a variable-length element type through every form and back, and their order
// against the lexicographic order of their elements.
BOOST_AUTO_TEST_CASE(randomized_round_trip) {
    auto& r = testing::test_rng();
    for (auto& t : {vector_type(float_type(), 1 + r() % 6), vector_type(bigint_type(), 1 + r() % 6),
                    vector_type(text_type(), 1 + r() % 6), vector_type(smallint_type(), 1 + r() % 6)}) {
        auto& et = *t->element_type();
        std::vector<std::pair<std::vector<bytes>, bytes>> values;
        for (int i = 0; i < 200; ++i) {
            std::vector<bytes> elements;
            for (uint32_t k = 0; k < t->vector_dimension(); ++k) {
                switch (et.kind()) {
                case type_kind::float_: elements.push_back(float_bytes(float(int(r() % 2001) - 1000) / 8)); break;
                case type_kind::bigint: elements.push_back(serialize_be<int64_t>(int64_t(r() % 7) - 3)); break;
                case type_kind::smallint: elements.push_back(serialize_be<int16_t>(int16_t(r() % 5) - 2)); break;
                default: elements.push_back(to_bytes(std::string(r() % 3, char('a' + r() % 3)))); break;
                }
            }
            auto v = serialize_vector(*t, elements);
            t->validate(v);
            auto parts = split_vector(*t, v);
            BOOST_REQUIRE_EQUAL(parts.size(), elements.size());
            for (size_t k = 0; k < parts.size(); ++k) {
                BOOST_REQUIRE(bytes(parts[k].begin(), parts[k].end()) == elements[k]);
            }
            BOOST_REQUIRE(t->from_cql_literal(t->to_cql_literal(v)) == v);
            BOOST_REQUIRE(t->from_json(utils::parse_json(t->to_json_string(v))) == v);
            BOOST_REQUIRE(t->from_string(t->to_string(v)) == v);
            BOOST_REQUIRE(parse_class_name(t->class_name())->equal(v, v));
            values.emplace_back(std::move(elements), std::move(v));
        }
        for (size_t i = 0; i + 1 < values.size(); ++i) {
            auto& [xe, x] = values[i];
            auto& [ye, y] = values[i + 1];
            int expected = 0;
            for (size_t k = 0; k < xe.size() && expected == 0; ++k) {
                expected = et.compare(xe[k], ye[k]);
            }
            int got = t->compare(x, y);
            BOOST_REQUIRE_EQUAL((got > 0) - (got < 0), (expected > 0) - (expected < 0));
            BOOST_REQUIRE_EQUAL(t->compare(y, x) == 0, got == 0);
        }
    }
}
