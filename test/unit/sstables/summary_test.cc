// Tests of Summary.db: every corpus Summary.db parses, serializes back to its exact bytes, and equals the summary
// rebuilt from Index.db (so a missing Summary.db is rebuilt as Cassandra would have written it); and a rebuilt
// summary's entries point at Index.db entries with the same keys.
#include "sstables/exceptions.hh"
#include "sstables/index_entry.hh"
#include "sstables/summary.hh"
#include "test/lib/reef_test.hh"
#include "test/lib/sstable_corpus.hh"

#include <boost/test/unit_test.hpp>

#include <optional>

using namespace reef;
using namespace reef::sstables;

BOOST_AUTO_TEST_CASE(test_corpus_summaries_parse_and_round_trip) {
    size_t parsed = 0;
    for (auto& t : reef::testing::all_test_sstables()) {
        if (!t.has(component_type::summary)) {
            continue;
        }
        BOOST_TEST_CONTEXT(t.name()) {
            auto name = t.path(component_type::summary);
            auto bytes = reef::testing::read_file(name);
            auto s = parse_summary(bytes, name);
            BOOST_CHECK(serialize_summary(s) == bytes);
            // The summary's entries are Index.db entries, sampled every min_index_interval.
            auto index_name = t.path(component_type::index);
            auto entries = parse_index_entries(reef::testing::read_file(index_name), t.desc.version, index_name);
            BOOST_REQUIRE(!entries.empty());
            BOOST_CHECK_EQUAL(s.first_key, entries.front().key.view());
            BOOST_CHECK_EQUAL(s.last_key, entries.back().key.view());
            summary_builder b(s.min_index_interval);
            for (auto& e : entries) {
                b.add(e.key.view(), e.index_position);
            }
            auto rebuilt = std::move(b).build();
            BOOST_CHECK(rebuilt == s);
            BOOST_CHECK(serialize_summary(rebuilt) == bytes);
            ++parsed;
        }
    }
    BOOST_TEST_MESSAGE("summaries checked: " << parsed);
}

REEF_TEST_CASE(test_rebuild_summary_from_index_file) {
    size_t rebuilt_count = 0;
    for (auto& t : reef::testing::all_test_sstables()) {
        auto index_name = t.path(component_type::index);
        // At the stored summary's interval (test/resource/sstables/me_index_interval_4 has 4), else Cassandra's 128.
        std::optional<summary> stored;
        if (t.has(component_type::summary)) {
            auto name = t.path(component_type::summary);
            stored = parse_summary(reef::testing::read_file(name), name);
        }
        size_t interval = stored ? stored->min_index_interval : 128;
        auto s = co_await rebuild_summary(index_name, t.desc.version, uint32_t(interval));
        auto entries = parse_index_entries(reef::testing::read_file(index_name), t.desc.version, index_name);
        BOOST_REQUIRE_EQUAL(s.size_at_full_sampling, (entries.size() + interval - 1) / interval);
        BOOST_REQUIRE_EQUAL(s.entries.size(), (entries.size() + interval - 1) / interval);
        for (size_t i = 0; i < s.entries.size(); ++i) {
            BOOST_CHECK_EQUAL(s.entries[i].key, entries[i * interval].key.view());
            BOOST_CHECK_EQUAL(s.entries[i].index_position, entries[i * interval].index_position);
        }
        if (stored) {
            BOOST_CHECK_MESSAGE(*stored == s, t.name());
        }
        ++rebuilt_count;
    }
    BOOST_TEST_MESSAGE("summaries rebuilt: " << rebuilt_count);
}

BOOST_AUTO_TEST_CASE(test_summary_errors) {
    summary s;
    s.entries = {{"k1", 0}, {"k22", 40}};
    s.size_at_full_sampling = 2;
    s.first_key = "k1";
    s.last_key = "k9";
    auto bytes = serialize_summary(s);
    BOOST_CHECK(parse_summary(bytes, "s") == s);
    for (size_t cut = 0; cut < bytes.size(); ++cut) {
        try {
            parse_summary(std::string_view(bytes).substr(0, cut), "x-Summary.db");
            BOOST_FAIL("a summary cut at " << cut << " parsed");
        } catch (const malformed_sstable_exception& e) {
            BOOST_CHECK_EQUAL(e.file(), "x-Summary.db");
            BOOST_CHECK_LE(e.offset(), cut);
        }
    }
    // An entry offset pointing outside the entries.
    auto bad = bytes;
    bad[24] = char(0xff);
    BOOST_CHECK_THROW(parse_summary(bad, "x-Summary.db"), malformed_sstable_exception);
}
