// The schema statements (USE, CREATE/ALTER/DROP KEYSPACE|TABLE|TYPE, TRUNCATE) through parse_statement -> prepare ->
// execute on a sharded database: every DDL statement of the conformance corpus against what Cassandra 5.0.9
// answered, random sequences of them from every shard against a model of the schema, ALTER TABLE / ALTER TYPE's
// schemas, and the schema-change listeners of every shard.
#include "cql/query_processor.hh"
#include "cql/statement_parser.hh"
#include "db/database.hh"
#include "sstables/sstable.hh"
#include "sstables/writer.hh"
#include "runtime/smp.hh"
#include "test/lib/cql_env.hh"
#include "test/lib/reef_test.hh"
#include "test/lib/simple_keys.hh"
#include "test/lib/tmpdir.hh"
#include "utils/json_reader.hh"

#include <boost/test/unit_test.hpp>
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>

using namespace reef;
using namespace reef::cql;
using namespace reef::testing;

namespace {

std::optional<std::filesystem::path> conformance_cases() {
    namespace fs = std::filesystem;
    std::vector<fs::path> starts = {fs::current_path()};
    std::error_code ec;
    if (auto exe = fs::read_symlink("/proc/self/exe", ec); !ec) {
        starts.push_back(exe.parent_path());
    }
    for (auto dir : starts) {
        for (; !dir.empty() && dir != dir.parent_path(); dir = dir.parent_path()) {
            if (fs::exists(dir / "ARCHITECTURE.md") && fs::exists(dir / "configure.py")) {
                auto cases = dir / ".." / "shared" / "cql-conformance" / "cases";
                return fs::is_directory(cases) ? std::optional(cases) : std::nullopt;
            }
        }
    }
    return std::nullopt;
}

std::string slurp(const std::filesystem::path& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::string replace_all(std::string s, std::string_view from, std::string_view to) {
    for (size_t pos = 0; (pos = s.find(from, pos)) != std::string::npos; pos += to.size()) {
        s.replace(pos, from.size(), to);
    }
    return s;
}

std::string first_word(std::string_view s) {
    size_t b = s.find_first_not_of(" \t\n");
    size_t e = s.find_first_of(" \t\n;(", b);
    std::string w(s.substr(b, e - b));
    for (auto& c : w) {
        c = char(std::tolower(uint8_t(c)));
    }
    return w;
}

bool is_ddl(std::string_view stmt) {
    static const std::set<std::string> kinds{"use", "create", "alter", "drop", "truncate"};
    return kinds.contains(first_word(stmt));
}

// The expected outcome of a recorded statement, in outcome_of's words.
std::string expected_outcome(const utils::json_value& st) {
    if (auto* e = st.get("error")) {
        return "error " + e->text;
    }
    auto* r = st.get("result");
    if (!r) {
        return "rows";
    }
    if (r->text == "schema_change") {
        auto s = fmt::format("schema_change {} {} {}", st.get("change")->text, st.get("target")->text,
                             st.get("keyspace")->text);
        return st.get("name") ? s + " " + st.get("name")->text : s;
    }
    if (r->text == "set_keyspace") {
        return "set_keyspace " + st.get("keyspace")->text;
    }
    return r->text;
}

// The DDL statements of the corpus this processor answers unlike Cassandra, with the reason; the test fails when
// one of them starts to agree (the list stays true).
const std::map<std::string, std::string> known_differences = {
};

} // namespace

REEF_TEST_CASE(conformance_ddl_statements_answer_as_cassandra) {
    auto cases = conformance_cases();
    if (!cases) {
        BOOST_TEST_MESSAGE("skipped: ../shared/cql-conformance is absent");
        co_return;
    }
    std::vector<std::filesystem::path> files;
    for (auto& e : std::filesystem::directory_iterator(*cases)) {
        if (e.path().string().ends_with(".expected.json")) {
            files.push_back(e.path());
        }
    }
    std::sort(files.begin(), files.end());
    BOOST_REQUIRE_GE(files.size(), 100u);
    auto body = [&](cql_env& env) -> future<> {
        size_t checked = 0, case_no = 0;
        std::set<std::string> differing;
        for (auto& file : files) {
            auto name = file.filename().string();
            name = name.substr(0, name.size() - std::string_view(".expected.json").size());
            auto ks = fmt::format("cq_{}", case_no++);
            auto cql = slurp(cases->string() + "/" + name + ".cql");
            client_state state;
            if (cql.find("-- @no_keyspace") == std::string::npos) {
                auto created = co_await env.run(fmt::format("CREATE KEYSPACE {} WITH replication = {{'class': "
                                                            "'SimpleStrategy', 'replication_factor': 1}}",
                                                            ks),
                                                0, state);
                BOOST_REQUIRE_EQUAL(created, "schema_change CREATED KEYSPACE " + ks);
            }
            auto doc = utils::parse_json(slurp(file));
            for (size_t i = 0; i < doc.items.size(); ++i) {
                auto& st = doc.items[i];
                auto stmt = st.get("stmt")->text;
                if (!is_ddl(stmt)) {
                    continue;
                }
                auto text = replace_all(stmt, "{ks}", ks);
                auto want = replace_all(expected_outcome(st), "{ks}", ks);
                auto got = co_await env.run(text, shard_id(i % smp::count()), state);
                ++checked;
                auto id = fmt::format("{}/{}", name, i);
                if (got != want) {
                    differing.insert(id);
                    if (!known_differences.contains(id)) {
                        BOOST_ERROR(id << ": " << text << "\n  expected " << want << "\n  got      " << got);
                    }
                }
            }
            co_await env.run(fmt::format("DROP KEYSPACE IF EXISTS {}", ks), 0, state);
        }
        for (auto& [id, why] : known_differences) {
            BOOST_CHECK_MESSAGE(differing.contains(id), id << " is listed as differing (" << why << ") but agrees");
        }
        BOOST_TEST_MESSAGE(checked << " DDL statements checked");
        BOOST_REQUIRE_GE(checked, 150u);
    };
    co_await with_cql(body);
}

namespace {

// The schema a random sequence of statements should leave: keyspaces, their tables' regular columns, their types.
struct schema_model {
    struct keyspace {
        std::map<std::string, std::set<std::string>> tables;
        std::set<std::string> types;
    };
    std::map<std::string, keyspace> keyspaces;
};

// One random statement, and the outcome the model predicts for it (applied to the model).
struct model_step {
    std::string text;
    std::string expected;
};

model_step random_step(std::mt19937& rng, schema_model& m, client_state& state) {
    auto pick = [&](int n) { return int(rng() % unsigned(n)); };
    auto ks_name = fmt::format("k{}", pick(3));
    auto* ks = m.keyspaces.contains(ks_name) ? &m.keyspaces[ks_name] : nullptr;
    auto table = fmt::format("t{}", pick(3));
    auto type = fmt::format("u{}", pick(2));
    bool conditional = pick(2);
    // Names unqualified when the connection's keyspace (USE) is the one chosen.
    auto qualified = [&](const std::string& n) { return state.keyspace == ks_name ? n : ks_name + "." + n; };
    auto change = [&](const char* what, const char* target, const std::string& name) {
        auto s = fmt::format("schema_change {} {} {}", what, target, ks_name);
        return name.empty() ? s : s + " " + name;
    };
    switch (pick(10)) {
    case 0: {
        model_step st{fmt::format("CREATE KEYSPACE {}{} WITH replication = {{'class': 'SimpleStrategy', "
                                  "'replication_factor': 1}}",
                                  conditional ? "IF NOT EXISTS " : "", ks_name),
                      ""};
        st.expected = ks ? (conditional ? "void" : "error already_exists") : change("CREATED", "KEYSPACE", "");
        if (!ks) {
            m.keyspaces[ks_name];
        }
        return st;
    }
    case 1: {
        model_step st{fmt::format("DROP KEYSPACE {}{}", conditional ? "IF EXISTS " : "", ks_name), ""};
        st.expected = !ks ? (conditional ? "void" : "error invalid") : change("DROPPED", "KEYSPACE", "");
        m.keyspaces.erase(ks_name);
        return st;
    }
    case 2:
    case 3: {
        model_step st{fmt::format("CREATE TABLE {}{} (k int, c int, v int, PRIMARY KEY (k, c)) WITH comment = 'x'",
                                  conditional ? "IF NOT EXISTS " : "", qualified(table)),
                      ""};
        if (!ks) {
            st.expected = "error invalid";
        } else if (ks->tables.contains(table)) {
            st.expected = conditional ? "void" : "error already_exists";
        } else {
            st.expected = change("CREATED", "TABLE", table);
            ks->tables[table] = {"v"};
        }
        return st;
    }
    case 4: {
        model_step st{fmt::format("DROP TABLE {}{}", conditional ? "IF EXISTS " : "", qualified(table)), ""};
        if (!ks || !ks->tables.contains(table)) {
            st.expected = conditional ? "void" : "error invalid";
        } else {
            st.expected = change("DROPPED", "TABLE", table);
            ks->tables.erase(table);
        }
        return st;
    }
    case 5: {
        auto col = fmt::format("x{}", pick(3));
        bool add = pick(2);
        model_step st{fmt::format("ALTER TABLE {} {} {}{}", qualified(table), add ? "ADD" : "DROP", col,
                                  add ? " text" : ""),
                      ""};
        if (!ks || !ks->tables.contains(table)) {
            st.expected = "error invalid";
        } else if (ks->tables[table].contains(col) == add) {
            st.expected = "error invalid";
        } else {
            st.expected = change("UPDATED", "TABLE", table);
            if (add) {
                ks->tables[table].insert(col);
            } else {
                ks->tables[table].erase(col);
            }
        }
        return st;
    }
    case 6: {
        model_step st{fmt::format("CREATE TYPE {}{} (a int, b text)", conditional ? "IF NOT EXISTS " : "",
                                  qualified(type)),
                      ""};
        if (!ks) {
            st.expected = "error invalid";
        } else if (ks->types.contains(type)) {
            st.expected = conditional ? "void" : "error invalid";
        } else {
            st.expected = change("CREATED", "TYPE", type);
            ks->types.insert(type);
        }
        return st;
    }
    case 7: {
        model_step st{fmt::format("DROP TYPE {}{}", conditional ? "IF EXISTS " : "", qualified(type)), ""};
        if (!ks || !ks->types.contains(type)) {
            st.expected = conditional ? "void" : "error invalid";
        } else {
            st.expected = change("DROPPED", "TYPE", type);
            ks->types.erase(type);
        }
        return st;
    }
    case 8: {
        model_step st{fmt::format("TRUNCATE {}", qualified(table)), ""};
        st.expected = ks && ks->tables.contains(table) ? "void" : "error invalid";
        return st;
    }
    default: {
        model_step st{fmt::format("USE {}", ks_name), ""};
        st.expected = ks ? "set_keyspace " + ks_name : "error invalid";
        if (ks) {
            state.keyspace = ks_name;
        }
        return st;
    }
    }
}

// What `db` (one shard's) holds of the model's keyspaces k0..k2.
schema_model model_of(const database& db) {
    schema_model m;
    for (auto& name : db.keyspace_names()) {
        if (!name.starts_with("k")) {
            continue;
        }
        auto& ks = m.keyspaces[name];
        for (auto& s : db.tables_of(name)) {
            auto& cols = ks.tables[s->table()];
            for (auto& c : s->regular_columns()) {
                cols.insert(c.name);
            }
        }
        for (auto& t : db.types_of(name)) {
            ks.types.insert(dynamic_cast<const user_type_impl&>(*t).type_name());
        }
    }
    return m;
}

bool operator==(const schema_model::keyspace& a, const schema_model::keyspace& b) {
    return a.tables == b.tables && a.types == b.types;
}

} // namespace

REEF_TEST_CASE(random_schema_statements_from_every_shard_against_a_model) {
    auto body = [](cql_env& env) -> future<> {
        // Every shard's listeners hear every change, in order.
        std::vector<std::vector<std::string>> heard(smp::count());
        auto listen = [&heard](query_processor& qp) {
            auto* mine = &heard[this_shard_id()];
            qp.add_schema_change_listener([mine](const schema_change& c) { mine->push_back(outcome_of(c)); });
        };
        co_await env.qp().invoke_on_all(listen);
        std::mt19937 rng(20261126);
        schema_model model;
        std::vector<client_state> connections(smp::count());
        std::vector<std::string> changes;
        for (int step = 0; step < 160; ++step) {
            auto shard = shard_id(rng() % smp::count());
            auto& state = connections[shard];
            auto st = random_step(rng, model, state);
            auto got = co_await env.run(st.text, shard, state);
            BOOST_REQUIRE_MESSAGE(got == st.expected,
                                  "step " << step << " on shard " << shard << ": " << st.text << "\n  expected "
                                          << st.expected << "\n  got      " << got);
            if (got.starts_with("schema_change")) {
                changes.push_back(got);
            }
            if (step % 20 == 19) {
                auto check = [&model](database& db) {
                    auto seen = model_of(db);
                    BOOST_REQUIRE_MESSAGE(seen.keyspaces == model.keyspaces,
                                          "shard " << this_shard_id() << "'s schema differs from the model");
                };
                co_await env.db().invoke_on_all(check);
            }
        }
        BOOST_REQUIRE_GE(changes.size(), 40u);
        for (auto& h : heard) {
            BOOST_REQUIRE(h == changes);
        }
    };
    co_await with_cql(body);
}

REEF_TEST_CASE(alter_table_and_type_versions) {
    auto body = [](cql_env& env) -> future<> {
        client_state state;
        auto run = [&](std::string text) { return env.run(std::move(text), 1 % smp::count(), state); };
        BOOST_REQUIRE_EQUAL(co_await run("CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', "
                                         "'replication_factor': '1'} AND durable_writes = false"),
                            "schema_change CREATED KEYSPACE ks");
        BOOST_REQUIRE(!env.db().local().find_keyspace("ks")->durable_writes);
        BOOST_REQUIRE_EQUAL(co_await run("ALTER KEYSPACE ks WITH durable_writes = true"), "schema_change UPDATED KEYSPACE ks");
        BOOST_REQUIRE(env.db().local().find_keyspace("ks")->durable_writes);
        BOOST_REQUIRE_EQUAL(env.db().local().find_keyspace("ks")->replication.at("replication_factor"), "1");
        BOOST_REQUIRE_EQUAL(co_await run("USE ks"), "set_keyspace ks");
        BOOST_REQUIRE_EQUAL(co_await run("CREATE TYPE p (x int)"), "schema_change CREATED TYPE ks p");
        BOOST_REQUIRE_EQUAL(co_await run("CREATE TYPE shape (c frozen<p>, ps list<frozen<p>>)"),
                            "schema_change CREATED TYPE ks shape");
        BOOST_REQUIRE_EQUAL(co_await run("CREATE TABLE t (k int, c text, s int static, v frozen<shape>, "
                                         "PRIMARY KEY (k, c)) WITH CLUSTERING ORDER BY (c DESC) AND "
                                         "gc_grace_seconds = 10 AND caching = {'keys': 'NONE'}"),
                            "schema_change CREATED TABLE ks t");
        auto s = env.db().local().find_schema("ks", "t");
        BOOST_REQUIRE_EQUAL(s->options().gc_grace_seconds, 10);
        BOOST_REQUIRE(s->clustering_key().at(0).order == clustering_order::desc);
        // ALTER TYPE ADD reaches the type using it and the table using both.
        BOOST_REQUIRE_EQUAL(co_await run("ALTER TYPE p ADD y int"), "schema_change UPDATED TYPE ks p");
        BOOST_REQUIRE_EQUAL(co_await run("ALTER TYPE p RENAME x TO x1 AND y TO y1"), "schema_change UPDATED TYPE ks p");
        auto check_moved = [](database& db) {
            auto t = db.find_schema("ks", "t");
            auto& shape = dynamic_cast<const user_type_impl&>(*t->find_column("v")->type);
            auto& p = dynamic_cast<const user_type_impl&>(*shape.field_types().at(0));
            BOOST_REQUIRE((p.field_names() == std::vector<std::string>{"x1", "y1"}));
            auto& stored = dynamic_cast<const user_type_impl&>(*db.find_type("ks", "shape"));
            BOOST_REQUIRE_EQUAL(dynamic_cast<const user_type_impl&>(*stored.field_types().at(0)).field_names().size(),
                                2u);
        };
        co_await env.db().invoke_on_all(check_moved);
        BOOST_REQUIRE_EQUAL(co_await run("ALTER TYPE p ADD y1 int"), "error invalid");
        BOOST_REQUIRE_EQUAL(co_await run("ALTER TYPE p ADD IF NOT EXISTS y1 int"), "void");
        BOOST_REQUIRE_EQUAL(co_await run("ALTER TYPE p RENAME nope TO z"), "error invalid");
        BOOST_REQUIRE_EQUAL(co_await run("ALTER TYPE p ALTER x1 TYPE bigint"), "error invalid");
        // ALTER TABLE: RENAME of a key column, WITH, and what Cassandra refuses.
        BOOST_REQUIRE_EQUAL(co_await run("ALTER TABLE t RENAME c TO c2"), "schema_change UPDATED TABLE ks t");
        BOOST_REQUIRE_EQUAL(co_await run("ALTER TABLE t RENAME s TO s2"), "error invalid");
        BOOST_REQUIRE_EQUAL(co_await run("ALTER TABLE t RENAME k TO c2"), "error invalid");
        BOOST_REQUIRE_EQUAL(co_await run("ALTER TABLE t WITH comment = 'it''s' AND default_time_to_live = 7"),
                            "schema_change UPDATED TABLE ks t");
        BOOST_REQUIRE_EQUAL(co_await run("ALTER TABLE t WITH nosuch = 1"), "error syntax_error");
        BOOST_REQUIRE_EQUAL(co_await run("ALTER TABLE t WITH caching = 'x'"), "error syntax_error");
        BOOST_REQUIRE_EQUAL(co_await run("ALTER TABLE t WITH id = 5b6962dd-3f90-4c93-8f61-eabfa4a803e2"),
                            "error invalid");
        BOOST_REQUIRE_EQUAL(co_await run("ALTER TABLE t ADD (a int, b set<text>)"), "schema_change UPDATED TABLE ks t");
        BOOST_REQUIRE_EQUAL(co_await run("ALTER TABLE t ADD IF NOT EXISTS a int"), "void");
        BOOST_REQUIRE_EQUAL(co_await run("ALTER TABLE t DROP IF EXISTS nope"), "void");
        BOOST_REQUIRE_EQUAL(co_await run("ALTER TABLE t ADD n counter"), "error config_error");
        // Compaction options are checked as Cassandra checks them (compaction/compaction_options.hh).
        BOOST_REQUIRE_EQUAL(co_await run("ALTER TABLE t WITH compaction = {'class': 'TimeWindowCompactionStrategy', "
                                         "'compaction_window_unit': 'HOURS', 'compaction_window_size': 6}"),
                            "schema_change UPDATED TABLE ks t");
        BOOST_REQUIRE_EQUAL(co_await run("ALTER TABLE t WITH compaction = {'class': 'SizeTieredCompactionStrategy', "
                                         "'min_threshold': 1}"),
                            "error config_error");
        BOOST_REQUIRE_EQUAL(co_await run("ALTER TABLE t WITH compaction = {'class': 'TimeWindowCompactionStrategy', "
                                         "'dog': 3}"),
                            "error config_error");
        BOOST_REQUIRE_EQUAL(co_await run("CREATE TABLE bad (k int PRIMARY KEY) WITH compaction = {'class': 'Nope'}"),
                            "error config_error");
        BOOST_REQUIRE_EQUAL(co_await run("ALTER TABLE IF EXISTS nope ADD a int"), "void");
        BOOST_REQUIRE_EQUAL(co_await run("ALTER TABLE system.local ADD a int"), "error unauthorized");
        BOOST_REQUIRE_EQUAL(co_await run("DROP KEYSPACE system_schema"), "error unauthorized");
        BOOST_REQUIRE_EQUAL(co_await run("CREATE KEYSPACE bad WITH replication = {'class': 'SimpleStrategy'}"),
                            "error config_error");
        BOOST_REQUIRE_EQUAL(co_await run("CREATE KEYSPACE bad WITH replication = {'class': 'NoSuchStrategy'}"),
                            "error config_error");
        BOOST_REQUIRE_EQUAL(co_await run("CREATE KEYSPACE bad WITH nosuch = 1"), "error syntax_error");
        BOOST_REQUIRE_EQUAL(co_await run("CREATE TABLE \"bad name\" (k int PRIMARY KEY)"), "error invalid");
        BOOST_REQUIRE_EQUAL(co_await run("CREATE INDEX ON t (a)"), "error invalid");
        auto check_altered = [](database& db) {
            auto t = db.find_schema("ks", "t");
            BOOST_REQUIRE_EQUAL(t->clustering_key().at(0).name, "c2");
            BOOST_REQUIRE(t->clustering_key().at(0).order == clustering_order::desc);
            BOOST_REQUIRE_EQUAL(t->options().default_time_to_live, 7);
            BOOST_REQUIRE_EQUAL(t->options().gc_grace_seconds, 10);
            BOOST_REQUIRE_EQUAL(t->options().other.at("comment"), "'it''s'");
            BOOST_REQUIRE_EQUAL(t->options().other.at("caching"), "{'keys': 'NONE'}");
            BOOST_REQUIRE(t->find_column("a") && t->find_column("b") && t->find_column("s"));
        };
        co_await env.db().invoke_on_all(check_altered);
        BOOST_REQUIRE_EQUAL(co_await run("DROP TYPE p"), "error invalid");
        BOOST_REQUIRE_EQUAL(co_await run("DROP TABLE t"), "schema_change DROPPED TABLE ks t");
        BOOST_REQUIRE_EQUAL(co_await run("DROP TYPE p"), "error invalid");
        BOOST_REQUIRE_EQUAL(co_await run("DROP TYPE shape"), "schema_change DROPPED TYPE ks shape");
        BOOST_REQUIRE_EQUAL(co_await run("DROP TYPE p"), "schema_change DROPPED TYPE ks p");
    };
    co_await with_cql(body);
}

// The numeric table options as Cassandra 5.0 answers them. bloom_filter_fp_chance as a 5.0.9 node answered these
// statements: a configuration error outside (6.71E-5, 1.0] that prints the value as Java does; 0.1 for a table
// created with LeveledCompactionStrategy and no chance, kept when an ALTER changes the strategy (and 0.01 kept the
// other way); 1.0 accepted, and that table's flush writes no Filter.db (Cassandra's did not either). The others in
// the words of its TableParams.validate.
REEF_TEST_CASE(table_params_answer_as_cassandra) {
    auto body = [](cql_env& env) -> future<> {
        client_state state;
        auto answer = [&](std::string text) -> future<std::string> {
            try {
                co_return outcome_of(co_await env.execute(text, 0, state));
            } catch (const cql_error& e) {
                co_return error_class(e.code()) + ": " + e.what();
            }
        };
        co_await env.run("CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
                         0, state);
        co_await env.run("USE ks", 0, state);
        auto refusal = [](std::string_view got) {
            return fmt::format("config_error: bloom_filter_fp_chance must be larger than 6.71E-5 and less than or "
                               "equal to 1.0 (got {})",
                               got);
        };
        std::pair<std::string_view, std::string_view> refused[] = {
            {"1.5", "1.5"}, {"0", "0.0"}, {"-0.1", "-0.1"}, {"0.00001", "1.0E-5"}, {"0.0000671", "6.71E-5"},
            {"0.00006", "6.0E-5"}};
        for (auto [value, printed] : refused) {
            BOOST_CHECK_EQUAL(co_await answer(fmt::format("CREATE TABLE a (k int PRIMARY KEY, v int) WITH "
                                                          "bloom_filter_fp_chance = {}",
                                                          value)),
                              refusal(printed));
        }
        BOOST_CHECK_EQUAL(co_await answer("CREATE TABLE h (k int PRIMARY KEY) WITH bloom_filter_fp_chance = 0.0000672"),
                          "schema_change CREATED TABLE ks h");
        BOOST_CHECK_EQUAL(co_await answer("CREATE TABLE f (k int PRIMARY KEY, v int) WITH compaction = "
                                          "{'class': 'LeveledCompactionStrategy'}"),
                          "schema_change CREATED TABLE ks f");
        BOOST_CHECK_EQUAL(co_await answer("CREATE TABLE g (k int PRIMARY KEY, v int)"), "schema_change CREATED TABLE ks g");
        BOOST_CHECK_EQUAL(co_await answer("ALTER TABLE f WITH compaction = {'class': 'SizeTieredCompactionStrategy'}"),
                          "schema_change UPDATED TABLE ks f");
        BOOST_CHECK_EQUAL(co_await answer("ALTER TABLE g WITH compaction = {'class': "
                                          "'org.apache.cassandra.db.compaction.LeveledCompactionStrategy'}"),
                          "schema_change UPDATED TABLE ks g");
        BOOST_CHECK_EQUAL(co_await answer("ALTER TABLE g WITH bloom_filter_fp_chance = 2"), refusal("2.0"));
        // The other numeric options TableParams.validate checks, in its words (the first from the conformance file),
        // statement by statement.
        constexpr std::string_view updated = "schema_change UPDATED TABLE ks g";
        std::pair<std::string_view, std::string_view> answers[] = {
            {"CREATE TABLE x (k int PRIMARY KEY) WITH default_time_to_live = -1",
             "config_error: default_time_to_live must be greater than or equal to 0 (got -1)"},
            {"ALTER TABLE g WITH default_time_to_live = 630720001",
             "config_error: default_time_to_live must be less than or equal to 630720000 (got 630720001)"},
            {"ALTER TABLE g WITH gc_grace_seconds = -3",
             "config_error: gc_grace_seconds must be greater than or equal to 0 (got -3)"},
            {"ALTER TABLE g WITH crc_check_chance = 1.5",
             "config_error: crc_check_chance must be larger than or equal to 0 and smaller than or equal to 1.0 (got "
             "1.5)"},
            {"ALTER TABLE g WITH default_time_to_live = 630720000", updated},
            {"CREATE TABLE x (k int PRIMARY KEY) WITH min_index_interval = 0",
             "config_error: min_index_interval must be greater than or equal to 1 (got 0)"},
            {"CREATE TABLE x (k int PRIMARY KEY) WITH max_index_interval = 100",
             "config_error: max_index_interval must be greater than or equal to min_index_interval (128) (got 100)"},
            {"ALTER TABLE g WITH min_index_interval = 4 AND max_index_interval = 16", updated},
            {"ALTER TABLE g WITH min_index_interval = 32",
             "config_error: max_index_interval must be greater than or equal to min_index_interval (32) (got 16)"},
        };
        for (auto [statement, expected] : answers) {
            BOOST_CHECK_EQUAL(co_await answer(std::string(statement)), expected);
        }
        auto& db = env.db().local();
        BOOST_CHECK_EQUAL(sstables::writer_options_for(*db.find_schema("ks", "g")).min_index_interval, 4u);
        BOOST_CHECK_EQUAL(sstables::writer_options_for(*db.find_schema("ks", "f")).bloom_filter_fp_chance, 0.1);
        BOOST_CHECK_EQUAL(sstables::writer_options_for(*db.find_schema("ks", "g")).bloom_filter_fp_chance, 0.01);

        BOOST_CHECK_EQUAL(co_await answer("CREATE TABLE e (k int PRIMARY KEY, v int) WITH bloom_filter_fp_chance = 1.0"),
                          "schema_change CREATED TABLE ks e");
        for (int k = 0; k < 5; ++k) {
            co_await env.run(fmt::format("INSERT INTO e (k, v) VALUES ({}, {})", k, k * 10), 0, state);
        }
        co_await env.db().invoke_on_all([](database& db) { return db.flush("ks", "e"); });
        size_t data = 0, filters = 0;
        for (auto& f : std::filesystem::recursive_directory_iterator(env.data_directory())) {
            auto name = f.path().filename().string();
            data += f.path().parent_path().filename().string().starts_with("e-") && name.ends_with("-Data.db");
            filters += f.path().parent_path().filename().string().starts_with("e-") && name.ends_with("-Filter.db");
        }
        BOOST_CHECK_GE(data, 1u);
        BOOST_CHECK_EQUAL(filters, 0u);
        // The flushed sstable has no filter, so the read asks its index: k = 3 is found, k = 7 is not.
        for (int k : {3, 7}) {
            auto r = co_await env.execute(fmt::format("SELECT v FROM e WHERE k = {}", k), 0, state);
            auto rows = std::get<result_set>(r).rows();
            BOOST_REQUIRE_EQUAL(rows.size(), k == 3 ? 1u : 0u);
            if (k == 3) {
                BOOST_CHECK(rows[0][0] == int_value(30));
            }
        }
        // g's flushes sample the summary every 4 partitions (min_index_interval = 4, as Cassandra writes it).
        for (int k = 0; k < 10; ++k) {
            co_await env.run(fmt::format("INSERT INTO g (k, v) VALUES ({}, {})", k, k), 0, state);
        }
        co_await env.db().invoke_on_all([](database& db) { return db.flush("ks", "g"); });
        auto intervals = co_await env.db().map_reduce0(
            [](database& db) {
                std::vector<uint32_t> v;
                for (auto& sst : db.find_table(db.find_schema("ks", "g")->id())->sstables()) {
                    v.push_back(sst->components().summary.min_index_interval);
                }
                return v;
            },
            std::vector<uint32_t>{}, [](std::vector<uint32_t> a, std::vector<uint32_t> b) {
                a.insert(a.end(), b.begin(), b.end());
                return a;
            });
        BOOST_CHECK(!intervals.empty());
        size_t summaries = 0;
        for (auto i : intervals) {
            BOOST_CHECK_EQUAL(i, 4u);
            ++summaries;
        }
        BOOST_CHECK_GE(summaries, 1u);
    };
    co_await with_cql(body);
}

REEF_TEST_CASE(schema_changes_unprepare_statements) {
    auto body = [](cql_env& env) -> future<> {
        client_state state;
        auto prepare = [&state](query_processor& qp) -> future<bytes> {
            auto r = co_await qp.prepare("CREATE TABLE IF NOT EXISTS ks.t (k int PRIMARY KEY)", state);
            co_return std::get<prepared_result>(r).id;
        };
        auto execute = [&state](bytes id) {
            return [&state, id](query_processor& qp) -> future<std::string> {
                try {
                    auto r = co_await qp.execute_prepared(id, state, query_options{});
                    co_return outcome_of(r);
                } catch (const cql_error& e) {
                    co_return "error " + error_class(e.code());
                }
            };
        };
        BOOST_REQUIRE_EQUAL(co_await env.run("CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', "
                                             "'replication_factor': 1}",
                                             0, state),
                            "schema_change CREATED KEYSPACE ks");
        auto last = shard_id(smp::count() - 1);
        auto id = co_await env.qp().invoke_on(last, prepare);
        // Named (coroutine rule 2: a lambda owning memory is never built inside a co_await).
        auto run_it = execute(id);
        BOOST_REQUIRE_EQUAL(co_await env.qp().invoke_on(last, run_it), "schema_change CREATED TABLE ks t");
        BOOST_REQUIRE_EQUAL(co_await env.qp().invoke_on(last, run_it), "void");
        // A creation leaves prepared statements alone; an ALTER (made from another shard) forgets them.
        BOOST_REQUIRE_EQUAL(co_await env.run("CREATE TABLE ks.other (k int PRIMARY KEY)", 0, state),
                            "schema_change CREATED TABLE ks other");
        BOOST_REQUIRE_EQUAL(co_await env.qp().invoke_on(last, run_it), "void");
        BOOST_REQUIRE_EQUAL(co_await env.run("ALTER TABLE ks.t ADD v int", 0, state), "schema_change UPDATED TABLE ks t");
        auto code = co_await env.qp().invoke_on(last, run_it);
        BOOST_REQUIRE_EQUAL(code, fmt::format("error code {:#x}", int(error_code::unprepared)));
    };
    co_await with_cql(body);
}
