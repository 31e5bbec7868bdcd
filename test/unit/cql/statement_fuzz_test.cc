// The fuzz_cql_statement target's body (test/fuzz/fuzz_cql_statement_support.hh) under g++: every statement of
// ../shared/cql-conformance parses or is refused with a cql_error; 200000 random mutations of them (byte flips,
// CQL tokens inserted, cuts, splices, deep nesting) end in cql_errors only; and the committed findings under
// test/fuzz/regressions/fuzz_cql_statement/ (if any) replay cleanly.
#include "test/fuzz/fuzz_cql_statement_support.hh"
#include "test/lib/cql_conformance.hh"

#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>

using namespace reef;

namespace {

void input(std::string_view s) {
    fuzz::cql_statement_input({reinterpret_cast<const uint8_t*>(s.data()), s.size()});
}

std::vector<std::string> seeds() {
    std::vector<std::string> out = {
        "SELECT * FROM ks.t WHERE pk = ? AND ck >= 1 ORDER BY ck DESC LIMIT 10",
        "INSERT INTO ks.t (a, b, c) VALUES (1, 'x', {1: [2, 3]}) USING TTL 10 AND TIMESTAMP 5",
        "UPDATE ks.t SET m['k'] = 1, l = l + [1], c = c + 2 WHERE a IN (1, 2) IF b = 'x'",
        "BEGIN UNLOGGED BATCH DELETE FROM ks.t WHERE a = 1; INSERT INTO ks.t (a) VALUES (2); APPLY BATCH",
        "CREATE TABLE IF NOT EXISTS ks.t (a int, b frozen<tuple<int, text>>, c map<text, frozen<list<int>>>, "
        "PRIMARY KEY ((a, b), c)) WITH CLUSTERING ORDER BY (c DESC) AND comment = 'x'",
        "SELECT JSON a, token(a), writetime(b) AS w, CAST(c AS text) FROM ks.t WHERE (b, c) > (1, 2) ALLOW FILTERING",
    };
    if (auto dir = testing::conformance_cases_dir()) {
        for (auto& e : std::filesystem::directory_iterator(*dir)) {
            if (e.path().extension() == ".cql") {
                for (auto& st : testing::read_conformance_case(*dir, e.path().stem().string()).statements) {
                    out.push_back(st.text);
                }
            }
        }
    }
    return out;
}

// The first finding: 100000 '(' (or '[', '{', 'frozen<', ...) recursed until the stack overflowed (SIGSEGV), in
// the server's request fiber. Now a syntax error naming the nesting limit, and a depth within it still parses.
void expect_nesting_refused(const std::string& s) {
    try {
        cql::parse_statement(s);
        BOOST_ERROR("no error for " << s.substr(0, 60) << "... (" << s.size() << " bytes)");
    } catch (const cql::cql_error& e) {
        BOOST_CHECK_EQUAL(int(e.code()), int(cql::error_code::syntax_error));
        BOOST_CHECK_MESSAGE(std::string(e.what()).find("nested more than 100 levels deep") != std::string::npos,
                            e.what());
    }
}

std::string repeat(std::string_view s, int n) {
    std::string out;
    for (int i = 0; i < n; ++i) {
        out += s;
    }
    return out;
}

} // namespace

BOOST_AUTO_TEST_CASE(test_seeds_parse_or_refuse) {
    auto all = seeds();
    BOOST_TEST_MESSAGE(all.size() << " seed statements");
    for (auto& s : all) {
        BOOST_CHECK_NO_THROW(input(s));
    }
}

BOOST_AUTO_TEST_CASE(test_random_mutations_end_in_cql_errors) {
    static const char* tokens[] = {"(", ")", "[", "]", "{", "}", "<", ">", ",", ";", "'", "\"", "?", ":", "-",
                                   "+", "=", ".", "*", "$$", "0x", "1e", "-1", "99999999999999999999999999", "NaN",
                                   "frozen<", "tuple<", "map<", "SELECT", "FROM", "WHERE", "AND", "IN", "IF",
                                   "USING", "TTL", "TOKEN(", "CAST(", "AS", "NULL", "\\", "\0", "\xff", "--", "/*",
                                   "ORDER BY", "LIMIT", "BEGIN BATCH", "APPLY BATCH", "WITH", "PRIMARY KEY"};
    auto all = seeds();
    std::mt19937_64 rng(2026);
    for (int iter = 0; iter < 200000; ++iter) {
        auto s = all[rng() % all.size()];
        for (int k = 1 + rng() % 3; k > 0; --k) {
            if (s.empty()) {
                s = "x";
            }
            switch (rng() % 5) {
            case 0: s[rng() % s.size()] = char(rng()); break;
            case 1: s.insert(rng() % (s.size() + 1), tokens[rng() % std::size(tokens)]); break;
            case 2: s.resize(rng() % s.size()); break;
            case 3: {
                auto& o = all[rng() % all.size()];
                size_t from = rng() % (o.size() + 1);
                s.insert(rng() % (s.size() + 1), o.substr(from, 1 + rng() % 30));
                break;
            }
            case 4: s.erase(rng() % s.size(), 1 + rng() % 8); break;
            }
        }
        try {
            input(s);
        } catch (const std::exception& e) {
            BOOST_FAIL("input " << iter << " escaped with " << typeid(e).name() << ": " << e.what() << "\n" << s);
        }
    }
}

BOOST_AUTO_TEST_CASE(test_deep_nesting_is_refused_not_a_stack_overflow) {
    for (std::string open : {"(", "[", "{", "((", "[(", "{1: ", "{a: "}) {
        expect_nesting_refused("SELECT * FROM ks.t WHERE a = " + repeat(open, 100000));
        expect_nesting_refused("INSERT INTO ks.t (a) VALUES (" + repeat(open, 100000));
        expect_nesting_refused("UPDATE ks.t SET a = " + repeat(open, 100000));
    }
    expect_nesting_refused("SELECT * FROM ks.t WHERE a = " + repeat("fn(", 100000));
    expect_nesting_refused("SELECT " + repeat("cast(", 100000) + "a FROM ks.t");
    expect_nesting_refused("SELECT " + repeat("f(", 100000) + "a FROM ks.t");
    for (std::string open : {"frozen<", "list<", "tuple<int, ", "map<int, "}) {
        // Balanced: an unclosed '<' is refused before the type is built.
        auto type = repeat(open, 100000) + "int" + repeat(">", 100000);
        expect_nesting_refused("CREATE TABLE ks.t (a int PRIMARY KEY, b " + type + ")");
        expect_nesting_refused("CREATE TYPE ks.u (b " + type + ")");
        expect_nesting_refused("ALTER TABLE ks.t ADD b " + type);
    }
    // Within the limit: parsed (a 50-deep list literal, a 50-deep frozen list type).
    BOOST_CHECK_NO_THROW(cql::parse_statement("INSERT INTO ks.t (a) VALUES (" + repeat("[", 50) + "1" +
                                              repeat("]", 50) + ")"));
    BOOST_CHECK_NO_THROW(cql::parse_statement("CREATE TABLE ks.t (a int PRIMARY KEY, b " + repeat("frozen<list<", 25) +
                                              "int" + repeat(">>", 25) + ")"));
}

BOOST_AUTO_TEST_CASE(test_committed_findings_replay) {
    namespace fs = std::filesystem;
    std::optional<fs::path> dir;
    for (auto d = fs::current_path(); d != d.parent_path(); d = d.parent_path()) {
        if (fs::is_directory(d / "test" / "fuzz")) {
            dir = d / "test" / "fuzz" / "regressions" / "fuzz_cql_statement";
            break;
        }
    }
    BOOST_REQUIRE(dir);
    size_t n = 0;
    if (fs::is_directory(*dir)) {
        for (auto& e : fs::recursive_directory_iterator(*dir)) {
            if (e.is_regular_file()) {
                std::ifstream f(e.path(), std::ios::binary);
                std::string s((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
                BOOST_CHECK_NO_THROW(input(s));
                ++n;
            }
        }
    }
    BOOST_TEST_MESSAGE(n << " findings replayed");
}
