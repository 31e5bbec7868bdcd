// `reef sstable query` against dump-data and against a model, on every corpus sstable and on random sstables
// written by our writer: the whole sstable and each sampled partition (--partition with dump-data's key text)
// print what dump-data prints, positions aside; with random --where restrictions the output is the partition's
// full-scan fragments sliced by the in-memory reader and printed, and its rows are exactly those the relations'
// predicate (random_where, evaluated value by value) selects. --reversed gives the same partition backwards (or,
// until reversed sstable reads exist, their "not supported" error). Bad keys and relations are clear errors.
#include "db/memtable.hh"
#include "db/memtable_reader.hh"
#include "mutation/mutation.hh"
#include "reader/mutation_reader.hh"
#include "runtime/file.hh"
#include "schema/types.hh"
#include "sstables/checked_data_source.hh"
#include "sstables/mx_reader.hh"
#include "sstables/sstable_reader.hh"
#include "sstables/writer.hh"
#include "test/lib/mutation_model.hh"
#include "test/lib/random_mutation.hh"
#include "test/lib/random_where.hh"
#include "test/lib/reef_test.hh"
#include "test/lib/simple_keys.hh"
#include "test/lib/sstable_corpus.hh"
#include "test/lib/tmpdir.hh"
#include "test/lib/writable_mutation.hh"
#include "cql/clustering_restrictions.hh"
#include "tools/dump_data_printer.hh"
#include "tools/sstable_dump_data.hh"
#include "sstables/sstable.hh"
#include "tools/sstable_query.hh"

#include <boost/test/unit_test.hpp>

#include <random>

using namespace reef;
using namespace reef::sstables;
using namespace reef::testing;
using namespace reef::tools;

namespace {

constexpr int64_t corpus_now = 1750000000;

// A JSON value as comparable text, "position" members left out (query prints none), and so are boundaries
// between two equal tombstones (they change nothing; readers drop them, dump-data prints what the file holds).
std::string canonical(const json_value& v) {
    switch (v.type) {
    case json_value::kind::object: {
        auto* type = v.get("type");
        if (type && type->text == "range_tombstone_boundary" &&
            canonical(*v.get("start")->get("deletion_info")) == canonical(*v.get("end")->get("deletion_info"))) {
            return "";
        }
        std::string out = "{";
        for (auto& [k, m] : v.members) {
            if (k == "position") {
                continue;
            }
            out += "\"" + k + "\":" + canonical(m) + ",";
        }
        return out + "}";
    }
    case json_value::kind::array: {
        std::string out = "[";
        for (auto& i : v.items) {
            auto c = canonical(i);
            if (!c.empty()) {
                out += c + ",";
            }
        }
        return out + "]";
    }
    case json_value::kind::string: return "\"" + v.text + "\"";
    default: return v.raw;
    }
}

// A vector of one descriptor (a braced list inside co_await trips GCC 12: "array used as initializer").
std::vector<descriptor> just(const descriptor& d) {
    std::vector<descriptor> v;
    v.push_back(d);
    return v;
}

json_value one_document(const std::string& text) {
    auto docs = read_json_documents(text);
    BOOST_REQUIRE_EQUAL(docs.size(), 1u);
    return docs[0];
}

// sstabledump -k's form of a dumped "key" array: components joined by ':', with ':' and '\' escaped in a
// composite's components (CompositeType.fromString).
std::string key_text(const json_value& key, bool composite) {
    std::string out;
    for (size_t i = 0; i < key.items.size(); ++i) {
        if (i) {
            out += ':';
        }
        for (char c : key.items[i].text) {
            if (composite && (c == ':' || c == '\\')) {
                out += '\\';
            }
            out += c;
        }
    }
    return out;
}

// Where two texts first differ, with some context (the corpus' dumps are megabytes).
std::string first_difference(const std::string& a, const std::string& b) {
    size_t i = 0;
    while (i < a.size() && i < b.size() && a[i] == b[i]) {
        ++i;
    }
    size_t from = i > 300 ? i - 300 : 0;
    return "at " + std::to_string(i) + ":\n  " + a.substr(from, 600) + "\nvs\n  " + b.substr(from, 600);
}

#define REQUIRE_SAME_TEXT(a, b)                                                                    \
    do {                                                                                           \
        auto _a = (a);                                                                             \
        auto _b = (b);                                                                             \
        BOOST_REQUIRE_MESSAGE(_a == _b, first_difference(_a, _b));                                 \
    } while (0)

// with_typed_values leaves collection element values one random byte long, which dump-data cannot print as
// the element type (an int): pad them to the type's length too.
mutation dumpable(const schema_ptr& s, const mutation& m) {
    auto fs = to_fragments(m);
    auto fix = [](row& r, const std::vector<column_definition>& cols) {
        row out;
        for (auto& [id, c] : r.cells()) {
            if (auto* a = std::get_if<atomic_cell>(&c)) {
                out.apply(id, *a);
                continue;
            }
            auto& t = *cols.at(id).type;
            auto value_type = t.kind() == type_kind::map ? t.value_type() : t.kind() == type_kind::list ? t.element_type() : nullptr;
            auto coll = std::get<collection_cells>(c);
            for (auto& [path, cell] : coll.cells) {
                std::optional<size_t> fixed = value_type ? std::optional<size_t>(value_type->value_length_if_fixed()) : std::optional<size_t>(0);
                if (cell.value().size() == fixed.value_or(cell.value().size()) || cell.is_dead_marker()) {
                    continue;
                }
                std::string v(*fixed, '\0');
                auto n = std::min(*fixed, cell.value().size());
                std::copy(cell.value().end() - long(n), cell.value().end(), v.end() - long(n));
                cell = cell.is_expiring()
                           ? atomic_cell::make_expiring(cell.timestamp(), v, cell.ttl(), cell.local_deletion_time())
                           : atomic_cell::make_live(cell.timestamp(), v);
            }
            auto cmp = t.name_comparator();
            out.apply(id, std::move(coll), [cmp](bytes_view a, bytes_view b) { return cmp->compare(a, b); });
        }
        r = std::move(out);
    };
    for (auto& f : fs) {
        if (auto* sr = std::get_if<static_row>(&f)) {
            fix(sr->cells, s->static_columns());
        } else if (auto* cr = std::get_if<clustering_row>(&f)) {
            fix(cr->cells, s->regular_columns());
        }
    }
    return mutations_from_fragments(s, fs).at(0);
}

future<std::vector<mutation_fragment>> read_and_close(mutation_reader r, bool reversed = false) {
    std::exception_ptr err;
    std::vector<mutation_fragment> out;
    try {
        out = co_await read_validated(r, reversed);
    } catch (...) {
        err = std::current_exception();
    }
    co_await r.close();
    if (err) {
        std::rethrow_exception(err);
    }
    co_return out;
}

std::vector<clustering_key_prefix> row_keys(const std::vector<mutation_fragment>& fs) {
    std::vector<clustering_key_prefix> out;
    for (auto& f : fs) {
        if (auto* r = std::get_if<clustering_row>(&f)) {
            out.push_back(r->key);
        }
    }
    return out;
}

struct check_limits {
    size_t partitions;  // sampled per sstable
    size_t wheres;      // per sampled partition
    uint64_t whole_sstable_bytes = uint64_t(1) << 40;  // the whole-sstable query up to this Data.db length
};

struct check_counts {
    size_t sstables = 0, partitions = 0, wheres = 0, rows_selected = 0, reversed_checked = 0, reversed_unsupported = 0;
};

// Everything the file comment says, for one sstable. names: the table (for --schema and column names), or null
// to use the serialization header's.
future<> check_sstable(const descriptor& d, schema_ptr names, std::mt19937_64& rng, check_limits lim,
                       check_counts& counts) {
    auto o = co_await sstables::open_sstable(d);
    std::exception_ptr err;
    try {
        auto rs = schema_from_header(*o->header());
        const schema& ns = names ? *names : *rs;
        bool composite = o->header()->partition_key_type->is_composite();
        query_options base;
        base.now = corpus_now;
        base.schema = names;
        // The whole sstable (when small: the sampled partitions below cover the rest).
        auto dump = one_document(co_await dump_data_json(just(d), corpus_now, nullptr));
        if (o->components().data_length() <= lim.whole_sstable_bytes) {
            auto all = one_document(co_await query_sstables(just(d), base));
            REQUIRE_SAME_TEXT(canonical(all), canonical(dump));
        }
        // Its fragments from the full-scan reader, per partition: the source of the expected slices.
        auto src = make_data_source(o->data_file(), o->components(), 0, o->components().data_length(), integrity_check::no);
        auto full = co_await read_and_close(make_mx_full_scan_reader(rs, o->header(), std::move(src),
                                                                     d.filename(component_type::data),
                                                                     o->components().data_length(),
                                                                     dht::partition_range::full(), o->token()));
        std::vector<std::vector<mutation_fragment>> partitions;
        for (auto& f : full) {
            if (std::holds_alternative<partition_start>(f)) {
                partitions.emplace_back();
            }
            partitions.back().push_back(f);
        }
        BOOST_REQUIRE_EQUAL(partitions.size(), dump.items.size());
        std::vector<clustering_key_prefix> any_keys;
        for (auto& k : row_keys(full)) {
            if (k.size() == ns.clustering_key().size()) {
                any_keys.push_back(k);
            }
        }
        size_t step = std::max<size_t>(1, partitions.size() / std::max<size_t>(1, lim.partitions));
        for (size_t p = rng() % step; p < partitions.size(); p += step) {
            auto& expected_partition = dump.items[p];
            auto key = key_text(*expected_partition.get("partition")->get("key"), composite);
            BOOST_TEST_CONTEXT(d.filename(component_type::data) << " partition " << key) {
                auto q = base;
                q.partition = key;
                auto got = one_document(co_await query_sstables(just(d), q));
                BOOST_REQUIRE_EQUAL(got.items.size(), 1u);
                REQUIRE_SAME_TEXT(canonical(got.items[0]), canonical(expected_partition));
                ++counts.partitions;
                auto& pf = partitions[p];
                auto& ps = std::get<partition_start>(pf.front());
                std::vector<clustering_key_prefix> keys;
                for (auto& k : row_keys(pf)) {
                    if (k.size() == ns.clustering_key().size()) {
                        keys.push_back(k);
                    }
                }
                auto& pool = keys.empty() ? any_keys : keys;
                if (pool.empty() || ns.clustering_key().empty()) {
                    continue;
                }
                for (size_t w = 0; w < lim.wheres; ++w) {
                    auto value = [&](size_t col) { return pool[rng() % pool.size()].to_vector()[col]; };
                    auto where = random_where(ns, rng, value);
                    BOOST_TEST_CONTEXT("--where \"" << where.text << "\"") {
                        auto ranges = cql::clustering_ranges_from_cql(ns, where.text);
                        auto sliced = co_await read_and_close(make_fragment_vector_reader(
                            rs, pf, dht::partition_range::singular(ps.key), streamed_forwarding::no, false, ranges));
                        std::vector<clustering_key_prefix> model;
                        for (auto& k : row_keys(pf)) {
                            if (k.size() == ns.clustering_key().size() && where.matches(k)) {
                                model.push_back(k);
                            }
                        }
                        auto sliced_keys = row_keys(sliced);
                        BOOST_REQUIRE(sliced_keys == model);
                        counts.rows_selected += model.size();
                        q.where = where.text;
                        q.reversed = false;
                        auto text = co_await query_sstables(just(d), q);
                        REQUIRE_SAME_TEXT(text, print_fragments_json(*o->header(), sliced, corpus_now));
                        ++counts.wheres;
                        // Reversed: the read through make_sstable_reader backwards is the same partition, rows
                        // in the opposite order, and the tool prints that stream.
                        std::vector<mutation_fragment> backwards;
                        std::string unsupported;
                        try {
                            auto r = make_sstable_reader(rs, o->read_handles(), reader_permit(),
                                                         {.range = dht::partition_range::singular(ps.key),
                                                          .slice = reverse_ranges(ranges),
                                                          .order = read_order::reversed});
                            backwards = co_await read_and_close(std::move(r), true);
                        } catch (const std::invalid_argument& e) {
                            unsupported = e.what();
                        }
                        q.reversed = true;
                        if (!unsupported.empty()) {
                            BOOST_REQUIRE_MESSAGE(unsupported.find("reversed") != std::string::npos, unsupported);
                            BOOST_CHECK_THROW(co_await query_sstables(just(d), q), std::invalid_argument);
                            ++counts.reversed_unsupported;
                            continue;
                        }
                        BOOST_REQUIRE(canonical_mutations(rs, backwards, true) ==
                                      canonical_mutations(rs, sliced, false));
                        auto back_keys = row_keys(backwards);
                        std::reverse(back_keys.begin(), back_keys.end());
                        BOOST_REQUIRE(back_keys == sliced_keys);
                        auto back_text = co_await query_sstables(just(d), q);
                        REQUIRE_SAME_TEXT(back_text, print_fragments_json(*o->header(), backwards, corpus_now, true));
                        ++counts.reversed_checked;
                    }
                }
            }
        }
        ++counts.sstables;
    } catch (...) {
        err = std::current_exception();
    }
    co_await o->close();
    if (err) {
        std::rethrow_exception(err);
    }
}

void report(const check_counts& c) {
    BOOST_TEST_MESSAGE(c.sstables << " sstables, " << c.partitions << " partitions, " << c.wheres << " slices ("
                                  << c.rows_selected << " rows selected), reversed: " << c.reversed_checked
                                  << " checked, " << c.reversed_unsupported << " not supported yet");
}

} // namespace

REEF_TEST_CASE(query_matches_dump_data_on_the_corpus) {
    uint64_t seed = pick_seed();
    BOOST_TEST_MESSAGE("seed " << seed << " (set REEF_SEED to repeat)");
    std::mt19937_64 rng(seed);
#ifdef REEF_DEBUG
    check_limits lim{3, 2, 16 << 10};
    const uint64_t max_data = 40 << 10;
    const size_t every = 4;  // a quarter of the corpus per run (which quarter depends on the seed)
#else
    check_limits lim{12, 4, 300 << 10};
    const uint64_t max_data = 1100 << 10;  // the five largest (1.2 to 4 MB) take most of a minute
    const size_t every = 1;
#endif
    check_counts counts;
    size_t skipped = 0, n = 0, phase = rng() % every;
    for (auto& c : all_test_sstables()) {
        if (n++ % every != phase) {
            ++skipped;
            continue;
        }
        if (!c.has(component_type::index) || std::filesystem::file_size(c.path(component_type::data)) > max_data) {
            ++skipped;
            continue;
        }
        if (c.desc.version == sstable_version::oa) {
            ++skipped;  // its Statistics.db is not read yet
            continue;
        }
        BOOST_TEST_CONTEXT(c.name()) {
            co_await check_sstable(c.desc, nullptr, rng, lim, counts);
        }
    }
    report(counts);
    BOOST_TEST_MESSAGE(skipped << " sstables skipped");
    BOOST_TEST(counts.sstables > 0u);
    BOOST_TEST(counts.wheres > 0u);
}

REEF_TEST_CASE(query_matches_the_model_on_random_sstables) {
    uint64_t seed = pick_seed();
    BOOST_TEST_MESSAGE("seed " << seed << " (set REEF_SEED to repeat)");
    std::mt19937_64 rng(seed);
#ifdef REEF_DEBUG
    constexpr int cases = 1;
    check_limits lim{4, 3};
#else
    constexpr int cases = 6;
    check_limits lim{12, 8};
#endif
    tmpdir dir;
    int generation = 0;
    check_counts counts;
    for (auto s : random_test_schemas()) {
        mutation_generator g(s, seed);
        for (int i = 0; i < cases; ++i) {
            auto mt = std::make_shared<memtable>(s);
            int partitions = g.rnd(1, 40);
            for (int p = 0; p < partitions; ++p) {
                mt->apply(dumpable(s, with_typed_values(s, g.make(pkey(g.rnd(0, 100000)), g.rnd(0, 1) ? 30 : 6))));
            }
            writer_options o;
            if (i % 2) {
                o.compression.reset();
            }
            o.min_index_interval = g.rnd(1, 8);
            o.column_index_size = g.rnd(0, 1) ? 64 : 64 * 1024;
            descriptor d{dir.path(), sstable_version::me, std::to_string(++generation), "big"};
            {
                auto w = make_memtable_reader(mt, s, read_options{});
                co_await write_sstable(w, s, d, o);
                co_await w.close();
            }
            BOOST_TEST_CONTEXT("seed " << seed << " table " << s->table() << " case " << i) {
                co_await check_sstable(d, s, rng, lim, counts);
            }
        }
    }
    report(counts);
    BOOST_TEST(counts.wheres > 0u);
    BOOST_TEST(counts.rows_selected > 0u);
}

REEF_TEST_CASE(bad_keys_and_relations_are_clear_errors) {
    auto corpus = require_peer_corpus();
    if (!corpus) {
        co_return;
    }
    auto dataset = *corpus / "gen_nb_desc_mixed";
    auto d = descriptor::from_path((dataset / "nb-2-big-Data.db").string());
    auto table = parse_create_table(read_file(dataset / "schema.cql"));
    auto message = [&](query_options q) -> future<std::string> {
        q.now = corpus_now;
        try {
            co_await query_sstables(just(d), q);
        } catch (const std::exception& e) {
            co_return std::string(e.what());
        }
        co_return "(no error)";
    };
    query_options q;
    q.schema = table;
    q.where = "v = 1";
    auto m = co_await message(q);
    BOOST_TEST(m.find("relation `v = 1`: v is a regular column, not a clustering column") != std::string::npos, m);
    q.where = "ck2 > 3";
    m = co_await message(q);
    BOOST_TEST(m.find("relation `ck2 > 3`: ck2 is restricted but ck1 before it is not") != std::string::npos, m);
    // Without --schema the clustering columns are clustering_0, clustering_1.
    q.schema = nullptr;
    q.where = "ck1 = 'a'";
    m = co_await message(q);
    BOOST_TEST(m.find("no column ck1") != std::string::npos, m);
    q.where = "clustering_0 = 'a' AND clustering_1 > 'x'";
    m = co_await message(q);
    BOOST_TEST(m.find("'x' is not a valid int value for clustering_1") != std::string::npos, m);
    q.where = "clustering_0 = 'a' AND clustering_1 > 3";
    m = co_await message(q);
    BOOST_TEST(m == "(no error)");

    // A key of the wrong type, and a composite key (int, text, uuid) with the wrong number of components.
    auto bigint_key = descriptor::from_path((*corpus / "gen_nb_many_partitions" / "nb-2-big-Data.db").string());
    auto composite_key = descriptor::from_path((*corpus / "gen_nb_key_types" / "nb-2-big-Data.db").string());
    auto key_message = [&](descriptor kd, std::string key) -> future<std::string> {
        query_options k;
        k.now = corpus_now;
        k.partition = key;
        try {
            co_await query_sstables(just(kd), k);
        } catch (const std::invalid_argument& e) {
            co_return std::string(e.what());
        }
        co_return "(no error)";
    };
    m = co_await key_message(bigint_key, "abc");
    BOOST_TEST(m.find("--partition 'abc': not a valid key of type bigint") != std::string::npos, m);
    m = co_await key_message(composite_key, "1:x");
    BOOST_TEST(m.find("--partition '1:x': the partition key has 3 columns, the text gives 2") != std::string::npos, m);
    m = co_await key_message(composite_key, "x:y:00000000-0000-0000-0000-000000000000");
    BOOST_TEST(m.find("--partition 'x:y:") != std::string::npos, m);
    query_options k;
    k.partition = "p1:extra";
    // A text key takes any text: no such partition, an empty result.
    k.now = corpus_now;
    BOOST_TEST(co_await query_sstables(just(d), k) == "[ ]\n");
}
