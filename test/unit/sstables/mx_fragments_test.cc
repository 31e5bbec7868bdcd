// mx parser -> fragments: every corpus sstable becomes a valid fragment stream (checked by the
// stream validator) with the dump's counts of partitions, static rows, rows and range tombstone changes, the
// same whatever the buffer and fragment batch sizes.
#include "mutation/fragment_stream_validator.hh"
#include "sstables/mx_fragments.hh"
#include "sstables/mx_parser.hh"
#include "test/lib/mx_test_support.hh"

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <random>

using namespace reef;
using namespace reef::sstables;
using namespace reef::testing;

namespace {

struct counts {
    size_t partitions = 0, static_rows = 0, rows = 0, changes = 0;
    bool operator==(const counts&) const = default;
};

std::ostream& operator<<(std::ostream& o, const counts& c) {
    return o << c.partitions << " partitions, " << c.static_rows << " static rows, " << c.rows << " rows, "
             << c.changes << " range tombstone changes";
}

counts dump_counts(const json_value& doc) {
    counts c;
    for (auto& p : doc.items) {
        ++c.partitions;
        if (auto rows = p.get("rows")) {
            for (auto& r : rows->items) {
                auto t = r.get("type")->text;
                (t == "static_block" ? c.static_rows : t == "row" ? c.rows : c.changes)++;
            }
        }
    }
    return c;
}

// Parses s into fragments, `batch` at most at a time, each through the validator; returns the counts and the
// fragments as text (for comparing runs).
std::pair<counts, std::string> to_fragments(const corpus_sstable& s, size_t batch, std::mt19937& rng) {
    auto& h = *s.stats.header;
    auto schema = schema_from_header(h);
    mx_fragment_consumer c(schema, h, s.data_path.native(), batch, token_function_for(s.stats.validation->partitioner));
    mx_parser p(h, s.data_path.native(), c, 0, s.data.size());
    fragment_stream_validator validator(*schema);
    counts n;
    std::string text;
    auto take = [&] {
        for (auto& f : take_fragments(c.buffer())) {
            validator(f);
            std::visit([&](auto& x) {
                using T = std::decay_t<decltype(x)>;
                if constexpr (std::is_same_v<T, partition_start>) {
                    ++n.partitions;
                } else if constexpr (std::is_same_v<T, static_row>) {
                    ++n.static_rows;
                } else if constexpr (std::is_same_v<T, clustering_row>) {
                    ++n.rows;
                } else if constexpr (std::is_same_v<T, range_tombstone_change>) {
                    ++n.changes;
                }
            }, f);
            text += kind_name(f);
            text += " " + to_string(position_of(f)) + "\n";
        }
    };
    size_t pos = 0;
    while (true) {
        auto step = p.run();
        take();
        if (step.what == parse_step::kind::done) {
            break;
        }
        if (step.what == parse_step::kind::skip) {
            pos += step.bytes;
        }
        if (step.what != parse_step::kind::consumer_full) {
            size_t len = std::min<size_t>(1 + rng() % 70000, s.data.size() - pos);
            p.feed(std::span<const std::byte>(s.data).subspan(pos, len));
            pos += len;
        }
    }
    validator.on_end_of_stream();
    return {n, text};
}

} // namespace

BOOST_DATA_TEST_CASE(test_corpus_fragment_streams, boost::unit_test::data::make(corpus_dataset_names()), name) {
    auto corpus = require_peer_corpus();
    if (!corpus) {
        return;
    }
    auto seed = std::random_device{}();
    BOOST_TEST_MESSAGE("seed " << seed);
    std::mt19937 rng(seed);
    BOOST_TEST_CONTEXT(name << " seed " << seed) {
        auto sstables = load_sstables(*corpus / name);
#ifdef REEF_DEBUG
        // Under ASan, large sstables and dumps take minutes: dev mode checks them.
        size_t total = 0;
        for (auto& s : sstables) {
            total += s.data.size();
        }
        if (total > 300000) {
            BOOST_TEST_MESSAGE(name << ": too large for a debug build; checked in dev mode");
            return;
        }
#endif
        auto docs = read_json_documents(*read_corpus_file(expected_json_path(*corpus / name)));
        BOOST_REQUIRE_EQUAL(docs.size(), sstables.size());
        for (size_t i = 0; i < sstables.size(); ++i) {
            auto [n, text] = to_fragments(sstables[i], 1000, rng);
            BOOST_CHECK_EQUAL(n, dump_counts(docs[i]));
            // Small batches: the consumer stops the parser often; nothing changes.
            auto [n2, text2] = to_fragments(sstables[i], 1 + rng() % 5, rng);
            BOOST_CHECK(text == text2);
        }
    }
}

BOOST_AUTO_TEST_CASE(test_boundary_is_one_change) {
    // A header with one int clustering column; a boundary marker excl_end/incl_start at [1].
    serialization_header h;
    h.partition_key_type = int32_type();
    h.clustering_types = {int32_type()};
    auto schema = schema_from_header(h);
    mx_fragment_consumer c(schema, h, "f");
    clustering_values ck{bytes{0, 0, 0, 1}};
    mx_marker m;
    m.kind = mx_bound_kind::excl_end_incl_start;
    m.clustering = &ck;
    m.tomb = tombstone{10, 100};
    m.boundary_start_tomb = tombstone{20, 200};
    c.consume_range_tombstone(m);
    BOOST_REQUIRE_EQUAL(c.buffer().size(), 1u);
    auto& rtc = std::get<range_tombstone_change>(c.buffer().front());
    BOOST_CHECK(rtc.tomb == (tombstone{20, 200}));
    BOOST_CHECK(rtc.position == position_in_partition::before_key(clustering_key_prefix({bytes{0, 0, 0, 1}})));
    // A start without a deletion cannot be a fragment.
    m.kind = mx_bound_kind::incl_start;
    m.tomb = {};
    BOOST_CHECK_THROW(c.consume_range_tombstone(m), malformed_sstable_exception);
    // Nor a clustering value after a null.
    h.clustering_types = {int32_type(), int32_type()};
    auto schema2 = schema_from_header(h);
    mx_fragment_consumer c2(schema2, h, "f");
    clustering_values bad{std::nullopt, bytes{0, 0, 0, 1}};
    mx_row r;
    r.clustering = &bad;
    BOOST_CHECK_THROW(c2.consume_row_start(r), malformed_sstable_exception);
}
