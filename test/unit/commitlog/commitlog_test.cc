// Tests of the commitlog: many writers across segment switches replay exactly what was acknowledged, in order;
// batch mode shares fdatasyncs; torn, zeroed, flipped and bad-header segments never crash replay and lose
// nothing written before a tear; discards delete segments; over the total space writes wait for a discard.
#include "commitlog/commitlog.hh"
#include "commitlog/commitlog_replayer.hh"
#include "commitlog/segment_format.hh"
#include "runtime/reactor.hh"
#include "runtime/when_all.hh"
#include "test/lib/random_mutation.hh"
#include "test/lib/reef_test.hh"
#include "test/lib/tmpdir.hh"

#include <boost/test/unit_test.hpp>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>

using namespace reef;
using namespace reef::commitlog;
namespace fs = std::filesystem;

namespace {

table_id tid(uint8_t b) {
    table_id t{};
    t.fill(b);
    return t;
}

struct written {
    table_id table;
    replay_position pos;
    bytes data;
};

bool operator==(const written& a, const written& b) { return a.table == b.table && a.pos == b.pos && a.data == b.data; }

commitlog_config small_config(const std::string& dir, sync_mode mode, uint64_t segment = 64 * 1024) {
    commitlog_config cfg;
    cfg.commitlog_directory = dir;
    cfg.commitlog_sync = mode;
    cfg.commitlog_sync_period_in_ms = 5;
    cfg.segment_size_in_bytes = segment;
    return cfg;
}

// The writers' entries: random sizes (up to ~3 KiB), contents naming writer and sequence.
bytes make_data(std::mt19937_64& rng, int writer, int seq) {
    size_t n = rng() % 8 == 0 ? 1000 + rng() % 2000 : rng() % 200;
    bytes b(n + 8);
    for (size_t i = 0; i < b.size(); ++i) {
        b[i] = uint8_t(rng());
    }
    b[0] = uint8_t(writer);
    b[1] = uint8_t(seq);
    return b;
}

// `writers` coroutines each adding `per_writer` entries to log; returns what was acknowledged, in position order.
future<std::vector<written>> write_many(commitlog::commitlog& log, int writers, int per_writer, uint64_t seed) {
    std::vector<written> acked;
    auto one = [&](int w) -> future<> {
        std::mt19937_64 rng(seed + w);
        for (int i = 0; i < per_writer; ++i) {
            auto data = make_data(rng, w, i);
            auto t = tid(uint8_t(1 + w % 3));
            auto pos = co_await log.add(t, data);
            acked.push_back(written{t, pos, std::move(data)});
        }
    };
    std::vector<future<>> fs;
    for (int w = 0; w < writers; ++w) {
        fs.push_back(one(w));
    }
    co_await when_all(std::move(fs));
    std::sort(acked.begin(), acked.end(), [](auto& a, auto& b) { return a.pos < b.pos; });
    co_return acked;
}

future<std::pair<std::vector<written>, replay_stats>> replay_all(const std::string& dir) {
    std::vector<written> out;
    auto stats = co_await commitlog_replayer::replay(dir, 0, [&](const replay_entry& e) {
        out.push_back(written{e.table, e.position, bytes(e.data.begin(), e.data.end())});
        return make_ready_future<bool>(true);
    });
    co_return std::pair(std::move(out), stats);
}

std::vector<std::string> segment_files(const std::string& dir) {
    std::vector<std::string> out;
    for (auto& e : fs::directory_iterator(dir)) {
        out.push_back(e.path().string());
    }
    std::sort(out.begin(), out.end());
    return out;
}

} // namespace

BOOST_AUTO_TEST_SUITE(commitlog_tests)

REEF_TEST_CASE(test_many_writers_replay_what_was_acknowledged) {
    for (auto mode : {sync_mode::periodic, sync_mode::batch}) {
        testing::tmpdir dir;
        uint64_t seed = testing::pick_seed();
        BOOST_TEST_MESSAGE("seed " << seed);
        auto log = co_await commitlog::commitlog::create(small_config(dir.path(), mode), 0);
        auto acked = co_await write_many(*log, 16, 60, seed);
        co_await log->close();
        BOOST_TEST(log->stats().segments_created > 3u);
        BOOST_TEST(log->stats().entries == acked.size());
        auto [replayed, stats] = co_await replay_all(dir.path());
        BOOST_TEST(stats.corrupt == 0u);
        BOOST_TEST(stats.torn_tails == 0u);
        BOOST_TEST(stats.replayed == acked.size());
        BOOST_TEST(replayed.size() == acked.size());
        BOOST_TEST((replayed == acked));
        // Positions are distinct and every later segment's id is larger.
        for (size_t i = 1; i < replayed.size(); ++i) {
            BOOST_TEST((replayed[i - 1].pos < replayed[i].pos));
        }
    }
}

REEF_TEST_CASE(test_periodic_mode_acknowledges_written_bytes) {
    // A period far away: what add() acknowledged must already be in the files (a process crash loses nothing),
    // though nothing was synced yet.
    testing::tmpdir dir;
    auto cfg = small_config(dir.path(), sync_mode::periodic);
    cfg.commitlog_sync_period_in_ms = 1000000;
    auto log = co_await commitlog::commitlog::create(cfg, 0);
    auto acked = co_await write_many(*log, 8, 30, 5);
    auto syncs_before = log->stats().syncs;
    auto [replayed, stats] = co_await replay_all(dir.path());  // the log still open
    BOOST_TEST((replayed == acked));
    BOOST_TEST(stats.corrupt == 0u);
    co_await log->close();
    BOOST_TEST(log->stats().syncs > syncs_before);  // close syncs the active segment
    // With a short period, the timer syncs.
    testing::tmpdir dir2;
    auto log2 = co_await commitlog::commitlog::create(small_config(dir2.path(), sync_mode::periodic), 0);
    co_await write_many(*log2, 1, 5, 6);
    co_await sleep(std::chrono::milliseconds(50));
    BOOST_TEST(log2->stats().syncs > 0u);
    co_await log2->close();
}

REEF_TEST_CASE(test_segment_ids_increase_across_restarts) {
    testing::tmpdir dir;
    auto log = co_await commitlog::commitlog::create(small_config(dir.path(), sync_mode::periodic), 0);
    auto acked = co_await write_many(*log, 2, 10, 1);
    co_await log->close();
    auto log2 = co_await commitlog::commitlog::create(small_config(dir.path(), sync_mode::periodic), 0);
    auto more = co_await write_many(*log2, 2, 10, 2);
    co_await log2->close();
    BOOST_TEST((acked.back().pos < more.front().pos));
    auto [replayed, stats] = co_await replay_all(dir.path());
    acked.insert(acked.end(), more.begin(), more.end());
    BOOST_TEST((replayed == acked));
    // The callback decides: entries it skips are counted apart.
    uint64_t ones = std::count_if(acked.begin(), acked.end(), [](auto& w) { return w.table == tid(1); });
    auto st = co_await commitlog_replayer::replay(dir.path(), 0, [](const replay_entry& e) {
        return make_ready_future<bool>(e.table != tid(1));
    });
    BOOST_TEST(st.skipped == ones);
    BOOST_TEST(st.replayed == acked.size() - ones);
    BOOST_TEST(st.segments == 2u);
}

REEF_TEST_CASE(test_batch_mode_shares_syncs) {
    testing::tmpdir dir;
    auto log = co_await commitlog::commitlog::create(small_config(dir.path(), sync_mode::batch, 1 << 20), 0);
    auto acked = co_await write_many(*log, 64, 20, 3);
    co_await log->close();
    auto& st = log->stats();
    BOOST_TEST_MESSAGE("entries " << st.entries << " writes " << st.writes << " syncs " << st.syncs);
    BOOST_TEST(st.entries == 64u * 20u);
    // Every entry was synced before its acknowledgement, yet far fewer syncs than entries: group commit.
    BOOST_TEST(st.syncs >= st.writes);
    BOOST_TEST(st.syncs * 8 < st.entries);
    // One writer alone: one sync per entry.
    testing::tmpdir dir1;
    auto one = co_await commitlog::commitlog::create(small_config(dir1.path(), sync_mode::batch, 1 << 20), 0);
    co_await write_many(*one, 1, 20, 4);
    co_await one->close();
    BOOST_TEST(one->stats().syncs >= 20u);
}

REEF_TEST_CASE(test_corruption_never_crashes_and_tears_lose_nothing_before) {
    testing::tmpdir src;
    uint64_t seed = testing::pick_seed();
    BOOST_TEST_MESSAGE("seed " << seed);
    std::mt19937_64 rng(seed);
    auto log = co_await commitlog::commitlog::create(small_config(src.path(), sync_mode::batch), 0);
    auto acked = co_await write_many(*log, 8, 40, seed);
    co_await log->close();
    auto files = segment_files(src.path());
    BOOST_REQUIRE(files.size() >= 2u);
    auto last_id = parse_segment_file_name(fs::path(files.back()).filename().string())->segment_id;
    auto mid_id = parse_segment_file_name(fs::path(files[files.size() / 2 - (files.size() > 2)]).filename().string())->segment_id;

    for (int trial = 0; trial < 40; ++trial) {
        testing::tmpdir dir;
        for (auto& f : files) {
            fs::copy_file(f, dir.path() + "/" + fs::path(f).filename().string());
        }
        int kind = trial % 3;
        auto target = kind == 2 ? dir.path() + "/" + segment_file_name(0, mid_id) : dir.path() + "/" + fs::path(files.back()).filename().string();
        // Within the written bytes (the rest of the preallocated file is zeros).
        std::string contents;
        {
            std::ifstream in(target, std::ios::binary);
            contents.assign(std::istreambuf_iterator<char>(in), {});
        }
        auto size = contents.size();
        size_t used = contents.find_last_not_of('\0') + 1;
        uint64_t at = segment_header_size + rng() % (used - segment_header_size);
        if (kind == 0) {
            fs::resize_file(target, at);  // a torn tail: truncated
        } else if (kind == 1) {
            std::fstream f(target, std::ios::in | std::ios::out | std::ios::binary);  // zeroed from `at` on
            f.seekp(at);
            std::string zeros(size - at, '\0');
            f.write(zeros.data(), zeros.size());
        } else {
            std::fstream f(target, std::ios::in | std::ios::out | std::ios::binary);  // bytes flipped in the middle
            for (int i = 0; i < 3; ++i) {
                f.seekg(at + i * 7);
                char c;
                f.get(c);
                f.seekp(at + i * 7);
                f.put(char(c ^ 0x5a));
            }
        }
        auto [replayed, stats] = co_await replay_all(dir.path());
        BOOST_TEST_CONTEXT("trial " << trial << " kind " << kind << " at " << at) {
            if (kind < 2) {
                // Everything before the tear, nothing after it, no corruption reported.
                std::vector<written> expected;
                for (auto& w : acked) {
                    if (w.pos.segment_id < last_id || w.pos.offset + entry_size(w.data.size()) <= at) {
                        expected.push_back(w);
                    }
                }
                BOOST_TEST((replayed == expected));
                BOOST_TEST(stats.corrupt == 0u);
            } else {
                // Every entry not touching the flipped bytes comes back, and only written entries do.
                size_t i = 0;
                for (auto& w : acked) {
                    bool touched = w.pos.segment_id == mid_id && w.pos.offset < at + 15 &&
                                   w.pos.offset + entry_size(w.data.size()) > at;
                    while (i < replayed.size() && replayed[i].pos < w.pos) {
                        ++i;
                    }
                    bool found = i < replayed.size() && replayed[i] == w;
                    if (!touched) {
                        BOOST_TEST(found, "entry at " << w.pos.to_string() << " lost");
                    }
                }
                for (auto& r : replayed) {
                    BOOST_TEST((std::find(acked.begin(), acked.end(), r) != acked.end()));
                }
                BOOST_TEST(stats.corrupt >= 1u);
            }
        }
    }

    // A bad header (magic, version) is an error naming the file.
    for (int field : {0, 8}) {
        testing::tmpdir dir;
        for (auto& f : files) {
            fs::copy_file(f, dir.path() + "/" + fs::path(f).filename().string());
        }
        auto target = dir.path() + "/" + segment_file_name(0, mid_id);
        {
            std::fstream f(target, std::ios::in | std::ios::out | std::ios::binary);
            f.seekp(field + 3);
            f.put('\x7f');
        }
        bool threw = false;
        try {
            co_await replay_all(dir.path());
        } catch (const segment_format_error& e) {
            threw = std::string(e.what()).find(target) != std::string::npos;
            BOOST_TEST_MESSAGE(e.what());
        }
        BOOST_TEST(threw);
    }
}

REEF_TEST_CASE(test_discard_deletes_segments) {
    testing::tmpdir dir;
    auto log = co_await commitlog::commitlog::create(small_config(dir.path(), sync_mode::periodic), 0);
    // Table 1 writes first, table 2 throughout: after table 1's discard, table 2 still pins everything.
    bytes data(3000, 7);
    replay_position last1, last2;
    for (int i = 0; i < 60; ++i) {
        if (i < 30) {
            last1 = co_await log->add(tid(1), data);
        }
        last2 = co_await log->add(tid(2), data);
    }
    size_t segments = log->segment_paths().size();
    BOOST_TEST(segments > 3u);
    co_await log->discard_completed_segments(tid(1), last1);
    BOOST_TEST(log->segment_paths().size() == segments);
    BOOST_TEST(log->stats().segments_deleted == 0u);
    // Table 2 flushed up to its 40th entry's segment: the segments before are deleted, the rest stay.
    co_await log->discard_completed_segments(tid(2), last2);
    BOOST_TEST(log->segment_paths().size() == 1u);  // the active one
    BOOST_TEST(segment_files(dir.path()).size() == 1u);
    BOOST_TEST(log->stats().segments_deleted == segments - 1);
    co_await log->close();
}

REEF_TEST_CASE(test_back_pressure_waits_for_discard) {
    testing::tmpdir dir;
    auto cfg = small_config(dir.path(), sync_mode::periodic);
    cfg.total_space_in_bytes = 3 * cfg.segment_size_in_bytes;
    std::vector<std::pair<std::vector<table_id>, replay_position>> requests;
    commitlog::commitlog* logp = nullptr;
    size_t most_files = 0;
    cfg.request_flush = [&](std::vector<table_id> tables, replay_position pos) {
        requests.emplace_back(tables, pos);
        // The owner flushes later: the writer must wait meanwhile.
        spawn([&, tables, pos]() -> future<> {
            co_await sleep(std::chrono::milliseconds(20));
            most_files = std::max(most_files, segment_files(dir.path()).size());
            for (auto& t : tables) {
                co_await logp->discard_completed_segments(t, pos);
            }
        });
    };
    auto log = co_await commitlog::commitlog::create(cfg, 0);
    logp = log.get();
    bytes data(3000, 9);
    for (int i = 0; i < 200; ++i) {
        co_await log->add(tid(uint8_t(1 + i % 2)), data);
        most_files = std::max(most_files, segment_files(dir.path()).size());
    }
    BOOST_TEST(log->stats().space_waits > 0u);
    BOOST_TEST(!requests.empty());
    BOOST_TEST(most_files <= 3u);
    co_await log->close();
    co_await sleep(std::chrono::milliseconds(50));
}

REEF_TEST_CASE(test_entry_larger_than_half_a_segment_is_refused) {
    testing::tmpdir dir;
    auto log = co_await commitlog::commitlog::create(small_config(dir.path(), sync_mode::periodic), 0);
    bytes big(40 * 1024, 1);
    bool threw = false;
    try {
        co_await log->add(tid(1), big);
    } catch (const std::invalid_argument&) {
        threw = true;
    }
    BOOST_TEST(threw);
    co_await log->close();
}

BOOST_AUTO_TEST_SUITE_END()
