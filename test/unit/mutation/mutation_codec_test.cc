// Tests of the mutation encoding: random mutations round trip, counters too; bytes of an altered table decode
// with the dropped columns' cells skipped (against a by-name model); truncated bytes always throw the codec's
// error, flipped bytes never crash.
#include "mutation/mutation_codec.hh"
#include "schema/schema.hh"
#include "test/lib/random_mutation.hh"
#include "test/lib/simple_keys.hh"

#include <boost/test/unit_test.hpp>
#include <random>
#include <string>

using namespace reef;
using testing::for_random_cases;
using testing::int_value;

namespace {

table_id test_id(uint8_t b) {
    table_id id{};
    id.fill(b);
    return id;
}

// The random test schema with a fixed id.
schema_ptr with_id(const schema_ptr& s, uint8_t b) {
    schema_builder sb(s->keyspace(), s->table());
    sb.with_id(test_id(b));
    for (auto* c : s->columns_in_declaration_order()) {
        sb.with_column(c->name, c->type, c->kind, c->order);
    }
    return sb.build();
}

// m's cells moved by column name into schema `to` (a model of ALTER TABLE: columns `to` lacks, or has with
// another shape, lose their cells).
mutation translate(const mutation& m, schema_ptr to) {
    const schema& from = *m.schema();
    mutation out(to, m.decorated_key());
    auto& p = out.partition();
    p.apply(m.partition().partition_tombstone());
    auto move_row = [&](const row& r, bool is_static) {
        row res;
        auto& fcols = is_static ? from.static_columns() : from.regular_columns();
        auto& tcols = is_static ? to->static_columns() : to->regular_columns();
        for (auto& [id, c] : r.cells()) {
            for (column_id t = 0; t < tcols.size(); ++t) {
                if (tcols[t].name == fcols[id].name && tcols[t].is_complex() == fcols[id].is_complex()) {
                    apply_cell(res, t, c, tcols);
                }
            }
        }
        return res;
    };
    auto statics = move_row(m.partition().static_row(), true);
    for (auto& [id, c] : statics.cells()) {
        p.apply_static(*to, id, c);
    }
    for (auto& [k, r] : m.partition().rows()) {
        p.apply_row(*to, k, deletable_row{r.marker, r.tomb, move_row(r.cells, false)});
    }
    for (auto& e : m.partition().range_tombstones()) {
        p.apply_range_tombstone(e.start, e.end, e.tomb);
    }
    return out;
}

} // namespace

BOOST_AUTO_TEST_SUITE(mutation_codec)

BOOST_AUTO_TEST_CASE(random_round_trip) {
    int k = 0;
    for_random_cases(300, [&](schema_ptr s0, testing::mutation_generator& g) {
        auto s = with_id(s0, 7);
        testing::mutation_generator g2(s, g.rng()());
        auto m = g2.make(testing::pkey(k++), 8);
        auto b = encode_mutation(m);
        BOOST_TEST((encoded_mutation_table_id(b) == s->id()));
        auto back = decode_mutation(s, b);
        BOOST_TEST((back == m), to_string(m) << " came back as " << to_string(back));
        BOOST_TEST((encode_mutation(back) == b));
    });
}

BOOST_AUTO_TEST_CASE(counters_round_trip) {
    auto s = schema_builder("ks", "c")
                 .with_id(test_id(3))
                 .with_column("pk", int32_type(), column_kind::partition_key)
                 .with_column("ck", int32_type(), column_kind::clustering_key)
                 .with_column("hits", counter_type(), column_kind::regular_column)
                 .with_column("misses", counter_type(), column_kind::regular_column)
                 .build();
    std::mt19937_64 rng(testing::pick_seed());
    for (int i = 0; i < 50; ++i) {
        mutation m(s, testing::pkey(i));
        for (int r = 0; r < 5; ++r) {
            deletable_row dr;
            for (column_id c = 0; c < 2; ++c) {
                // One global shard: header n = 1, element 0 | 0x8000, then id, clock, count.
                std::string ctx = {'\0', '\1', char(0x80), '\0'};
                ctx += std::string(16, char(rng() % 4));
                for (int64_t v : {int64_t(rng() % 100), int64_t(rng() % 1000) - 500}) {
                    for (int b = 7; b >= 0; --b) {
                        ctx.push_back(char(uint64_t(v) >> (8 * b)));
                    }
                }
                apply_cell(dr.cells, c, atomic_cell::make_live(int64_t(rng() % 10), ctx), s->regular_columns());
            }
            m.partition().apply_row(*s, testing::ck(int(rng() % 10)), dr);
        }
        auto back = decode_mutation(s, encode_mutation(m));
        BOOST_TEST((back == m), to_string(m));
    }
}

BOOST_AUTO_TEST_CASE(decodes_after_alter_table) {
    // ks.t's columns: s (static int), v (int), m (map<int, int>). After: s dropped, s2 added; v re-added as
    // a map (its old cells are not its new ones), m kept, z added.
    auto before = with_id(testing::random_test_schema(), 9);
    auto after = schema_builder("ks", "t")
                     .with_id(test_id(9))
                     .with_column("pk", int32_type(), column_kind::partition_key)
                     .with_column("ck", int32_type(), column_kind::clustering_key)
                     .with_column("s2", int32_type(), column_kind::static_column)
                     .with_column("v", map_type(int32_type(), int32_type(), true), column_kind::regular_column)
                     .with_column("m", map_type(int32_type(), int32_type(), true), column_kind::regular_column)
                     .with_column("z", text_type(), column_kind::regular_column)
                     .build();
    testing::mutation_generator g(before, testing::pick_seed());
    for (int i = 0; i < 300; ++i) {
        auto m = g.make(testing::pkey(i), 6);
        auto back = decode_mutation(after, encode_mutation(m));
        auto expected = translate(m, after);
        BOOST_TEST((back == expected), to_string(m) << " came back as " << to_string(back));
        // And back to the older schema: the added columns were never written, m's cells survive.
        auto there = decode_mutation(before, encode_mutation(back));
        BOOST_TEST((there == translate(back, before)));
    }
}

BOOST_AUTO_TEST_CASE(wrong_table_id_is_an_error) {
    auto s = with_id(testing::random_test_schema(), 1);
    auto other = with_id(testing::random_test_schema(), 2);
    testing::mutation_generator g(s, 1);
    auto b = encode_mutation(g.make(testing::pkey(1)));
    BOOST_CHECK_EXCEPTION(decode_mutation(other, b), mutation_codec_error, [](const mutation_codec_error& e) {
        return std::string(e.what()).find("not the schema's") != std::string::npos;
    });
}

BOOST_AUTO_TEST_CASE(truncated_and_flipped_bytes) {
    uint64_t decoded_anyway = 0, thrown = 0;
    for_random_cases(60, [&](schema_ptr s0, testing::mutation_generator& g) {
        auto s = with_id(s0, 5);
        testing::mutation_generator g2(s, g.rng()());
        auto b = encode_mutation(g2.make(testing::pkey(g.rnd(0, 100)), 6));
        // Every proper prefix throws the codec's error.
        for (size_t n = 0; n < b.size(); ++n) {
            BOOST_CHECK_THROW(decode_mutation(s, bytes_view(b.data(), n)), mutation_codec_error);
        }
        // Extra bytes are an error too.
        auto longer = b;
        longer.push_back(0);
        BOOST_CHECK_THROW(decode_mutation(s, longer), mutation_codec_error);
        // Flipped bits: the codec's error or some mutation, never a crash or another exception.
        for (int i = 0; i < 40; ++i) {
            auto bad = b;
            int flips = g.rnd(1, 3);
            for (int f = 0; f < flips; ++f) {
                bad[g.rnd(0, int(bad.size()) - 1)] ^= uint8_t(1u << g.rnd(0, 7));
            }
            try {
                (void)decode_mutation(s, bad);
                ++decoded_anyway;
            } catch (const mutation_codec_error&) {
                ++thrown;
            }
        }
    });
    BOOST_TEST_MESSAGE("flipped: " << thrown << " rejected, " << decoded_anyway << " decoded as other data");
    BOOST_TEST(thrown > 0u);
}

BOOST_AUTO_TEST_SUITE_END()
