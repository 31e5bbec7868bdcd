// The statements of ../shared/cql-conformance/cases against the outcomes Cassandra 5.0.9 recorded, for the SELECT
// side: every case runs statement by statement through parse_statement -> query_processor on a 2-shard database
// (the runner's @sleep honoured); each SELECT with the case's @fetch_size (all pages collected, none larger) or the
// runner's default page size must give Cassandra's rows, column names and types, or error class; other statements
// must succeed or fail as they did. A case with a statement of a kind no parser knows yet is skipped (listed in the
// output). Cases known to differ are listed with the reason, and must still differ (so the list stays true).
#include "cql/cql_lexer.hh"
#include "cql/cql_parser.hh"
#include "cql/query_processor.hh"
#include "cql/statement_parser.hh"
#include "cql/term.hh"
#include "db/database.hh"
#include "runtime/reactor.hh"
#include "runtime/smp.hh"
#include "test/lib/cql_conformance.hh"
#include "test/lib/reef_test.hh"
#include "test/lib/tmpdir.hh"

#include <boost/test/unit_test.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <set>

using namespace reef;
using namespace reef::cql;
using namespace reef::testing;

namespace {

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
    size_t p = 0;
    while ((p = s.find(from, p)) != std::string::npos) {
        s.replace(p, from.size(), to);
        p += to.size();
    }
    return s;
}

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
    return s;
}

// Known differences from Cassandra, each with its reason.
const std::map<std::string, std::string> known_differences = {
};

keyspace_definition keyspace_named(std::string name) {
    return keyspace_definition{std::move(name), {{"class", "SimpleStrategy"}, {"replication_factor", "1"}}, true};
}

// Whether parse_statement knows the statement's kind (another helper's statements, once merged, run for real).
bool statement_kind_known(const std::string& text) {
    try {
        parse_statement(text);
        return true;
    } catch (const cql_error& e) {
        return std::string(e.what()).find("expected a statement") == std::string::npos;
    }
}

// The outcome of one SELECT with all its pages: "" when it is the expected one, else the difference.
future<std::string> run_select(query_processor& qp, const conformance_statement& st, const std::string& text,
                               const utils::json_value& expected, const std::string& ks) {
    client_state state;
    query_options opts;
    opts.page_size = st.fetch_size > 0 ? st.fetch_size : 5000;
    std::vector<std::vector<std::optional<bytes>>> rows;
    std::vector<column_spec> columns;
    std::string error;
    try {
        for (int pages = 0;; ++pages) {
            auto r = co_await qp.execute(text, state, opts);
            auto* rs = std::get_if<result_set>(&r);
            if (!rs) {
                co_return "not a Rows result";
            }
            columns = rs->metadata().columns;
            auto page = rs->rows();
            if (st.fetch_size > 0 && page.size() > size_t(st.fetch_size)) {
                co_return fmt::format("a page of {} rows with fetch size {}", page.size(), st.fetch_size);
            }
            rows.insert(rows.end(), page.begin(), page.end());
            if (!rs->metadata().paging_state) {
                break;
            }
            if (pages > 100000) {
                co_return "too many pages";
            }
            opts.paging_state = rs->metadata().paging_state;
        }
    } catch (const std::exception& e) {
        if (!dynamic_cast<const cql_error*>(&e)) {
            co_return fmt::format("an exception that is not a cql_error: {}", e.what());
        }
        auto& ce = dynamic_cast<const cql_error&>(e);
        error = error_class_name(int32_t(ce.code()));
        auto* ee = expected.get("error");
        if (ee && ee->text == error) {
            co_return "";
        }
        co_return fmt::format("error {} ({}), expected {}", error, e.what(),
                              ee ? ee->text : std::string("rows"));
    }
    if (auto* ee = expected.get("error")) {
        co_return "rows, expected error " + ee->text;
    }
    try {
        co_return compare_rows(expected, columns, rows, ks);
    } catch (const std::exception& e) {
        co_return fmt::format("rows that the comparison cannot decode: {}", e.what());
    }
}

} // namespace

REEF_TEST_CASE(select_cases_answer_as_cassandra) {
    auto dir = conformance_cases_dir();
    if (!dir) {
        BOOST_TEST_MESSAGE("no ../shared/cql-conformance/cases: skipped");
        co_return;
    }
    std::vector<std::string> names;
    for (auto& e : std::filesystem::directory_iterator(*dir)) {
        auto n = e.path().filename().string();
        if (n.size() > 4 && n.substr(n.size() - 4) == ".cql") {
            n = n.substr(0, n.size() - 4);
            for (auto* p : {"select_", "paging_", "tomb_", "json_", "error_", "schema_", "types_", "coll_", "ddl_", "dml_", "batch_", "counter_", "lwt_"}) {
                if (n.rfind(p, 0) == 0) {
                    names.push_back(n);
                }
            }
        }
    }
    std::sort(names.begin(), names.end());
    tmpdir tmp;
    database_config cfg;
    cfg.data_directory = tmp.path() + "/data";
    sharded<database> db;
    sharded<query_processor> qp;
    co_await db.start(&db, cfg);
    co_await db.local().start();
    co_await qp.start(&db, &qp, query_processor_config{});
    int passed = 0, failed = 0, skipped = 0;
    std::exception_ptr err;
    try {
        for (size_t ci = 0; ci < names.size(); ++ci) {
            auto c = read_conformance_case(*dir, names[ci]);
            auto ks = fmt::format("cqlconf_{}", ci);
            co_await db.local().create_keyspace(keyspace_named(ks));
            std::string outcome;
            std::string skip;
            int selects = 0;
            for (size_t i = 0; i < c.statements.size() && outcome.empty() && skip.empty(); ++i) {
                auto text = replace_all(c.statements[i].text, "{ks}", ks);
                auto kw = lower(text.substr(0, text.find_first_of(" \n")));
                auto& exp = c.expected[i];
                if (c.statements[i].sleep_seconds > 0) {
                    co_await sleep(std::chrono::milliseconds(int64_t(c.statements[i].sleep_seconds * 1000)));
                }
                {
                    bool refused = exp.get("error") != nullptr;
                    if (kw != "select" && (statement_kind_known(text) || refused)) {
                        client_state state;
                        std::string got;
                        try {
                            co_await qp.local().execute(text, state, query_options{});
                        } catch (const cql_error& e) {
                            got = error_class_name(int32_t(e.code()));
                        }
                        auto* ee = exp.get("error");
                        if ((ee ? ee->text : std::string()) != got) {
                            outcome = fmt::format("statement {} `{}`: {}, expected {}", i + 1, c.statements[i].text,
                                                  got.empty() ? "success" : got, ee ? ee->text : "success");
                        }
                    } else if (kw == "select") {
                        ++selects;
                        auto diff = co_await run_select(qp.local(), c.statements[i], text, exp, ks);
                        if (!diff.empty()) {
                            outcome = fmt::format("statement {} `{}`: {}", i + 1, c.statements[i].text, diff);
                        }
                    } else {
                        skip = kw + " statements";
                    }
                }
            }
            co_await db.local().drop_keyspace(ks);
            if (!skip.empty() || selects == 0) {
                ++skipped;
                BOOST_TEST_MESSAGE("SKIP " << c.name << ": " << (skip.empty() ? "no SELECT" : skip));
                continue;
            }
            auto known = known_differences.find(c.name);
            if (outcome.empty()) {
                ++passed;
                BOOST_TEST_MESSAGE("PASS " << c.name);
                BOOST_CHECK_MESSAGE(known == known_differences.end(),
                                    c.name << " passes: take it off known_differences");
            } else {
                ++failed;
                BOOST_TEST_MESSAGE("FAIL " << c.name << ": " << outcome);
                BOOST_CHECK_MESSAGE(known != known_differences.end(), "FAIL " << c.name << ": " << outcome);
            }
        }
    } catch (...) {
        err = std::current_exception();
    }
    BOOST_TEST_MESSAGE(passed << " passed, " << failed << " failed, " << skipped << " skipped");
    co_await qp.stop();
    co_await db.stop();
    if (err) {
        std::rethrow_exception(err);
    }
}
