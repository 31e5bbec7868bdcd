// Tests of Filter.db: every partition key of every corpus sstable (from its Index.db) is present in the filter
// Cassandra wrote, keys that are not there mostly are not (at the rate the filter's size allows), the old
// (mc..me) and new (na+) bitset layouts serialize back to the same bytes, and corrupt headers are refused.
#include "sstables/bloom_filter.hh"
#include "sstables/exceptions.hh"
#include "sstables/index_entry.hh"
#include "test/lib/sstable_corpus.hh"

#include <boost/test/unit_test.hpp>
#include <cmath>
#include <bit>
#include <random>
#include <set>

using namespace reef;
using namespace reef::sstables;

BOOST_AUTO_TEST_CASE(test_every_corpus_key_is_in_its_filter) {
    size_t keys = 0, filters = 0, probes = 0, false_positives = 0;
    double expected_false_positives = 0;
    std::mt19937_64 rng(17);
    for (auto& t : reef::testing::all_test_sstables()) {
        if (!t.has(component_type::filter)) {
            continue;
        }
        BOOST_TEST_CONTEXT(t.name()) {
            auto name = t.path(component_type::filter);
            auto bytes = reef::testing::read_file(name);
            auto f = parse_bloom_filter(bytes, t.desc.version, name);
            BOOST_CHECK(serialize_bloom_filter(f, t.desc.version) == bytes);
            auto index_name = t.path(component_type::index);
            auto entries = parse_index_entries(reef::testing::read_file(index_name), t.desc.version, index_name);
            std::set<std::string> present;
            for (auto& e : entries) {
                BOOST_CHECK_MESSAGE(f.is_present(e.key.view()), "key of " << e.key.size() << " bytes at Index.db offset "
                                                                           << e.index_position << " not in the filter");
                BOOST_CHECK(f.is_present(bloom_filter::hash_of(e.key.bytes())));
                present.insert(std::string(e.key.view()));
                ++keys;
            }
            // Absent keys: the expected false-positive rate is (fraction of bits set)^k.
            size_t set_bits = 0;
            for (char c : f.bits()) {
                set_bits += std::popcount(uint8_t(c));
            }
            double p = std::pow(double(set_bits) / double(f.bit_count()), f.hash_count());
            for (int i = 0; i < 2000; ++i) {
                std::string k(8 + rng() % 8, '\0');
                for (auto& c : k) {
                    c = char(rng());
                }
                if (present.count(k)) {
                    continue;
                }
                ++probes;
                expected_false_positives += p;
                false_positives += f.is_present(k);
            }
            ++filters;
        }
    }
    BOOST_TEST_MESSAGE("filters " << filters << ", keys " << keys << ", absent probes " << probes << ", false positives "
                                  << false_positives << " (expected " << expected_false_positives << ")");
    // A wrong hash would find almost every key absent (failing above) or give a rate far from the bit density's.
    BOOST_CHECK_LE(double(false_positives), expected_false_positives * 1.2 + 50);
    BOOST_CHECK_GE(double(false_positives), expected_false_positives * 0.8 - 50);
}

BOOST_AUTO_TEST_CASE(test_filter_layouts_and_errors) {
    std::string bits(64, '\0');
    bloom_filter f(5, bits);
    std::vector<std::string> keys;
    for (int i = 0; i < 30; ++i) {
        keys.push_back("key" + std::to_string(i));
        f.add(std::as_bytes(std::span<const char>(keys.back())));
    }
    for (auto v : {sstable_version::me, sstable_version::nb}) {
        auto bytes = serialize_bloom_filter(f, v);
        auto back = parse_bloom_filter(bytes, v, "Filter.db");
        BOOST_CHECK(back.bits() == f.bits());
        for (auto& k : keys) {
            BOOST_CHECK(back.is_present(k));
        }
        for (size_t cut = 0; cut < bytes.size(); ++cut) {
            BOOST_CHECK_THROW(parse_bloom_filter(std::string_view(bytes).substr(0, cut), v, "Filter.db"),
                              malformed_sstable_exception);
        }
        auto bad = bytes;
        bad[0] = char(0x7f);  // hash count
        BOOST_CHECK_THROW(parse_bloom_filter(bad, v, "Filter.db"), malformed_sstable_exception);
    }
    // The old layout is the new one with each 8-byte word reversed.
    auto old_bytes = serialize_bloom_filter(f, sstable_version::me);
    auto new_bytes = serialize_bloom_filter(f, sstable_version::na);
    BOOST_CHECK(old_bytes != new_bytes);
    for (size_t i = 0; i < 64; ++i) {
        BOOST_CHECK_EQUAL(old_bytes[8 + i], new_bytes[8 + (i / 8) * 8 + 7 - i % 8]);
    }
    BOOST_CHECK(bloom_filter().is_present(std::string_view("anything")));
}
