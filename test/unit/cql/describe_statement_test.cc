// Server-side DESCRIBE through parse_statement -> prepare -> execute: the listing forms, the element forms and
// their CREATE statements, which give back the same schema after a restart and run in a fresh database (random
// schemas: tables of random columns, keys, clustering orders, options and user types), CLUSTER, and the refusals.
#include "cql/describe_statement.hh"
#include "test/lib/cql_env.hh"
#include "test/lib/reef_test.hh"

#include <boost/test/unit_test.hpp>
#include <fmt/format.h>

#include <random>

using namespace reef;
using namespace reef::cql;
using namespace reef::testing;

namespace {

using rows = std::vector<std::vector<std::string>>;

// A DESCRIBE's column names and rows, as text.
struct described {
    std::vector<std::string> columns;
    rows cells;
};

future<described> describe(cql_env& env, std::string text, client_state& state, shard_id shard = 0) {
    auto r = co_await env.execute(std::move(text), shard, state);
    auto& rs = std::get<result_set>(r);
    described d;
    for (auto& c : rs.metadata().columns) {
        BOOST_REQUIRE_EQUAL(c.type->cql_name(), "text");
        d.columns.push_back(c.name);
    }
    for (auto& row : rs.rows()) {
        auto& out = d.cells.emplace_back();
        for (auto& c : row) {
            out.push_back(c ? std::string(c->begin(), c->end()) : "null");
        }
    }
    co_return d;
}

// A random schema in keyspace `ks`: user types (some using others) and tables using them.
std::vector<std::string> random_schema(std::mt19937& rng, const std::string& ks) {
    auto pick = [&](int n) { return int(rng() % unsigned(n)); };
    static const char* simple[] = {"int", "text", "bigint", "blob", "boolean", "timestamp", "uuid", "double",
                                   "varint", "decimal", "date", "inet", "frozen<list<int>>", "tuple<int, text>"};
    static const char* regular_only[] = {"list<text>", "set<int>", "map<text, int>", "duration"};
    std::vector<std::string> out{fmt::format(
        "CREATE KEYSPACE {} WITH replication = {{'class': 'SimpleStrategy', 'replication_factor': '{}'}} AND "
        "durable_writes = {}",
        ks, 1 + pick(3), pick(2) ? "true" : "false")};
    std::vector<std::string> types;
    for (int i = 0, n = pick(3); i < n; ++i) {
        auto name = i == 1 ? std::string("\"Mixed\"") : fmt::format("u{}", i);
        std::string fields = "a int, \"B b\" text";
        if (!types.empty()) {
            fields += fmt::format(", c frozen<{}>", types[size_t(pick(int(types.size())))]);
        }
        out.push_back(fmt::format("CREATE TYPE {}.{} ({})", ks, name, fields));
        types.push_back(name);
    }
    for (int t = 0, n = 1 + pick(3); t < n; ++t) {
        int pk = 1 + pick(2), ck = pick(3), regular = pick(4), statics = ck ? pick(2) : 0;
        std::vector<std::string> cols, pks, cks;
        auto type_for_key = [&] { return std::string(simple[pick(11)]); };
        for (int i = 0; i < pk; ++i) {
            pks.push_back(fmt::format("p{}", i));
            cols.push_back(pks.back() + " " + type_for_key());
        }
        for (int i = 0; i < ck; ++i) {
            cks.push_back(i == 1 ? "\"Ck\"" : fmt::format("c{}", i));
            cols.push_back(cks.back() + " " + type_for_key());
        }
        for (int i = 0; i < statics; ++i) {
            cols.push_back(fmt::format("s{} {} static", i, simple[pick(14)]));
        }
        for (int i = 0; i < regular; ++i) {
            std::string type = pick(3) == 0 ? regular_only[pick(4)] : simple[pick(14)];
            if (!types.empty() && pick(3) == 0) {
                type = fmt::format("frozen<{}>", types[size_t(pick(int(types.size())))]);
            }
            cols.push_back(fmt::format("v{} {}", i, type));
        }
        std::shuffle(cols.begin(), cols.end(), rng);
        auto key = pks.size() == 1 ? pks[0] : "(" + fmt::format("{}", fmt::join(pks, ", ")) + ")";
        if (!cks.empty()) {
            key += ", " + fmt::format("{}", fmt::join(cks, ", "));
        }
        std::vector<std::string> with;
        if (!cks.empty() && pick(2)) {
            std::vector<std::string> orders;
            for (auto& c : cks) {
                orders.push_back(c + (pick(2) ? " DESC" : " ASC"));
            }
            with.push_back(fmt::format("CLUSTERING ORDER BY ({})", fmt::join(orders, ", ")));
        }
        if (pick(2)) {
            with.push_back(fmt::format("gc_grace_seconds = {}", pick(100000)));
        }
        if (pick(2)) {
            with.push_back("comment = 'it''s a table' AND default_time_to_live = 3600");
        }
        if (pick(2)) {
            with.push_back("caching = {'keys': 'NONE', 'rows_per_partition': '10'} AND bloom_filter_fp_chance = 0.1");
        }
        if (pick(2)) {
            with.push_back("compression = {'class': 'ZstdCompressor', 'chunk_length_in_kb': '64'}");
        }
        if (pick(2)) {
            with.push_back(pick(2) ? "compaction = {'class': 'LeveledCompactionStrategy', 'sstable_size_in_mb': 160}"
                                   : "compaction = {'class': 'SizeTieredCompactionStrategy', 'min_threshold': 6}");
        }
        if (pick(2)) {
            with.push_back("speculative_retry = 'ALWAYS' AND memtable_flush_period_in_ms = 60000 AND cdc = FALSE AND "
                           "crc_check_chance = 0.5");
        }
        auto name = t == 1 ? std::string("\"Table\"") : fmt::format("t{}", t);
        out.push_back(fmt::format("CREATE TABLE {}.{} ({}, PRIMARY KEY ({})){}{}", ks, name, fmt::join(cols, ", "), key,
                                  with.empty() ? "" : " WITH ", fmt::join(with, " AND ")));
    }
    return out;
}

std::vector<std::string> create_statements(const described& d) {
    std::vector<std::string> out;
    for (auto& r : d.cells) {
        out.push_back(r.at(3));
    }
    return out;
}

} // namespace

REEF_TEST_CASE(describe_statements_recreate_the_schema) {
    std::mt19937 rng(17);
    for (int round = 0; round < 8; ++round) {
        auto schema = random_schema(rng, "ks");
        std::vector<std::string> first;
        auto original = [&](cql_env& env) -> future<> {
            client_state state;
            for (auto& s : schema) {
                auto got = co_await env.run(s, shard_id(rng() % smp::count()), state);
                BOOST_REQUIRE_MESSAGE(got.starts_with("schema_change CREATED"), s << " -> " << got);
            }
            auto d = co_await describe(env, "DESCRIBE KEYSPACE ks", state, 1 % smp::count());
            BOOST_REQUIRE((d.columns == std::vector<std::string>{"keyspace_name", "type", "name", "create_statement"}));
            BOOST_REQUIRE_EQUAL(d.cells.size(), schema.size());
            BOOST_REQUIRE_EQUAL(d.cells[0][1], "keyspace");
            first = create_statements(d);
            BOOST_TEST_MESSAGE(fmt::format("{}", fmt::join(first, "\n")));
            // [FULL] SCHEMA: the same for the only user keyspace; FULL adds the system ones (not the virtual one).
            auto all = co_await describe(env, "DESC SCHEMA", state);
            BOOST_REQUIRE(create_statements(all) == first);
            auto full = co_await describe(env, "DESC FULL SCHEMA", state);
            std::set<std::string> keyspaces;
            for (auto& r : full.cells) {
                keyspaces.insert(r[0]);
            }
            BOOST_REQUIRE((keyspaces == std::set<std::string>{"ks", "system", "system_schema"}));
        };
        tmpdir dir;
        co_await with_cql_in(dir, original);
        // After a restart (the schema read back from system_schema), the same statements.
        auto restarted = [&](cql_env& env) -> future<> {
            client_state state;
            auto d = co_await describe(env, "DESC KEYSPACE ks", state);
            auto again = create_statements(d);
            BOOST_REQUIRE_EQUAL_COLLECTIONS(again.begin(), again.end(), first.begin(), first.end());
        };
        co_await with_cql_in(dir, restarted);
        // The statements run in a fresh node give the same schema back, statement for statement.
        auto again = [&](cql_env& env) -> future<> {
            client_state state;
            for (auto& s : first) {
                auto got = co_await env.run(s, 0, state);
                BOOST_REQUIRE_MESSAGE(got.starts_with("schema_change CREATED"), s << " -> " << got);
            }
            auto d = co_await describe(env, "DESC KEYSPACE ks", state);
            auto second = create_statements(d);
            BOOST_REQUIRE_EQUAL_COLLECTIONS(second.begin(), second.end(), first.begin(), first.end());
        };
        co_await with_cql(again);
    }
}

REEF_TEST_CASE(describe_forms) {
    auto body = [](cql_env& env) -> future<> {
        client_state state;
        for (auto s : {"CREATE KEYSPACE b WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
                       "CREATE KEYSPACE \"A\" WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
                       "CREATE TYPE b.addr (street text, zip int)", "CREATE TABLE b.t (k int PRIMARY KEY, v text)",
                       "CREATE TABLE b.\"T2\" (k int, c int, s int static, PRIMARY KEY (k, c))"}) {
            auto got = co_await env.run(s, 0, state);
            BOOST_REQUIRE_MESSAGE(got.starts_with("schema_change"), s << " -> " << got);
        }
        auto ks = co_await describe(env, "DESCRIBE KEYSPACES", state);
        BOOST_REQUIRE((ks.columns == std::vector<std::string>{"keyspace_name", "type", "name"}));
        std::vector<std::string> names;
        for (auto& r : ks.cells) {
            BOOST_REQUIRE_EQUAL(r[1], "keyspace");
            names.push_back(r[2]);
        }
        BOOST_REQUIRE((names == std::vector<std::string>{"\"A\"", "b", "system", "system_schema", "system_virtual_schema"}));
        auto tables = co_await describe(env, "DESC TABLES", state);
        rows b_tables;
        for (auto& r : tables.cells) {
            if (r[0] == "b") {
                b_tables.push_back(r);
            }
        }
        BOOST_REQUIRE((b_tables == rows{{"b", "table", "t"}, {"b", "table", "\"T2\""}}));
        auto types = co_await describe(env, "desc types", state);
        BOOST_REQUIRE((types.cells == rows{{"b", "type", "addr"}}));
        auto table = co_await describe(env, "DESC TABLE b.t", state);
        BOOST_REQUIRE(table.cells.at(0).at(3).starts_with("CREATE TABLE b.t (\n    k int PRIMARY KEY,\n    v text\n) WITH "
                                                          "additional_write_policy = '99p'\n    AND "));
        BOOST_REQUIRE(table.cells[0][3].ends_with("\n    AND speculative_retry = '99p';"));
        auto t2 = co_await describe(env, "DESC TABLE b.\"T2\"", state);
        BOOST_REQUIRE(t2.cells.at(0).at(3).starts_with(
            "CREATE TABLE b.\"T2\" (\n    k int,\n    c int,\n    s int static,\n    PRIMARY KEY (k, c)\n) "
            "WITH CLUSTERING ORDER BY (c ASC)\n    AND additional_write_policy"));
        auto type = co_await describe(env, "DESC TYPE b.addr", state);
        BOOST_REQUIRE_EQUAL(type.cells.at(0).at(3), "CREATE TYPE b.addr (\n    street text,\n    zip int\n);");
        auto keyspace = co_await describe(env, "DESC ONLY KEYSPACE b", state);
        BOOST_REQUIRE_EQUAL(keyspace.cells.size(), 1u);
        BOOST_REQUIRE_EQUAL(keyspace.cells[0][3],
                            "CREATE KEYSPACE b WITH replication = {'class': 'org.apache.cassandra.locator.SimpleStrategy', "
                            "'replication_factor': '1'}  AND durable_writes = true;");
        // A bare name: a keyspace, else a table of the current keyspace.
        auto bare = co_await describe(env, "DESC b", state);
        BOOST_REQUIRE_EQUAL(bare.cells.size(), 4u);
        BOOST_REQUIRE_EQUAL(co_await env.run("DESC t", 0, state), "error invalid");
        BOOST_REQUIRE_EQUAL(co_await env.run("USE b", 0, state), "set_keyspace b");
        auto bare_table = co_await describe(env, "DESC t", state);
        BOOST_REQUIRE((bare_table.cells.at(0) == std::vector<std::string>{"b", "table", "t", table.cells[0][3]}));
        auto current = co_await describe(env, "DESCRIBE KEYSPACE", state);
        BOOST_REQUIRE_EQUAL(current.cells.size(), 4u);
        auto cluster = co_await describe(env, "DESC CLUSTER", state);
        BOOST_REQUIRE((cluster.columns == std::vector<std::string>{"cluster", "partitioner", "snitch"}));
        BOOST_REQUIRE_EQUAL(cluster.cells.at(0).at(0), "Test Cluster");
        auto functions = co_await describe(env, "DESC FUNCTIONS", state);
        BOOST_REQUIRE(functions.cells.empty());
        BOOST_REQUIRE_EQUAL(functions.columns.size(), 3u);
        BOOST_REQUIRE_EQUAL(co_await env.run("DESC TABLE nope", 0, state), "error invalid");
        BOOST_REQUIRE_EQUAL(co_await env.run("DESC KEYSPACE nope", 0, state), "error invalid");
        BOOST_REQUIRE_EQUAL(co_await env.run("DESC INDEX i", 0, state), "error invalid");
        BOOST_REQUIRE_EQUAL(co_await env.run("DESC TABLE", 0, state), "error syntax_error");
        BOOST_REQUIRE_EQUAL(co_await env.run("DESC SCHEMA WITH INTERNALS", 0, state), "rows");
    };
    co_await with_cql(body);
}
