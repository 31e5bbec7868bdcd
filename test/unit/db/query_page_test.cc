// query_page against the model: random data written from every shard (flushes between), random ranges, slices,
// orders, row and per-partition limits, static-only rules and query times; the unpaged page equals the model, and
// paging through with every page size from 1 to past the result (resuming after each page's last position) gives
// the same rows.
#include "db/query_page.hh"
#include "runtime/smp.hh"
#include "test/lib/database_test_support.hh"
#include "test/lib/mutation_model.hh"
#include "test/lib/random_mutation.hh"
#include "test/lib/reef_test.hh"
#include "test/lib/simple_keys.hh"
#include "test/lib/tmpdir.hh"
#include "test/lib/writable_mutation.hh"

#include <boost/test/unit_test.hpp>

#include <fmt/format.h>

using namespace reef;
using namespace reef::testing;

namespace {

keyspace_definition simple_keyspace() {
    return keyspace_definition{"ks", {{"class", "SimpleStrategy"}, {"replication_factor", "1"}}, true};
}

// One result row as text: the partition, the row's key, the row and the partition's static row.
std::string row_text(const mutation& m, const clustering_key_prefix* ck) {
    mutation one(m.schema(), m.decorated_key());
    auto& s = *m.schema();
    for (auto& [id, c] : m.partition().static_row().cells()) {
        one.partition().apply_static(s, id, c);
    }
    if (ck) {
        one.partition().apply_row(s, *ck, m.partition().rows().at(*ck));
    }
    return to_string(one);
}

// The rows of one partition in the read's order (a static-only partition is one row when static_only_is_row).
std::vector<std::string> partition_rows(const mutation& m, bool reversed, bool static_only_is_row) {
    std::vector<std::string> out;
    auto& rows = m.partition().rows();
    if (rows.empty()) {
        if (static_only_is_row && !m.partition().static_row().empty()) {
            out.push_back(row_text(m, nullptr));
        }
        return out;
    }
    if (!reversed) {
        for (auto& [k, r] : rows) {
            out.push_back(row_text(m, &k));
        }
    } else {
        for (auto it = rows.rbegin(); it != rows.rend(); ++it) {
            out.push_back(row_text(m, &it->first));
        }
    }
    return out;
}

std::vector<std::string> model_rows(const mutation_model& model, const page_request& req) {
    std::vector<std::string> out;
    bool reversed = req.order == read_order::reversed;
    for (auto& [k, m] : model) {
        if (!req.range.contains(k)) {
            continue;
        }
        auto live = model_query(m, req.now, req.slice);
        if (!live) {
            continue;
        }
        auto rows = partition_rows(*live, reversed, req.static_only_is_row);
        for (size_t i = 0; i < rows.size() && i < req.partition_row_limit && out.size() < req.row_limit; ++i) {
            out.push_back(rows[i]);
        }
    }
    return out;
}

std::vector<std::string> page_rows(const page_result& p, const page_request& req) {
    std::vector<std::string> out;
    for (auto& m : p.partitions) {
        bool resumed = req.start_after && req.start_after->row && req.start_after->key == m.decorated_key();
        auto rows = partition_rows(m, req.order == read_order::reversed, req.static_only_is_row && !resumed);
        out.insert(out.end(), rows.begin(), rows.end());
    }
    return out;
}

std::string joined(const std::vector<std::string>& rows) {
    std::string out;
    for (auto& r : rows) {
        out += r + "\n";
    }
    return out;
}

page_request random_request(mutation_generator& g, const mutation_model& model) {
    page_request req;
    auto keys = keys_of(model);
    req.range = random_partition_range(g, keys);
    req.slice = g.rnd(0, 1) ? clustering_ranges{position_range::full()} : g.make_ranges();
    req.order = read_order_for(g.rnd(0, 1));
    req.static_only_is_row = g.rnd(0, 1);
    req.partition_row_limit = g.rnd(0, 2) ? no_row_limit : uint64_t(g.rnd(1, 3));
    req.row_limit = g.rnd(0, 2) ? no_row_limit : uint64_t(g.rnd(1, 20));
    req.now = g.rnd(0, 4);
    return req;
}

} // namespace

REEF_TEST_CASE(pages_equal_the_model_for_every_page_size) {
    uint64_t seed = pick_seed();
    BOOST_TEST_MESSAGE("seed " << seed << " (set REEF_SEED to repeat), shards " << smp::count());
    tmpdir dir;
    database_config cfg;
    cfg.data_directory = dir.path() + "/data";
    // Queries at the model's times (not the wall clock's): background compactions purge and expire nothing.
    cfg.compaction_clock = [] { return deletion_time_type(-1); };
    auto body = [&](sharded<database>& db) -> future<> {
        co_await db.local().create_keyspace(simple_keyspace());
        for (auto& base : random_test_schemas()) {
            auto s = co_await db.local().create_table(base);
            mutation_generator g(s, seed);
            mutation_model model;
            for (int i = 0; i < 120; ++i) {
                auto m = with_typed_values(s, g.make(pkey(g.rnd(0, 30)), 6));
                apply_to_model(model, m);
                co_await apply_from(db, shard_id(g.rnd(0, int(smp::count()) - 1)), std::move(m));
                if (g.rnd(0, 30) == 0) {
                    co_await db.local().flush("ks", s->table());
                }
            }
            for (int q = 0; q < 25; ++q) {
                auto req = random_request(g, model);
                auto expected = model_rows(model, req);
                auto whole = co_await query_page(db, s, req);
                auto got = page_rows(whole, req);
                BOOST_REQUIRE_MESSAGE(got == expected, "table " << s->table() << " query " << q << " unpaged:\n"
                                                                 << joined(got) << "!=\n" << joined(expected));
                BOOST_REQUIRE_EQUAL(whole.rows, got.size());
                // Paged: each page asks for at most `size` of the rows still wanted, resuming after the last.
                for (uint64_t size = 1; size <= expected.size() + 1; ++size) {
                    std::vector<std::string> all;
                    auto page = req;
                    uint64_t pages = 0;
                    while (true) {
                        uint64_t left = req.row_limit == no_row_limit ? no_row_limit : req.row_limit - all.size();
                        page.row_limit = std::min(size, left);
                        auto p = co_await query_page(db, s, page);
                        auto rows = page_rows(p, page);
                        BOOST_REQUIRE_LE(rows.size(), size);
                        BOOST_REQUIRE_EQUAL(p.rows, rows.size());
                        all.insert(all.end(), rows.begin(), rows.end());
                        BOOST_REQUIRE_LE(++pages, expected.size() + 2);
                        if (p.exhausted || all.size() >= req.row_limit || !p.last) {
                            break;
                        }
                        page.start_after = p.last;
                    }
                    BOOST_REQUIRE_MESSAGE(all == expected, "table " << s->table() << " query " << q << " page size "
                                                                    << size << ":\n"
                                                                    << joined(all) << "!=\n" << joined(expected));
                }
            }
        }
    };
    co_await with_database(cfg, body);
}

REEF_TEST_CASE(a_passed_deadline_is_a_read_timeout) {
    tmpdir dir;
    database_config cfg;
    cfg.data_directory = dir.path() + "/data";
    // Queries at the model's times (not the wall clock's): background compactions purge and expire nothing.
    cfg.compaction_clock = [] { return deletion_time_type(-1); };
    auto body = [&](sharded<database>& db) -> future<> {
        co_await db.local().create_keyspace(simple_keyspace());
        auto s = co_await db.local().create_table(int_table_schema());
        mutation m(s, pkey(1));
        co_await db.local().apply(std::move(m));
        page_request req;
        req.timeout = read_clock::now() - std::chrono::seconds(1);
        req.description = "SELECT from ks.t";
        bool thrown = false;
        try {
            co_await query_page(db, s, req);
        } catch (const read_timeout_error& e) {
            thrown = std::string(e.what()).find("SELECT from ks.t") != std::string::npos;
        }
        BOOST_REQUIRE(thrown);
    };
    co_await with_database(cfg, body);
}

// A page over a range reads about what it returns, not every shard's page_size rows: the shards' reads (summed
// page_rows) stay near the rows returned, at every page size, and the pages give the unpaged rows.
REEF_TEST_CASE(a_range_page_reads_about_what_it_returns) {
    tmpdir dir;
    database_config cfg;
    cfg.data_directory = dir.path() + "/data";
    auto body = [&](sharded<database>& db) -> future<> {
        co_await db.local().create_keyspace(simple_keyspace());
        auto s = co_await db.local().create_table(int_table_schema());
        for (int k = 0; k < 300; ++k) {
            for (int c = 0; c < 2; ++c) {
                mutation m(s, pkey(k));
                m.partition().clustered_row(ck(c)).marker = row_marker{1};
                co_await db.local().apply(std::move(m));
            }
            if (k == 150) {
                co_await db.local().flush("ks", "t");
            }
        }
        auto rows_read = [&]() -> future<uint64_t> {
            uint64_t n = 0;
            for (shard_id sh = 0; sh < smp::count(); ++sh) {
                auto one = [](database& d) { return d.page_rows(); };
                n += co_await db.invoke_on(sh, one);
            }
            co_return n;
        };
        page_request req;
        req.now = 1;
        auto whole = co_await query_page(db, s, req);
        auto expected = page_rows(whole, req);
        BOOST_REQUIRE_EQUAL(expected.size(), 600u);
        for (uint64_t size : {1, 2, 3, 7, 10, 33, 100, 250, 601}) {
            std::vector<std::string> all;
            auto page = req;
            page.row_limit = size;
            uint64_t pages = 0;
            auto before = co_await rows_read();
            while (true) {
                auto p = co_await query_page(db, s, page);
                auto rows = page_rows(p, page);
                all.insert(all.end(), rows.begin(), rows.end());
                ++pages;
                if (p.exhausted || !p.last) {
                    break;
                }
                page.start_after = p.last;
            }
            auto read = co_await rows_read() - before;
            BOOST_TEST_MESSAGE("page size " << size << ": " << pages << " pages, " << read << " rows read for "
                                            << all.size());
            BOOST_REQUIRE(all == expected);
            // Each page: its share per shard and one row more, then what the lagging shard still owed.
            BOOST_REQUIRE_LE(read, all.size() + all.size() / 4 + pages * (smp::count() + 1));
        }
    };
    co_await with_database(cfg, body);
}
