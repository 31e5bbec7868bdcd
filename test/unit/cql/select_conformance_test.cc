// SELECT against the results Cassandra 5.0.9 recorded (../shared/cql-conformance/cases): every select_, paging_,
// tomb_, json_, error_ and schema_ case whose other statements are CREATE TABLE and plain INSERTs runs through parse_statement
// -> query_processor on a 2-shard database, each SELECT with the case's @fetch_size (all pages collected) or the
// runner's default page size; the rows, column names and types, and error classes must be Cassandra's.
// The INSERTs are written by a small test-only writer (the INSERT statement is the cqldml helper's); cases with
// other statements are skipped (listed in the test's output). Cases that are known to differ are listed with the
// reason, and must still differ (so the list stays true).
#include "cql/cql_lexer.hh"
#include "cql/cql_parser.hh"
#include "cql/query_processor.hh"
#include "cql/statement_parser.hh"
#include "cql/term.hh"
#include "db/database.hh"
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

struct unsupported : std::runtime_error {
    using std::runtime_error::runtime_error;
};

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

// INSERT INTO ks.t (cols) VALUES (terms) [USING TIMESTAMP n | TTL n [AND ...]]: the mutation Cassandra writes
// (row marker, cells; a null is a cell tombstone; a non-frozen set or map replaces the collection).
mutation test_insert(const database& db, const std::string& text, int64_t ts, deletion_time_type now) {
    cql_token_stream s(tokenize_cql(text));
    s.expect_keyword("insert");
    s.expect_keyword("into");
    auto ks = s.expect_name("keyspace");
    s.expect_symbol('.');
    auto table = s.expect_name("table");
    if (s.peek_keyword("json")) {
        throw unsupported("INSERT JSON");
    }
    auto schema = db.find_schema(ks, table);
    if (!schema) {
        throw unsupported("no table " + table);
    }
    std::vector<std::string> names;
    s.expect_symbol('(');
    do {
        names.push_back(s.expect_name("column"));
    } while (s.accept_symbol(','));
    s.expect_symbol(')');
    s.expect_keyword("values");
    term_parse_context ctx;
    std::vector<raw_term_ptr> terms;
    s.expect_symbol('(');
    do {
        terms.push_back(parse_term(s, ctx));
    } while (s.accept_symbol(','));
    s.expect_symbol(')');
    int32_t ttl = 0;
    auto schema_for_ttl = db.find_schema(ks, table);
    if (schema_for_ttl) {
        ttl = schema_for_ttl->options().default_time_to_live;
    }
    if (s.accept_keyword("using")) {
        do {
            if (s.accept_keyword("timestamp")) {
                ts = std::stoll(s.next().text);
            } else if (s.accept_keyword("ttl")) {
                ttl = std::stoi(s.next().text);
            } else {
                throw unsupported("USING " + s.peek().text);
            }
        } while (s.accept_keyword("and"));
    }
    if (s.peek_keyword("if")) {
        throw unsupported("INSERT IF NOT EXISTS");
    }
    if (!s.at_end()) {
        throw unsupported("INSERT: " + s.peek().text);
    }
    bind_specs specs(ctx);
    std::vector<std::string> pk(schema->partition_key().size());
    std::vector<bytes> ck(schema->clustering_key().size());
    std::vector<std::pair<const column_definition*, raw_value>> cells;
    for (size_t i = 0; i < names.size(); ++i) {
        auto* c = schema->find_column(names[i]);
        if (!c) {
            throw unsupported("no column " + names[i]);
        }
        auto t = terms.at(i)->prepare(column_spec{ks, table, c->name, c->type}, specs);
        auto v = t->bind(query_options{});
        if (c->kind == column_kind::partition_key) {
            pk[c->position] = std::string(to_string_view(v.data));
        } else if (c->kind == column_kind::clustering_key) {
            ck[c->position] = v.data;
        } else {
            cells.emplace_back(c, std::move(v));
        }
    }
    std::vector<std::string_view> pkv(pk.begin(), pk.end());
    auto key = pk.size() == 1 ? partition_key::from_single_value(pk[0]) : partition_key::from_components(pkv);
    mutation m(schema, dht::decorated_key(std::move(key)));
    deletion_time_type expiry = ttl ? now + ttl : no_deletion_time;
    auto cell = [&](std::string v) {
        return ttl ? atomic_cell::make_expiring(ts, std::move(v), ttl, expiry) : atomic_cell::make_live(ts, std::move(v));
    };
    auto make = [&](const column_definition* c, const raw_value& v) -> cell_or_collection {
        if (!c->type->is_multi_cell()) {
            if (v.is_null()) {
                return atomic_cell::make_dead(ts, now);
            }
            return cell(std::string(to_string_view(v.data)));
        }
        collection_cells cc;
        cc.tomb = tombstone{ts - 1, now};
        if (v.is_null()) {
            return cc;
        }
        auto k = c->type->kind();
        if (k == type_kind::set) {
            for (auto e : split_collection(v.data)) {
                cc.cells.emplace_back(bytes(e.begin(), e.end()), cell(""));
            }
        } else if (k == type_kind::map) {
            for (auto [a, b] : split_map(v.data)) {
                cc.cells.emplace_back(bytes(a.begin(), a.end()), cell(std::string(to_string_view(b))));
            }
        } else {
            throw unsupported("INSERT of a non-frozen list or UDT");
        }
        return cc;
    };
    auto id_of = [&](const column_definition* c) {
        auto& group = c->is_static() ? schema->static_columns() : schema->regular_columns();
        return column_id(c - group.data());
    };
    bool has_regular = false;
    for (auto& [c, v] : cells) {
        has_regular = has_regular || !c->is_static();
    }
    if (!schema->clustering_key().empty() && (has_regular || !std::all_of(ck.begin(), ck.end(), [](auto& b) { return b.empty(); }))) {
        auto& row = m.partition().clustered_row(clustering_key_prefix(ck));
        row.marker = row_marker{ts, ttl ? ttl : no_ttl, expiry};
        for (auto& [c, v] : cells) {
            if (c->is_static()) {
                continue;
            }
            auto x = make(c, v);
            if (auto* a = std::get_if<atomic_cell>(&x)) {
                row.cells.apply(id_of(c), *a);
            } else {
                auto cmp = c->type->name_comparator();
                row.cells.apply(id_of(c), std::get<collection_cells>(x),
                                [cmp](bytes_view a, bytes_view b) { return cmp->compare(a, b); });
            }
        }
    } else if (schema->clustering_key().empty()) {
        auto& row = m.partition().clustered_row(clustering_key_prefix());
        row.marker = row_marker{ts, ttl ? ttl : no_ttl, expiry};
        for (auto& [c, v] : cells) {
            if (c->is_static()) {
                continue;
            }
            auto x = make(c, v);
            if (auto* a = std::get_if<atomic_cell>(&x)) {
                row.cells.apply(id_of(c), *a);
            } else {
                auto cmp = c->type->name_comparator();
                row.cells.apply(id_of(c), std::get<collection_cells>(x),
                                [cmp](bytes_view a, bytes_view b) { return cmp->compare(a, b); });
            }
        }
    }
    for (auto& [c, v] : cells) {
        if (c->is_static()) {
            m.partition().apply_static(*schema, id_of(c), make(c, v));
        }
    }
    return m;
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
    } catch (const cql_error& e) {
        error = error_class_name(int32_t(e.code()));
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
    co_return compare_rows(expected, columns, rows, ks);
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
    std::vector<std::string> failures;
    int64_t ts = std::chrono::duration_cast<std::chrono::microseconds>(
                     std::chrono::system_clock::now().time_since_epoch())
                     .count();
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
                try {
                    if (kw != "select" && statement_kind_known(text)) {
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
                    } else if (kw == "create" && lower(text).rfind("create table", 0) == 0) {
                        if (exp.get("error")) {
                            continue;  // Cassandra refused it: nothing changes (the DDL statements check it)
                        }
                        co_await db.local().create_table(parse_create_table(text));
                    } else if (kw == "insert") {
                        if (exp.get("error")) {
                            continue;  // Cassandra refused it: nothing written (the INSERT statement checks it)
                        }
                        auto now = deletion_time_type(std::chrono::duration_cast<std::chrono::seconds>(
                                                          std::chrono::system_clock::now().time_since_epoch())
                                                          .count());
                        co_await db.local().apply(test_insert(db.local(), text, ++ts, now));
                    } else {
                        skip = kw + " statements";
                    }
                } catch (const unsupported& e) {
                    skip = e.what();
                } catch (const cql_parse_error& e) {
                    skip = std::string("a statement the test cannot parse: ") + e.what();
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
