// The libFuzzer targets' bodies (test/fuzz/fuzz_*.cc run them; test/unit/sstables/fuzz_regressions_test replays
// committed findings through them with g++): each parses one input and lets only malformed_sstable_exception,
// the expected answer to bad input, through as "handled"; any other exception escapes.
#pragma once

#include "sstables/exceptions.hh"
#include "sstables/index_entry.hh"
#include "sstables/mx_fragments.hh"
#include "sstables/mx_parser.hh"
#include "sstables/statistics.hh"
#include "sstables/version.hh"

#include <algorithm>
#include <span>
#include <string_view>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

namespace reef::fuzz {

// The sstable whose serialization header and version the Index.db and Data.db targets parse with.
struct dataset {
    sstables::sstable_version version;
    sstables::serialization_header header;
    schema_ptr table;
};

inline std::vector<std::byte> read_bytes(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::vector<std::byte> out(s.size());
    for (size_t i = 0; i < s.size(); ++i) {
        out[i] = std::byte(s[i]);
    }
    return out;
}

// The first sstable (by file name) of a dataset folder; exits when it is not readable, since every input would
// then be judged against the wrong schema.
inline dataset load_dataset(const std::filesystem::path& dir) {
    std::optional<std::filesystem::path> stats;
    for (auto& e : std::filesystem::directory_iterator(dir)) {
        auto name = e.path().filename().string();
        if (name.ends_with("-Statistics.db") && (!stats || e.path() < *stats)) {
            stats = e.path();
        }
    }
    if (!stats) {
        std::fprintf(stderr, "no Statistics.db in %s\n", dir.c_str());
        std::exit(2);
    }
    auto d = sstables::descriptor::from_path(stats->string());
    auto bytes = read_bytes(*stats);
    auto st = sstables::parse_statistics(bytes, d.version, stats->string());
    if (!st.header) {
        std::fprintf(stderr, "%s has no serialization header\n", stats->c_str());
        std::exit(2);
    }
    auto table = sstables::schema_from_header(*st.header);
    return {d.version, std::move(*st.header), std::move(table)};
}

// The dataset REEF_FUZZ_DATASET names (a peer corpus folder).
inline dataset load_dataset_from_env() {
    const char* dir = std::getenv("REEF_FUZZ_DATASET");
    if (!dir) {
        std::fprintf(stderr, "REEF_FUZZ_DATASET must name a corpus dataset folder (its Statistics.db gives the "
                             "serialization header and the version)\n");
        std::exit(2);
    }
    return load_dataset(dir);
}

// Statistics.db: a byte choosing the version (mc, md, me, na, nb), then the file.
inline void statistics_input(std::span<const uint8_t> in) {
    if (in.empty()) {
        return;
    }
    static constexpr sstables::sstable_version versions[] = {
        sstables::sstable_version::mc, sstables::sstable_version::md, sstables::sstable_version::me,
        sstables::sstable_version::na, sstables::sstable_version::nb};
    try {
        auto st = sstables::parse_statistics(std::as_bytes(in.subspan(1)), versions[in[0] % std::size(versions)],
                                             "fuzz-Statistics.db");
        (void)st;
    } catch (const sstables::malformed_sstable_exception&) {
    }
}

// Index.db: the entries, then every promoted-index block decoded with the dataset's clustering types.
inline void index_input(const dataset& ds, std::span<const uint8_t> in) {
    std::string_view bytes(reinterpret_cast<const char*>(in.data()), in.size());
    const std::string file = "fuzz-Index.db";
    try {
        auto len = sstables::index_entry_length(bytes, file, 0);
        (void)len;
        for (auto& e : sstables::parse_index_entries(bytes, ds.version, file)) {
            if (e.promoted) {
                auto blocks = e.promoted->all_blocks(ds.header.clustering_types, ds.version, file);
                (void)blocks;
            }
        }
    } catch (const sstables::malformed_sstable_exception&) {
    }
}

// Data.db: a byte choosing the size of the buffers the stream is fed in (1 byte to 8 KiB, so every value
// straddles buffers somewhere), then the uncompressed stream, parsed into fragments. Aborts when the parser
// asks for data after the end of the stream (it would wait forever).
inline void data_input(const dataset& ds, std::span<const uint8_t> in) {
    if (in.empty()) {
        return;
    }
    size_t chunk = in[0] < 16 ? size_t(in[0]) + 1 : size_t(in[0]) * 32;
    auto stream = std::as_bytes(in.subspan(1));
    const std::string file = "fuzz-Data.db";
    try {
        sstables::mx_fragment_consumer consumer(ds.table, ds.header, file, 16);
        sstables::mx_parser p(ds.header, file, consumer, 0, stream.size());
        size_t pos = 0;
        bool eof = false;
        while (true) {
            auto step = p.run();
            if (step.what == sstables::parse_step::kind::done) {
                break;
            }
            if (step.what == sstables::parse_step::kind::consumer_full) {
                consumer.buffer().clear();
                continue;
            }
            if (step.what == sstables::parse_step::kind::skip) {
                pos += step.bytes;
            }
            if (pos >= stream.size()) {
                if (eof) {
                    std::fprintf(stderr, "the parser asked for data after the end of the stream\n");
                    std::abort();
                }
                p.feed_end_of_stream();
                eof = true;
                continue;
            }
            size_t n = std::min(chunk, stream.size() - pos);
            p.feed(stream.subspan(pos, n));
            pos += n;
        }
    } catch (const sstables::malformed_sstable_exception&) {
    }
}

} // namespace reef::fuzz
