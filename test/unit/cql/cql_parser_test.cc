// Tests of the CQL schema parser: every schema.cql of the peer corpus, the statement forms one by one, and
// errors that name the line, column and token.
#include "test/lib/peer_corpus.hh"

#include "cql/cql_parser.hh"
#include "schema/schema.hh"

#include <boost/test/unit_test.hpp>
#include <fmt/format.h>

using namespace reef;
using namespace reef::testing;

namespace {

// Expects text to fail at (line, column) on token.
void check_error(std::string_view text, size_t line, size_t column, std::string_view token) {
    try {
        cql_catalog c;
        parse_cql(text, c);
        BOOST_ERROR("no error for: " << text);
    } catch (const cql_parse_error& e) {
        BOOST_TEST_MESSAGE(e.what());
        BOOST_CHECK_EQUAL(e.line(), line);
        BOOST_CHECK_EQUAL(e.column(), column);
        BOOST_CHECK_EQUAL(e.token(), token);
        std::string what = e.what();
        BOOST_CHECK_MESSAGE(what.find(fmt::format("line {}, column {}", line, column)) != std::string::npos, what);
    }
}

std::vector<std::string> names(const std::vector<column_definition>& cols) {
    std::vector<std::string> out;
    for (auto& c : cols) {
        out.push_back(c.name);
    }
    return out;
}

} // namespace

BOOST_AUTO_TEST_CASE(every_corpus_schema_parses) {
    auto dir = require_peer_corpus();
    if (!dir) {
        return;
    }
    size_t n = 0;
    for (auto& entry : std::filesystem::directory_iterator(*dir)) {
        auto file = entry.path() / "schema.cql";
        if (!std::filesystem::exists(file)) {
            continue;
        }
        BOOST_TEST_CONTEXT(file.string()) {
            auto text = read_file(file);
            cql_catalog c;
            BOOST_REQUIRE_NO_THROW(parse_cql(text, c));
            BOOST_REQUIRE_EQUAL(c.tables.size(), 1u);
            auto& s = c.tables[0];
            BOOST_CHECK(!s->keyspace().empty());
            BOOST_CHECK(!s->partition_key().empty());
            // What to_cql() writes parses back to the same table.
            cql_catalog again;
            again.user_types = c.user_types;
            parse_cql(s->to_cql(), again);
            BOOST_CHECK_EQUAL(again.tables.at(0)->to_cql(), s->to_cql());
            ++n;
        }
    }
    BOOST_CHECK_GE(n, 70u);
}

BOOST_AUTO_TEST_CASE(key_types_schema) {
    auto s = parse_create_table(R"(
CREATE TABLE corpus.key_types (pk_int int, pk_text text, pk_uuid uuid, ck_varint varint, ck_decimal decimal, ck_double double, ck_timeuuid timeuuid, ck_blob blob, ck_inet inet, ck_date date, ck_time time, ck_bool boolean, v int,
    PRIMARY KEY ((pk_int, pk_text, pk_uuid), ck_varint, ck_decimal, ck_double, ck_timeuuid, ck_blob, ck_inet, ck_date, ck_time, ck_bool))
    WITH CLUSTERING ORDER BY (ck_varint ASC, ck_decimal DESC, ck_double ASC, ck_timeuuid ASC, ck_blob DESC, ck_inet ASC, ck_date ASC, ck_time DESC, ck_bool ASC);
)");
    BOOST_CHECK_EQUAL(s->keyspace(), "corpus");
    BOOST_CHECK_EQUAL(s->table(), "key_types");
    BOOST_CHECK((names(s->partition_key()) == std::vector<std::string>{"pk_int", "pk_text", "pk_uuid"}));
    BOOST_REQUIRE_EQUAL(s->clustering_key().size(), 9u);
    BOOST_CHECK(s->clustering_key()[1].order == clustering_order::desc);
    BOOST_CHECK(s->clustering_key()[0].order == clustering_order::asc);
    BOOST_CHECK_EQUAL(s->clustering_key()[8].position, 8u);
    // As in the sstable's serialization header.
    BOOST_CHECK_EQUAL(s->partition_key_type()->class_name(),
                      "org.apache.cassandra.db.marshal.CompositeType(org.apache.cassandra.db.marshal.Int32Type,"
                      "org.apache.cassandra.db.marshal.UTF8Type,org.apache.cassandra.db.marshal.UUIDType)");
    BOOST_CHECK_EQUAL(s->clustering_types()[1]->class_name(),
                      "org.apache.cassandra.db.marshal.ReversedType(org.apache.cassandra.db.marshal.DecimalType)");
    BOOST_CHECK_EQUAL(s->clustering_types()[7]->class_name(),
                      "org.apache.cassandra.db.marshal.ReversedType(org.apache.cassandra.db.marshal.TimeType)");
    BOOST_CHECK((names(s->regular_columns()) == std::vector<std::string>{"v"}));
    BOOST_CHECK_EQUAL(s->options().gc_grace_seconds, 864000);
    BOOST_CHECK_EQUAL(s->options().default_time_to_live, 0);
    BOOST_CHECK(s->options().compression_enabled());
}

BOOST_AUTO_TEST_CASE(collections_and_user_types) {
    cql_catalog c;
    parse_cql(R"(
CREATE TYPE corpus.addr (street text, zip int, tags frozen<set<text>>);
CREATE TABLE corpus.collections (pk int, ck int, st set<text> static, s set<int>, l list<text>, m map<text, bigint>,
    fs frozen<set<text>>, fl frozen<list<int>>, fm frozen<map<int, text>>, nested map<text, frozen<list<int>>>,
    tup tuple<int, text, boolean>, fa frozen<addr>, ua addr, PRIMARY KEY (pk, ck));
)", c);
    BOOST_REQUIRE_EQUAL(c.tables.size(), 1u);
    auto& s = *c.tables[0];
    BOOST_REQUIRE(c.find_user_type("corpus", "addr"));
    BOOST_CHECK((names(s.static_columns()) == std::vector<std::string>{"st"}));
    // Simple columns first, then complex ones, each by name: the order cells take in the sstable and the dump.
    BOOST_CHECK((names(s.regular_columns()) ==
                 std::vector<std::string>{"fa", "fl", "fm", "fs", "tup", "l", "m", "nested", "s", "ua"}));
    auto type_of = [&](std::string_view n) { return s.find_column(n)->type->class_name(); };
    const std::string m = "org.apache.cassandra.db.marshal.";
    // As the corpus' headers have them: a non-frozen UDT wraps its frozen set field in FrozenType, a frozen one
    // does not (gen_me_collections/me-1-big-Statistics.db).
    BOOST_CHECK_EQUAL(type_of("ua"), m + "UserType(corpus,61646472,737472656574:" + m + "UTF8Type,7a6970:" + m +
                                         "Int32Type,74616773:" + m + "FrozenType(" + m + "SetType(" + m + "UTF8Type)))");
    BOOST_CHECK_EQUAL(type_of("fa"), m + "FrozenType(" + m + "UserType(corpus,61646472,737472656574:" + m +
                                         "UTF8Type,7a6970:" + m + "Int32Type,74616773:" + m + "SetType(" + m +
                                         "UTF8Type)))");
    BOOST_CHECK_EQUAL(type_of("nested"), m + "MapType(" + m + "UTF8Type," + m + "FrozenType(" + m + "ListType(" + m +
                                             "Int32Type)))");
    BOOST_CHECK(s.find_column("l")->is_complex());
    BOOST_CHECK(!s.find_column("fl")->is_complex());
    BOOST_CHECK(s.find_column("st")->is_static());
}

BOOST_AUTO_TEST_CASE(statement_forms) {
    cql_catalog c;
    parse_cql(R"(
-- a comment
CREATE KEYSPACE IF NOT EXISTS Ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}
    AND durable_writes = false;
use ks;  // another comment
/* a block
   comment */
create type "Point" ("X" double, y double);
Create Table IF NOT EXISTS t1 (k text PRIMARY KEY, "Value" frozen<"Point">)
;
CREATE TABLE t2 (a int, b int, c int, d int, s int STATIC, v text, PRIMARY KEY ((a, b), c, d))
    WITH CLUSTERING ORDER BY (c DESC, d ASC) AND compression = {'class': 'LZ4Compressor', 'chunk_length_in_kb': 4}
    AND gc_grace_seconds = 3600 AND default_time_to_live = 7200 AND comment = 'hello'
    AND id = 01234567-0123-0123-0123-0123456789ab;
CREATE TABLE other.t3 (k int, c int, v int, PRIMARY KEY (k, c)) WITH COMPACT STORAGE AND compression = {'enabled': 'false'}
)",
              c);
    BOOST_CHECK_EQUAL(c.current_keyspace, "ks");
    BOOST_REQUIRE_EQUAL(c.keyspaces.count("ks"), 1u);
    BOOST_CHECK(!c.keyspaces["ks"].durable_writes);
    BOOST_CHECK_EQUAL(c.keyspaces["ks"].replication["replication_factor"], "1");
    BOOST_REQUIRE_EQUAL(c.tables.size(), 3u);
    auto t1 = c.find_table("ks", "t1");
    BOOST_REQUIRE(t1);
    BOOST_REQUIRE(t1->find_column("Value"));
    BOOST_CHECK_EQUAL(t1->find_column("Value")->type->cql_name(), "frozen<\"Point\">");
    auto t2 = c.find_table("ks", "t2");
    BOOST_REQUIRE(t2);
    BOOST_CHECK((names(t2->partition_key()) == std::vector<std::string>{"a", "b"}));
    BOOST_CHECK((names(t2->clustering_key()) == std::vector<std::string>{"c", "d"}));
    BOOST_CHECK(t2->clustering_key()[0].order == clustering_order::desc);
    BOOST_CHECK_EQUAL(t2->options().gc_grace_seconds, 3600);
    BOOST_CHECK_EQUAL(t2->options().default_time_to_live, 7200);
    BOOST_CHECK_EQUAL(t2->options().compression.at("chunk_length_in_kb"), "4");
    BOOST_CHECK_EQUAL(t2->options().other.at("comment"), "'hello'");
    BOOST_CHECK_EQUAL(format_table_id(t2->id()), "01234567-0123-0123-0123-0123456789ab");
    auto t3 = c.find_table("other", "t3");
    BOOST_REQUIRE(t3);
    BOOST_CHECK(t3->options().compact_storage);
    BOOST_CHECK(!t3->options().compression_enabled());
    // to_cql() round trip.
    cql_catalog again;
    again.user_types = c.user_types;
    parse_cql(t2->to_cql(), again);
    BOOST_CHECK_EQUAL(again.tables.at(0)->to_cql(), t2->to_cql());
}

BOOST_AUTO_TEST_CASE(errors_name_line_column_and_token) {
    check_error("CREATE TABLE ks.t (k int PRIMARY KEY, v int", 1, 44, "end of input");
    check_error("CREATE TABLE ks.t (k int PRIMARY KEY, v nosuchtype)", 1, 41, "nosuchtype");
    check_error("CREATE TABLE ks.t (k int, v int, PRIMARY KEY (x))", 1, 47, "x");
    check_error("CREATE TABLE ks.t (k int, v int)", 1, 1, "CREATE");
    check_error("\n\n  CREATE TABLE ks.t (k int PRIMARY KEY) WITH gc_grace_seconds = 'x'", 3, 65, "'x'");
    check_error("CREATE TABLE ks.t (k int PRIMARY KEY) WITH default_time_to_live = -5", 1, 67, "-5");
    check_error("CREATE TABEL ks.t (k int PRIMARY KEY)", 1, 8, "TABEL");
    check_error("SELECT * FROM ks.t", 1, 1, "SELECT");
    check_error("CREATE TABLE t (k int PRIMARY KEY)", 1, 14, "t");
    check_error("CREATE TABLE ks.t (k int PRIMARY KEY, v int PRIMARY KEY)", 1, 45, "PRIMARY");
    check_error("CREATE TABLE ks.t (k int, c int, v int, PRIMARY KEY (k, c)) WITH CLUSTERING ORDER BY (v DESC)",
                1, 87, "v");
    check_error("CREATE TABLE ks.t (k int PRIMARY KEY, v int) WITH compression = {'class': 'x'", 1, 78, "end of input");
    check_error("CREATE TABLE ks.t (k int PRIMARY KEY, v 'unterminated)", 1, 41, "'unterminated)");
    check_error("CREATE TABLE ks.t (k int PRIMARY KEY) /* open comment", 1, 39, "/*");
    check_error("CREATE TABLE ks.t (k int PRIMARY KEY, v int) garbage", 1, 46, "garbage");
    check_error("CREATE TABLE ks.t (k list<int> PRIMARY KEY)", 1, 1, "CREATE");
    check_error("CREATE TABLE ks.t (k int, s int static, PRIMARY KEY (k))", 1, 1, "CREATE");
    check_error("CREATE TABLE ks.t (k int PRIMARY KEY, v int, v text)", 1, 46, "v");
    check_error("CREATE TABLE ks.t (k int PRIMARY KEY, c counter, v int)", 1, 1, "CREATE");
    check_error("CREATE TYPE ks.p (x int, x int)", 1, 26, "x");
    check_error("CREATE TABLE ks.t (k int PRIMARY KEY, v map<int>)", 1, 48, ">");
    check_error("CREATE TABLE ks.t (k int PRIMARY KEY, v int) WITH id = 5", 1, 56, "5");
    check_error("CREATE TABLE ks.t (k int PRIMARY KEY, v int) # x", 1, 46, "#");
}
