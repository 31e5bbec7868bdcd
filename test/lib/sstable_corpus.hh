// Every sstable the component tests read: each one of the peer corpus (../shared/peer-sstables) and of
// test/resource/sstables (small sets generated for codecs the corpus lacks), with its dataset's schema.cql.
#pragma once

#include "cql/cql_parser.hh"
#include "sstables/version.hh"
#include "test/lib/peer_corpus.hh"

#include <filesystem>
#include <string>
#include <vector>

namespace reef::testing {

struct corpus_sstable {
    std::filesystem::path dataset;
    sstables::descriptor desc;
    // Null when the dataset's schema.cql is one our parser does not take (e.g. COMPACT STORAGE).
    schema_ptr table;

    std::string name() const { return dataset.filename().string() + "/" + desc.filename(sstables::component_type::data).substr(desc.directory.size() + 1); }
    std::string path(sstables::component_type c) const { return desc.filename(c); }
    bool has(sstables::component_type c) const { return std::filesystem::exists(path(c)); }
};

inline std::vector<corpus_sstable> sstables_in(const std::filesystem::path& root) {
    namespace fs = std::filesystem;
    std::vector<fs::path> datasets;
    for (auto& e : fs::directory_iterator(root)) {
        if (e.is_directory() && e.path().filename().string()[0] != '_') {
            datasets.push_back(e.path());
        }
    }
    std::sort(datasets.begin(), datasets.end());
    std::vector<corpus_sstable> out;
    for (auto& d : datasets) {
        schema_ptr table;
        if (fs::exists(d / "schema.cql")) {
            try {
                table = parse_create_table(read_file(d / "schema.cql"));
            } catch (const std::exception&) {
            }
        }
        std::vector<fs::path> datas;
        for (auto& f : fs::directory_iterator(d)) {
            auto n = f.path().filename().string();
            if (n.size() > 8 && n.ends_with("-Data.db")) {
                datas.push_back(f.path());
            }
        }
        std::sort(datas.begin(), datas.end());
        for (auto& p : datas) {
            out.push_back(corpus_sstable{d, sstables::descriptor::from_path(p.string()), table});
        }
    }
    return out;
}

// The peer corpus' sstables then test/resource's; empty (after require_peer_corpus's message) without the corpus.
inline std::vector<corpus_sstable> all_test_sstables() {
    std::vector<corpus_sstable> out;
    if (auto dir = require_peer_corpus()) {
        out = sstables_in(*dir);
    } else {
        return out;
    }
    if (auto res = resource_sstables_dir()) {
        auto more = sstables_in(*res);
        out.insert(out.end(), more.begin(), more.end());
    }
    return out;
}

} // namespace reef::testing
