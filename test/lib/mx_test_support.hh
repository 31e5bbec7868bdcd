// Helpers of the Data.db parser tests: a consumer that records everything it is told as text, a driver that
// feeds a byte string to an mx_parser in buffers of chosen sizes, and the corpus' uncompressed datasets.
#pragma once

#include "sstables/compression_info.hh"
#include "sstables/compressor.hh"
#include "sstables/mx_parser.hh"
#include "sstables/partitioner.hh"
#include "sstables/statistics.hh"
#include "sstables/version.hh"
#include "reader/mutation_reader.hh"
#include "mutation/token.hh"
#include "test/lib/peer_corpus.hh"

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace reef::testing {

inline std::string hex_of(bytes_view b) {
    static const char d[] = "0123456789abcdef";
    std::string s;
    for (auto c : b) {
        s += d[c >> 4];
        s += d[c & 15];
    }
    return s;
}

inline std::string tomb_text(const tombstone& t) {
    return t ? std::to_string(t.timestamp) + "/" + std::to_string(t.deletion_time) : std::string("-");
}

// Records every callback as a line of text; optionally says "stop" every n-th time it can, and skips rows.
class recording_consumer : public sstables::mx_consumer {
public:
    std::string log;
    size_t partitions = 0, rows = 0, static_rows = 0, markers = 0, cells = 0;
    size_t full_every = 0;  // 0: never full
    bool skip_odd_rows = false;

    proceed consume_partition_start(bytes_view key, tombstone d, uint64_t pos, uint64_t header_end) override {
        ++partitions;
        log += "P " + hex_of(key) + " " + tomb_text(d) + " @" + std::to_string(pos) + "-" + std::to_string(header_end) + "\n";
        return maybe_full();
    }
    row_action consume_row_start(const sstables::mx_row& r) override {
        (r.is_static ? static_rows : rows)++;
        log += std::string(r.is_static ? "S" : "R") + " @" + std::to_string(r.position) + " prev " +
               std::to_string(r.previous_size) + " end " + std::to_string(r.end) + " ck";
        for (auto& v : *r.clustering) {
            log += v ? " " + hex_of(*v) : std::string(" null");
        }
        log += " m " + std::to_string(r.marker.timestamp) + "/" + std::to_string(r.marker.ttl) + "/" +
               std::to_string(r.marker.expiry) + " d " + tomb_text(r.deletion) + (r.shadowable_deletion ? " shadowable" : "") + "\n";
        if (skip_odd_rows && !r.is_static && (rows % 2)) {
            log += "  skipped\n";
            return row_action::skip;
        }
        return row_action::read;
    }
    void consume_cell(const sstables::mx_cell& c) override {
        ++cells;
        log += "  c" + std::to_string(c.column) + " " + hex_of(c.path) + " ts " + std::to_string(c.timestamp) + " ttl " +
               std::to_string(c.ttl) + " ldt " + std::to_string(c.local_deletion_time) + (c.is_deleted ? " dead" : "") +
               (c.is_expiring ? " exp" : "") + " = " + hex_of(c.value) + "\n";
    }
    void consume_complex_start(column_id col, tombstone t) override {
        log += "  complex " + std::to_string(col) + " " + tomb_text(t) + "\n";
    }
    void consume_complex_end() override { log += "  end complex\n"; }
    proceed consume_row_end(const sstables::mx_row& r) override {
        log += "  row end " + std::to_string(r.end) + "\n";
        return maybe_full();
    }
    proceed consume_range_tombstone(const sstables::mx_marker& m) override {
        ++markers;
        log += "M " + std::to_string(int(m.kind)) + " @" + std::to_string(m.position) + " prev " +
               std::to_string(m.previous_size) + " ck";
        for (auto& v : *m.clustering) {
            log += v ? " " + hex_of(*v) : std::string(" null");
        }
        log += " " + tomb_text(m.tomb) + " " + tomb_text(m.boundary_start_tomb) + "\n";
        return maybe_full();
    }
    proceed consume_partition_end(uint64_t end) override {
        log += "E " + std::to_string(end) + "\n";
        return maybe_full();
    }

private:
    size_t _calls = 0;
    proceed maybe_full() { return full_every && ++_calls % full_every == 0 ? proceed::no : proceed::yes; }
};

// The uncompressed Data.db stream: the file itself, or its chunks decompressed (checksums are the checked
// sources' business; their tests check them).
inline std::vector<std::byte> uncompressed_data(const std::filesystem::path& data_path) {
    auto d = sstables::descriptor::from_path(data_path.string());
    auto stored = read_file(data_path);
    auto ci_path = d.filename(sstables::component_type::compression_info);
    if (!std::filesystem::exists(ci_path)) {
        std::vector<std::byte> b(stored.size());
        std::memcpy(b.data(), stored.data(), stored.size());
        return b;
    }
    auto ci = sstables::parse_compression_info(read_file(ci_path), d.version, ci_path, stored.size());
    std::vector<std::byte> out(ci.data_length);
    for (size_t i = 0; i < ci.chunk_count(); ++i) {
        uint64_t start = ci.chunk_offsets[i];
        uint64_t stop = (i + 1 < ci.chunk_count() ? ci.chunk_offsets[i + 1] : stored.size()) - 4;
        uint64_t len = ci.uncompressed_chunk_length(i);
        auto chunk = std::string_view(stored).substr(start, stop - start);
        char* dst = reinterpret_cast<char*>(out.data()) + i * uint64_t(ci.chunk_length);
        if (chunk.size() >= ci.max_compressed_length) {
            BOOST_REQUIRE_EQUAL(chunk.size(), len);
            std::memcpy(dst, chunk.data(), len);
        } else if (len > 0) {
            sstables::decompress_chunk(ci.algorithm, chunk, dst, len, data_path.string(), start);
        }
    }
    return out;
}

// Feeds data to the parser, next_size() bytes at a time, until it is done; returns the number of stops.
// Fails the test if the parser asks for data after the end of the stream was fed (it would hang).
// Moves the fragments a consumer has buffered out, in order, leaving its buffer empty.
inline std::vector<mutation_fragment> take_fragments(fragment_buffer& buf) {
    std::vector<mutation_fragment> out;
    out.reserve(buf.size());
    for (; !buf.empty(); buf.pop_front()) {
        out.push_back(std::move(buf.front()));
    }
    return out;
}

inline size_t drive_parser(sstables::mx_parser& p, std::span<const std::byte> data, const std::function<size_t()>& next_size) {
    size_t pos = 0;
    bool eof = false;
    size_t stops = 0;
    auto feed = [&] {
        if (pos >= data.size()) {
            BOOST_REQUIRE_MESSAGE(!eof, "the parser asked for more data after the end of the stream");
            p.feed_end_of_stream();
            eof = true;
            return;
        }
        size_t n = std::min(std::max<size_t>(next_size(), 1), data.size() - pos);
        p.feed(data.subspan(pos, n));
        pos += n;
    };
    while (true) {
        auto s = p.run();
        ++stops;
        switch (s.what) {
        case sstables::parse_step::kind::need_more_data: feed(); break;
        case sstables::parse_step::kind::skip:
            pos += s.bytes;
            feed();
            break;
        case sstables::parse_step::kind::consumer_full: break;
        case sstables::parse_step::kind::done: return stops;
        }
    }
}

inline std::vector<std::byte> read_bytes(const std::filesystem::path& p) {
    auto s = read_file(p);
    std::vector<std::byte> b(s.size());
    std::memcpy(b.data(), s.data(), s.size());
    return b;
}

// One sstable of a corpus dataset: its Data.db path, uncompressed bytes and Statistics.
struct corpus_sstable {
    std::filesystem::path data_path;
    std::vector<std::byte> data;
    sstables::statistics stats;
};

// The sstables of a dataset folder, in file name order (the order of expected.json's documents).
inline std::vector<corpus_sstable> load_sstables(const std::filesystem::path& dataset) {
    std::vector<std::filesystem::path> data_files;
    for (auto& e : std::filesystem::directory_iterator(dataset)) {
        if (e.path().filename().string().ends_with("-Data.db")) {
            data_files.push_back(e.path());
        }
    }
    std::sort(data_files.begin(), data_files.end());
    std::vector<corpus_sstable> out;
    for (auto& p : data_files) {
        auto d = sstables::descriptor::from_path(p.string());
        auto stats_path = d.filename(sstables::component_type::statistics);
        auto stats_bytes = read_bytes(stats_path);
        out.push_back({p, uncompressed_data(p), sstables::parse_statistics(stats_bytes, d.version, stats_path)});
    }
    return out;
}

// The corpus' dataset names, sorted; {"<no corpus>"} when it is absent (a data test case needs a sample; the
// test then skips). Evaluated when test cases register, so each dataset is a test case of its own.
inline std::vector<std::string> corpus_dataset_names() {
    auto corpus = peer_corpus_dir();
    std::vector<std::string> out;
    if (corpus) {
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

// The partitioner's token order for the fragment stream validator (sstables/partitioner.hh).
inline std::function<dht::token(bytes_view)> token_function_for(const std::string& partitioner) {
    return sstables::partitioner_token_function(partitioner);
}

} // namespace reef::testing
