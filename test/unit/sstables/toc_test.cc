// Tests of TOC.txt: every corpus TOC lists exactly the component files its sstable has (so discovery from the
// directory agrees with it), an sstable whose TOC is missing is discovered, and malformed TOCs are refused.
#include "sstables/exceptions.hh"
#include "sstables/toc.hh"
#include "test/lib/reef_test.hh"
#include "test/lib/sstable_corpus.hh"
#include "test/lib/tmpdir.hh"

#include <boost/test/unit_test.hpp>

using namespace reef;
using namespace reef::sstables;

REEF_TEST_CASE(test_corpus_tocs_match_the_files) {
    size_t n = 0;
    for (auto& t : reef::testing::all_test_sstables()) {
        BOOST_TEST_CONTEXT(t.name()) {
            auto listed = co_await read_toc(t.desc);
            auto found = co_await discover_components(t.desc);
            BOOST_CHECK(listed.components == found.components);
            BOOST_CHECK(listed.unknown.empty());
            auto either = co_await read_or_discover_toc(t.desc);
            BOOST_CHECK(either.components == listed.components);
            ++n;
        }
    }
    BOOST_TEST_MESSAGE("TOCs checked: " << n);
}

REEF_TEST_CASE(test_missing_toc_is_discovered) {
    auto all = reef::testing::all_test_sstables();
    if (all.empty()) {
        co_return;
    }
    reef::testing::tmpdir dir;
    // Two sstables side by side: discovery must keep them apart.
    for (auto* t : {&all.front(), &all.back()}) {
        for (auto& f : std::filesystem::directory_iterator(t->dataset)) {
            auto name = f.path().filename().string();
            if (name.find("-big-") != std::string::npos && name.rfind(t->desc.filename(component_type::data).substr(t->desc.directory.size() + 1, 6), 0) == 0) {
                std::filesystem::copy_file(f.path(), dir.path() + "/" + name, std::filesystem::copy_options::overwrite_existing);
            }
        }
    }
    auto d = all.front().desc;
    d.directory = dir.path();
    auto listed = co_await read_toc(d);
    std::filesystem::remove(d.filename(component_type::toc));
    auto found = co_await read_or_discover_toc(d);
    listed.components.erase(component_type::toc);
    BOOST_CHECK(found.components == listed.components);
    // Without Data.db there is no sstable.
    std::filesystem::remove(d.filename(component_type::data));
    BOOST_CHECK_THROW(co_await discover_components(d), malformed_sstable_exception);
}

BOOST_AUTO_TEST_CASE(test_toc_parsing) {
    auto t = parse_toc("Data.db\r\nIndex.db  \n\nFancy.db\nTOC.txt", "x-TOC.txt");
    BOOST_CHECK(t.has(component_type::data));
    BOOST_CHECK(t.has(component_type::index));
    BOOST_CHECK(t.has(component_type::toc));
    BOOST_CHECK_EQUAL(t.components.size(), 3u);
    BOOST_REQUIRE_EQUAL(t.unknown.size(), 1u);
    BOOST_CHECK_EQUAL(t.unknown[0], "Fancy.db");
    try {
        parse_toc("Index.db\nTOC.txt\n", "x-TOC.txt");
        BOOST_FAIL("a TOC without Data.db parsed");
    } catch (const malformed_sstable_exception& e) {
        BOOST_CHECK_EQUAL(e.file(), "x-TOC.txt");
    }
    try {
        parse_toc(std::string_view("Data.db\nInd\0x.db\n", 17), "x-TOC.txt");
        BOOST_FAIL("a TOC with a NUL parsed");
    } catch (const malformed_sstable_exception& e) {
        BOOST_CHECK_EQUAL(e.offset(), 11u);
    }
}
