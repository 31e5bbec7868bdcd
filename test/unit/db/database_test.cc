// The sharded database against a model: random writes from every shard, flushes, reads of single partitions and
// token ranges across shards, clean restarts; ALTER ADD/DROP then restart; DROP and TRUNCATE with auto_snapshot
// (hard links); the schema tables' rows against what Cassandra 5.0.9 returned (../shared/cql-conformance);
// system.local's identity across restarts; a data directory refused under another shard count.
#include "cql/cql_parser.hh"
#include "db/database.hh"
#include "sstables/schema_upgrade.hh"
#include "runtime/app.hh"
#include "runtime/smp.hh"
#include "test/lib/database_test_support.hh"
#include "test/lib/mutation_model.hh"
#include "test/lib/random_mutation.hh"
#include "test/lib/reef_test.hh"
#include "test/lib/simple_keys.hh"
#include "test/lib/tmpdir.hh"
#include "test/lib/writable_mutation.hh"
#include "utils/json_reader.hh"

#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

using namespace reef;
using namespace reef::testing;

namespace {

keyspace_definition simple_keyspace(std::string name) {
    return keyspace_definition{std::move(name), {{"class", "SimpleStrategy"}, {"replication_factor", "1"}}, true};
}

// dirty_limit: each shard's dirty memory hard limit (flushes start at 60% of it).
database_config config_in(const tmpdir& dir, size_t dirty_limit = 64 << 20) {
    database_config cfg;
    cfg.data_directory = dir.path() + "/data";
    cfg.dirty_memory_hard_limit = dirty_limit;
    // Raw reads (tombstones included) are compared with the model: background compactions purge nothing.
    cfg.compaction_clock = [] { return deletion_time_type(-1); };
    return cfg;
}

std::vector<mutation> canonical_expected(const schema_ptr& s, const mutation_model& model, const dht::partition_range& pr,
                                         const clustering_ranges& slice, bool reversed) {
    auto ms = canonical_mutations(s, expected_read(model, pr, slice, reversed), reversed);
    std::erase_if(ms, is_empty);
    return ms;
}

// A random read (one partition or a range, a slice, a direction) through the database, against the model.
future<> check_read(database& db, const schema_ptr& s, const mutation_model& model, mutation_generator& g,
                    const std::string& when) {
    auto keys = keys_of(model);
    std::optional<dht::partition_range> pr;
    int kind = g.rnd(0, 3);
    if (!keys.empty() && kind <= 1) {
        pr.emplace(dht::partition_range::singular(keys[size_t(g.rnd(0, int(keys.size()) - 1))]));
    } else if (!keys.empty() && kind == 2) {
        // A token range: from before or after one key's token to before or after another's.
        auto a = keys[size_t(g.rnd(0, int(keys.size()) - 1))].get_token();
        auto b = keys[size_t(g.rnd(0, int(keys.size()) - 1))].get_token();
        if (b < a) {
            std::swap(a, b);
        }
        bool same = a == b;
        auto start = same || g.rnd(0, 1) ? dht::ring_position::before_token(a) : dht::ring_position::after_token(a);
        auto end = same || g.rnd(0, 1) ? dht::ring_position::after_token(b) : dht::ring_position::before_token(b);
        pr.emplace(dht::partition_range::bound{start, true}, dht::partition_range::bound{end, true});
    } else {
        pr.emplace(g.rnd(0, 2) ? dht::partition_range::full() : random_partition_range(g, keys));
    }
    auto forward_slice = g.rnd(0, 1) ? clustering_ranges{position_range::full()} : g.make_ranges();
    bool reversed = g.rnd(0, 1);
    auto slice = reversed ? reverse_ranges(forward_slice) : forward_slice;
    auto got = query_result_canonical(co_await db.query(s, *pr, slice, reversed));
    auto expected = canonical_expected(s, model, *pr, slice, reversed);
    BOOST_REQUIRE_MESSAGE(got == expected, when << " (reversed " << reversed << "):\n"
                                                << describe(got) << "!=\n" << describe(expected));
}

std::string text_of(const bytes& b) { return std::string(b.begin(), b.end()); }

clustering_ranges full_slice() { return clustering_ranges{position_range::full()}; }

std::vector<column_definition> added_columns() {
    return {{"w", int32_type(), column_kind::regular_column}, {"s2", text_type(), column_kind::static_column}};
}

std::vector<std::string> dropped_names() { return {"v", "m"}; }

// ../shared/cql-conformance/cases, found above the working directory or the binary (as peer_corpus_dir does).
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
                if (fs::is_directory(cases)) {
                    return cases;
                }
                return std::nullopt;
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

// The rows of the recorded result of the first statement of `case_name` that starts with `stmt_prefix`, each
// cell as its JSON text (strings unquoted, lists of strings joined by ',').
std::vector<std::vector<std::string>> recorded_rows(const std::filesystem::path& cases, const std::string& case_name,
                                                    std::string_view stmt_prefix) {
    auto doc = utils::parse_json(slurp(cases / (case_name + ".expected.json")));
    for (auto& st : doc.items) {
        if (!st.get("stmt")->text.starts_with(stmt_prefix)) {
            continue;
        }
        std::vector<std::vector<std::string>> out;
        for (auto& row : st.get("rows")->items) {
            std::vector<std::string> cells;
            for (auto& c : row.items) {
                if (c.is_array()) {
                    std::string joined;
                    for (auto& e : c.items) {
                        if (e.is_array()) {  // a map entry [k, v]
                            joined += (joined.empty() ? "" : ",") + e.items.at(0).text + "=" + e.items.at(1).text;
                        } else {
                            joined += (joined.empty() ? "" : ",") + e.text;
                        }
                    }
                    cells.push_back(joined);
                } else {
                    cells.push_back(c.text);
                }
            }
            out.push_back(std::move(cells));
        }
        return out;
    }
    BOOST_FAIL("no statement " << stmt_prefix << " in " << case_name);
    return {};
}

// The live rows of keyspace ks's partition of a schema table.
future<std::vector<schema_tables::live_row>> schema_rows(database& db, schema_ptr table, std::string ks) {
    auto pr = dht::partition_range::singular(dht::decorated_key(partition_key::from_single_value(ks)));
    auto slice = full_slice();
    auto ms = co_await db.query(table, pr, slice);
    BOOST_REQUIRE_EQUAL(ms.size(), 1u);
    co_return schema_tables::live_rows(ms[0]);
}

std::string int_text(const bytes& b) { return std::to_string(int32_t(read_be<int32_t>(b.data()))); }

std::vector<std::string> column_row_text(const schema_tables::live_row& r) {
    return {text_of(r.key[1]), text_of(r.cells.at("kind")), int_text(r.cells.at("position")), text_of(r.cells.at("type")),
            text_of(r.cells.at("clustering_order"))};
}


std::string list_text(const bytes& b) {
    std::string out;
    for (auto e : split_collection(b)) {
        out += (out.empty() ? "" : ",") + std::string(to_string_view(e));
    }
    return out;
}

std::string map_text(const bytes& b) {
    std::string out;
    for (auto& [k, v] : split_map(b)) {
        out += (out.empty() ? "" : ",") + std::string(to_string_view(k)) + "=" + std::string(to_string_view(v));
    }
    return out;
}

} // namespace

REEF_TEST_CASE(random_writes_reads_flushes_and_restarts) {
    uint64_t seed = pick_seed();
    BOOST_TEST_MESSAGE("seed " << seed << " (set REEF_SEED to repeat), shards " << smp::count());
    tmpdir dir;
    mutation_generator rg(random_test_schema(), seed);
    auto cfg = config_in(dir, size_t(rg.rnd(2000, 40000)));
    std::map<std::string, mutation_model> models;
    std::map<std::string, table_id> ids;
    auto setup_and_write = [&](sharded<database>& db) -> future<> {
        co_await db.local().create_keyspace(simple_keyspace("ks"));
        for (auto& base : random_test_schemas()) {
            auto s = co_await db.local().create_table(base);
            BOOST_REQUIRE_EQUAL(utils::uuid_version(s->id()), 1u);
            ids[s->table()] = s->id();
            mutation_generator g(s, seed + 1);
            auto& model = models[s->table()];
            for (int i = 0; i < 150; ++i) {
                auto m = with_typed_values(s, g.make(pkey(g.rnd(0, 40)), 5));
                apply_to_model(model, m);
                co_await apply_from(db, shard_id(g.rnd(0, int(smp::count()) - 1)), std::move(m));
                if (g.rnd(0, 40) == 0) {
                    co_await db.local().flush("ks", s->table());
                }
                if (i % 50 == 49) {
                    for (int r = 0; r < 5; ++r) {
                        co_await check_read(db.local(), s, model, g, "after write " + std::to_string(i));
                    }
                }
            }
        }
    };
    co_await with_database(cfg, setup_and_write);
    for (int restart = 0; restart < 2; ++restart) {
        auto check = [&](sharded<database>& db) -> future<> {
            for (auto& [name, model] : models) {
                auto s = db.local().find_schema("ks", name);
                BOOST_REQUIRE(s);
                BOOST_REQUIRE(s->id() == ids[name]);
                mutation_generator g(s, seed + 2 + restart);
                for (int r = 0; r < 15; ++r) {
                    // From every shard: the hop to the owners is the database's.
                    auto read = [&](database& d) { return check_read(d, s, model, g, "after restart"); };
                    co_await db.invoke_on(shard_id(r % smp::count()), read);
                }
            }
        };
        co_await with_database(cfg, check);
    }
}

REEF_TEST_CASE(partitions_live_on_their_owner_shard) {
    tmpdir dir;
    auto body = [&](sharded<database>& db) -> future<> {
        co_await db.local().create_keyspace(simple_keyspace("ks"));
        auto s = co_await db.local().create_table(int_table_schema());
        std::vector<size_t> expected(smp::count());
        for (int k = 0; k < 200; ++k) {
            mutation m(s, pkey(k));
            m.partition().clustered_row(ck(1)).marker.timestamp = 1;
            ++expected[dht::shard_of(m.decorated_key().get_token(), smp::count())];
            co_await apply_from(db, shard_id(k % smp::count()), std::move(m));
        }
        for (shard_id sh = 0; sh < smp::count(); ++sh) {
            auto count = [id = s->id()](database& d) { return d.find_table(id)->active_memtable().partition_count(); };
            BOOST_REQUIRE_EQUAL(co_await db.invoke_on(sh, count), expected[sh]);
        }
        // After a flush each shard's sstables carry generations of its own space.
        co_await db.local().flush("ks", "t");
        for (shard_id sh = 0; sh < smp::count(); ++sh) {
            auto gens = [id = s->id()](database& d) {
                std::vector<uint64_t> out;
                for (auto& desc : d.find_table(id)->sstable_descriptors()) {
                    out.push_back(std::stoull(desc.generation));
                }
                return out;
            };
            auto got = co_await db.invoke_on(sh, gens);
            BOOST_REQUIRE_EQUAL(got.size(), expected[sh] ? 1u : 0u);
            for (auto g : got) {
                BOOST_REQUIRE_EQUAL(g % smp::count(), sh);
            }
        }
        auto ranged = co_await db.local().query(s, dht::partition_range::full(), full_slice());
        BOOST_REQUIRE_EQUAL(ranged.size(), 200u);
        BOOST_REQUIRE(std::is_sorted(ranged.begin(), ranged.end(),
                                     [](auto& a, auto& b) { return a.decorated_key() < b.decorated_key(); }));
    };
    co_await with_database(config_in(dir), body);
}

REEF_TEST_CASE(alter_add_and_drop_columns_then_restart) {
    uint64_t seed = pick_seed();
    BOOST_TEST_MESSAGE("seed " << seed);
    tmpdir dir;
    auto cfg = config_in(dir, 4000);
    mutation_model model;
    schema_ptr current;
    auto body = [&](sharded<database>& db) -> future<> {
        co_await db.local().create_keyspace(simple_keyspace("ks"));
        auto s = co_await db.local().create_table(random_test_schema());
        mutation_generator g(s, seed);
        for (int i = 0; i < 100; ++i) {
            auto m = with_typed_values(s, g.make(pkey(g.rnd(0, 20)), 4));
            apply_to_model(model, m);
            co_await apply_from(db, shard_id(i % smp::count()), std::move(m));
        }
        // ADD a regular and a static column: old data reads on, new writes use them.
        auto add = added_columns();
        auto added = co_await db.local().alter_table("ks", "t", add, std::vector<std::string>());
        BOOST_REQUIRE(added->id() == s->id());
        BOOST_REQUIRE(added->find_column("w") && added->find_column("s2"));
        mutation_model upgraded;
        for (auto& [k, m] : model) {
            apply_to_model(upgraded, upgrade_mutation(m, added));
        }
        model = std::move(upgraded);
        mutation_generator g2(added, seed + 1);
        for (int i = 0; i < 100; ++i) {
            auto m = with_typed_values(added, g2.make(pkey(g2.rnd(0, 30)), 4));
            apply_to_model(model, m);
            co_await apply_from(db, shard_id(i % smp::count()), std::move(m));
        }
        for (int r = 0; r < 10; ++r) {
            co_await check_read(db.local(), added, model, g2, "after ADD");
        }
        // DROP v and m: their cells are gone from every read, sstables written before included.
        auto drop = dropped_names();
        current = co_await db.local().alter_table("ks", "t", std::vector<column_definition>(), drop);
        BOOST_REQUIRE(!current->find_column("v") && !current->find_column("m"));
        mutation_model dropped;
        for (auto& [k, m] : model) {
            apply_to_model(dropped, upgrade_mutation(m, current));
        }
        model = std::move(dropped);
        for (int r = 0; r < 10; ++r) {
            co_await check_read(db.local(), current, model, g2, "after DROP");
        }
    };
    co_await with_database(cfg, body);
    auto after = [&](sharded<database>& db) -> future<> {
        auto s = db.local().find_schema("ks", "t");
        BOOST_REQUIRE(s);
        BOOST_REQUIRE(s->find_column("w") && s->find_column("s2") && !s->find_column("v") && !s->find_column("m"));
        BOOST_REQUIRE_EQUAL(s->regular_columns().size(), current->regular_columns().size());
        mutation_generator g(s, seed + 2);
        mutation_model reread;
        for (auto& [k, m] : model) {
            apply_to_model(reread, upgrade_mutation(m, s));
        }
        for (int r = 0; r < 10; ++r) {
            co_await check_read(db.local(), s, reread, g, "after ALTER and restart");
        }
        // dropped_columns recorded the two drops.
        auto rows = co_await schema_rows(db.local(), schema_tables::dropped_columns(), "ks");
        BOOST_REQUIRE_EQUAL(rows.size(), 2u);
        BOOST_REQUIRE_EQUAL(text_of(rows[0].key[1]), "m");
        BOOST_REQUIRE_EQUAL(text_of(rows[0].cells.at("type")), "map<int, int>");
        BOOST_REQUIRE_EQUAL(text_of(rows[1].key[1]), "v");
    };
    co_await with_database(cfg, after);
}

REEF_TEST_CASE(snapshot_drop_and_truncate) {
    tmpdir dir;
    auto cfg = config_in(dir);
    mutation_model model;
    std::string table_dir;
    auto body = [&](sharded<database>& db) -> future<> {
        co_await db.local().create_keyspace(simple_keyspace("ks"));
        auto s = co_await db.local().create_table(int_table_schema());
        table_dir = db.local().table_directory(*s);
        BOOST_REQUIRE_EQUAL(table_dir, cfg.data_directory + "/ks/t-" + utils::to_string(s->id(), false));
        mutation_generator g(s, 7);
        for (int k = 0; k < 50; ++k) {
            auto m = with_typed_values(s, g.make(pkey(k), 3));
            apply_to_model(model, m);
            co_await db.local().apply(std::move(m));
        }
        // snapshot(): flushed, then hard links (the same inode, two links) of every sstable file.
        auto keyspaces = std::vector<std::string>(1, "ks");
        co_await db.local().snapshot("tag1", keyspaces);
        auto snap = table_dir + "/snapshots/tag1";
        size_t linked = 0;
        for (auto& e : std::filesystem::directory_iterator(snap)) {
            auto name = e.path().filename().string();
            if (name == "manifest.json" || name == "schema.cql") {
                continue;
            }
            struct stat a, b;
            BOOST_REQUIRE_EQUAL(::stat(e.path().c_str(), &a), 0);
            BOOST_REQUIRE_EQUAL(::stat((table_dir + "/" + name).c_str(), &b), 0);
            BOOST_REQUIRE_EQUAL(a.st_ino, b.st_ino);
            BOOST_REQUIRE_EQUAL(a.st_nlink, 2u);
            ++linked;
        }
        BOOST_REQUIRE_EQUAL(linked, regular_files_in(table_dir));
        BOOST_REQUIRE(std::filesystem::exists(snap + "/manifest.json"));
        BOOST_REQUIRE(std::filesystem::exists(snap + "/schema.cql"));

        // TRUNCATE: empty on every shard, a truncated-<millis>-t snapshot holds what was there.
        auto more = with_typed_values(s, g.make(pkey(1000), 3));
        co_await db.local().apply(more);
        co_await db.local().truncate("ks", "t");
        auto all = co_await db.local().query(s, dht::partition_range::full(), full_slice());
        BOOST_REQUIRE(all.empty());
        BOOST_REQUIRE_EQUAL(regular_files_in(table_dir), 0u);
        size_t truncated_snapshots = 0;
        for (auto& e : std::filesystem::directory_iterator(table_dir + "/snapshots")) {
            auto name = e.path().filename().string();
            if (name.starts_with("truncated-") && name.ends_with("-t")) {
                ++truncated_snapshots;
                BOOST_REQUIRE(regular_files_in(e.path().string()) > linked);  // the extra partition's sstable too
            }
        }
        BOOST_REQUIRE_EQUAL(truncated_snapshots, 1u);
        // Writes after the truncate are kept.
        model.clear();
        auto after = with_typed_values(s, g.make(pkey(2000), 3));
        apply_to_model(model, after);
        co_await db.local().apply(after);
        for (int r = 0; r < 5; ++r) {
            co_await check_read(db.local(), s, model, g, "after truncate");
        }
    };
    co_await with_database(cfg, body);
    // DROP after a restart: a dropped-<millis>-t snapshot, no sstable left, the name free for a new table.
    auto drop = [&](sharded<database>& db) -> future<> {
        auto s = db.local().find_schema("ks", "t");
        mutation_generator g(s, 8);
        for (int r = 0; r < 5; ++r) {
            co_await check_read(db.local(), s, model, g, "after truncate and restart");
        }
        co_await db.local().drop_table("ks", "t");
        BOOST_REQUIRE(!db.local().find_schema("ks", "t"));
        BOOST_REQUIRE_EQUAL(regular_files_in(table_dir), 0u);
        size_t dropped = 0;
        for (auto& e : std::filesystem::directory_iterator(table_dir + "/snapshots")) {
            auto name = e.path().filename().string();
            if (name.starts_with("dropped-") && name.ends_with("-t")) {
                ++dropped;
                BOOST_REQUIRE(regular_files_in(e.path().string()) > 2);
            }
        }
        BOOST_REQUIRE_EQUAL(dropped, 1u);
        BOOST_REQUIRE_THROW(co_await db.local().apply(mutation(s, pkey(1))), no_such_table);
        auto again = co_await db.local().create_table(int_table_schema());
        BOOST_REQUIRE(again->id() != s->id());
        auto all = co_await db.local().query(again, dht::partition_range::full(), full_slice());
        BOOST_REQUIRE(all.empty());
        BOOST_REQUIRE_THROW(co_await db.local().create_table(int_table_schema()), schema_change_error);
        // ALTER KEYSPACE, seen on every shard.
        auto altered = simple_keyspace("ks");
        altered.replication["replication_factor"] = "3";
        altered.durable_writes = false;
        co_await db.local().alter_keyspace(altered);
        for (shard_id sh = 0; sh < smp::count(); ++sh) {
            auto rf = [](database& d) { return d.find_keyspace("ks")->replication.at("replication_factor"); };
            BOOST_REQUIRE_EQUAL(co_await db.invoke_on(sh, rf), "3");
        }
        co_await db.local().drop_keyspace("ks");
        BOOST_REQUIRE(!db.local().find_keyspace("ks"));
        BOOST_REQUIRE_THROW(co_await db.local().drop_keyspace("ks"), schema_change_error);
        BOOST_REQUIRE_THROW(co_await db.local().drop_keyspace("system_schema"), schema_change_error);
    };
    co_await with_database(cfg, drop);
    auto gone = [&](sharded<database>& db) -> future<> {
        BOOST_REQUIRE(!db.local().find_keyspace("ks"));
        BOOST_REQUIRE(db.local().find_keyspace("system_schema"));
        co_return;
    };
    co_await with_database(cfg, gone);
}

REEF_TEST_CASE(schema_tables_rows_as_cassandra_shows_them) {
    auto cases = conformance_cases();
    if (!cases) {
        BOOST_TEST_MESSAGE("skipped: ../shared/cql-conformance is absent");
        co_return;
    }
    tmpdir dir;
    auto body = [&](sharded<database>& db) -> future<> {
        co_await db.local().create_keyspace(simple_keyspace("cq"));
        // schema_keyspace_row: keyspace_name, durable_writes, replication.
        auto ks_rows = co_await schema_rows(db.local(), schema_tables::keyspaces(), "cq");
        auto want_ks = recorded_rows(*cases, "schema_keyspace_row", "SELECT keyspace_name, durable_writes");
        BOOST_REQUIRE_EQUAL(ks_rows.size(), 1u);
        BOOST_REQUIRE_EQUAL(want_ks.at(0).at(1), ks_rows[0].cells.at("durable_writes").at(0) ? "true" : "false");
        BOOST_REQUIRE_EQUAL(want_ks.at(0).at(2), map_text(ks_rows[0].cells.at("replication")));

        // schema_types_udt: its CREATE TYPEs, then type_name, field_names, field_types.
        cql_catalog catalog;
        auto types_cql = replace_all(slurp(*cases / "schema_types_udt.cql"), "{ks}", "cq");
        parse_cql(types_cql.substr(0, types_cql.find("SELECT")), catalog);
        for (auto& [key, type] : catalog.user_types) {
            if (key.second == "inner_t") {
                co_await db.local().create_type(type);
            }
        }
        for (auto& [key, type] : catalog.user_types) {
            if (key.second != "inner_t") {
                co_await db.local().create_type(type);
            }
        }
        auto type_rows = co_await schema_rows(db.local(), schema_tables::types(), "cq");
        auto want_types = recorded_rows(*cases, "schema_types_udt", "SELECT type_name");
        BOOST_REQUIRE_EQUAL(type_rows.size(), want_types.size());
        for (size_t i = 0; i < type_rows.size(); ++i) {
            BOOST_REQUIRE_EQUAL(text_of(type_rows[i].key[0]), want_types[i][0]);
            BOOST_REQUIRE_EQUAL(list_text(type_rows[i].cells.at("field_names")), want_types[i][1]);
            BOOST_REQUIRE_EQUAL(list_text(type_rows[i].cells.at("field_types")), want_types[i][2]);
        }

        // schema_columns_basic: column_name, kind, position, type, clustering_order of its CREATE TABLE.
        auto table_cql = replace_all(slurp(*cases / "schema_columns_basic.cql"), "{ks}", "cq");
        auto created = co_await db.local().create_table(parse_create_table(table_cql.substr(0, table_cql.find("SELECT"))));
        auto col_rows = co_await schema_rows(db.local(), schema_tables::columns(), "cq");
        auto want_cols = recorded_rows(*cases, "schema_columns_basic", "SELECT column_name, kind");
        BOOST_REQUIRE_EQUAL(col_rows.size(), want_cols.size());
        for (size_t i = 0; i < col_rows.size(); ++i) {
            auto& r = col_rows[i];
            BOOST_REQUIRE_EQUAL(text_of(r.key[0]), "t");
            auto got = column_row_text(r);
            BOOST_REQUIRE_EQUAL_COLLECTIONS(got.begin(), got.end(), want_cols[i].begin(), want_cols[i].end());
            BOOST_REQUIRE_EQUAL(text_of(r.cells.at("column_name_bytes")), text_of(r.key[1]));
        }
        // The tables row: what drivers need (flags with 'compound', the id).
        auto table_rows = co_await schema_rows(db.local(), schema_tables::tables(), "cq");
        BOOST_REQUIRE_EQUAL(table_rows.size(), 1u);
        BOOST_REQUIRE_EQUAL(list_text(table_rows[0].cells.at("flags")), "compound");
        auto& id = table_rows[0].cells.at("id");
        BOOST_REQUIRE(std::equal(id.begin(), id.end(), created->id().begin(), created->id().end()));
        BOOST_REQUIRE_EQUAL(table_rows[0].cells.size(), schema_tables::tables()->regular_columns().size());
    };
    co_await with_database(config_in(dir), body);
    // After a restart the schema read back from system_schema equals the one created (columns, keys, options).
    auto again = [&](sharded<database>& db) -> future<> {
        auto s = db.local().find_schema("cq", "t");
        BOOST_REQUIRE(s);
        BOOST_REQUIRE_EQUAL(s->partition_key().size(), 2u);
        BOOST_REQUIRE_EQUAL(s->clustering_key().size(), 2u);
        BOOST_REQUIRE_EQUAL(s->static_columns().size(), 1u);
        BOOST_REQUIRE_EQUAL(s->regular_columns().size(), 2u);
        BOOST_REQUIRE(db.local().find_type("cq", "outer_t"));
        auto* outer = dynamic_cast<const user_type_impl*>(db.local().find_type("cq", "outer_t").get());
        BOOST_REQUIRE(outer);
        BOOST_REQUIRE_EQUAL(outer->declared_field_types().at(1)->cql_name(), "list<frozen<inner_t>>");
        BOOST_REQUIRE_EQUAL(outer->field_types().at(1)->cql_name(), "frozen<list<frozen<inner_t>>>");
        co_return;
    };
    co_await with_database(config_in(dir), again);
}

REEF_TEST_CASE(system_local_identity_survives_restarts) {
    tmpdir dir;
    utils::uuid_bytes host{};
    std::vector<std::string> tokens;
    auto first = [&](sharded<database>& db) -> future<> {
        host = db.local().host_id();
        BOOST_REQUIRE_EQUAL(utils::uuid_version(host), 4u);
        auto local = co_await db.local().query(schema_tables::local(), dht::partition_range::full(), full_slice());
        auto rows = schema_tables::live_rows(local.at(0));
        BOOST_REQUIRE_EQUAL(rows.size(), 1u);
        auto& r = rows[0];
        BOOST_REQUIRE_EQUAL(text_of(r.cells.at("cluster_name")), "Test Cluster");
        BOOST_REQUIRE_EQUAL(text_of(r.cells.at("data_center")), "datacenter1");
        BOOST_REQUIRE_EQUAL(text_of(r.cells.at("rack")), "rack1");
        BOOST_REQUIRE_EQUAL(text_of(r.cells.at("cql_version")), "3.4.7");
        BOOST_REQUIRE_EQUAL(text_of(r.cells.at("native_protocol_version")), "4");
        BOOST_REQUIRE_EQUAL(text_of(r.cells.at("partitioner")), "org.apache.cassandra.dht.Murmur3Partitioner");
        BOOST_REQUIRE_EQUAL(r.collections.at("tokens").size(), 1u);
        tokens.push_back(text_of(r.collections.at("tokens")[0].first));
        // The system keyspaces are described in system_schema too (cqlsh reads them): Cassandra's ten tables and
        // ScyllaDB's scylla_tables (its gocql reads it).
        auto sys = co_await schema_rows(db.local(), schema_tables::tables(), "system_schema");
        BOOST_REQUIRE_EQUAL(sys.size(), 11u);
    };
    co_await with_database(config_in(dir), first);
    auto second = [&](sharded<database>& db) -> future<> {
        BOOST_REQUIRE(db.local().host_id() == host);
        auto local = co_await db.local().query(schema_tables::local(), dht::partition_range::full(), full_slice());
        auto id = schema_tables::read_local_identity(local);
        BOOST_REQUIRE(id);
        BOOST_REQUIRE(id->host_id == host);
        BOOST_REQUIRE(id->tokens == tokens);
        auto sys = co_await schema_rows(db.local(), schema_tables::tables(), "system_schema");
        BOOST_REQUIRE_EQUAL(sys.size(), 11u);
    };
    co_await with_database(config_in(dir), second);
}

REEF_TEST_CASE(another_shard_count_is_refused) {
    tmpdir dir;
    auto cfg = config_in(dir);
    std::filesystem::create_directories(cfg.data_directory);
    std::ofstream(cfg.data_directory + "/reef-shard-count") << (smp::count() + 1) << "\n";
    sharded<database> db;
    co_await db.start(&db, cfg);
    std::string error;
    try {
        co_await db.local().start();
    } catch (const std::runtime_error& e) {
        error = e.what();
    }
    co_await db.stop();
    BOOST_REQUIRE_MESSAGE(error.find("resharding is not implemented") != std::string::npos, error);
}
