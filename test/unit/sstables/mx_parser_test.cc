// Data.db parser tests: every corpus sstable parses to what Cassandra's dump (expected.json) shows
// (partition keys and positions, rows, clustering values, liveness, deletions, cell timestamps, TTLs, values,
// range tombstone markers), identically for any buffer split and with consumer stops and row skips; truncated
// and corrupted copies give malformed_sstable_exception, never a crash or a hang.
#include "sstables/exceptions.hh"
#include "sstables/mx_parser.hh"
#include "sstables/parser_input.hh"
#include "test/lib/mx_test_support.hh"
#include "test/lib/peer_corpus.hh"
#include "utils/vint.hh"

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <map>
#include <random>

using namespace reef;
using namespace reef::sstables;
using namespace reef::testing;
namespace fs = std::filesystem;

namespace {

// JSON text in one canonical compact form, so that the dump's pretty printing and ours compare equal.
std::string canonical(const json_value& v) {
    switch (v.type) {
    case json_value::kind::string: {
        std::string s = "\"";
        for (char c : v.text) {
            if (c == '"' || c == '\\') {
                s += '\\';
            }
            s += c;
        }
        return s + "\"";
    }
    case json_value::kind::array: {
        std::string s = "[";
        for (size_t i = 0; i < v.items.size(); ++i) {
            s += (i ? "," : "") + canonical(v.items[i]);
        }
        return s + "]";
    }
    case json_value::kind::object: {
        std::string s = "{";
        for (size_t i = 0; i < v.members.size(); ++i) {
            s += (i ? "," : "") + ("\"" + v.members[i].first + "\":") + canonical(v.members[i].second);
        }
        return s + "}";
    }
    default: return v.raw;
    }
}

std::string canonical_json_text(const std::string& text) {
    json_reader r(text);
    return canonical(r.value());
}

const json_value* path_get(const json_value& v, std::initializer_list<const char*> keys) {
    const json_value* cur = &v;
    for (auto k : keys) {
        cur = cur ? cur->get(k) : nullptr;
    }
    return cur;
}

std::string text_or(const json_value* v, const char* dflt = "-") { return v ? v->text : dflt; }

// The lines the oracle comparison uses, one per partition, row, static row or marker, built from the dump...
struct oracle_partition {
    std::string header;
    std::vector<std::string> lines;
};

std::string marker_side(const json_value& side) {
    std::string s = side.get("type")->text + " ";
    s += side.get("clustering") ? canonical(*side.get("clustering")) : "[]";
    s += " " + text_or(path_get(side, {"deletion_info", "marked_deleted"}));
    return s;
}

std::vector<oracle_partition> from_dump(const json_value& doc) {
    std::vector<oracle_partition> out;
    for (auto& p : doc.items) {
        oracle_partition op;
        auto& part = *p.get("partition");
        std::string key;
        for (auto& k : part.get("key")->items) {
            key += k.text + "|";
        }
        op.header = "P " + key + " @" + part.get("position")->raw + " " +
                    text_or(path_get(part, {"deletion_info", "marked_deleted"}));
        if (auto rows = p.get("rows")) {
            for (auto& r : rows->items) {
                auto type = r.get("type")->text;
                std::string line;
                if (type == "range_tombstone_bound") {
                    line = r.get("start") ? "bound start " + marker_side(*r.get("start"))
                                          : "bound end " + marker_side(*r.get("end"));
                } else if (type == "range_tombstone_boundary") {
                    line = "boundary end " + marker_side(*r.get("end")) + " start " + marker_side(*r.get("start"));
                } else {
                    line = type + " @" + r.get("position")->raw;
                    if (auto ck = r.get("clustering")) {
                        line += " " + canonical(*ck);
                    }
                    auto row_ts = path_get(r, {"liveness_info", "tstamp"});
                    line += " L " + text_or(row_ts);
                    if (auto ttl = path_get(r, {"liveness_info", "ttl"})) {
                        line += " ttl " + ttl->raw + " exp " + text_or(path_get(r, {"liveness_info", "expires_at"}));
                    }
                    line += " D " + text_or(path_get(r, {"deletion_info", "marked_deleted"}));
                    if (auto cells = r.get("cells")) {
                        for (auto& c : cells->items) {
                            line += " | " + c.get("name")->text;
                            auto md = path_get(c, {"deletion_info", "marked_deleted"});
                            if (md) {
                                line += " complex-deleted " + md->text;
                                continue;
                            }
                            auto ts = c.get("tstamp") ? c.get("tstamp")->text : text_or(row_ts);
                            line += " T " + ts;
                            if (auto ldt = path_get(c, {"deletion_info", "local_delete_time"})) {
                                line += " dead " + ldt->text;
                            }
                            if (auto ttl = c.get("ttl")) {
                                line += " ttl " + ttl->raw + " exp " + text_or(c.get("expires_at"));
                            }
                            if (auto path = c.get("path")) {
                                line += " path " + canonical(*path);
                            }
                            if (auto value = c.get("value")) {
                                line += " = " + canonical(*value);
                            }
                        }
                    }
                }
                op.lines.push_back(line);
            }
        }
        out.push_back(op);
    }
    return out;
}

// ... and from the parser, for the sstable's serialization header.
class oracle_consumer : public mx_consumer {
public:
    explicit oracle_consumer(const serialization_header& h) : _h(h) {}
    std::vector<oracle_partition> out;
    // Positions the dump cannot show, checked here: each unfiltered's stored previous size.
    std::vector<std::string> previous_size_errors;

    proceed consume_partition_start(bytes_view key, tombstone d, uint64_t position, uint64_t header_end) override {
        std::string k;
        if (_h.partition_key_type->is_composite()) {
            auto parts = split_composite(key);
            for (size_t i = 0; i < parts.size(); ++i) {
                k += _h.partition_key_type->field_types()[i]->to_string(parts[i]) + "|";
            }
        } else {
            k = _h.partition_key_type->to_string(key) + "|";
        }
        _key = k;
        _tomb = d;
        _position = header_end;
        out.push_back({});
        // The first unfiltered's previous size is the partition header's (Cassandra; Scylla writes 0).
        _partition_start = position;
        _previous_is_static = false;
        _previous_start = position;
        _previous_end = header_end;
        return proceed::yes;
    }
    row_action consume_row_start(const mx_row& r) override {
        check_previous(r.position, r.previous_size, r.is_static);
        if (r.is_static) {
            _position = r.end;
            _line = "static_block @" + std::to_string(r.end);
        } else {
            _line = "row @" + std::to_string(r.position);
            if (!_h.clustering_types.empty()) {
                _line += " " + clustering_json(*r.clustering);
            }
        }
        _row_ts = r.marker.empty() ? std::string("-") : std::to_string(r.marker.timestamp);
        _line += " L " + _row_ts;
        if (!r.marker.empty() && r.marker.is_expiring()) {
            _line += " ttl " + std::to_string(r.marker.ttl) + " exp " + std::to_string(r.marker.expiry);
        }
        _line += " D " + (r.deletion ? std::to_string(r.deletion.timestamp) : std::string("-"));
        _static = r.is_static;
        _cells = 0;
        _row_marker = r.marker;
        return row_action::read;
    }
    void consume_cell(const mx_cell& c) override {
        auto& col = (_static ? _h.static_columns : _h.regular_columns).at(c.column);
        ++_cells;
        _line += " | " + col.name + " T " + std::to_string(c.timestamp);
        if (c.is_deleted) {
            _line += " dead " + std::to_string(c.local_deletion_time);
        }
        // The dump leaves out a TTL equal to the row's.
        if (c.is_expiring && (_row_marker.empty() || c.ttl != _row_marker.ttl)) {
            _line += " ttl " + std::to_string(c.ttl) + " exp " + std::to_string(c.local_deletion_time);
        }
        value_text(*col.type, c);
    }
    void consume_complex_start(column_id col, tombstone t) override {
        if (t) {
            ++_cells;
            _line += " | " + (_static ? _h.static_columns : _h.regular_columns).at(col).name + " complex-deleted " +
                     std::to_string(t.timestamp);
        }
    }
    void consume_complex_end() override {}
    proceed consume_row_end(const mx_row& r) override {
        // Cassandra writes an empty static row when the table has static columns; the dump omits it.
        bool empty_static = r.is_static && _cells == 0 && r.marker.empty() && !r.deletion;
        if (!empty_static) {
            out.back().lines.push_back(_line);
        }
        _previous_start = r.position;
        _previous_end = r.end;
        _previous_is_static = r.is_static;
        return proceed::yes;
    }
    proceed consume_range_tombstone(const mx_marker& m) override {
        check_previous(m.position, m.previous_size, false);
        auto ck = clustering_json(*m.clustering);
        // The dump pads a prefix bound with "*" for each missing column.
        if (!m.clustering->empty()) {
            for (size_t i = m.clustering->size(); i < _h.clustering_types.size(); ++i) {
                ck.insert(ck.size() - 1, ",\"*\"");
            }
        }
        auto side = [&](bool incl, const tombstone& t) {
            return std::string(incl ? "inclusive " : "exclusive ") + ck + " " + std::to_string(t.timestamp);
        };
        switch (m.kind) {
        case mx_bound_kind::incl_start: _line = "bound start " + side(true, m.tomb); break;
        case mx_bound_kind::excl_start: _line = "bound start " + side(false, m.tomb); break;
        case mx_bound_kind::incl_end: _line = "bound end " + side(true, m.tomb); break;
        case mx_bound_kind::excl_end: _line = "bound end " + side(false, m.tomb); break;
        case mx_bound_kind::excl_end_incl_start:
            _line = "boundary end " + side(false, m.tomb) + " start " + side(true, m.boundary_start_tomb);
            break;
        case mx_bound_kind::incl_end_excl_start:
            _line = "boundary end " + side(true, m.tomb) + " start " + side(false, m.boundary_start_tomb);
            break;
        }
        out.back().lines.push_back(_line);
        _previous_start = m.position;
        _previous_end = m.end;
        _previous_is_static = false;
        return proceed::yes;
    }
    proceed consume_partition_end(uint64_t) override {
        out.back().header = "P " + _key + " @" + std::to_string(_position) + " " +
                            (_tomb ? std::to_string(_tomb.timestamp) : std::string("-"));
        return proceed::yes;
    }

private:
    // The path and value as the dump prints them.
    void value_text(const abstract_type& t, const mx_cell& c) {
        if (t.is_multi_cell()) {
            if (t.is_user_type()) {
                auto& u = static_cast<const user_type_impl&>(t);
                auto field = size_t(read_be<uint16_t>(c.path.data()));
                _line += " path [\"" + u.field_names().at(field) + "\"]";
                if (!c.is_deleted) {
                    _line += " = " + canonical_json_text(u.field_types().at(field)->to_json_string(c.value));
                }
                return;
            }
            _line += " path [\"" + t.name_comparator()->to_string(c.path) + "\"]";
            if (!c.is_deleted) {
                auto vt = t.kind() == type_kind::map ? t.value_type() : t.kind() == type_kind::list ? t.element_type() : empty_type();
                _line += " = " + canonical_json_text(vt->to_json_string(c.value));
            }
            return;
        }
        if (c.is_deleted) {
            return;
        }
        if (t.is_counter()) {
            // The dump reads the counter context's first 8 bytes as a long.
            _line += " = " + (c.value.size() >= 8 ? std::to_string(read_be<int64_t>(c.value.data())) : std::string("?"));
            return;
        }
        _line += " = " + canonical_json_text(t.to_json_string(c.value));
    }
    std::string clustering_json(const clustering_values& ck) {
        std::string s = "[";
        for (size_t i = 0; i < ck.size(); ++i) {
            auto t = _h.clustering_types.at(i)->without_reversal();
            s += (i ? "," : "") + (ck[i] ? canonical_json_text(t->to_json_string(*ck[i])) : std::string("null"));
        }
        return s + "]";
    }
    void check_previous(uint64_t position, uint64_t previous_size, bool is_static) {
        // The previous unfiltered's whole size (flags to end); 0 for the first one after the partition header.
        uint64_t expected = _previous_end - _previous_start;
        if (is_static) {
            expected = 0;
        }
        // The first unfiltered after the partition header and static row: Cassandra counts from the partition's
        // start, Scylla writes 0.
        if (_previous_start == _partition_start || _previous_is_static) {
            expected = position - _partition_start;
            if (previous_size == 0) {
                expected = 0;
            }
        }
        if (previous_size != expected) {
            previous_size_errors.push_back("at " + std::to_string(position) + ": previous size " +
                                           std::to_string(previous_size) + ", expected " + std::to_string(expected));
        }
    }

    const serialization_header& _h;
    std::string _key, _line, _row_ts;
    tombstone _tomb;
    uint64_t _position = 0, _previous_start = 0, _previous_end = 0;
    bool _static = false;
    size_t _cells = 0;
    uint64_t _partition_start = 0;
    bool _previous_is_static = false;
    row_marker _row_marker;
};

std::string parse_to_log(const corpus_sstable& s, const std::function<size_t()>& next_size, bool known_end,
                         size_t full_every = 0, bool skip_odd_rows = false, size_t* rows = nullptr) {
    recording_consumer c;
    c.full_every = full_every;
    c.skip_odd_rows = skip_odd_rows;
    mx_parser p(*s.stats.header, s.data_path.native(), c, 0,
                known_end ? std::optional<uint64_t>(s.data.size()) : std::nullopt);
    drive_parser(p, s.data, next_size);
    if (rows) {
        *rows = c.rows;
    }
    return c.log;
}

// Random buffer sizes from 1 byte to 64 KiB, mostly small.
std::function<size_t()> random_sizes(std::mt19937& rng) {
    return [&rng] {
        switch (rng() % 4) {
        case 0: return size_t(1 + rng() % 8);
        case 1: return size_t(1 + rng() % 100);
        case 2: return size_t(1 + rng() % 4096);
        default: return size_t(1 + rng() % 65536);
        }
    };
}

// Every dataset of the corpus is a test case of its own (compressed ones are decompressed first).
const std::vector<std::string> dataset_names = corpus_dataset_names();

#ifdef REEF_DEBUG
constexpr bool debug_build = true;
#else
constexpr bool debug_build = false;
#endif

uint32_t test_seed() {
    if (auto s = std::getenv("REEF_SEED")) {
        return uint32_t(std::stoul(s));
    }
    return std::random_device{}();
}

} // namespace

namespace bdata = boost::unit_test::data;

BOOST_DATA_TEST_CASE(test_matches_the_dump, bdata::make(dataset_names), name) {
    auto corpus = require_peer_corpus();
    if (!corpus) {
        return;
    }
    auto dataset = *corpus / name;
    auto sstables = load_sstables(dataset);
    // Under ASan, the largest dumps (tens of MB of JSON) take minutes to read; dev mode compares them.
    auto json = read_corpus_file(expected_json_path(dataset), debug_build ? 8u << 20 : std::string::npos);
    if (!json) {
        BOOST_TEST_MESSAGE(name << ": the dump is too large for a debug build; compared in dev mode");
        return;
    }
    auto docs = read_json_documents(*json);
    BOOST_REQUIRE_EQUAL(docs.size(), sstables.size());
    size_t lines = 0;
    for (size_t i = 0; i < sstables.size(); ++i) {
        oracle_consumer c(*sstables[i].stats.header);
        mx_parser p(*sstables[i].stats.header, sstables[i].data_path.native(), c);
        drive_parser(p, sstables[i].data, [] { return size_t(1) << 20; });
        auto expected = from_dump(docs[i]);
        BOOST_REQUIRE_EQUAL(c.out.size(), expected.size());
        for (size_t k = 0; k < expected.size(); ++k) {
            BOOST_REQUIRE_EQUAL(c.out[k].header, expected[k].header);
            BOOST_REQUIRE_EQUAL(c.out[k].lines.size(), expected[k].lines.size());
            for (size_t l = 0; l < expected[k].lines.size(); ++l) {
                BOOST_REQUIRE_EQUAL(c.out[k].lines[l], expected[k].lines[l]);
            }
            lines += expected[k].lines.size();
        }
        for (auto& e : c.previous_size_errors) {
            BOOST_ERROR(e);
        }
    }
    BOOST_TEST_MESSAGE(name << ": " << lines << " rows and markers");
}

BOOST_DATA_TEST_CASE(test_buffer_splits_do_not_change_the_result, bdata::make(dataset_names), name) {
    auto corpus = require_peer_corpus();
    if (!corpus) {
        return;
    }
    auto seed = test_seed();
    BOOST_TEST_MESSAGE("seed " << seed);
    std::mt19937 rng(seed);
    BOOST_TEST_CONTEXT(name << " seed " << seed) {
        for (auto& s : load_sstables(*corpus / name)) {
            if (debug_build && s.data.size() > (2u << 20)) {
                BOOST_TEST_MESSAGE(name << ": too large for a debug build; checked in dev mode");
                continue;
            }
            auto whole = parse_to_log(s, [] { return size_t(1) << 30; }, true);
            // Byte by byte only for small files (it is slow under ASan).
            if (s.data.size() < (debug_build ? 2000 : 20000)) {
                BOOST_REQUIRE(parse_to_log(s, [] { return size_t(1); }, false) == whole);
            }
            int rounds = debug_build && s.data.size() > 100000 ? 0 : 3;
            for (int round = 0; round < rounds; ++round) {
                auto sizes = random_sizes(rng);
                BOOST_REQUIRE(parse_to_log(s, sizes, round % 2 == 0) == whole);
            }
            // Consumer stops change nothing either.
            auto sizes = random_sizes(rng);
            BOOST_REQUIRE(parse_to_log(s, sizes, false, 1 + rng() % 5) == whole);
        }
    }
}

BOOST_DATA_TEST_CASE(test_skipped_rows_leave_the_rest_intact, bdata::make(dataset_names), name) {
    auto corpus = require_peer_corpus();
    if (!corpus) {
        return;
    }
    auto seed = test_seed();
    std::mt19937 rng(seed);
    BOOST_TEST_CONTEXT(name << " seed " << seed) {
        for (auto& s : load_sstables(*corpus / name)) {
            if (debug_build && s.data.size() > (2u << 20)) {
                BOOST_TEST_MESSAGE(name << ": too large for a debug build; checked in dev mode");
                continue;
            }
            auto whole = parse_to_log(s, [] { return size_t(1) << 30; }, true);
            size_t rows = 0;
            auto skipping = parse_to_log(s, random_sizes(rng), false, 0, true, &rows);
            // The skipping log is the whole log without the cells of odd rows.
            std::string expected;
            size_t row = 0;
            bool dropping = false;
            size_t start = 0;
            while (start < whole.size()) {
                auto nl = whole.find('\n', start);
                auto line = std::string_view(whole).substr(start, nl - start + 1);
                start = nl + 1;
                if (line.starts_with("R ")) {
                    ++row;
                    dropping = row % 2 == 1;
                    expected += line;
                    if (dropping) {
                        expected += "  skipped\n";
                    }
                    continue;
                }
                if (line.starts_with("  ") && !line.starts_with("  row end")) {
                    if (!dropping) {
                        expected += line;
                    }
                    continue;
                }
                dropping = false;
                expected += line;
            }
            BOOST_REQUIRE(skipping == expected);
        }
    }
}

// Prefixes of small Data.db files: an error naming an offset inside the prefix, or (only when the prefix ends
// exactly at a partition boundary) the partitions before it.
BOOST_DATA_TEST_CASE(test_every_truncation_fails_cleanly,
                     bdata::make(std::vector<std::string>{"scylla_simple", "scylla_collections",
                                                          "scylla_range_tombstones_simple", "scylla_filtering_and_forwarding",
                                                          "scylla_deleted_cells", "scylla_write_ttled_row",
                                                          "scylla_counters", "scylla_compound_ck",
                                                          "gen_nb_all_types_uncompressed"}),
                     name) {
    auto corpus = require_peer_corpus();
    if (!corpus) {
        return;
    }
    auto s = load_sstables(*corpus / name).at(0);
    recording_consumer all;
    mx_parser whole(*s.stats.header, "x", all);
    drive_parser(whole, s.data, [] { return size_t(1) << 30; });
    // Partition boundaries: where the stream starts and where each partition ends.
    std::vector<uint64_t> boundaries{0};
    for (size_t pos = all.log.find("E "); pos != std::string::npos; pos = all.log.find("E ", pos + 1)) {
        if (pos == 0 || all.log[pos - 1] == '\n') {
            boundaries.push_back(std::stoull(all.log.substr(pos + 2)));
        }
    }
    // Every prefix of files up to 1000 bytes; of larger ones, every 7th (41st under ASan) and those near a boundary.
    size_t stride = s.data.size() <= 1000 ? 1 : debug_build ? 41 : 7;
    size_t tried = 0;
    for (size_t n = 0; n < s.data.size(); ++n) {
        bool near_boundary = std::any_of(boundaries.begin(), boundaries.end(),
                                         [n](uint64_t b) { return n + 2 >= b && n <= b + 2; });
        if (n % stride && !near_boundary) {
            continue;
        }
        ++tried;
        std::span<const std::byte> prefix(s.data.data(), n);
        bool boundary = std::find(boundaries.begin(), boundaries.end(), n) != boundaries.end();
        for (bool known_end : {false, true}) {
            recording_consumer c;
            mx_parser p(*s.stats.header, "truncated-Data.db", c, 0,
                        known_end ? std::optional<uint64_t>(n) : std::nullopt);
            try {
                drive_parser(p, prefix, [n] { return size_t(1 + n % 7); });
                BOOST_CHECK_MESSAGE(boundary, "a prefix of " << n << " bytes parsed without error");
                BOOST_CHECK(all.log.starts_with(c.log));
            } catch (const malformed_sstable_exception& e) {
                BOOST_CHECK_MESSAGE(!boundary, "the prefix of " << n << " bytes ends at a partition boundary");
                BOOST_CHECK_EQUAL(e.file(), "truncated-Data.db");
                BOOST_CHECK_LE(e.offset(), n);
            }
        }
    }
    BOOST_TEST_MESSAGE(name << ": " << tried << " prefixes");
}

// Random byte flips, insertions and deletions: a clean error or a successful parse, never a crash (ASan
// checks the reads in debug mode) or a hang.
BOOST_AUTO_TEST_CASE(test_corrupt_data_fails_cleanly) {
    auto corpus = require_peer_corpus();
    if (!corpus) {
        return;
    }
    auto seed = test_seed();
    BOOST_TEST_MESSAGE("seed " << seed);
    std::mt19937 rng(seed);
    size_t errors = 0, successes = 0;
    for (const char* name : {"scylla_simple", "scylla_collections", "scylla_range_tombstones_simple",
                             "scylla_filtering_and_forwarding", "scylla_deleted_cells", "scylla_compound_ck",
                             "scylla_counters", "gen_nb_all_types_uncompressed", "gen_me_all_types_uncompressed"}) {
        BOOST_TEST_CONTEXT(name << " seed " << seed) {
            auto s = load_sstables(*corpus / name).at(0);
            for (int round = 0; round < 400; ++round) {
                auto copy = s.data;
                int edits = 1 + rng() % 3;
                for (int e = 0; e < edits && !copy.empty(); ++e) {
                    size_t at = rng() % copy.size();
                    switch (rng() % 4) {
                    case 0: copy[at] ^= std::byte(1u << (rng() % 8)); break;
                    case 1: copy[at] = std::byte(rng()); break;
                    case 2: copy.erase(copy.begin() + at); break;
                    default: copy.insert(copy.begin() + at, std::byte(rng())); break;
                    }
                }
                recording_consumer c;
                mx_parser p(*s.stats.header, "corrupt-Data.db", c, 0,
                            rng() % 2 ? std::optional<uint64_t>(copy.size()) : std::nullopt);
                try {
                    auto sizes = random_sizes(rng);
                    drive_parser(p, copy, sizes);
                    ++successes;
                } catch (const malformed_sstable_exception& e) {
                    ++errors;
                    BOOST_CHECK_LE(e.offset(), copy.size());
                    // A failed parser keeps failing.
                    BOOST_CHECK_THROW(p.run(), malformed_sstable_exception);
                }
            }
        }
    }
    BOOST_TEST_MESSAGE(errors << " errors, " << successes << " parses");
    BOOST_CHECK_GT(errors, 0u);
}

BOOST_AUTO_TEST_CASE(test_errors_name_what_was_expected) {
    auto corpus = require_peer_corpus();
    if (!corpus) {
        return;
    }
    auto s = load_sstables(*corpus / "scylla_simple").at(0);
    // The first partition: key length 4, key, 12 bytes of deletion, then the row flags at 18.
    auto copy = s.data;
    copy[18] = std::byte(0x03);  // end of partition with the marker flag
    recording_consumer c;
    mx_parser p(*s.stats.header, "x-Data.db", c);
    try {
        drive_parser(p, copy, [] { return size_t(1000); });
        BOOST_FAIL("no error");
    } catch (const malformed_sstable_exception& e) {
        BOOST_CHECK_EQUAL(e.offset(), 18u);
        BOOST_CHECK_EQUAL(e.file(), "x-Data.db");
        BOOST_CHECK_MESSAGE(std::string(e.what()).find("flags") != std::string::npos, e.what());
    }
    // A partition key length past the end of a known stream is refused at once.
    copy = s.data;
    copy[0] = std::byte(0x7f);
    recording_consumer c2;
    mx_parser p2(*s.stats.header, "x-Data.db", c2, 0, copy.size());
    try {
        drive_parser(p2, copy, [] { return size_t(1); });
        BOOST_FAIL("no error");
    } catch (const malformed_sstable_exception& e) {
        BOOST_CHECK_EQUAL(e.offset(), 2u);
        BOOST_CHECK_MESSAGE(std::string(e.what()).find("impossible length") != std::string::npos, e.what());
    }
}

namespace {

// Stops the parser at the first partition end.
class until_partition_end : public recording_consumer {
public:
    bool ended = false;
    proceed consume_partition_end(uint64_t end) override {
        recording_consumer::consume_partition_end(end);
        ended = true;
        return proceed::no;
    }
};

} // namespace

// Starting at a row or marker inside a partition (a promoted index block's offset) gives the rest of that
// partition as the whole parse has it, with no partition start and no static row.
BOOST_DATA_TEST_CASE(test_starting_inside_a_partition, bdata::make(dataset_names), name) {
    auto corpus = require_peer_corpus();
    if (!corpus) {
        return;
    }
    auto seed = test_seed();
    std::mt19937 rng(seed);
    BOOST_TEST_CONTEXT(name << " seed " << seed) {
        for (auto& s : load_sstables(*corpus / name)) {
            if (debug_build && s.data.size() > 300000) {
                continue;
            }
            auto whole = parse_to_log(s, [] { return size_t(1) << 30; }, true);
            // The offsets of every row and marker (not static rows), where their lines start in the log, and
            // where their partition's end line starts.
            struct start_point {
                uint64_t offset;
                size_t line;
                size_t end_line;
            };
            std::vector<size_t> line_starts;
            for (size_t pos = 0; pos < whole.size(); pos = whole.find('\n', pos) + 1) {
                line_starts.push_back(pos);
            }
            std::vector<start_point> starts;
            size_t next_end = std::string::npos;
            for (size_t i = line_starts.size(); i-- > 0;) {
                size_t pos = line_starts[i];
                if (whole.compare(pos, 2, "E ") == 0) {
                    next_end = pos;
                } else if (whole.compare(pos, 2, "R ") == 0 || whole.compare(pos, 2, "M ") == 0) {
                    auto at = whole.find('@', pos);
                    starts.push_back({std::stoull(whole.substr(at + 1, 20)), pos, next_end});
                }
            }
            std::shuffle(starts.begin(), starts.end(), rng);
            size_t tried = 0;
            for (auto [offset, line, end_line] : starts) {
                // Long remainders of huge partitions are left out (each start parses to its partition's end).
                if (end_line - line > 20000) {
                    continue;
                }
                if (++tried > 40) {
                    break;
                }
                auto expected = whole.substr(line, whole.find('\n', end_line) + 1 - line);
                until_partition_end c;
                mx_parser p(*s.stats.header, s.data_path.native(), c, offset, s.data.size(),
                            mx_parser::start_at::inside_partition);
                auto sizes = random_sizes(rng);
                size_t pos = offset;
                while (!c.ended) {
                    auto step = p.run();
                    BOOST_REQUIRE(step.what != parse_step::kind::done);
                    if (step.what == parse_step::kind::need_more_data) {
                        size_t n = std::min(sizes(), s.data.size() - size_t(pos));
                        p.feed(std::span<const std::byte>(s.data).subspan(pos, n));
                        pos += n;
                    }
                }
                BOOST_REQUIRE_EQUAL(c.log, expected);
            }
            BOOST_TEST_MESSAGE(name << ": " << std::min<size_t>(tried, 40) << " starts inside partitions");
        }
    }
}

// parser_input's vints: values of every encoded length, fed in random splits (so each is read whole from a
// buffer, across buffers, or from the stage), come back as utils::try_decode_unsigned_vint reads them.
BOOST_AUTO_TEST_CASE(test_parser_input_vints_in_any_split) {
    std::mt19937_64 rng(7);
    for (int round = 0; round < 300; ++round) {
        std::vector<uint64_t> values;
        std::string bytes;
        for (int i = 0; i < 50; ++i) {
            uint64_t v = rng() >> (rng() % 64);
            values.push_back(v);
            utils::append_unsigned_vint(bytes, v);
        }
        parser_input in("vints", 0, bytes.size());
        size_t fed = 0;
        auto feed_more = [&] {
            size_t n = std::min<size_t>(bytes.size() - fed, 1 + rng() % 12);
            in.feed(std::as_bytes(std::span<const char>(bytes.data() + fed, n)));
            fed += n;
        };
        feed_more();
        for (size_t i = 0; i < values.size(); ++i) {
            uint64_t v = 0;
            while (!in.read_unsigned_vint(v, "a test vint")) {
                BOOST_REQUIRE_LT(fed, bytes.size());
                feed_more();
            }
            BOOST_REQUIRE_EQUAL(v, values[i]);
        }
        BOOST_CHECK_EQUAL(in.offset(), bytes.size());
    }
}
