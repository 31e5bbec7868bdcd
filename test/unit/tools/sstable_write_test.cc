// `reef sstable write` and `upgrade`: every corpus sstable's dump written back gives the same dump (positions
// aside: another writer's bytes; a second round gives the same bytes), random mutations dumped and written back
// dump the same, counter values rebuild a context with the same first 8 bytes, bad JSON is an error naming the
// path; upgrade turns mc/md/na/nb corpus sstables into `me` ones with the same dump.
#include "db/memtable.hh"
#include "db/memtable_reader.hh"
#include "mutation/counter.hh"
#include "sstables/sstable.hh"
#include "sstables/writer.hh"
#include "test/lib/random_mutation.hh"
#include "test/lib/reef_test.hh"
#include "test/lib/simple_keys.hh"
#include "test/lib/sstable_corpus.hh"
#include "test/lib/tmpdir.hh"
#include "test/lib/writable_mutation.hh"
#include "sstables/mx_fragments.hh"
#include "sstables/partitioner.hh"
#include "tools/sstable_dump_data.hh"
#include "tools/sstable_rewrite.hh"
#include "tools/sstable_write.hh"

#include <filesystem>
#include <regex>

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

using namespace reef;
using namespace reef::testing;
using namespace reef::sstables;

namespace {

constexpr int64_t dump_now = 1750000000;

// The corpus' dataset names, sorted ({"<no corpus>"} without it: a data test case needs a sample).
std::vector<std::string> dataset_names() {
    std::vector<std::string> out;
    if (auto corpus = peer_corpus_dir()) {
        for (auto& e : std::filesystem::directory_iterator(*corpus)) {
            if (e.is_directory() && e.path().filename().string()[0] != '_') {
                out.push_back(e.path().filename().string());
            }
        }
    }
    std::sort(out.begin(), out.end());
    if (out.empty()) {
        out.push_back("<no corpus>");
    }
    return out;
}

#ifdef REEF_DEBUG
constexpr size_t max_data = 120000;  // ASan: keep each case under ~20 s
constexpr int counter_cases = 1000;
#else
constexpr int counter_cases = 3000;
constexpr size_t max_data = SIZE_MAX;
#endif

// The sstables of one corpus dataset, with its schema.cql when our parser takes it.
std::vector<corpus_sstable> dataset_sstables(const std::filesystem::path& corpus, const std::string& name) {
    std::vector<corpus_sstable> out;
    for (auto& c : sstables_in(corpus)) {
        if (c.dataset.filename() == name) {
            out.push_back(c);
        }
    }
    BOOST_REQUIRE_MESSAGE(!out.empty(), "no sstables in dataset " << name);
    return out;
}

std::string without_positions(const std::string& dump) {
    static const std::regex position(R"("position" : [0-9]+)");
    return std::regex_replace(dump, position, "\"position\" : _");
}

std::vector<descriptor> sstables_of(const std::string& dir) {
    std::vector<std::string> names;
    for (auto& e : std::filesystem::directory_iterator(dir)) {
        if (e.path().string().ends_with("-Data.db")) {
            names.push_back(e.path().string());
        }
    }
    std::sort(names.begin(), names.end(), [](auto& a, auto& b) {
        return descriptor::from_path(a).generation.size() < descriptor::from_path(b).generation.size() ||
               (descriptor::from_path(a).generation.size() == descriptor::from_path(b).generation.size() && a < b);
    });
    std::vector<descriptor> out;
    for (auto& n : names) {
        out.push_back(descriptor::from_path(n));
    }
    return out;
}

// The dump of every sstable of dir, in generation order.
future<std::string> dump_dir(const std::string& dir) {
    auto ds = sstables_of(dir);
    co_return co_await tools::dump_data_json(ds, dump_now);
}

void check_same_dump(const std::string& ours, const std::string& expected, const std::string& what) {
    if (ours == expected) {
        return;
    }
    size_t i = 0;
    while (i < ours.size() && i < expected.size() && ours[i] == expected[i]) {
        ++i;
    }
    auto from = expected.rfind('\n', i);
    from = from == std::string::npos ? 0 : from + 1;
    auto line = [&](const std::string& s) { return s.substr(from, s.find('\n', i) - from); };
    BOOST_ERROR(what << ": dumps differ at byte " << i << "\n  ours:     " << line(ours) << "\n  expected: "
                     << line(expected));
}

// with_typed_values leaves collection cells as generated (1-byte values): a map<int, int> value becomes 4 bytes,
// a set element's value empty, so that the dump can print them.
row typed_collections(const row& r, const std::vector<column_definition>& columns) {
    row out;
    for (auto& [id, c] : r.cells()) {
        if (auto* cell = std::get_if<atomic_cell>(&c)) {
            out.apply(id, *cell);
            continue;
        }
        auto coll = std::get<collection_cells>(c);
        auto& t = *columns.at(id).type;
        for (auto& [path, cell] : coll.cells) {
            if (cell.is_dead_marker()) {
                continue;
            }
            std::string v = t.kind() == type_kind::set ? std::string() : std::string(3, '\0') + std::string(cell.value());
            cell = cell.is_expiring() ? atomic_cell::make_expiring(cell.timestamp(), v, cell.ttl(), cell.local_deletion_time())
                                      : atomic_cell::make_live(cell.timestamp(), v);
        }
        auto cmp = t.name_comparator();
        out.apply(id, std::move(coll), [cmp](bytes_view a, bytes_view b) { return cmp->compare(a, b); });
    }
    return out;
}

void type_collections(const schema& s, std::vector<mutation_fragment>& fragments) {
    for (auto& f : fragments) {
        if (auto* sr = std::get_if<static_row>(&f)) {
            sr->cells = typed_collections(sr->cells, s.static_columns());
        } else if (auto* cr = std::get_if<clustering_row>(&f)) {
            cr->cells = typed_collections(cr->cells, s.regular_columns());
        }
    }
}

} // namespace

// dump-data -> write -> dump-data, for every corpus dataset with the dataset's schema.cql (or the header's
// columns where our CQL parser does not take it) and its partitioner. The dump is the same but for "position"
// (our encoding stats and another writer's layout differ); writing that dump again gives the same bytes.
BOOST_DATA_TEST_CASE(test_corpus_dumps_write_back, boost::unit_test::data::make(dataset_names()), name) {
    auto corpus = require_peer_corpus();
    if (!corpus) {
        return;
    }
    run_in_runtime(test_runtime_config(), [&]() -> future<> {
        auto sstables = dataset_sstables(*corpus, name);
        size_t size = 0;
        for (auto& s : sstables) {
            size += std::filesystem::file_size(s.path(component_type::data));
        }
        if (size > max_data) {
            BOOST_TEST_MESSAGE(name << ": too large for a debug build; written back in dev mode");
            co_return;
        }
        for (auto& c : sstables) {
            if (c.desc.version == sstable_version::oa) {
                BOOST_TEST_MESSAGE(c.name() << ": oa is not read yet");
                continue;
            }
            BOOST_TEST_CONTEXT(c.name()) {
                std::vector<descriptor> one{c.desc};
                auto dump = co_await tools::dump_data_json(one, dump_now);
                auto st = co_await load_statistics(c.desc);
                auto table = c.table ? c.table : schema_from_header(*st.header);
                tools::write_json_options o;
                tmpdir first, second;
                o.output_dir = first.path();
                o.partitioner = st.validation->partitioner;
                auto written = co_await tools::write_sstables_from_json(table, dump, o);
                BOOST_CHECK_EQUAL(written, first.path() + "/me-1-big-Data.db\n");
                auto again = co_await dump_dir(first.path());
                check_same_dump(without_positions(again), without_positions(dump), "first round");
                o.output_dir = second.path();
                co_await tools::write_sstables_from_json(table, again, o);
                auto third = co_await dump_dir(second.path());
                check_same_dump(third, again, "second round");
            }
        }
    });
}

// Random mutations through the writer and dump-data, then written from that JSON: the same dump; written again
// from the second dump, the same bytes (the same data and encoding stats lay out the same bytes).
REEF_TEST_CASE(test_random_mutations_write_back_from_their_dump) {
    // Each case writes three sstables, fsyncs included: these bounds keep the case under ~20 s.
#ifdef REEF_DEBUG
    constexpr int cases = 5;
#else
    constexpr int cases = 20;
#endif
    uint64_t seed = pick_seed();
    BOOST_TEST_MESSAGE("seed " << seed << " (set REEF_SEED to repeat)");
    size_t partitions = 0;
    for (auto s : random_test_schemas()) {
        mutation_generator g(s, seed);
        for (int i = 0; i < cases; ++i) {
            BOOST_TEST_CONTEXT("seed " << seed << " table " << s->table() << " case " << i) {
                auto mt = std::make_shared<memtable>(s);
                int n = g.rnd(0, 20);
                for (int p = 0; p < n; ++p) {
                    mt->apply(with_typed_values(s, g.make(pkey(g.rnd(0, 100000)), g.rnd(0, 1) ? 4 : 30)));
                }
                std::vector<mutation_fragment> fragments;
                {
                    auto reader = make_memtable_reader(mt, s, read_options{});
                    fragments = co_await read_all(reader);
                    co_await reader.close();
                }
                type_collections(*s, fragments);
                encoding_stats_collector c;
                for (auto& f : fragments) {
                    c.update(f);
                }
                tmpdir first, second;
                {
                    auto o = writer_options_for(*s);
                    o.stats = c.get();
                    if (g.rnd(0, 1)) {
                        o.compression.reset();
                    }
                    auto reader = make_fragment_vector_reader(s, fragments);
                    // Named, not braced inside co_await (ARCHITECTURE.md, coroutine rule 2).
                    descriptor d{first.path(), sstable_version::me, "1", "big"};
                    auto w = co_await write_sstable(reader, s, d, o);
                    co_await reader.close();
                    partitions += w.partitions;
                }
                auto dump = co_await dump_dir(first.path());
                tools::write_json_options o;
                o.output_dir = second.path();
                co_await tools::write_sstables_from_json(s, dump, o);
                auto again = co_await dump_dir(second.path());
                // Positions may move: a live cell of a row whose liveness expires prints no TTL when it has the
                // row's, and reads back with the row's, so a non-expiring one becomes expiring (and smaller).
                check_same_dump(without_positions(again), without_positions(dump), "random mutations");
                tmpdir third;
                o.output_dir = third.path();
                co_await tools::write_sstables_from_json(s, again, o);
                check_same_dump(co_await dump_dir(third.path()), again, "random mutations, second round");
            }
            co_await yield();
        }
    }
    BOOST_TEST_MESSAGE(partitions << " partitions");
}

// Every value a real context's first 8 bytes can hold gives a context again; others are refused, not crashed on.
BOOST_AUTO_TEST_CASE(test_counter_contexts_from_their_first_bytes) {
    auto seed = pick_seed();
    BOOST_TEST_MESSAGE("seed " << seed);
    std::mt19937_64 rng(seed);
    auto first8 = [](const std::string& ctx) {
        uint64_t v = 0;
        for (size_t i = 0; i < 8; ++i) {
            v = (v << 8) | uint8_t(ctx[i]);
        }
        return int64_t(v);
    };
    // The corpus' values (scylla_counter_test_*, the legacy counter sets).
    for (int64_t v : {int64_t(703689589359481), int64_t(422215912061195)}) {
        auto ctx = tools::counter_context_with_prefix(v);
        BOOST_REQUIRE(ctx);
        BOOST_CHECK_EQUAL(first8(*ctx), v);
    }
    size_t built = 0;
    for (int i = 0; i < counter_cases; ++i) {
        counter_context_builder b;
        int shards = std::uniform_int_distribution<int>(1, 5)(rng);
        for (int k = 0; k < shards; ++k) {
            counter_id id;
            for (auto& x : id) {
                x = uint8_t(rng());
            }
            auto kind = counter_shard_kind(std::uniform_int_distribution<int>(0, 2)(rng));
            b.add({id, int64_t(rng() % 100), int64_t(rng()), kind});
        }
        auto real = b.build().serialize();
        auto v = first8(real);
        auto ctx = tools::counter_context_with_prefix(v);
        BOOST_REQUIRE_MESSAGE(ctx, "no context for the first bytes of a real one, " << v);
        BOOST_CHECK_EQUAL(first8(*ctx), v);
        BOOST_CHECK_NO_THROW(counter_context::parse(*ctx));
        // Any 64-bit value: a valid context with those bytes, or none.
        int64_t any = int64_t(rng());
        if (auto c = tools::counter_context_with_prefix(any)) {
            BOOST_CHECK_EQUAL(first8(*c), any);
            BOOST_CHECK_NO_THROW(counter_context::parse(*c));
            ++built;
        }
    }
    BOOST_TEST_MESSAGE(built << " of " << counter_cases << " random values have a context");
}

// Each partition's token comes from its own key under either partitioner (regression: the key was moved into the
// decorated key before its token was computed, so every key got the empty key's token and a second partition
// was refused as out of ring order).
BOOST_AUTO_TEST_CASE(test_partitions_get_their_keys_tokens) {
    auto s = schema_builder("ks", "t")
                 .with_column("pk", int32_type(), column_kind::partition_key)
                 .with_column("v", int32_type(), column_kind::regular_column)
                 .build();
    auto part = [](int key) {
        return R"({ "partition" : { "key" : [ ")" + std::to_string(key) +
               R"(" ], "position" : 0 }, "rows" : [ { "type" : "row", "liveness_info" : { "tstamp" : "10" }, )"
               R"("cells" : [ { "name" : "v", "value" : 1 } ] } ] })";
    };
    for (std::string partitioner : {"ByteOrderedPartitioner", "Murmur3Partitioner"}) {
        BOOST_TEST_CONTEXT(partitioner) {
            auto token = partitioner_token_function(partitioner);
            // Three keys in the partitioner's ring order.
            std::vector<int> keys = {1, 2, 3};
            auto token_of = [&](int k) {
                auto b = serialize_be<int32_t>(k);
                return token(bytes_view(reinterpret_cast<const uint8_t*>(b.data()), b.size()));
            };
            std::sort(keys.begin(), keys.end(), [&](int a, int b) { return token_of(a) < token_of(b); });
            std::string json = "[ " + part(keys[0]) + ", " + part(keys[1]) + ", " + part(keys[2]) + " ]";
            auto fs = tools::fragments_from_json(s, utils::parse_json(json), token);
            std::vector<dht::token> got;
            for (auto& f : fs) {
                if (auto* ps = std::get_if<partition_start>(&f)) {
                    got.push_back(ps->key.get_token());
                }
            }
            BOOST_TEST((got == std::vector<dht::token>{token_of(keys[0]), token_of(keys[1]), token_of(keys[2])}));
        }
    }
}

// Bad input names the JSON path and offset of the problem.
BOOST_AUTO_TEST_CASE(test_bad_json_names_the_path) {
    auto s = schema_builder("ks", "t")
                 .with_column("pk", int32_type(), column_kind::partition_key)
                 .with_column("ck", int32_type(), column_kind::clustering_key)
                 .with_column("s", int32_type(), column_kind::static_column)
                 .with_column("v", text_type(), column_kind::regular_column)
                 .with_column("m", map_type(int32_type(), int32_type(), true), column_kind::regular_column)
                 .build();
    auto part = [](std::string key, std::string rows) {
        return R"({ "partition" : { "key" : [ ")" + key + R"(" ], "position" : 0 }, "rows" : [ )" + rows + " ] }";
    };
    auto row = [](std::string ck, std::string cells, std::string extra = "") {
        return R"({ "type" : "row", "clustering" : [ )" + ck + R"( ], "liveness_info" : { "tstamp" : "10" },)" + extra +
               R"( "cells" : [ )" + cells + " ] }";
    };
    // A good one first: it parses.
    auto good = "[ " + part("1", row("1", R"({ "name" : "v", "value" : "a" }, { "name" : "m", "path" : [ "3" ], "value" : 4 })")) + " ]";
    BOOST_CHECK_EQUAL(tools::fragments_from_json(s, utils::parse_json(good)).size(), 3u);
    struct c {
        std::string json;
        std::string where;
    };
    std::vector<c> cases = {
        {"{}", "$ (offset 0): expected an array"},
        {"[ " + part("x", "") + " ]", "$[0].partition.key[0]"},
        {"[ " + part("1", "") + ", " + part("1", "") + " ]", "$[1].partition.key"},
        {"[ " + part("1", row("1", R"({ "name" : "v", "value" : 5 })")) + " ]", "$[0].rows[0].cells[0].value"},
        {"[ " + part("1", row("1", R"({ "name" : "nope", "value" : "a" })")) + " ]", "$[0].rows[0].cells[0].name"},
        {"[ " + part("1", row("1", R"({ "name" : "m", "value" : 1 })")) + " ]", "$[0].rows[0].cells[0]"},
        {"[ " + part("1", row("1", R"({ "name" : "v", "value" : "a", "colour" : 1 })")) + " ]",
         "$[0].rows[0].cells[0].colour"},
        {"[ " + part("1", row("2", "") + ", " + row("1", "")) + " ]", "$[0].rows[1]"},
        {"[ " + part("1", row("1", R"({ "name" : "v", "value" : "a", "tstamp" : "x" })")) + " ]",
         "$[0].rows[0].cells[0].tstamp"},
        {"[ " + part("1", row("1", R"({ "name" : "v", "value" : "a", "ttl" : 5 })")) + " ]", "$[0].rows[0].cells[0]"},
        {"[ " + part("1", R"({ "type" : "range_tombstone_bound", "start" : { "type" : "inclusive", "clustering" : [ 1 ], "deletion_info" : { "marked_deleted" : "5", "local_delete_time" : "7" } } })") + " ]",
         "$[0].rows[0].start"},
        {"[ " + part("1", R"({ "type" : "range_tombstone_bound", "end" : { "type" : "inclusive", "clustering" : [ 1 ], "deletion_info" : { "marked_deleted" : "5", "local_delete_time" : "7" } } })") + " ]",
         "$[0].rows[0].end"},
        {"[ " + part("1", row("1", "") + R"(, { "type" : "static_block", "cells" : [ ] })") + " ]", "$[0].rows[1]"},
        {"[ " + part("1", R"({ "type" : "ro" })") + " ]", "$[0].rows[0].type"},
        {"[ " + part("1", row("1", "", R"( "deletion_info" : { "marked_deleted" : "5" },)")) + " ]",
         "$[0].rows[0].deletion_info"},
    };
    for (auto& [json, where] : cases) {
        BOOST_TEST_CONTEXT(json) {
            try {
                tools::fragments_from_json(s, utils::parse_json(json));
                BOOST_ERROR("accepted");
            } catch (const std::invalid_argument& e) {
                BOOST_CHECK_MESSAGE(std::string(e.what()).starts_with(where), e.what() << " does not start with " << where);
                BOOST_CHECK_MESSAGE(std::string(e.what()).find("(offset ") != std::string::npos, e.what());
            }
        }
    }
}

// upgrade: each mc, md, na and nb corpus sstable becomes a `me` one with the same dump (positions aside); `me`
// ones are skipped unless --all.
BOOST_DATA_TEST_CASE(test_upgrade_writes_me_with_the_same_dump, boost::unit_test::data::make(dataset_names()),
                     name) {
    auto corpus = require_peer_corpus();
    if (!corpus) {
        return;
    }
    run_in_runtime(test_runtime_config(), [&]() -> future<> {
        for (auto& c : dataset_sstables(*corpus, name)) {
            if (c.desc.version == sstable_version::oa ||
                std::filesystem::file_size(c.path(component_type::data)) > max_data) {
                continue;
            }
            BOOST_TEST_CONTEXT(c.name()) {
                tmpdir out;
                tools::upgrade_options o;
                o.output_dir = out.path();
                std::vector<descriptor> one{c.desc};
                auto said = co_await tools::upgrade_sstables(one, o);
                auto written = sstables_of(out.path());
                if (c.desc.version == sstable_version::me) {
                    BOOST_CHECK(written.empty());
                    BOOST_CHECK(said.find("already me") != std::string::npos);
                    o.all = true;
                    said = co_await tools::upgrade_sstables(one, o);
                    written = sstables_of(out.path());
                }
                BOOST_REQUIRE_EQUAL(written.size(), 1u);
                BOOST_CHECK(written[0].version == sstable_version::me);
                BOOST_CHECK_EQUAL(written[0].generation, c.desc.generation);
                BOOST_CHECK_EQUAL(said, c.path(component_type::data) + " -> " + written[0].filename(component_type::data) + "\n");
                BOOST_CHECK_EQUAL(std::filesystem::exists(written[0].filename(component_type::compression_info)),
                                  c.has(component_type::compression_info));
                auto dump = co_await tools::dump_data_json(one, dump_now);
                auto ours = co_await tools::dump_data_json(written, dump_now);
                check_same_dump(without_positions(ours), without_positions(dump), "upgrade");
                // Into a directory where the generation is taken: the next free one.
                said = co_await tools::upgrade_sstables(one, o);
                BOOST_CHECK_EQUAL(sstables_of(out.path()).size(), 2u);
            }
        }
    });
}
