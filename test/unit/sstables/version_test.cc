// Tests of sstable version and component names: every name in the peer corpus parses, prints back, and bad
// names are refused with the path in the message.
#include "sstables/version.hh"
#include "test/lib/peer_corpus.hh"

#include <boost/test/unit_test.hpp>
#include <filesystem>

using namespace reef::sstables;

BOOST_AUTO_TEST_CASE(test_names_round_trip) {
    component_type c;
    auto d = descriptor::from_path("/a/b/me-12-big-Data.db", &c);
    BOOST_CHECK_EQUAL(d.directory, "/a/b");
    BOOST_CHECK(d.version == sstable_version::me);
    BOOST_CHECK_EQUAL(d.generation, "12");
    BOOST_CHECK_EQUAL(d.format, "big");
    BOOST_CHECK(c == component_type::data);
    BOOST_CHECK_EQUAL(d.filename(component_type::toc), "/a/b/me-12-big-TOC.txt");
    auto u = descriptor::from_path("nb-3g7a_0pyd_2pqox2ro6eu9vkdz5k-big-Digest.crc32", &c);
    BOOST_CHECK_EQUAL(u.generation, "3g7a_0pyd_2pqox2ro6eu9vkdz5k");
    BOOST_CHECK(c == component_type::digest);
    auto old = descriptor::from_path("ks-tbl-mc-5-big-Index.db", &c);
    BOOST_CHECK(old.version == sstable_version::mc);
    BOOST_CHECK_EQUAL(old.generation, "5");
    BOOST_CHECK(c == component_type::index);
    BOOST_CHECK_THROW(descriptor::from_path("/x/ka-1-big-Data.db"), std::invalid_argument);
    BOOST_CHECK_THROW(descriptor::from_path("Data.db"), std::invalid_argument);
    try {
        descriptor::from_path("/x/zz-1-big-Data.db");
    } catch (const std::invalid_argument& e) {
        BOOST_CHECK(std::string(e.what()).find("/x/zz-1-big-Data.db") != std::string::npos);
    }
}

BOOST_AUTO_TEST_CASE(test_every_corpus_file_name_parses) {
    namespace fs = std::filesystem;
    auto corpus = reef::testing::require_peer_corpus();
    if (!corpus) {
        return;
    }
    size_t n = 0;
    for (auto& dir : fs::directory_iterator(*corpus)) {
        if (!dir.is_directory() || dir.path().filename().string().starts_with("_")) {
            continue;
        }
        for (auto& f : fs::directory_iterator(dir.path())) {
            auto name = f.path().filename().string();
            if (name.starts_with("expected.json") || name == "schema.cql") {
                continue;
            }
            component_type c;
            auto d = descriptor::from_path(f.path().string(), &c);
            BOOST_CHECK_MESSAGE(c != component_type::unknown, name);
            BOOST_CHECK_EQUAL(d.filename(c), f.path().string());
            ++n;
        }
    }
    BOOST_CHECK_GT(n, 300u);
}
