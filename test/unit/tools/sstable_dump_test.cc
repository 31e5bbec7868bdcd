// Tests of `reef sstable dump-index`, `dump-summary` and `dump-compression-info`: for every corpus sstable the
// JSON parses and says what the component parsers read (keys, positions, promoted-index blocks, summary
// entries, chunk offsets).
#include "schema/value_format.hh"
#include "sstables/components.hh"
#include "sstables/index_entry.hh"
#include "test/lib/reef_test.hh"
#include "test/lib/sstable_corpus.hh"
#include "test/lib/tmpdir.hh"
#include "sstables/sstable.hh"
#include "sstables/statistics.hh"
#include "tools/sstable_dump_components.hh"
#include "tools/sstable_dump_statistics.hh"
#include "tools/sstable_validate.hh"

#include <fstream>

#include <boost/test/unit_test.hpp>

using namespace reef;
using namespace reef::sstables;
using reef::testing::json_value;

namespace {

const json_value& only_sstable(const std::string& text, const descriptor& d) {
    static std::vector<json_value> docs;
    docs = reef::testing::read_json_documents(text);
    BOOST_REQUIRE_EQUAL(docs.size(), 1u);
    auto* all = docs[0].get("sstables");
    BOOST_REQUIRE(all);
    auto* one = all->get(d.filename(component_type::data));
    BOOST_REQUIRE(one);
    return *one;
}

} // namespace

REEF_TEST_CASE(test_dumps_say_what_the_parsers_read) {
    size_t sstables = 0, blocks = 0;
    for (auto& t : reef::testing::all_test_sstables()) {
        BOOST_TEST_CONTEXT(t.name()) {
            auto index_name = t.path(component_type::index);
            auto entries = parse_index_entries(reef::testing::read_file(index_name), t.desc.version, index_name);
            // Named, not braced inside co_await (ARCHITECTURE.md, coroutine rule 2).
            std::vector<descriptor> one{t.desc};
            auto index_json = co_await tools::dump_index_json(one);
            auto& index = only_sstable(index_json, t.desc);
            BOOST_REQUIRE_EQUAL(index.items.size(), entries.size());
            for (size_t i = 0; i < entries.size(); ++i) {
                auto& e = index.items[i];
                BOOST_CHECK_EQUAL(e.get("pos")->raw, std::to_string(entries[i].data_position));
                BOOST_CHECK_EQUAL(e.get("key")->get("raw")->text, hex_encode(to_bytes_view(entries[i].key.view())));
                BOOST_CHECK_EQUAL(bool(e.get("promoted_index")), bool(entries[i].promoted));
                if (auto* pi = e.get("promoted_index")) {
                    BOOST_CHECK_EQUAL(pi->get("offsets")->items.size(), entries[i].promoted->block_count());
                    blocks += pi->get("blocks")->items.size();
                }
            }
            auto c = co_await load_components(t.desc);
            auto summary_json = co_await tools::dump_summary_json(one);
            auto& s = only_sstable(summary_json, t.desc);
            BOOST_REQUIRE_EQUAL(s.get("entries")->items.size(), c.summary.entries.size());
            for (size_t i = 0; i < c.summary.entries.size(); ++i) {
                BOOST_CHECK_EQUAL(s.get("entries")->items[i].get("position")->raw,
                                  std::to_string(c.summary.entries[i].index_position));
            }
            auto ci_json = co_await tools::dump_compression_info_json(one);
            auto& ci = only_sstable(ci_json, t.desc);
            if (c.compression) {
                BOOST_CHECK_EQUAL(ci.get("name")->text, c.compression->compressor_class);
                BOOST_CHECK_EQUAL(ci.get("data_len")->raw, std::to_string(c.compression->data_length));
                BOOST_REQUIRE_EQUAL(ci.get("offsets")->items.size(), c.compression->chunk_count());
                for (size_t i = 0; i < c.compression->chunk_count(); ++i) {
                    BOOST_CHECK_EQUAL(ci.get("offsets")->items[i].raw, std::to_string(c.compression->chunk_offsets[i]));
                }
            } else {
                BOOST_CHECK_EQUAL(ci.get("compressed")->raw, "false");
            }
            ++sstables;
        }
    }
    BOOST_TEST_MESSAGE("sstables dumped: " << sstables << ", promoted-index blocks printed: " << blocks);
}

REEF_TEST_CASE(test_validate_checksums) {
    auto all = reef::testing::all_test_sstables();
    std::vector<descriptor> descs;
    for (auto& t : all) {
        descs.push_back(t.desc);
    }
    auto text = co_await tools::validate_checksums_json(descs);
    auto docs = reef::testing::read_json_documents(text);
    BOOST_REQUIRE_EQUAL(docs.size(), 1u);
    for (auto& t : all) {
        BOOST_TEST_CONTEXT(t.name()) {
            auto* v = docs[0].get("sstables")->get(t.path(component_type::data));
            BOOST_REQUIRE(v);
            BOOST_CHECK_EQUAL(v->get("has_checksums")->raw,
                              t.has(component_type::compression_info) || t.has(component_type::crc) ? "true" : "false");
            BOOST_CHECK_EQUAL(v->get("valid_checksums")->raw, "true");
            BOOST_CHECK_EQUAL(v->get("valid_digest")->raw, "true");
            BOOST_CHECK(!v->get("error"));
        }
    }
    // A copy with one byte of a compressed Data.db flipped: the chunk's checksum and the digest both fail.
    for (auto& t : all) {
        if (!t.has(component_type::compression_info)) {
            continue;
        }
        reef::testing::tmpdir dir;
        auto d = t.desc;
        d.directory = dir.path();
        for (auto c : {component_type::data, component_type::index, component_type::summary, component_type::filter,
                       component_type::statistics, component_type::compression_info, component_type::digest,
                       component_type::toc}) {
            if (t.has(c)) {
                std::filesystem::copy_file(t.path(c), d.filename(c));
            }
        }
        auto data = reef::testing::read_file(d.filename(component_type::data));
        data[data.size() / 2] ^= 0x20;
        {
            std::ofstream out(d.filename(component_type::data), std::ios::binary | std::ios::trunc);
            out.write(data.data(), std::streamsize(data.size()));
        }
        std::vector<descriptor> one{d};
        auto bad = reef::testing::read_json_documents(co_await tools::validate_checksums_json(one));
        auto* v = bad[0].get("sstables")->get(d.filename(component_type::data));
        BOOST_REQUIRE(v);
        BOOST_CHECK_EQUAL(v->get("valid_checksums")->raw, "false");
        BOOST_CHECK_EQUAL(v->get("valid_digest")->raw, "false");
        BOOST_CHECK(v->get("error")->text.find(d.filename(component_type::data)) != std::string::npos);
        break;
    }
}

// dump-statistics: for every corpus sstable whose Statistics.db we read, the JSON parses and holds what the
// parser read (each part's offset, the partitioner, the stats' timestamps and row count, the header's columns).
REEF_TEST_CASE(test_dump_statistics) {
    size_t dumped = 0;
    for (auto& t : reef::testing::all_test_sstables()) {
        BOOST_TEST_CONTEXT(t.name()) {
            auto st = co_await load_statistics(t.desc);
            std::vector<descriptor> one{t.desc};
            auto text = co_await tools::dump_statistics_json(one);
            auto& j = only_sstable(text, t.desc);
            BOOST_REQUIRE_EQUAL(j.get("offsets")->members.size(), st.toc.size());
            for (size_t i = 0; i < st.toc.size(); ++i) {
                BOOST_CHECK_EQUAL(j.get("offsets")->members[i].second.raw, std::to_string(st.toc[i].second));
            }
            BOOST_REQUIRE(st.validation && st.stats && st.header);
            BOOST_CHECK_EQUAL(j.get("validation")->get("partitioner")->text, st.validation->partitioner);
            auto* stats = j.get("stats");
            BOOST_CHECK_EQUAL(stats->get("min_timestamp")->raw, std::to_string(st.stats->min_timestamp));
            BOOST_CHECK_EQUAL(stats->get("max_timestamp")->raw, std::to_string(st.stats->max_timestamp));
            BOOST_CHECK_EQUAL(stats->get("total_rows")->raw, std::to_string(st.stats->total_rows));
            BOOST_CHECK_EQUAL(stats->get("estimated_partition_size")->items.size(),
                              st.stats->estimated_partition_size.buckets.size());
            BOOST_CHECK_EQUAL(stats->get("min_clustering_values")->items.size(), st.stats->min_clustering_values.size());
            BOOST_CHECK_EQUAL(bool(stats->get("originating_host_id")), bool(st.stats->originating_host_id));
            auto* h = j.get("serialization_header");
            BOOST_CHECK_EQUAL(h->get("partition_key_type")->text, st.header->partition_key_type->class_name());
            BOOST_CHECK_EQUAL(h->get("clustering_key_types")->items.size(), st.header->clustering_types.size());
            auto& regular = h->get("regular_columns")->items;
            BOOST_REQUIRE_EQUAL(regular.size(), st.header->regular_columns.size());
            for (size_t i = 0; i < regular.size(); ++i) {
                BOOST_CHECK_EQUAL(regular[i].get("name")->text, st.header->regular_columns[i].name);
            }
            BOOST_CHECK_EQUAL(h->get("static_columns")->items.size(), st.header->static_columns.size());
            ++dumped;
        }
    }
    BOOST_TEST_MESSAGE(dumped << " Statistics.db dumped");
}
