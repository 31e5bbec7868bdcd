// The partition index reader: random memtables written to sstables with tiny summary intervals (many pages), then
// random partition ranges and ring positions looked up through the summary and Index.db pages, compared with a
// binary search over every Index.db entry; a second identical lookup reads nothing from disk; batches of keys
// (find_all) against the same list.
#include "cache/cached_file.hh"
#include "cache/read_caches.hh"
#include "db/memtable.hh"
#include "db/memtable_reader.hh"
#include "index/index_reader.hh"
#include "runtime/file.hh"
#include "runtime/reactor.hh"
#include "sstables/components.hh"
#include "sstables/index_entry.hh"
#include "sstables/index_pages.hh"
#include "sstables/sstable.hh"
#include "sstables/writer.hh"
#include "test/lib/mutation_model.hh"
#include "test/lib/random_mutation.hh"
#include "test/lib/reef_test.hh"
#include "test/lib/simple_keys.hh"
#include "test/lib/tmpdir.hh"
#include "test/lib/writable_mutation.hh"

#include <boost/test/unit_test.hpp>

#include <algorithm>

using namespace reef;
using namespace reef::sstables;
using namespace reef::testing;

namespace {

// The expected Data.db position of the first entry for which skip is false.
uint64_t expected_first_not(const std::vector<index_entry>& all, uint64_t data_length,
                            const std::function<bool(const dht::decorated_key&)>& skip) {
    for (auto& e : all) {
        if (!skip(dht::decorated_key(e.key))) {
            return e.data_position;
        }
    }
    return data_length;
}

} // namespace

REEF_TEST_CASE(index_reader_matches_every_entry) {
    uint64_t seed = pick_seed();
    BOOST_TEST_MESSAGE("seed " << seed << " (set REEF_SEED to repeat)");
#ifdef REEF_DEBUG
    constexpr int cases = 12;
#else
    constexpr int cases = 40;
#endif
    tmpdir dir;
    int generation = 0;
    size_t lookups = 0, pages_seen = 0;
    auto s = random_test_schemas().front();
    mutation_generator g(s, seed);
    for (int i = 0; i < cases; ++i) {
        BOOST_TEST_CONTEXT("seed " << seed << " case " << i) {
            auto mt = std::make_shared<memtable>(s);
            std::vector<dht::decorated_key> keys;
            int partitions = g.rnd(0, 4) == 0 ? g.rnd(0, 3) : g.rnd(20, 300);
            for (int p = 0; p < partitions; ++p) {
                auto m = with_typed_values(s, g.make(pkey(g.rnd(0, 100000)), 2));
                keys.push_back(m.decorated_key());
                mt->apply(m);
            }
            std::sort(keys.begin(), keys.end());
            keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
            writer_options o;
            o.min_index_interval = g.rnd(1, 8);
            o.column_index_size = g.rnd(0, 1) ? 1 : 64 * 1024;
            descriptor d{dir.path(), sstable_version::me, std::to_string(++generation), "big"};
            auto reader = make_memtable_reader(mt, s, read_options{});
            co_await write_sstable(reader, s, d, o);
            co_await reader.close();

            auto comps = co_await load_components(d);
            auto index_path = d.filename(component_type::index);
            auto all = parse_index_entries(co_await read_entire_file(index_path), d.version, index_path);
            BOOST_REQUIRE_EQUAL(all.size(), keys.size());
            cache::cache_tracker tracker(size_t(64) << 20);
            auto sst = co_await sstables::open_sstable(d, tracker);
            auto& summary = sst->summary();
            auto& cf = sst->cached_index();
            pages_seen += summary.points.size();
            {
                cache::read_caches<index::partition_index_page> caches(cf, sst->index_cache(), bypass_cache::no);
                index::index_reader ir(summary, caches, make_index_page_parser(d.version, index_path));
                for (int q = 0; q < 60; ++q) {
                    auto pr = random_partition_range(g, keys);
                    std::function<bool(const dht::decorated_key&)> before = [&](const dht::decorated_key& k) { return pr.before(k); };
                    std::function<bool(const dht::decorated_key&)> not_after = [&](const dht::decorated_key& k) { return !pr.after(k); };
                    auto start = expected_first_not(all, comps.data_length(), before);
                    auto end = std::max(start, expected_first_not(all, comps.data_length(), not_after));
                    auto got = co_await ir.range(pr);
                    BOOST_CHECK_EQUAL(got.start, start);
                    BOOST_CHECK_EQUAL(got.end, end);
                    // Warm: the same lookup again reads no Index.db byte from disk.
                    auto reads = engine().io().bytes_read;
                    auto misses = cf.stats().page_misses;
                    auto again = co_await ir.range(pr);
                    BOOST_CHECK(again == got);
                    BOOST_CHECK_EQUAL(engine().io().bytes_read, reads);
                    BOOST_CHECK_EQUAL(cf.stats().page_misses, misses);
                    // One key, present or not: range() and find() compare it in place, as the predicates say.
                    auto one = !keys.empty() && g.rnd(0, 2) ? keys[size_t(g.rnd(0, int(keys.size()) - 1))]
                                                            : dht::decorated_key(partition_key(std::to_string(g.rnd(0, 1 << 30))));
                    auto single = dht::partition_range::singular(one);
                    std::function<bool(const dht::decorated_key&)> before_one = [&](const dht::decorated_key& k) { return single.before(k); };
                    std::function<bool(const dht::decorated_key&)> not_after_one = [&](const dht::decorated_key& k) { return !single.after(k); };
                    auto one_start = expected_first_not(all, comps.data_length(), before_one);
                    auto one_range = co_await ir.range(single);
                    BOOST_CHECK_EQUAL(one_range.start, one_start);
                    BOOST_CHECK_EQUAL(one_range.end, std::max(one_start, expected_first_not(all, comps.data_length(), not_after_one)));
                    auto one_entry = co_await ir.find(one);
                    bool listed = std::any_of(all.begin(), all.end(), [&](const index_entry& e) { return e.key == one.key(); });
                    BOOST_CHECK_EQUAL(bool(one_entry), listed);
                    if (one_entry) {
                        BOOST_CHECK(one_entry->key() == one);
                        BOOST_CHECK_EQUAL(one_entry->data_position(), one_start);
                    }
                    // A ring position around a random token.
                    auto t = dht::token(int64_t(g.rnd(0, 1) ? keys.empty() ? 0 : keys[size_t(g.rnd(0, int(keys.size()) - 1))].get_token().value() : int64_t(g.rnd(-1000000, 1000000)) << 40));
                    auto rp = g.rnd(0, 1) ? dht::ring_position::before_token(t) : dht::ring_position::after_token(t);
                    std::function<bool(const dht::decorated_key&)> skip = [&](const dht::decorated_key& k) { return rp.compare(k) > 0; };
                    auto lb = co_await ir.lower_bound(rp);
                    BOOST_CHECK_EQUAL(lb, expected_first_not(all, comps.data_length(), skip));
                    ++lookups;
                }
                // A batch (keys of the sstable and others, ring order, distinct): each key's entry and Data.db range,
                // as the full list of entries gives them, whatever page the keys share.
                for (int q = 0; q < 10; ++q) {
                    std::vector<dht::decorated_key> batch;
                    int n = g.rnd(0, 30);
                    for (int b = 0; b < n; ++b) {
                        batch.push_back(!keys.empty() && g.rnd(0, 2) ? keys[size_t(g.rnd(0, int(keys.size()) - 1))]
                                                                     : pkey(g.rnd(0, 100000)));
                    }
                    std::sort(batch.begin(), batch.end());
                    batch.erase(std::unique(batch.begin(), batch.end()), batch.end());
                    auto found = co_await ir.find_all(batch);
                    BOOST_REQUIRE_EQUAL(found.size(), batch.size());
                    for (size_t b = 0; b < batch.size(); ++b) {
                        auto at = std::find_if(all.begin(), all.end(), [&](const index_entry& e) {
                            return e.key.view() == batch[b].key().view();
                        });
                        BOOST_REQUIRE_EQUAL(bool(found[b]), at != all.end());
                        if (at == all.end()) {
                            continue;
                        }
                        BOOST_CHECK(found[b]->ref.key() == batch[b]);
                        BOOST_CHECK(found[b]->ref.is(batch[b]));
                        BOOST_CHECK_EQUAL(found[b]->range.start, at->data_position);
                        BOOST_CHECK_EQUAL(found[b]->range.end,
                                          at + 1 == all.end() ? comps.data_length() : (at + 1)->data_position);
                    }
                }
                // An unbounded side is looked up nowhere: the full range reads no index page.
                auto stats_before = tracker.index_stats();
                auto full = co_await ir.range(dht::partition_range::full());
                BOOST_CHECK_EQUAL(full.start, all.empty() ? 0 : all.front().data_position);
                BOOST_CHECK_EQUAL(full.end, comps.data_length());
                BOOST_CHECK_EQUAL(tracker.index_stats().hits, stats_before.hits);
                BOOST_CHECK_EQUAL(tracker.index_stats().misses, stats_before.misses);
                // A page of the index holds what Index.db holds there, promoted index bytes included.
                size_t n = 0;
                for (size_t p = 0; p < ir.page_count(); ++p) {
                    auto pg = co_await ir.page(p);
                    for (size_t i = 0; i < pg->size(); ++i) {
                        BOOST_REQUIRE_LT(n, all.size());
                        BOOST_CHECK(pg->key(i) == dht::decorated_key(all[n].key));
                        BOOST_CHECK_EQUAL(pg->data_position(i), all[n].data_position);
                        BOOST_CHECK_EQUAL(pg->promoted_index(i).size() > 1, bool(all[n].promoted));
                        if (all[n].promoted) {
                            // The stored bytes decode to the promoted index parse_index_entries read.
                            auto pi = sstables::parse_promoted_index(pg->promoted_index(i), sst->desc().version, "Index.db",
                                                                     pg->promoted_index_position(i));
                            BOOST_REQUIRE(pi);
                            BOOST_CHECK_EQUAL(pi->blocks, all[n].promoted->blocks);
                            BOOST_CHECK_EQUAL(pi->blocks_file_offset, all[n].promoted->blocks_file_offset);
                        }
                        ++n;
                    }
                }
                BOOST_CHECK_EQUAL(n, all.size());
                if (summary.points.size() >= 2) {
                    // A summary page starting past the next one's is refused by name, as a failed future.
                    auto broken = summary;
                    broken.points[0].index_position = broken.points[1].index_position + 1;
                    index::index_reader bad(broken, caches, make_index_page_parser(d.version, index_path));
                    auto refused = bad.page(0);
                    std::string error;
                    try {
                        co_await std::move(refused);
                    } catch (const std::runtime_error& e) {
                        error = e.what();
                    }
                    BOOST_CHECK_MESSAGE(error.find("summary entry 0 points at Index.db") != std::string::npos, error);
                }
                co_await caches.close();
            }
            co_await sst->close();
        }
        co_await yield();
    }
    BOOST_TEST_MESSAGE(lookups << " lookups over " << pages_seen << " summary pages");
}
