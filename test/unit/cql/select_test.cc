// SELECT against a model: random data (tombstones, TTLs, static rows, collections) written from every shard with
// flushes between, random SELECTs (partition key =, IN or none, token ranges, clustering restrictions from
// random_where, ALLOW FILTERING on a regular column, ORDER BY, PER PARTITION LIMIT, LIMIT, DISTINCT), each run
// through parse_statement -> prepare -> execute on the query processor: unpaged, the rows must be the model's;
// paged with every page size from 1 to past the result, forward and reversed, the pages (each no larger than
// asked, resumed by the paging state) must give the same rows. Also: prepared statements with bind markers, the
// paging state's refusal of bad bytes, and USING TIMEOUT turning into read_timeout.
#include "cql/paging_state.hh"
#include "cql/query_processor.hh"
#include "db/database.hh"
#include "db/query_page.hh"
#include "db/table_stats.hh"
#include "runtime/smp.hh"
#include "test/lib/database_test_support.hh"
#include "test/lib/mutation_model.hh"
#include "test/lib/random_mutation.hh"
#include "test/lib/random_where.hh"
#include "test/lib/reef_test.hh"
#include "test/lib/simple_keys.hh"
#include "test/lib/tmpdir.hh"
#include "test/lib/writable_mutation.hh"

#include <boost/test/unit_test.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <set>

using namespace reef;
using namespace reef::cql;
using namespace reef::testing;

namespace {

using rows_type = std::vector<std::vector<std::optional<bytes>>>;

keyspace_definition simple_keyspace() {
    return keyspace_definition{"ks", {{"class", "SimpleStrategy"}, {"replication_factor", "1"}}, true};
}

template <typename Body>
future<> with_cql(Body body) {
    tmpdir dir;
    database_config cfg;
    cfg.data_directory = dir.path() + "/data";
    // Background compactions purge nothing; the major compaction after the writes does (at the wall clock). A write
    // older than a tombstone purged before it arrives is visible, as in Cassandra, and the model knows nothing of
    // purges (compaction/README.md, "Purge").
    cfg.compaction_clock = [] { return deletion_time_type(-1); };
    sharded<database> db;
    sharded<query_processor> qp;
    co_await db.start(&db, cfg);
    std::exception_ptr err;
    try {
        co_await db.local().start();
        co_await qp.start(&db, &qp, query_processor_config{});
        co_await body(db, qp);
    } catch (...) {
        err = std::current_exception();
    }
    co_await qp.stop();
    co_await db.stop();
    if (err) {
        std::rethrow_exception(err);
    }
}

deletion_time_type wall_now() {
    return deletion_time_type(
        std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count());
}

// The model's value of a column in a live (model_query) partition's row; null when absent or empty.
std::optional<bytes> model_value(const schema& s, const mutation& m, const clustering_key_prefix* ck,
                                 const deletable_row* r, const column_definition& c) {
    if (c.kind == column_kind::partition_key) {
        return to_bytes(m.decorated_key().key().view());
    }
    if (c.kind == column_kind::clustering_key) {
        if (!ck) {
            return std::nullopt;
        }
        auto v = ck->component(c.position);
        return bytes(v.begin(), v.end());
    }
    auto& group = c.is_static() ? s.static_columns() : s.regular_columns();
    auto id = column_id(&c - group.data());
    const cell_or_collection* cell = c.is_static() ? m.partition().static_row().find(id) : r ? r->cells.find(id) : nullptr;
    if (!cell) {
        return std::nullopt;
    }
    if (auto* a = std::get_if<atomic_cell>(cell)) {
        return to_bytes(a->value());
    }
    auto& cells = std::get<collection_cells>(*cell).cells;
    if (cells.empty()) {
        return std::nullopt;
    }
    if (c.type->kind() == type_kind::map) {
        std::vector<std::pair<bytes, bytes>> es;
        for (auto& [p, a] : cells) {
            es.emplace_back(p, to_bytes(a.value()));
        }
        return serialize_map(es);
    }
    std::vector<bytes> es;
    for (auto& [p, a] : cells) {
        es.push_back(p);
    }
    return serialize_collection(es);
}

struct query_case {
    std::string text;
    rows_type expected;
    bool post_ordered = false;
};

// One random SELECT and the model's answer.
query_case random_query(const schema_ptr& s, const mutation_model& model, mutation_generator& g, deletion_time_type now) {
    query_case q;
    auto keys = keys_of(model);
    std::vector<std::string> where;
    // The partitions: a key, an IN list, a token range or everything.
    int pk_kind = g.rnd(0, 3);
    std::vector<int> in_keys;
    std::optional<std::pair<int64_t, int64_t>> tokens;
    if (pk_kind == 0) {
        in_keys.push_back(g.rnd(0, 31));
        where.push_back(fmt::format("pk = {}", in_keys[0]));
    } else if (pk_kind == 1) {
        std::string list;
        for (int n = g.rnd(0, 4); n > 0; --n) {
            in_keys.push_back(g.rnd(0, 31));
            list += (list.empty() ? "" : ", ") + std::to_string(in_keys.back());
        }
        where.push_back(fmt::format("pk IN ({})", list));
    } else if (pk_kind == 2 && !keys.empty()) {
        auto a = keys[g.rnd(0, int(keys.size()) - 1)].get_token().value();
        auto b = keys[g.rnd(0, int(keys.size()) - 1)].get_token().value();
        tokens = std::minmax(a, b);
        where.push_back(fmt::format("token(pk) > {} AND token(pk) <= {}", tokens->first, tokens->second));
    }
    bool by_key = pk_kind <= 1;
    std::sort(in_keys.begin(), in_keys.end());
    in_keys.erase(std::unique(in_keys.begin(), in_keys.end()), in_keys.end());
    // Clustering restrictions (with ALLOW FILTERING when the partition key is not given).
    bool filtering = false;
    std::optional<where_case> ck_where;
    if (g.rnd(0, 2) == 0) {
        ck_where = random_where(*s, g.rng(), [&](size_t) { return int_value(g.rnd(0, 6)); });
        if (!ck_where->text.empty()) {
            where.push_back(ck_where->text);
            filtering = !by_key;
        } else {
            ck_where.reset();
        }
    }
    // A filter on v.
    std::optional<std::pair<std::string, bytes>> v_filter;
    if (g.rnd(0, 3) == 0) {
        static const char* ops[] = {"=", "<", ">=", ">"};
        v_filter.emplace(ops[g.rnd(0, 3)], int_value('a' + g.rnd(0, 2)));
        where.push_back(fmt::format("v {} {}", v_filter->first, 'a' + int(v_filter->second[3] - 'a')));
        filtering = true;
    }
    bool distinct = !ck_where && !v_filter && g.rnd(0, 5) == 0;
    // count(*): every row (after PER PARTITION LIMIT) counted, LIMIT limiting the one result row.
    bool count = !distinct && g.rnd(0, 5) == 0;
    auto& ck0 = s->clustering_key()[0];
    bool reversed = false;
    std::string order;
    if (by_key && in_keys.size() == 1 && !distinct && g.rnd(0, 1)) {
        bool desc = g.rnd(0, 1);
        order = fmt::format(" ORDER BY {} {}", ck0.name, desc ? "DESC" : "ASC");
        reversed = desc != (ck0.order == clustering_order::desc);
    }
    uint64_t pplimit = distinct ? 1 : g.rnd(0, 3) ? no_row_limit : uint64_t(g.rnd(1, 3));
    uint64_t limit = g.rnd(0, 2) ? no_row_limit : uint64_t(g.rnd(1, 15));
    // The columns.
    std::vector<const column_definition*> cols;
    std::string select;
    if (distinct) {
        select = "DISTINCT pk";
        cols.push_back(&s->partition_key()[0]);
        for (auto& c : s->static_columns()) {
            select += ", " + c.name;
            cols.push_back(&c);
        }
    } else if (count) {
        select = "count(*)";
    } else if (g.rnd(0, 1)) {
        select = "*";
        cols.push_back(&s->partition_key()[0]);
        for (auto& c : s->clustering_key()) {
            cols.push_back(&c);
        }
        std::vector<const column_definition*> rest;
        for (auto& c : s->static_columns()) {
            rest.push_back(&c);
        }
        std::sort(rest.begin(), rest.end(), [](auto* a, auto* b) { return a->name < b->name; });
        cols.insert(cols.end(), rest.begin(), rest.end());
        rest.clear();
        for (auto& c : s->regular_columns()) {
            rest.push_back(&c);
        }
        std::sort(rest.begin(), rest.end(), [](auto* a, auto* b) { return a->name < b->name; });
        cols.insert(cols.end(), rest.begin(), rest.end());
    } else {
        select = "v, pk, " + ck0.name + ", writetime(v) AS w, ttl(v)";
        cols = {s->find_column("v"), &s->partition_key()[0], &ck0, nullptr, nullptr};
    }
    q.text = fmt::format("SELECT {} FROM ks.{}", select, s->table());
    for (size_t i = 0; i < where.size(); ++i) {
        q.text += (i ? " AND " : " WHERE ") + where[i];
    }
    q.text += order;
    if (pplimit != no_row_limit && !distinct) {
        q.text += fmt::format(" PER PARTITION LIMIT {}", pplimit);
    }
    if (limit != no_row_limit) {
        q.text += fmt::format(" LIMIT {}", limit);
    }
    if (filtering) {
        q.text += " ALLOW FILTERING";
    }
    // The model's answer.
    std::vector<const mutation*> parts;
    if (by_key) {
        for (int k : in_keys) {
            if (auto it = model.find(pkey(k)); it != model.end()) {
                parts.push_back(&it->second);
            }
        }
    } else {
        for (auto& [k, m] : model) {
            auto t = k.get_token().value();
            if (!tokens || (t > tokens->first && t <= tokens->second)) {
                parts.push_back(&m);
            }
        }
    }
    bool static_only_rows = !ck_where && !v_filter;
    auto* v_col = s->find_column("v");
    for (auto* m : parts) {
        auto live = model_query(*m, now);
        if (!live) {
            continue;
        }
        std::vector<std::pair<const clustering_key_prefix*, const deletable_row*>> rows;
        for (auto& [k, r] : live->partition().rows()) {
            if (!ck_where || ck_where->matches(k)) {
                rows.emplace_back(&k, &r);
            }
        }
        if (reversed) {
            std::reverse(rows.begin(), rows.end());
        }
        if (rows.empty() && static_only_rows && !live->partition().static_row().empty()) {
            rows.emplace_back(nullptr, nullptr);
        }
        uint64_t in_partition = 0;
        for (auto [k, r] : rows) {
            if (v_filter) {
                auto v = model_value(*s, *live, k, r, *v_col);
                if (!v) {
                    continue;
                }
                int c = int32_type()->compare(*v, v_filter->second);
                auto& op = v_filter->first;
                if (!(op == "=" ? c == 0 : op == "<" ? c < 0 : op == ">=" ? c >= 0 : c > 0)) {
                    continue;
                }
            }
            if (in_partition >= pplimit || (!count && q.expected.size() >= limit)) {
                break;
            }
            ++in_partition;
            std::vector<std::optional<bytes>> out;
            for (auto* c : cols) {
                if (c) {
                    out.push_back(model_value(*s, *live, k, r, *c));
                    continue;
                }
                // writetime(v), then ttl(v): the live cell's timestamp; no TTL is left alive by the generator's
                // expiry times (all in the past), so ttl is null.
                auto* cell = r ? r->cells.find(column_id(v_col - s->regular_columns().data())) : nullptr;
                if (out.size() == 3 && cell) {
                    auto ts = std::get<atomic_cell>(*cell).timestamp();
                    bytes b(8);
                    for (int i = 0; i < 8; ++i) {
                        b[i] = uint8_t(uint64_t(ts) >> (56 - 8 * i));
                    }
                    out.push_back(b);
                } else {
                    out.push_back(std::nullopt);
                }
            }
            q.expected.push_back(std::move(out));
        }
    }
    if (count) {
        auto n = int64_t(q.expected.size());
        bytes b(8);
        for (int i = 0; i < 8; ++i) {
            b[i] = uint8_t(uint64_t(n) >> (56 - 8 * i));
        }
        q.expected = {{b}};
    }
    return q;
}

std::string show(const rows_type& rows) {
    std::string s;
    for (auto& r : rows) {
        s += "[";
        for (size_t i = 0; i < r.size(); ++i) {
            s += (i ? ", " : "") + (r[i] ? std::to_string(r[i]->size() == 4 ? int_of(*r[i]) : int(r[i]->size()) * 1000)
                                         : std::string("null"));
        }
        s += "]\n";
    }
    return s;
}

future<rows_type> run_paged(query_processor& qp, const std::string& text, int32_t page_size, int* pages_out = nullptr) {
    client_state state;
    query_options opts;
    opts.page_size = page_size;
    rows_type all;
    int pages = 0;
    while (true) {
        auto r = co_await qp.execute(text, state, opts);
        auto& rs = std::get<result_set>(r);
        auto rows = rs.rows();
        if (page_size > 0) {
            BOOST_REQUIRE_LE(rows.size(), size_t(page_size));
        }
        all.insert(all.end(), rows.begin(), rows.end());
        ++pages;
        BOOST_REQUIRE_LE(pages, 100000);
        if (!rs.metadata().paging_state) {
            break;
        }
        opts.paging_state = rs.metadata().paging_state;
    }
    if (pages_out) {
        *pages_out = pages;
    }
    co_return all;
}

} // namespace

REEF_TEST_CASE(random_selects_equal_the_model_at_every_page_size) {
    uint64_t seed = pick_seed();
    BOOST_TEST_MESSAGE("seed " << seed << " (set REEF_SEED to repeat), shards " << smp::count());
    auto body = [&](sharded<database>& db, sharded<query_processor>& qp) -> future<> {
        co_await db.local().create_keyspace(simple_keyspace());
        for (auto& base : random_test_schemas()) {
            auto s = co_await db.local().create_table(base);
            mutation_generator g(s, seed);
            mutation_model model;
            for (int i = 0; i < 150; ++i) {
                auto m = with_typed_values(s, g.make(pkey(g.rnd(0, 30)), 6));
                apply_to_model(model, m);
                co_await apply_from(db, shard_id(g.rnd(0, int(smp::count()) - 1)), std::move(m));
                if (g.rnd(0, 40) == 0) {
                    co_await db.local().flush("ks", s->table());
                }
            }
            // A major compaction that purges, with the last writes still in memtables: the reads see its output.
            std::vector<std::string> tables;
            tables.push_back(std::string(s->table()));
            co_await db.local().compact("ks", std::move(tables));
            int nonempty = 0;
            for (int n = 0; n < 40; ++n) {
                auto q = random_query(s, model, g, wall_now());
                BOOST_TEST_CONTEXT("seed " << seed << " query " << n << ": " << q.text) {
                    auto got = co_await run_paged(qp.local(), q.text, -1);
                    BOOST_REQUIRE_MESSAGE(got == q.expected, q.text << "\n" << show(got) << "!= model\n" << show(q.expected));
                    nonempty += !got.empty();
                    for (int32_t size = 1; size <= int32_t(got.size()) + 1; ++size) {
                        auto paged = co_await run_paged(qp.local(), q.text, size);
                        BOOST_REQUIRE_MESSAGE(paged == got, q.text << " page size " << size << "\n"
                                                                   << show(paged) << "!= unpaged\n" << show(got));
                    }
                    // A page asked from another shard continues the same way.
                    auto from = shard_id(n % smp::count());
                    auto other = [&](query_processor& p) { return run_paged(p, q.text, 2); };
                    auto paged = co_await qp.invoke_on(from, other);
                    BOOST_REQUIRE(paged == got);
                }
            }
            BOOST_TEST_MESSAGE(s->table() << ": " << nonempty << " of 40 queries returned rows");
            BOOST_REQUIRE_GT(nonempty, 5);
        }
    };
    co_await with_cql(body);
}

REEF_TEST_CASE(prepared_selects_bind_their_markers) {
    auto body = [&](sharded<database>& db, sharded<query_processor>& qp) -> future<> {
        co_await db.local().create_keyspace(simple_keyspace());
        auto s = co_await db.local().create_table(int_table_schema());
        for (int k = 0; k < 3; ++k) {
            for (int c = 0; c < 4; ++c) {
                mutation m(s, pkey(k));
                auto& row = m.partition().clustered_row(ck(c));
                row.marker = row_marker{1};
                row.cells.apply(0, atomic_cell::make_live(1, std::string(to_string_view(int_value(k * 10 + c)))));
                co_await db.local().apply(std::move(m));
            }
        }
        client_state state;
        auto p = co_await qp.local().prepare("SELECT v FROM ks.t WHERE pk = ? AND ck >= ? LIMIT ?", state);
        auto& pr = std::get<prepared_result>(p);
        BOOST_REQUIRE_EQUAL(pr.bind_variables.size(), 3u);
        BOOST_REQUIRE_EQUAL(pr.bind_variables[0].name, "pk");
        BOOST_REQUIRE_EQUAL(pr.bind_variables[2].name, "[limit]");
        BOOST_REQUIRE(pr.partition_key_bind_indexes == std::vector<uint16_t>{0});
        BOOST_REQUIRE_EQUAL(pr.result_columns.size(), 1u);
        query_options o;
        o.values = {raw_value::of(int_value(2)), raw_value::of(int_value(1)), raw_value::of(int_value(2))};
        auto r = co_await qp.local().execute_prepared(pr.id, state, o);
        auto rows = std::get<result_set>(r).rows();
        BOOST_REQUIRE_EQUAL(rows.size(), 2u);
        BOOST_REQUIRE_EQUAL(int_of(*rows[0][0]), 21);
        BOOST_REQUIRE_EQUAL(int_of(*rows[1][0]), 22);
        // IN ? takes a list.
        auto p2 = co_await qp.local().prepare("SELECT pk FROM ks.t WHERE pk IN ? AND ck = 0", state);
        auto& pr2 = std::get<prepared_result>(p2);
        BOOST_REQUIRE_EQUAL(pr2.bind_variables.at(0).name, "in(pk)");
        query_options o2;
        o2.values = {raw_value::of(serialize_collection({int_value(2), int_value(0), int_value(2)}))};
        auto r2 = co_await qp.local().execute_prepared(pr2.id, state, o2);
        auto rows2 = std::get<result_set>(r2).rows();
        BOOST_REQUIRE_EQUAL(rows2.size(), 2u);
        BOOST_REQUIRE_EQUAL(int_of(*rows2[0][0]), 0);
        BOOST_REQUIRE_EQUAL(int_of(*rows2[1][0]), 2);
        // A null key is refused.
        query_options o3;
        o3.values = {raw_value::null_value(), raw_value::of(int_value(1)), raw_value::of(int_value(2))};
        bool refused = false;
        try {
            co_await qp.local().execute_prepared(pr.id, state, o3);
        } catch (const cql_error& e) {
            refused = e.code() == error_code::invalid;
        }
        BOOST_REQUIRE(refused);
    };
    co_await with_cql(body);
}

REEF_TEST_CASE(bad_paging_states_and_timeouts_are_errors) {
    auto body = [&](sharded<database>& db, sharded<query_processor>& qp) -> future<> {
        co_await db.local().create_keyspace(simple_keyspace());
        co_await db.local().create_table(int_table_schema());
        client_state state;
        query_options o;
        o.page_size = 10;
        o.paging_state = bytes{0x52, 0x01, 0x00};
        error_code code = error_code::server_error;
        try {
            co_await qp.local().execute("SELECT * FROM ks.t", state, o);
        } catch (const cql_error& e) {
            code = e.code();
            BOOST_REQUIRE(std::string(e.what()).find("offset") != std::string::npos);
        }
        BOOST_REQUIRE(code == error_code::protocol_error);
        // A round trip of the bytes.
        paging_state ps{int_value(7), std::vector<bytes>{int_value(1), bytes{}}, 3, 12};
        auto back = decode_paging_state(encode_paging_state(ps));
        BOOST_REQUIRE(back.partition_key == ps.partition_key);
        BOOST_REQUIRE(back.clustering == ps.clustering);
        BOOST_REQUIRE_EQUAL(back.partition_rows, 3u);
        BOOST_REQUIRE_EQUAL(back.remaining, 12u);
        // A deadline already passed (0ms) is a read timeout with its fields.
        code = error_code::server_error;
        try {
            co_await qp.local().execute("SELECT * FROM ks.t USING TIMEOUT 0ms", state, query_options{});
        } catch (const cql_error& e) {
            code = e.code();
            BOOST_REQUIRE_EQUAL(e.details().block_for, 1);
            BOOST_REQUIRE_EQUAL(e.details().received, 0);
        }
        BOOST_REQUIRE(code == error_code::read_timeout);
        // Syntax: LIMIT 1.5 is a syntax error, LIMIT 0 invalid.
        code = error_code::server_error;
        try {
            co_await qp.local().execute("SELECT * FROM ks.t LIMIT 1.5", state, query_options{});
        } catch (const cql_error& e) {
            code = e.code();
        }
        BOOST_REQUIRE(code == error_code::syntax_error);
    };
    co_await with_cql(body);
}

// BYPASS CACHE reads the sstables without looking into or filling the row cache; without it the cache sees the read.
REEF_TEST_CASE(bypass_cache_leaves_the_row_cache_alone) {
    auto body = [&](sharded<database>& db, sharded<query_processor>& qp) -> future<> {
        co_await db.local().create_keyspace(simple_keyspace());
        auto s = co_await db.local().create_table(int_table_schema());
        for (int k = 0; k < 20; ++k) {
            mutation m(s, pkey(k));
            m.partition().clustered_row(ck(1)).marker = row_marker{1};
            co_await db.local().apply(std::move(m));
        }
        co_await db.local().flush("ks", "t");
        auto id = s->id();
        auto lookups = [&]() -> future<uint64_t> {
            uint64_t n = 0;
            for (shard_id sh = 0; sh < smp::count(); ++sh) {
                auto one = [id](database& d) {
                    auto& st = d.find_table(id)->cache()->stats();
                    return st.hits + st.misses;
                };
                n += co_await db.invoke_on(sh, one);
            }
            co_return n;
        };
        auto before = co_await lookups();
        auto bypassed = co_await run_paged(qp.local(), "SELECT * FROM ks.t WHERE pk IN (1, 2, 3) BYPASS CACHE", -1);
        BOOST_REQUIRE_EQUAL(bypassed.size(), 3u);
        auto scan = co_await run_paged(qp.local(), "SELECT * FROM ks.t BYPASS CACHE", 7);
        BOOST_REQUIRE_EQUAL(scan.size(), 20u);
        BOOST_REQUIRE_EQUAL(co_await lookups(), before);
        auto cached = co_await run_paged(qp.local(), "SELECT * FROM ks.t WHERE pk IN (1, 2, 3)", -1);
        BOOST_REQUIRE(cached == bypassed);
        BOOST_REQUIRE_GT(co_await lookups(), before);
    };
    co_await with_cql(body);
}

// GROUP BY a primary key prefix: one row per group (aggregates over the group, other selectors its first row),
// groups in read order, LIMIT counting groups; a GROUP BY that is not a key prefix is refused.
REEF_TEST_CASE(group_by_aggregates_each_group) {
    auto body = [&](sharded<database>& db, sharded<query_processor>& qp) -> future<> {
        co_await db.local().create_keyspace(simple_keyspace());
        auto s = co_await db.local().create_table(int_table_schema());
        // Partition k has k + 1 rows, v = 10 * k + c.
        for (int k = 0; k < 6; ++k) {
            for (int c = 0; c <= k; ++c) {
                mutation m(s, pkey(k));
                auto& row = m.partition().clustered_row(ck(c));
                row.marker = row_marker{1};
                row.cells.apply(0, atomic_cell::make_live(1, std::string(to_string_view(int_value(10 * k + c)))));
                co_await db.local().apply(std::move(m));
            }
        }
        auto rows = co_await run_paged(qp.local(), "SELECT pk, ck, count(*), max(v) FROM ks.t GROUP BY pk", -1);
        // Paged by groups: every page size gives the same groups.
        for (int32_t size = 1; size <= 7; ++size) {
            auto paged = co_await run_paged(qp.local(), "SELECT pk, ck, count(*), max(v) FROM ks.t GROUP BY pk", size);
            BOOST_REQUIRE(paged == rows);
            auto limited = co_await run_paged(qp.local(), "SELECT pk, count(*) FROM ks.t GROUP BY pk LIMIT 4", size);
            BOOST_REQUIRE_EQUAL(limited.size(), 4u);
        }
        BOOST_REQUIRE_EQUAL(rows.size(), 6u);
        std::set<int> seen;
        for (auto& r : rows) {
            int k = int_of(*r[0]);
            seen.insert(k);
            BOOST_REQUIRE_EQUAL(int_of(*r[1]), 0);  // the group's first row
            BOOST_REQUIRE(*r[2] == bytes({0, 0, 0, 0, 0, 0, 0, uint8_t(k + 1)}));
            BOOST_REQUIRE_EQUAL(int_of(*r[3]), 10 * k + k);
        }
        BOOST_REQUIRE_EQUAL(seen.size(), 6u);
        auto per_row = co_await run_paged(qp.local(), "SELECT count(*) FROM ks.t WHERE pk IN (3, 4) GROUP BY pk, ck", -1);
        BOOST_REQUIRE_EQUAL(per_row.size(), 9u);
        auto limited = co_await run_paged(qp.local(), "SELECT pk FROM ks.t WHERE pk IN (5, 1, 3) GROUP BY pk LIMIT 2", -1);
        BOOST_REQUIRE_EQUAL(limited.size(), 2u);
        BOOST_REQUIRE_EQUAL(int_of(*limited[0][0]), 1);
        BOOST_REQUIRE_EQUAL(int_of(*limited[1][0]), 3);
        bool refused = false;
        try {
            client_state state;
            co_await qp.local().execute("SELECT count(*) FROM ks.t GROUP BY ck", state, query_options{});
        } catch (const cql_error& e) {
            refused = e.code() == error_code::invalid;
        }
        BOOST_REQUIRE(refused);
    };
    co_await with_cql(body);
}

namespace {

// Summed over the shards: multi_get batches, keys they read, and reads of the table (one per multi_get batch, one
// per shard a query_page touches).
struct read_counts {
    uint64_t batches = 0;
    uint64_t keys = 0;
    uint64_t reads = 0;
};

future<read_counts> count_reads(sharded<database>& db, table_id id) {
    read_counts out;
    for (shard_id sh = 0; sh < smp::count(); ++sh) {
        auto one = [id](database& d) {
            auto* st = d.find_table_stats(id);
            return read_counts{d.multi_get_batches(), d.multi_get_keys(), st ? st->reads.latency.count : 0};
        };
        auto c = co_await db.invoke_on(sh, one);
        out.batches += c.batches;
        out.keys += c.keys;
        out.reads += c.reads;
    }
    co_return out;
}

} // namespace

// `pk IN (...)`, as a query and as a prepared statement with a list marker or one marker per key, reads its keys
// through database::multi_get: one batch per owner shard, not one read per key; its rows are those of the keys'
// single-partition queries in IN order, and paged it reads at most a batch per shard (plus the resumed partition)
// per page.
REEF_TEST_CASE(in_queries_read_through_multi_get) {
    auto body = [&](sharded<database>& db, sharded<query_processor>& qp) -> future<> {
        co_await db.local().create_keyspace(simple_keyspace());
        auto s = co_await db.local().create_table(int_table_schema());
        // 24 partitions of 3 rows, half of them flushed.
        for (int k = 0; k < 24; ++k) {
            for (int c = 0; c < 3; ++c) {
                mutation m(s, pkey(k));
                auto& row = m.partition().clustered_row(ck(c));
                row.marker = row_marker{1};
                row.cells.apply(0, atomic_cell::make_live(1, std::string(to_string_view(int_value(10 * k + c)))));
                co_await db.local().apply(std::move(m));
            }
            if (k == 11) {
                co_await db.local().flush("ks", "t");
            }
        }
        // Keys in any order, repeated, and absent (30, 31).
        std::vector<int> in = {17, 3, 30, 5, 3, 22, 0, 9, 31, 14, 11, 12, 20, 1, 17, 7};
        std::set<int> distinct(in.begin(), in.end());
        std::set<shard_id> owners;
        std::string list;
        for (int k : in) {
            list += (list.empty() ? "" : ", ") + std::to_string(k);
        }
        for (int k : distinct) {
            owners.insert(dht::shard_of(pkey(k).get_token(), smp::count()));
        }
        rows_type expected;
        for (int k : distinct) {
            auto one = co_await run_paged(qp.local(), fmt::format("SELECT * FROM ks.t WHERE pk = {}", k), -1);
            expected.insert(expected.end(), one.begin(), one.end());
        }
        BOOST_REQUIRE_EQUAL(expected.size(), 3 * (distinct.size() - 2));
        auto query = fmt::format("SELECT * FROM ks.t WHERE pk IN ({})", list);
        auto before = co_await count_reads(db, s->id());
        auto got = co_await run_paged(qp.local(), query, -1);
        auto after = co_await count_reads(db, s->id());
        BOOST_REQUIRE(got == expected);
        BOOST_REQUIRE_EQUAL(after.batches - before.batches, owners.size());
        BOOST_REQUIRE_EQUAL(after.keys - before.keys, distinct.size());
        BOOST_REQUIRE_EQUAL(after.reads - before.reads, owners.size());
        // Prepared: IN ? with a list, and IN (?, ?, ...).
        client_state state;
        auto p1 = co_await qp.local().prepare("SELECT * FROM ks.t WHERE pk IN ?", state);
        std::vector<bytes> values;
        std::string markers;
        for (int k : in) {
            values.push_back(int_value(k));
            markers += markers.empty() ? "?" : ", ?";
        }
        query_options o1;
        o1.values = {raw_value::of(serialize_collection(values))};
        before = co_await count_reads(db, s->id());
        auto r1 = co_await qp.local().execute_prepared(std::get<prepared_result>(p1).id, state, o1);
        after = co_await count_reads(db, s->id());
        BOOST_REQUIRE(std::get<result_set>(r1).rows() == expected);
        BOOST_REQUIRE_EQUAL(after.batches - before.batches, owners.size());
        BOOST_REQUIRE_EQUAL(after.reads - before.reads, owners.size());
        auto p2 = co_await qp.local().prepare(fmt::format("SELECT * FROM ks.t WHERE pk IN ({})", markers), state);
        query_options o2;
        for (auto& v : values) {
            o2.values.push_back(raw_value::of(v));
        }
        before = co_await count_reads(db, s->id());
        auto r2 = co_await qp.local().execute_prepared(std::get<prepared_result>(p2).id, state, o2);
        after = co_await count_reads(db, s->id());
        BOOST_REQUIRE(std::get<result_set>(r2).rows() == expected);
        BOOST_REQUIRE_EQUAL(after.batches - before.batches, owners.size());
        BOOST_REQUIRE_EQUAL(after.reads - before.reads, owners.size());
        // Paged: each page reads one batch per owner shard at most, and the partition it resumes in.
        for (int32_t size : {1, 2, 4, 5, 7, 40}) {
            query_options o;
            o.page_size = size;
            rows_type all;
            while (true) {
                before = co_await count_reads(db, s->id());
                auto r = co_await qp.local().execute(query, state, o);
                after = co_await count_reads(db, s->id());
                BOOST_REQUIRE_LE(after.reads - before.reads, smp::count() + 1);
                auto& rs = std::get<result_set>(r);
                auto rows = rs.rows();
                all.insert(all.end(), rows.begin(), rows.end());
                if (!rs.metadata().paging_state) {
                    break;
                }
                o.paging_state = rs.metadata().paging_state;
            }
            BOOST_REQUIRE_MESSAGE(all == expected, "page size " << size);
        }
        // ORDER BY over several partitions, read reversed: rows sorted by ck descending, partitions in IN order
        // within a ck (a stable sort of the read order).
        std::vector<std::pair<int, std::vector<std::optional<bytes>>>> by_ck;
        for (auto& r : expected) {
            by_ck.emplace_back(int_of(*r[1]), r);
        }
        std::stable_sort(by_ck.begin(), by_ck.end(), [](auto& a, auto& b) { return a.first > b.first; });
        rows_type sorted;
        for (auto& [c, r] : by_ck) {
            sorted.push_back(r);
        }
        auto ordered = fmt::format("SELECT * FROM ks.t WHERE pk IN ({}) ORDER BY ck DESC", list);
        before = co_await count_reads(db, s->id());
        auto desc = co_await run_paged(qp.local(), ordered, -1);
        after = co_await count_reads(db, s->id());
        BOOST_REQUIRE(desc == sorted);
        BOOST_REQUIRE_EQUAL(after.batches - before.batches, owners.size());
        auto limited = co_await run_paged(qp.local(), ordered + " LIMIT 5", 10);
        BOOST_REQUIRE(limited == rows_type(sorted.begin(), sorted.begin() + 5));
    };
    co_await with_cql(body);
}

// IN with ORDER BY over several partitions: every row is read and sorted by clustering before LIMIT applies (as
// Cassandra's getDataLimits leaves the limit out of the read), not the first LIMIT rows read sorted.
REEF_TEST_CASE(in_with_order_by_sorts_before_its_limit) {
    auto body = [&](sharded<database>& db, sharded<query_processor>& qp) -> future<> {
        co_await db.local().create_keyspace(simple_keyspace());
        auto s = co_await db.local().create_table(int_table_schema());
        for (int k = 0; k < 4; ++k) {
            for (int c = 0; c < 3; ++c) {
                mutation m(s, pkey(k));
                m.partition().clustered_row(ck(c)).marker = row_marker{1};
                co_await db.local().apply(std::move(m));
            }
        }
        auto query = std::string("SELECT pk, ck FROM ks.t WHERE pk IN (2, 0, 1) ORDER BY ck DESC LIMIT 4");
        std::vector<std::pair<int, int>> want = {{0, 2}, {1, 2}, {2, 2}, {0, 1}};
        for (int32_t page_size : {-1, 4, 10}) {
            auto rows = co_await run_paged(qp.local(), query, page_size);
            std::vector<std::pair<int, int>> got;
            for (auto& r : rows) {
                got.emplace_back(int_of(*r[0]), int_of(*r[1]));
            }
            BOOST_REQUIRE_MESSAGE(got == want, "page size " << page_size);
        }
    };
    co_await with_cql(body);
}
