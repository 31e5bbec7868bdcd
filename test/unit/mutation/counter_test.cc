// Tests of counter contexts (mutation/counter.hh): contexts read from a real ScyllaDB sstable, malformed bytes,
// each of CounterContext.merge's rules, counter cell reconciliation, and randomized merge laws and totals.
#include "mutation/counter.hh"
#include "mutation/mutation.hh"
#include "schema/types.hh"
#include "sstables/compression_info.hh"
#include "sstables/compressor.hh"
#include "sstables/version.hh"
#include "schema/value_format.hh"
#include "test/lib/peer_corpus.hh"
#include "test/lib/random_mutation.hh"
#include "test/lib/simple_keys.hh"

#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <map>
#include <random>
#include <vector>

using namespace reef;
using namespace reef::testing;

namespace {

counter_id id_of(int n) {
    counter_id id{};
    id[0] = uint8_t(n * 37);  // not in n order as unsigned bytes for n > 6
    id[15] = uint8_t(n);
    return id;
}

std::string hex(std::string_view v) {
    return hex_encode(to_bytes_view(v));
}

counter_shard shard_of(std::string_view context, const counter_id& id) {
    auto c = counter_context::parse(context);
    for (auto& s : c.shards()) {
        if (s.id == id) {
            return s;
        }
    }
    BOOST_FAIL("no shard " << format_uuid(bytes_view(id.data(), id.size())) << " in " << hex(context));
    return {};
}

std::string merged(std::string_view a, std::string_view b) {
    return merge_counter_contexts(a, b).value;
}

} // namespace

// ScyllaDB's test/resource/sstables/3.x/uncompressed/counters was written by
// `UPDATE ... SET val = val + 1` three times for pk 1, twice for pk 2 and six
// times for pk 3 (the comment over UNCOMPRESSED_COUNTERS_PATH in ScyllaDB's
// sstable_3_x_test.cc), on the node 59b82720-99b0-4033-885c-e94d62106a35.
// Each row's one cell value is a 36-byte context; the offsets are where the
// value starts in the uncompressed Data.db (after the cell's length vint).
BOOST_AUTO_TEST_CASE(test_contexts_from_scylla_sstable) {
    auto corpus = require_peer_corpus();
    if (!corpus) {
        return;
    }
    auto data = read_file(*corpus / "scylla_counters" / "mc-1-big-Data.db");
    BOOST_REQUIRE_EQUAL(data.size(), 187u);
    struct expected_cell {
        size_t offset;
        int64_t total;
    };
    auto host = counter_id_from_uuid("59b82720-99b0-4033-885c-e94d62106a35");
    for (auto [offset, total] : {expected_cell{25, 3}, expected_cell{87, 2}, expected_cell{150, 6}}) {
        BOOST_TEST_CONTEXT("offset " << offset) {
            // The length vint before the value: 36 = 2 + 2 + 32.
            BOOST_REQUIRE_EQUAL(uint8_t(data[offset - 1]), 36);
            std::string_view value(data.data() + offset, 36);
            // expected.json prints the context's first 8 bytes as a long.
            BOOST_CHECK_EQUAL(read_be<int64_t>(reinterpret_cast<const uint8_t*>(value.data())), 422213970306848);
            auto c = counter_context::parse(value);
            BOOST_REQUIRE_EQUAL(c.shards().size(), 1u);
            BOOST_CHECK(c.shards()[0].id == host);
            BOOST_CHECK(c.shards()[0].kind == counter_shard_kind::global);
            BOOST_CHECK(!c.local_marked_to_clear());
            BOOST_CHECK_EQUAL(c.total(), total);
            BOOST_CHECK_EQUAL(counter_total(value), total);
            BOOST_CHECK_EQUAL(hex(c.serialize()), hex(value));
            BOOST_CHECK_EQUAL(counter_cql_literal(value), std::to_string(total));
            BOOST_CHECK(counter_query_value(value) == serialize_be<int64_t>(total));
            BOOST_CHECK_EQUAL(counter_type()->to_cql_literal(counter_query_value(value)), std::to_string(total));
            BOOST_CHECK_EQUAL(hex(counter_context_builder()
                                      .add_global(host, c.shards()[0].clock, total)
                                      .serialize()),
                              hex(value));
            // A context merged with itself (a read of two replicas) is itself.
            auto self = merge_counter_contexts(value, value);
            BOOST_CHECK(self.source == counter_merge_source::left);
            BOOST_CHECK_EQUAL(hex(self.value), hex(value));
        }
    }
}

// ScyllaDB's test/resource/sstables/counter_test holds two-shard counters,
// written (the comment over ScyllaDB's test_counter_read) by node 1:
// c1 += 8, c2 -= 99, c1 += 3 at
// (0, 0), c1 += 42 at (0, 1); node 2: c2 += 7, c1 += 2 at (0, 0), then
// DELETE c1 at (0, 1). A select shows c1 = 13, c2 = -92 at (0, 0). The
// Data.db is one LZ4 chunk; its live cells are the two 70-byte contexts
// (two global shards each), found after their length vint (0x46).
BOOST_AUTO_TEST_CASE(test_two_shard_contexts_from_scylla_sstable) {
    auto corpus = require_peer_corpus();
    if (!corpus) {
        return;
    }
    for (std::string version : {"mc", "md", "me"}) {
        BOOST_TEST_CONTEXT("version " << version) {
            auto dir = *corpus / ("scylla_counter_test_" + version);
            auto prefix = version + "-5-big-";
            auto compressed = read_file(dir / (prefix + "Data.db"));
            auto ci = sstables::parse_compression_info(read_file(dir / (prefix + "CompressionInfo.db")),
                                                       *sstables::parse_version(version), prefix + "CompressionInfo.db",
                                                       compressed.size());
            // One chunk holds everything (ScyllaDB adds an empty one after it).
            BOOST_REQUIRE_GE(ci.chunk_offsets.size(), 1u);
            BOOST_REQUIRE_EQUAL(ci.uncompressed_chunk_length(0), ci.data_length);
            std::string data(ci.data_length, '\0');
            auto first = ci.chunk_offsets[0];
            auto end = ci.chunk_offsets.size() > 1 ? ci.chunk_offsets[1] : compressed.size();
            sstables::decompress_chunk(ci.algorithm, std::string_view(compressed).substr(first, end - first - 4),
                                       data.data(), data.size(), prefix + "Data.db", first);
            const std::string marker("\x46\x00\x02\x80\x00\x80\x01", 7);
            std::vector<std::string_view> contexts;
            for (size_t at = data.find(marker); at != std::string::npos; at = data.find(marker, at + 1)) {
                BOOST_REQUIRE_LE(at + 1 + 70, data.size());
                contexts.push_back(std::string_view(data).substr(at + 1, 70));
            }
            BOOST_REQUIRE_EQUAL(contexts.size(), 2u);
            // expected.json prints each context's first 8 bytes as a long.
            for (auto c : contexts) {
                BOOST_CHECK_EQUAL(read_be<int64_t>(reinterpret_cast<const uint8_t*>(c.data())), 703689589359481);
            }
            auto c1 = counter_context::parse(contexts[0]);
            auto c2 = counter_context::parse(contexts[1]);
            BOOST_CHECK_EQUAL(c1.total(), 13);
            BOOST_CHECK_EQUAL(c2.total(), -92);
            BOOST_CHECK_EQUAL(counter_cql_literal(contexts[1]), "-92");
            BOOST_REQUIRE_EQUAL(c1.shards().size(), 2u);
            BOOST_REQUIRE_EQUAL(c2.shards().size(), 2u);
            for (size_t i = 0; i < 2; ++i) {
                BOOST_CHECK(c1.shards()[i].kind == counter_shard_kind::global);
                // The same two nodes wrote both columns.
                BOOST_CHECK(c1.shards()[i].id == c2.shards()[i].id);
            }
            BOOST_CHECK_EQUAL(hex(c1.serialize()), hex(contexts[0]));
            BOOST_CHECK_EQUAL(hex(c2.serialize()), hex(contexts[1]));
            // Each node's shard of c1 alone, merged back, is c1.
            auto node_a = counter_context_builder().add(c1.shards()[0]).serialize();
            auto node_b = counter_context_builder().add(c1.shards()[1]).serialize();
            BOOST_CHECK_EQUAL(hex(merged(node_a, node_b)), hex(contexts[0]));
            BOOST_CHECK(merge_counter_contexts(contexts[0], node_b).source == counter_merge_source::left);
        }
    }
}

BOOST_AUTO_TEST_CASE(test_layout) {
    // One global shard at index 1 and one local at index 2; index 0 remote.
    auto c = counter_context_builder()
                 .add_local(id_of(3), 4, 5)
                 .add_remote(id_of(1), 7, -2)
                 .add_global(id_of(2), 9, 100)
                 .build();
    std::string v = c.serialize();
    BOOST_REQUIRE_EQUAL(v.size(), 2u + 2 * 2 + 3 * 32);
    // Header: count 2, then 1 + Short.MIN_VALUE (0x8001) and 2.
    BOOST_CHECK_EQUAL(hex(v.substr(0, 6)), "000280010002");
    BOOST_CHECK_EQUAL(hex(v.substr(6, 16)), hex(std::string(reinterpret_cast<const char*>(id_of(1).data()), 16)));
    BOOST_CHECK_EQUAL(hex(v.substr(22, 16)), "0000000000000007fffffffffffffffe");
    BOOST_CHECK_EQUAL(c.total(), 103);
    BOOST_CHECK(counter_context::parse(v) == c);
    BOOST_CHECK_EQUAL(to_string(c), "[{25000000-0000-0000-0000-000000000001, 7, -2},"
                                    "{4a000000-0000-0000-0000-000000000002, 9, 100}$,"
                                    "{6f000000-0000-0000-0000-000000000003, 4, 5}*]");
    // A negative header count (markLocalToBeCleared) reads the same shards.
    std::string marked = v;
    marked[0] = char(0xff);
    marked[1] = char(0xfe);
    auto m = counter_context::parse(marked);
    BOOST_CHECK(m.local_marked_to_clear());
    BOOST_CHECK(m.shards() == c.shards());
    BOOST_CHECK_EQUAL(hex(m.serialize()), hex(marked));
    // The empty context (no shards) totals 0.
    BOOST_CHECK_EQUAL(counter_total(std::string(2, '\0')), 0);
    // Totals wrap as Java longs.
    auto big = counter_context_builder()
                   .add_global(id_of(1), 1, std::numeric_limits<int64_t>::max())
                   .add_global(id_of(2), 1, 2)
                   .serialize();
    BOOST_CHECK_EQUAL(counter_total(big), std::numeric_limits<int64_t>::min() + 1);
    BOOST_CHECK_THROW(counter_context_builder().add_global(id_of(1), 1, 1).add_remote(id_of(1), 2, 2).build(),
                      std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(test_malformed_contexts) {
    std::string good = counter_context_builder().add_global(id_of(1), 1, 1).add_local(id_of(2), 1, 1).serialize();
    auto with = [&](size_t at, std::initializer_list<uint8_t> b) {
        std::string v = good;
        for (auto x : b) {
            v[at++] = char(x);
        }
        return v;
    };
    auto rejects = [](std::string_view v, std::string_view what) {
        BOOST_TEST_CONTEXT(hex(v)) {
            try {
                counter_context::parse(v);
                BOOST_ERROR("accepted");
            } catch (const marshal_exception& e) {
                BOOST_CHECK_MESSAGE(std::string_view(e.what()).find(what) != std::string_view::npos, e.what());
            }
            // Every entry point checks.
            BOOST_CHECK_THROW(counter_total(v), marshal_exception);
            BOOST_CHECK_THROW(merge_counter_contexts(v, v), marshal_exception);
        }
    };
    rejects("", "shorter than its 2-byte header");
    rejects(std::string(1, '\0'), "shorter than its 2-byte header");
    rejects(good.substr(0, 5), "header");
    rejects(good.substr(0, good.size() - 1), "Invalid size");
    rejects(good + "x", "Invalid size");
    rejects(with(0, {0x00, 0x03}), "Invalid size");           // 3 header elements leave 62 bytes
    rejects(with(2, {0x00, 0x01, 0x80, 0x00}), "header element 1");  // indices out of order
    rejects(with(4, {0x80, 0x00}), "header element 1");        // index 0 twice
    rejects(with(4, {0x00, 0x02}), "header element 1");        // no shard 2
    rejects(with(2, {0x7f, 0xff}), "header element 0");
    // Unsorted and repeated ids.
    std::string swapped = good;
    std::swap_ranges(swapped.begin() + 6, swapped.begin() + 22, swapped.begin() + 38);
    rejects(swapped, "does not sort after");
    std::string repeated = good;
    std::copy(good.begin() + 6, good.begin() + 22, repeated.begin() + 38);
    rejects(repeated, "does not sort after");
}

BOOST_AUTO_TEST_CASE(test_merge_rules) {
    auto a = id_of(1);
    auto one = [&](counter_shard_kind k, int64_t clock, int64_t count) {
        return counter_context_builder().add({a, clock, count, k}).serialize();
    };
    using k = counter_shard_kind;
    // global + global: the higher clock, whatever the counts.
    BOOST_CHECK(shard_of(merged(one(k::global, 5, 1), one(k::global, 4, 9)), a).clock == 5);
    BOOST_CHECK(shard_of(merged(one(k::global, 4, 9), one(k::global, 5, 1)), a).clock == 5);
    // Equal clocks, different counts: the higher count (the self-heal).
    BOOST_CHECK_EQUAL(shard_of(merged(one(k::global, 5, 1), one(k::global, 5, 7)), a).count, 7);
    BOOST_CHECK_EQUAL(shard_of(merged(one(k::global, 5, 7), one(k::global, 5, 1)), a).count, 7);
    // global beats local and remote, even with a lower clock.
    for (auto other : {k::local, k::remote}) {
        auto g = one(k::global, 1, 3);
        BOOST_CHECK(shard_of(merged(g, one(other, 9, 8)), a) == (counter_shard{a, 1, 3, k::global}));
        BOOST_CHECK(shard_of(merged(one(other, 9, 8), g), a) == (counter_shard{a, 1, 3, k::global}));
    }
    // local + local: clocks and counts add.
    BOOST_CHECK(shard_of(merged(one(k::local, 2, 3), one(k::local, 4, 5)), a) == (counter_shard{a, 6, 8, k::local}));
    // local beats remote.
    BOOST_CHECK(shard_of(merged(one(k::remote, 9, 9), one(k::local, 1, 1)), a) == (counter_shard{a, 1, 1, k::local}));
    // remote + remote: the higher clock; a negative clock beats positive
    // ones, the more negative the stronger; equal clocks: the higher count.
    BOOST_CHECK_EQUAL(shard_of(merged(one(k::remote, 3, 1), one(k::remote, 2, 5)), a).clock, 3);
    BOOST_CHECK_EQUAL(shard_of(merged(one(k::remote, 3, 1), one(k::remote, -1, 5)), a).clock, -1);
    BOOST_CHECK_EQUAL(shard_of(merged(one(k::remote, -1, 1), one(k::remote, 3, 5)), a).clock, -1);
    BOOST_CHECK_EQUAL(shard_of(merged(one(k::remote, -1, 1), one(k::remote, -4, 5)), a).clock, -4);
    BOOST_CHECK_EQUAL(shard_of(merged(one(k::remote, 2, 1), one(k::remote, 2, 5)), a).count, 5);
    // Cassandra's expression leaves clock 0 against a positive clock to the
    // right-hand side; Reef keeps that.
    BOOST_CHECK_EQUAL(shard_of(merged(one(k::remote, 0, 1), one(k::remote, 3, 5)), a).clock, 3);
    BOOST_CHECK_EQUAL(shard_of(merged(one(k::remote, 3, 5), one(k::remote, 0, 1)), a).clock, 0);

    // Disjoint ids: the union, sorted, header rebuilt.
    auto b = id_of(2);
    auto left = counter_context_builder().add_global(b, 1, 10).serialize();
    auto right = counter_context_builder().add_local(a, 1, 20).serialize();
    auto m = merge_counter_contexts(left, right);
    BOOST_CHECK(m.source == counter_merge_source::merged);
    BOOST_CHECK_EQUAL(hex(m.value), hex(counter_context_builder().add_global(b, 1, 10).add_local(a, 1, 20).serialize()));
    BOOST_CHECK_EQUAL(counter_total(m.value), 30);

    // A superset comes back as its own bytes: here with its header count
    // negative, which a rebuilt context would not keep.
    auto sup = counter_context_builder().add_global(a, 3, 1).add_local(b, 1, 1).serialize();
    sup[0] = char(0xff);
    sup[1] = char(0xfe);
    auto sub = counter_context_builder().add_global(a, 2, 1).serialize();
    auto r1 = merge_counter_contexts(sup, sub);
    BOOST_CHECK(r1.source == counter_merge_source::left);
    BOOST_CHECK_EQUAL(hex(r1.value), hex(sup));
    auto r2 = merge_counter_contexts(sub, sup);
    BOOST_CHECK(r2.source == counter_merge_source::right);
    BOOST_CHECK_EQUAL(hex(r2.value), hex(sup));
    // Two local shards are never a superset of each other.
    auto loc = counter_context_builder().add_local(a, 1, 1).serialize();
    BOOST_CHECK(merge_counter_contexts(loc, loc).source == counter_merge_source::merged);
    BOOST_CHECK_EQUAL(counter_total(merged(loc, loc)), 2);
}

BOOST_AUTO_TEST_CASE(test_reconcile_counter_cells) {
    auto a = id_of(1), b = id_of(2);
    auto ca = atomic_cell::make_live(10, counter_context_builder().add_global(a, 2, 5).serialize());
    auto cb = atomic_cell::make_live(20, counter_context_builder().add_global(b, 1, 7).serialize());
    // Two counter cells: the merged context at the greater timestamp.
    for (auto [x, y] : {std::pair{ca, cb}, std::pair{cb, ca}}) {
        auto r = reconcile_counter(x, y);
        BOOST_CHECK_EQUAL(r.timestamp(), 20);
        BOOST_CHECK(!r.is_expiring() && r.is_live(0));
        BOOST_CHECK_EQUAL(counter_total(r.value()), 12);
    }
    // A tombstone beats a counter cell even when older (CASSANDRA-7346).
    auto old_tomb = atomic_cell::make_dead(1, 100);
    BOOST_CHECK(reconcile_counter(cb, old_tomb) == old_tomb);
    BOOST_CHECK(reconcile_counter(old_tomb, cb) == old_tomb);
    // Two tombstones: the regular rules (later timestamp, then deletion time).
    auto new_tomb = atomic_cell::make_dead(1, 200);
    BOOST_CHECK(reconcile_counter(old_tomb, new_tomb) == new_tomb);
    BOOST_CHECK(reconcile_counter(new_tomb, old_tomb) == new_tomb);
    // An empty value (an unqueried column) wins over a context; two empty
    // ones: the later, the right one on a tie.
    auto empty_old = atomic_cell::make_live(1, "");
    BOOST_CHECK(reconcile_counter(cb, empty_old) == empty_old);
    BOOST_CHECK(reconcile_counter(empty_old, cb) == empty_old);
    auto empty_new = atomic_cell::make_live(5, "");
    BOOST_CHECK(reconcile_counter(empty_new, empty_old) == empty_new);
    BOOST_CHECK(reconcile_counter(empty_old, empty_new) == empty_new);
    // A superset with the greater timestamp comes back as it is; a superset
    // with the lower timestamp takes the other's timestamp.
    auto newer = atomic_cell::make_live(30, counter_context_builder().add_global(a, 3, 6).serialize());
    BOOST_CHECK(reconcile_counter(ca, newer) == newer);
    auto older_sup = atomic_cell::make_live(5, counter_context_builder().add_global(a, 3, 6).serialize());
    auto r = reconcile_counter(ca, older_sup);
    BOOST_CHECK_EQUAL(r.timestamp(), 10);
    BOOST_CHECK(r.value() == older_sup.value());
    // Malformed contexts fail the merge with the context error.
    BOOST_CHECK_THROW(reconcile_counter(ca, atomic_cell::make_live(1, "xyz")), marshal_exception);
}

namespace {

schema_ptr counter_schema() {
    return schema_builder("ks", "counters")
        .with_column("pk", int32_type(), column_kind::partition_key)
        .with_column("ck", int32_type(), column_kind::clustering_key)
        .with_column("s", counter_type(), column_kind::static_column)
        .with_column("c1", counter_type(), column_kind::regular_column)
        .with_column("c2", counter_type(), column_kind::regular_column)
        .build();
}

// Random contexts over ids 1..5: kinds as asked, clocks in [-2, 3] but 0
// (see the clock-0 rule above), counts in [-3, 3], so ties are frequent.
std::string random_context(std::mt19937_64& rng, bool with_locals) {
    auto rnd = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    counter_context_builder b;
    for (int id = 1; id <= 5; ++id) {
        if (rnd(0, 2) == 0) {
            continue;
        }
        int kind = rnd(0, with_locals ? 2 : 1);
        int clock = rnd(-2, 2);
        clock = clock >= 0 ? clock + 1 : clock;
        b.add({id_of(id), clock, rnd(-3, 3),
               kind == 0 ? counter_shard_kind::global : kind == 1 ? counter_shard_kind::remote : counter_shard_kind::local});
    }
    return b.serialize();
}

atomic_cell random_counter_cell(std::mt19937_64& rng) {
    auto rnd = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    if (rnd(0, 5) == 0) {
        return atomic_cell::make_dead(rnd(0, 4), rnd(0, 2));
    }
    return atomic_cell::make_live(rnd(0, 4), random_context(rng, true));
}

} // namespace

BOOST_AUTO_TEST_CASE(test_merge_laws_random) {
    uint64_t seed = pick_seed();
    BOOST_TEST_MESSAGE("seed " << seed << " (set REEF_SEED to repeat)");
    std::mt19937_64 rng(seed);
    for (int i = 0; i < 5000; ++i) {
        bool with_locals = i % 2;
        auto a = random_context(rng, with_locals);
        auto b = random_context(rng, with_locals);
        auto c = random_context(rng, with_locals);
        BOOST_TEST_CONTEXT("seed " << seed << " case " << i << " a=" << to_string(counter_context::parse(a))
                                   << " b=" << to_string(counter_context::parse(b))
                                   << " c=" << to_string(counter_context::parse(c))) {
            BOOST_CHECK_EQUAL(hex(merged(a, b)), hex(merged(b, a)));
            BOOST_CHECK_EQUAL(hex(merged(merged(a, b), c)), hex(merged(a, merged(b, c))));
            auto aa = counter_context::parse(merged(a, a));
            auto pa = counter_context::parse(a);
            if (!with_locals) {
                BOOST_CHECK_EQUAL(hex(merged(a, a)), hex(a));
            }
            // Merging with itself doubles exactly the local shards.
            BOOST_REQUIRE_EQUAL(aa.shards().size(), pa.shards().size());
            for (size_t s = 0; s < pa.shards().size(); ++s) {
                auto want = pa.shards()[s];
                if (want.kind == counter_shard_kind::local) {
                    want.clock *= 2;
                    want.count *= 2;
                }
                BOOST_CHECK(aa.shards()[s] == want);
            }
            // The result parses, and its total is the winners' counts.
            auto m = counter_context::parse(merged(a, b));
            BOOST_CHECK_EQUAL(hex(m.serialize()), hex(merged(a, b)));
            // Counter cells: commutative and associative whatever the mix of
            // tombstones and contexts.
            auto x = random_counter_cell(rng), y = random_counter_cell(rng), z = random_counter_cell(rng);
            BOOST_CHECK(reconcile_counter(x, y) == reconcile_counter(y, x));
            BOOST_CHECK(reconcile_counter(reconcile_counter(x, y), z) == reconcile_counter(x, reconcile_counter(y, z)));
            BOOST_CHECK(reconcile_counter(x, x) == x || !x.is_dead_marker());
        }
    }
}

// The totals of a real counter: nodes 1..4 each keep a global shard whose
// clock counts their increments and whose count is their running sum.
// Replicas hold snapshots (each node's shard at some clock); merging any
// of them in any order totals the sum over nodes at their latest clock.
BOOST_AUTO_TEST_CASE(test_totals_random) {
    uint64_t seed = pick_seed();
    BOOST_TEST_MESSAGE("seed " << seed << " (set REEF_SEED to repeat)");
    std::mt19937_64 rng(seed);
    auto rnd = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    for (int i = 0; i < 2000; ++i) {
        // running[node][clock]: the node's count after `clock` increments.
        std::vector<std::vector<int64_t>> running(4, std::vector<int64_t>{0});
        for (auto& r : running) {
            int n = rnd(1, 6);
            for (int k = 0; k < n; ++k) {
                r.push_back(r.back() + rnd(-1000, 1000));
            }
        }
        std::vector<std::string> snapshots;
        std::vector<int> latest(4, 0);
        for (int s = rnd(1, 5); s > 0; --s) {
            counter_context_builder b;
            for (int node = 0; node < 4; ++node) {
                if (rnd(0, 2) == 0) {
                    continue;
                }
                int clock = rnd(1, int(running[node].size()) - 1);
                latest[node] = std::max(latest[node], clock);
                b.add_global(id_of(node + 1), clock, running[node][size_t(clock)]);
            }
            snapshots.push_back(b.serialize());
        }
        int64_t expected = 0;
        for (int node = 0; node < 4; ++node) {
            expected += running[node][size_t(latest[node])];
        }
        std::shuffle(snapshots.begin(), snapshots.end(), rng);
        auto acc = snapshots.front();
        for (size_t s = 1; s < snapshots.size(); ++s) {
            acc = merged(acc, snapshots[s]);
        }
        BOOST_TEST_CONTEXT("seed " << seed << " case " << i) {
            BOOST_CHECK_EQUAL(counter_total(acc), expected);
            BOOST_CHECK_EQUAL(counter_cql_literal(acc), std::to_string(expected));
        }
    }
}

// mutation::apply reconciles a counter column's cells by the counter rules,
// so merging versions in any order gives one mutation.
BOOST_AUTO_TEST_CASE(test_counter_mutations_merge) {
    auto s = counter_schema();
    BOOST_REQUIRE(s->regular_columns()[0].type->is_counter());
    uint64_t seed = pick_seed();
    BOOST_TEST_MESSAGE("seed " << seed << " (set REEF_SEED to repeat)");
    std::mt19937_64 rng(seed);
    auto rnd = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    for (int i = 0; i < 500; ++i) {
        std::vector<mutation> versions;
        for (int v = rnd(2, 4); v > 0; --v) {
            mutation m(s, pkey(1));
            if (rnd(0, 4) == 0) {
                m.partition().apply(tombstone{rnd(0, 4), rnd(0, 2)});
            }
            if (rnd(0, 1)) {
                m.partition().apply_static(*s, 0, random_counter_cell(rng));
            }
            for (int r = rnd(0, 3); r > 0; --r) {
                deletable_row row;
                if (rnd(0, 5) == 0) {
                    row.tomb = tombstone{rnd(0, 4), rnd(0, 2)};
                }
                for (column_id c = 0; c < 2; ++c) {
                    if (rnd(0, 2)) {
                        row.cells.apply(c, random_counter_cell(rng));
                    }
                }
                m.partition().apply_row(*s, ck(rnd(0, 3)), row);
            }
            versions.push_back(std::move(m));
        }
        auto merge_all = [&] {
            mutation acc(s, pkey(1));
            for (auto& v : versions) {
                acc.apply(v);
            }
            return acc;
        };
        auto first = merge_all();
        std::shuffle(versions.begin(), versions.end(), rng);
        auto second = merge_all();
        BOOST_TEST_CONTEXT("seed " << seed << " case " << i) {
            BOOST_CHECK_MESSAGE(first == second, to_string(first) << "\n" << to_string(second));
            // Each cell is the reconciliation of its versions.
            for (auto& [key, r] : first.partition().rows()) {
                for (auto& [id, c] : r.cells.cells()) {
                    std::optional<atomic_cell> want;
                    for (auto& v : versions) {
                        auto it = v.partition().rows().find(key);
                        if (it == v.partition().rows().end()) {
                            continue;
                        }
                        if (auto* vc = it->second.cells.find(id)) {
                            auto& cell = std::get<atomic_cell>(*vc);
                            want = want ? reconcile_counter(*want, cell) : cell;
                        }
                    }
                    BOOST_REQUIRE(want);
                    BOOST_CHECK(std::get<atomic_cell>(c) == *want);
                }
            }
        }
    }
    // The plain case: two increments from two nodes total their sum, and a
    // delete beats a later increment.
    mutation a(s, pkey(1)), b(s, pkey(1)), d(s, pkey(1));
    a.partition().apply_row(*s, ck(0), deletable_row{{}, {}, [] { row r; r.apply(0, atomic_cell::make_live(5, counter_context_builder().add_global(id_of(1), 1, 2).serialize())); return r; }()});
    b.partition().apply_row(*s, ck(0), deletable_row{{}, {}, [] { row r; r.apply(0, atomic_cell::make_live(6, counter_context_builder().add_global(id_of(2), 1, 40).serialize())); return r; }()});
    a.apply(b);
    auto& cell = std::get<atomic_cell>(*a.partition().rows().begin()->second.cells.find(0));
    BOOST_CHECK_EQUAL(counter_cql_literal(cell.value()), "42");
    BOOST_CHECK_EQUAL(cell.timestamp(), 6);
    d.partition().apply_row(*s, ck(0), deletable_row{{}, {}, [] { row r; r.apply(0, atomic_cell::make_dead(1, 7)); return r; }()});
    a.apply(d);
    BOOST_CHECK(std::get<atomic_cell>(*a.partition().rows().begin()->second.cells.find(0)).is_dead_marker());
}
