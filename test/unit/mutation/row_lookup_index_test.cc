// Tests of the row lookup index (mutation/row_lookup_index.hh): the normalized prefix against the clustering
// comparator on every pair of random keys, and mutation_partition::rows_lower_bound against the map's own
// lower_bound for random probes, over random schemas of every clustering type with a form (ASC and DESC, with
// ties on the first 8 bytes), interleaved with the writes that must drop the index.
#include "mutation/mutation_partition.hh"
#include "mutation/row_lookup_index.hh"

#include "test/lib/random_mutation.hh"

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

using namespace reef;

namespace {

bytes be(uint64_t v, size_t n) {
    bytes out(n);
    for (size_t i = 0; i < n; ++i) {
        out[n - 1 - i] = uint8_t(v >> (8 * i));
    }
    return out;
}

template <typename T>
T pick(std::mt19937_64& rng, std::initializer_list<T> l) {
    return *(l.begin() + rng() % l.size());
}

// Few distinct values per type, the extremes among them, so equal values and equal prefixes are frequent.
struct value_source {
    data_type type;    // as compared (reversed_type for DESC)
    bool bad_sizes;    // may give values of a size the type never has (types whose compare accepts them)

    bytes operator()(std::mt19937_64& rng) const {
        if (rng() % 10 == 0) {
            return {};
        }
        const abstract_type& t = type->is_reversed() ? *type->underlying_type() : *type;
        auto signed_value = [&](size_t w) {
            int64_t lo = w == 8 ? std::numeric_limits<int64_t>::min() : -(int64_t(1) << (8 * w - 1));
            int64_t hi = w == 8 ? std::numeric_limits<int64_t>::max() : (int64_t(1) << (8 * w - 1)) - 1;
            int64_t v = pick<int64_t>(rng, {lo, lo + 1, -1, 0, 1, hi - 1, hi, int64_t(rng() % 7) - 3, int64_t(rng() % 300) - 150});
            v = std::clamp(v, lo, hi);
            return be(uint64_t(v), w);
        };
        if (bad_sizes && rng() % 20 == 0) {
            bytes odd(1 + rng() % 10);
            for (auto& b : odd) {
                b = uint8_t(pick<int>(rng, {0, 1, 0x7f, 0x80, 0xff}));
            }
            return odd;
        }
        switch (t.kind()) {
        case type_kind::bigint:
        case type_kind::timestamp: return signed_value(8);
        case type_kind::int32: return signed_value(4);
        case type_kind::smallint: return signed_value(2);
        case type_kind::tinyint: return signed_value(1);
        case type_kind::date: return be(pick<uint64_t>(rng, {0, 1, 0x7fffffff, 0x80000000, 0x80000001, 0xffffffff, rng() % 5 + 0x7ffffffe}), 4);
        case type_kind::time: return be(pick<uint64_t>(rng, {0, 1, 86399999999999ULL, rng() % 4, 1000000000ULL * (rng() % 5)}), 8);
        case type_kind::boolean: return bytes{uint8_t(pick<int>(rng, {0, 1, 2, 0xff}))};
        case type_kind::float_: {
            float f = pick<float>(rng, {-INFINITY, -1.5f, -0.0f, 0.0f, 1e-40f, 1.5f, INFINITY, std::numeric_limits<float>::max(),
                                        -std::numeric_limits<float>::max(), float(int(rng() % 5) - 2)});
            uint32_t bits = std::bit_cast<uint32_t>(f);
            if (rng() % 8 == 0) {
                bits = pick<uint32_t>(rng, {0x7fc00000, 0x7f800001, 0xffc00001, 0x7fffffff});  // NaNs
            }
            return be(bits, 4);
        }
        case type_kind::double_: {
            double d = pick<double>(rng, {-INFINITY, -1.5, -0.0, 0.0, 5e-324, 1.5, INFINITY, std::numeric_limits<double>::max(),
                                          -std::numeric_limits<double>::max(), double(int(rng() % 5) - 2)});
            uint64_t bits = std::bit_cast<uint64_t>(d);
            if (rng() % 8 == 0) {
                bits = pick<uint64_t>(rng, {0x7ff8000000000000ULL, 0x7ff0000000000001ULL, 0xfff8000000000001ULL});
            }
            return be(bits, 8);
        }
        case type_kind::timeuuid:
        case type_kind::uuid: {
            uint64_t time = pick<uint64_t>(rng, {0, 1, 0x0fffffffffffffffULL, 0x0800000000000000ULL, rng() % 4 + (uint64_t(rng() % 3) << 40)});
            uint64_t version = t.kind() == type_kind::timeuuid ? 1 : pick<uint64_t>(rng, {1, 1, 4, 0, 15});
            uint64_t msb = ((time & 0xffffffff) << 32) | (((time >> 32) & 0xffff) << 16) | (version << 12) | ((time >> 48) & 0x0fff);
            if (version != 1 && rng() % 2) {
                msb = (pick<uint64_t>(rng, {0, 0xffffffffffff0000ULL, 0x8000000000000000ULL, rng() % 3}) & ~uint64_t(0xf000)) | (version << 12);
            }
            uint64_t lsb = pick<uint64_t>(rng, {0, 0x8080808080808080ULL, 0x7f7f7f7f7f7f7f7fULL, 0xffffffffffffffffULL, rng() % 3});
            bytes out = be(msb, 8);
            auto l = be(lsb, 8);
            out.insert(out.end(), l.begin(), l.end());
            return out;
        }
        case type_kind::inet:
            return rng() % 2 ? be(pick<uint64_t>(rng, {0, 0x7f000001, 0xffffffff, 0x0a000001}), 4)
                             : [&] { bytes b = be(rng() % 3, 8); auto c = be(rng() % 3, 8); b.insert(b.end(), c.begin(), c.end()); return b; }();
        case type_kind::varint:
            return rng() % 2 ? bytes{uint8_t(pick<int>(rng, {0, 1, 0x7f, 0x80, 0xff}))}
                             : bytes{uint8_t(pick<int>(rng, {0, 0x80, 0xff})), uint8_t(rng() % 3)};
        default: {
            // text, ascii, blob, duration: long shared beginnings (8 bytes and more) and short values.
            static const std::string bases[] = {"", "a", "abcdefgh", "abcdefg", "abcdefghi", "abcdefghij", "abcdefgh\x01", "abcdefgha", "zz"};
            std::string s = bases[rng() % std::size(bases)];
            size_t extra = rng() % 4;
            for (size_t i = 0; i < extra; ++i) {
                s.push_back(pick<char>(rng, {'\0', 'a', 'b', '\x7f'}));
            }
            if (s.empty()) {
                s = "b";
            }
            return bytes(s.begin(), s.end());
        }
        }
    }
};

const std::vector<data_type>& encodable_types() {
    static const std::vector<data_type> types = {
        bigint_type(), int32_type(), smallint_type(), tinyint_type(), timestamp_type(), date_type(), time_type(),
        boolean_type(), float_type(), double_type(), timeuuid_type(), uuid_type(), text_type(), ascii_type(),
        blob_type(), inet_type(), duration_type(),
    };
    return types;
}

// 1 to 3 clustering columns, each of a random type (varint, which has no form, now and then), ASC or DESC.
std::vector<value_source> random_columns(std::mt19937_64& rng) {
    std::vector<value_source> out(1 + rng() % 3);
    bool bad_sizes = rng() % 8 == 0;
    for (auto& c : out) {
        auto& types = encodable_types();
        data_type t = rng() % 12 == 0 ? varint_type() : types[rng() % types.size()];
        auto k = t->kind();
        bool compare_accepts_any_size = k == type_kind::bigint || k == type_kind::int32 || k == type_kind::smallint ||
                                        k == type_kind::tinyint || k == type_kind::timestamp || k == type_kind::date ||
                                        k == type_kind::time || k == type_kind::boolean;
        c = value_source{rng() % 2 ? reversed_type(t) : t, bad_sizes && compare_accepts_any_size};
    }
    return out;
}

std::string describe(const std::vector<value_source>& cols) {
    std::string s;
    for (auto& c : cols) {
        s += c.type->cql_name() + (c.type->is_reversed() ? " DESC" : "") + (c.bad_sizes ? " (odd sizes)" : "") + ", ";
    }
    return s;
}

// A key of the first `len` columns.
clustering_key_prefix random_key(std::mt19937_64& rng, const std::vector<value_source>& cols, size_t len) {
    std::vector<bytes> values;
    for (size_t i = 0; i < len; ++i) {
        values.push_back(cols[i](rng));
    }
    return clustering_key_prefix(values);
}

std::vector<data_type> types_of(const std::vector<value_source>& cols) {
    std::vector<data_type> out;
    for (auto& c : cols) {
        out.push_back(c.type);
    }
    return out;
}

std::string hex(const clustering_key_prefix& k) {
    std::string s = "(";
    for (auto c : k.components()) {
        for (auto b : c) {
            s += "0123456789abcdef"[b >> 4];
            s += "0123456789abcdef"[b & 15];
        }
        s += ",";
    }
    return s + ")";
}

} // namespace

BOOST_AUTO_TEST_CASE(test_encoded_prefix_keeps_the_clustering_order) {
    uint64_t seed = testing::pick_seed();
    BOOST_TEST_MESSAGE("seed " << seed << " (set REEF_SEED to repeat)");
    std::mt19937_64 rng(seed);
    for (int n = 0; n < 600; ++n) {
        auto cols = random_columns(rng);
        BOOST_TEST_CONTEXT("seed " << seed << " case " << n << " columns " << describe(cols)) {
            auto types = types_of(cols);
            clustering_comparator cmp(types);
            clustering_prefix_encoder enc(types);
            BOOST_REQUIRE_EQUAL(enc.usable(), cols[0].type->without_reversal()->kind() != type_kind::varint);
            std::vector<clustering_key_prefix> keys;
            for (int i = 0; i < 40; ++i) {
                keys.push_back(random_key(rng, cols, rng() % 4 == 0 ? rng() % (cols.size() + 1) : cols.size()));
            }
            std::vector<std::optional<uint64_t>> codes;
            for (auto& k : keys) {
                codes.push_back(enc.encode(k));
                if (!cols[0].bad_sizes && !cols.back().bad_sizes && cols.size() == 1) {
                    BOOST_REQUIRE(codes.back());
                }
            }
            for (size_t i = 0; i < keys.size(); ++i) {
                for (size_t j = 0; j < keys.size(); ++j) {
                    if (!codes[i] || !codes[j]) {
                        continue;
                    }
                    int c = cmp(keys[i], keys[j]);
                    BOOST_TEST_CONTEXT(hex(keys[i]) << " vs " << hex(keys[j]) << " compare " << c << " codes " << std::hex
                                                    << *codes[i] << " " << *codes[j]) {
                        if (c < 0) {
                            BOOST_REQUIRE(*codes[i] <= *codes[j]);
                        } else if (c == 0) {
                            BOOST_REQUIRE(*codes[i] == *codes[j]);
                        }
                    }
                }
            }
        }
    }
}

BOOST_AUTO_TEST_CASE(test_encoded_prefix_of_known_values) {
    clustering_prefix_encoder asc({bigint_type()});
    clustering_prefix_encoder desc({reversed_type(bigint_type())});
    auto key = [](std::vector<bytes> v) { return clustering_key_prefix(v); };
    BOOST_REQUIRE_EQUAL(*asc.encode(key({})), 0u);
    BOOST_REQUIRE_EQUAL(*asc.encode(key({be(0, 8)})), uint64_t(1) << 63);
    BOOST_REQUIRE_EQUAL(*asc.encode(key({be(uint64_t(-1), 8)})), (uint64_t(1) << 63) - 1);
    BOOST_REQUIRE_EQUAL(*asc.encode(key({bytes{}})), 0u);
    BOOST_REQUIRE_EQUAL(*desc.encode(key({bytes{}})), ~uint64_t(0));
    BOOST_REQUIRE_EQUAL(*desc.encode(key({be(0, 8)})), (uint64_t(1) << 63) - 1);
    BOOST_REQUIRE(!asc.encode(key({be(0, 4)})));
    // int, int: both columns in the 8 bytes; text: its first 8 bytes.
    clustering_prefix_encoder two({int32_type(), reversed_type(int32_type())});
    BOOST_REQUIRE_EQUAL(*two.encode(key({be(1, 4), be(2, 4)})), (uint64_t(0x80000001) << 32) | uint32_t(~0x80000002u));
    BOOST_REQUIRE_EQUAL(*two.encode(key({be(1, 4)})), uint64_t(0x80000001) << 32);
    clustering_prefix_encoder text({text_type()});
    BOOST_REQUIRE_EQUAL(*text.encode(key({bytes{'a', 'b'}})), uint64_t(0x6162) << 48);
    BOOST_REQUIRE(!clustering_prefix_encoder({varint_type()}).usable());
}

namespace {

void require_same_lower_bound(const schema& s, const mutation_partition& p, const clustering_key_prefix& probe) {
    auto expected = p.rows().lower_bound(probe);
    auto got = p.rows_lower_bound(s, probe);
    BOOST_TEST_CONTEXT("probe " << hex(probe) << " expected " << (expected == p.rows().end() ? "end" : hex(expected->first))
                                << " got " << (got == p.rows().end() ? "end" : hex(got->first))) {
        BOOST_REQUIRE(got == expected);
    }
}

deletable_row marker_row(write_time::timestamp_type ts) {
    deletable_row r;
    r.marker.timestamp = ts;
    return r;
}

} // namespace

BOOST_AUTO_TEST_CASE(test_rows_lower_bound_is_the_maps) {
    uint64_t seed = testing::pick_seed();
    BOOST_TEST_MESSAGE("seed " << seed << " (set REEF_SEED to repeat)");
    std::mt19937_64 rng(seed);
    int built = 0;
    for (int n = 0; n < 150; ++n) {
        auto cols = random_columns(rng);
        BOOST_TEST_CONTEXT("seed " << seed << " case " << n << " columns " << describe(cols)) {
            schema_builder b("ks", "t");
            b.with_column("pk", int32_type(), column_kind::partition_key);
            for (size_t i = 0; i < cols.size(); ++i) {
                auto& t = cols[i].type;
                b.with_column("c" + std::to_string(i), t->is_reversed() ? t->underlying_type() : t, column_kind::clustering_key,
                              t->is_reversed() ? clustering_order::desc : clustering_order::asc);
            }
            b.with_column("v", int32_type(), column_kind::regular_column);
            schema_ptr s = b.build();
            BOOST_REQUIRE(s->clustering_types().size() == cols.size());
            mutation_partition p(*s);
            size_t rows = rng() % 8 == 0 ? 1000 + rng() % 3000 : 40 + rng() % 300;
            for (size_t i = 0; i < rows; ++i) {
                p.apply_row(*s, random_key(rng, cols, cols.size()), marker_row(1));
            }
            bool expect_index = clustering_prefix_encoder(s->clustering_types()).usable() &&
                                std::none_of(cols.begin(), cols.end(), [](auto& c) { return c.bad_sizes; });
            auto probe = [&] {
                switch (rng() % 4) {
                case 0:
                    // A row's key, or a prefix of one.
                    if (!p.rows().empty()) {
                        auto it = p.rows().begin();
                        std::advance(it, rng() % p.rows().size());
                        auto v = it->first.to_vector();
                        v.resize(rng() % 3 == 0 ? rng() % (v.size() + 1) : v.size());
                        return clustering_key_prefix(v);
                    }
                    [[fallthrough]];
                default: return random_key(rng, cols, rng() % 3 == 0 ? rng() % (cols.size() + 1) : cols.size());
                }
            };
            for (int step = 0; step < 400; ++step) {
                unsigned what = rng() % 100;
                bool had = p.has_row_lookup_index();
                if (what < 3) {
                    // A new row (or an existing one): the index goes when a row is added.
                    auto k = random_key(rng, cols, cols.size());
                    bool is_new = p.rows().find(k) == p.rows().end();
                    p.apply_row(*s, k, marker_row(2));
                    BOOST_REQUIRE_EQUAL(p.has_row_lookup_index(), had && !is_new);
                } else if (what < 4 && !p.rows().empty()) {
                    // A range tombstone over some rows, newer than them: drop_shadowed removes them.
                    auto it = p.rows().begin();
                    std::advance(it, rng() % p.rows().size());
                    auto start = position_in_partition::before_key(it->first);
                    std::advance(it, std::min<size_t>(rng() % 5, std::distance(it, p.rows().end()) - 1));
                    auto end = position_in_partition::after_key(it->first);
                    p.apply_range_tombstone(start, end, tombstone{3, 0});
                    size_t before = p.rows().size();
                    p.drop_shadowed();
                    BOOST_REQUIRE(p.rows().size() < before);
                    BOOST_REQUIRE(!p.has_row_lookup_index());
                } else if (what < 5) {
                    // A copy has no index of its own, and the original keeps its own.
                    mutation_partition q = p;
                    BOOST_REQUIRE(!q.has_row_lookup_index());
                    BOOST_REQUIRE_EQUAL(p.has_row_lookup_index(), had);
                    for (int i = 0; i < 20; ++i) {
                        require_same_lower_bound(*s, q, probe());
                    }
                    mutation_partition moved = std::move(q);
                    require_same_lower_bound(*s, moved, probe());
                    q = p;
                    require_same_lower_bound(*s, q, probe());
                } else {
                    require_same_lower_bound(*s, p, probe());
                }
            }
            // Reads alone build it, after rows / log2(rows) lookups since the last change.
            using index_type = row_lookup_index<mutation_partition::rows_type>;
            if (expect_index && p.rows().size() >= index_type::min_rows) {
                mutation_partition asked = p;
                BOOST_REQUIRE(asked.build_row_lookup_index(*s));
                BOOST_REQUIRE(asked.row_lookup_index_memory() >= 16 * asked.rows().size());
                for (int i = 0; i < 50; ++i) {
                    require_same_lower_bound(*s, asked, probe());
                }
                mutation_partition fresh = p;  // no lookups counted yet
                size_t lookups = 0;
                while (!fresh.has_row_lookup_index() && lookups <= fresh.rows().size()) {
                    require_same_lower_bound(*s, fresh, probe());
                    ++lookups;
                }
                BOOST_REQUIRE(fresh.has_row_lookup_index());
                BOOST_REQUIRE_EQUAL(lookups, (fresh.rows().size() + std::bit_width(fresh.rows().size()) - 1) /
                                                 std::bit_width(fresh.rows().size()));
                for (int i = 0; i < 200; ++i) {
                    require_same_lower_bound(*s, fresh, probe());
                }
                ++built;
            } else if (p.rows().size() < index_type::min_rows) {
                for (int i = 0; i < 100; ++i) {
                    require_same_lower_bound(*s, p, probe());
                }
                BOOST_REQUIRE(!p.has_row_lookup_index());
                BOOST_REQUIRE(!p.build_row_lookup_index(*s));
            }
        }
    }
    BOOST_TEST_MESSAGE(built << " partitions searched through their index");
    BOOST_REQUIRE(built > 0);
}
