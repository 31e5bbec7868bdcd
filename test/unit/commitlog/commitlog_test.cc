// Tests of the commitlog: many writers across segment switches replay exactly what was acknowledged, in order;
// batch mode shares fdatasyncs; torn, zeroed, flipped and bad-header segments never crash replay and lose
// nothing written before a tear; discards delete segments; over the total space writes wait for a discard; recycled
// segments are reused, and replay over them (closed, crashed, corrupted) never takes an older life's bytes.
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
#include <fcntl.h>
#include <filesystem>
#include <optional>
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

// Whether the process has `path` open with O_DIRECT (from /proc/self/fdinfo), or nullopt when it is not open.
std::optional<bool> opened_direct(const std::string& path) {
    for (auto& fd : fs::directory_iterator("/proc/self/fd")) {
        std::error_code ec;
        auto target = fs::read_symlink(fd.path(), ec);
        if (ec || target != fs::path(path)) {
            continue;
        }
        std::ifstream info("/proc/self/fdinfo/" + fd.path().filename().string());
        std::string key, flags;
        while (info >> key >> flags) {
            if (key == "flags:") {
                return (std::stoul(flags, nullptr, 8) & O_DIRECT) != 0;
            }
        }
    }
    return std::nullopt;
}

REEF_TEST_CASE(test_periodic_mode_writes_through_the_page_cache) {
    // Periodic mode must not wait for a busy disk (FORMAT.md, "Modes"); batch mode waits for its sync anyway.
    for (auto mode : {sync_mode::periodic, sync_mode::batch}) {
        testing::tmpdir dir;
        auto log = co_await commitlog::commitlog::create(small_config(dir.path(), mode, 256 * 1024), 0);
        co_await write_many(*log, 2, 10, 7);
        auto files = segment_files(dir.path());
        BOOST_REQUIRE_EQUAL(files.size(), 1u);
        auto direct = opened_direct(fs::canonical(files[0]).string());
        BOOST_REQUIRE_MESSAGE(direct, files[0] << " is not open");
        if (mode == sync_mode::periodic) {
            BOOST_TEST(!*direct);
        } else if (!*direct) {
            BOOST_TEST_MESSAGE("the filesystem of " << dir.path() << " refuses O_DIRECT: batch mode not checked");
        }
        co_await log->close();
        auto [replayed, stats] = co_await replay_all(dir.path());
        BOOST_TEST(replayed.size() == 20u);
        BOOST_TEST(stats.corrupt == 0u);
    }
}

REEF_TEST_CASE(test_segment_ids_increase_across_restarts) {
    testing::tmpdir dir;
    // Segments that hold a run's 20 entries even at a 4 KiB block each (periodic mode's page-cache blocks).
    auto cfg = small_config(dir.path(), sync_mode::periodic, 256 * 1024);
    auto log = co_await commitlog::commitlog::create(cfg, 0);
    auto acked = co_await write_many(*log, 2, 10, 1);
    co_await log->close();
    auto log2 = co_await commitlog::commitlog::create(cfg, 0);
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
    auto cfg = small_config(dir.path(), sync_mode::periodic);
    cfg.max_recycled_segments = 0;  // deleted, not recycled
    auto log = co_await commitlog::commitlog::create(cfg, 0);
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

namespace {

std::string file_contents(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

uint64_t id_of(const std::string& path) { return parse_segment_file_name(fs::path(path).filename().string())->segment_id; }

// The end of the last acknowledged entry in segment `id`.
size_t live_end(const std::vector<written>& acked, uint64_t id) {
    size_t end = segment_header_size;
    for (auto& w : acked) {
        if (w.pos.segment_id == id) {
            end = std::max(end, size_t(w.pos.offset + entry_size(w.data.size())));
        }
    }
    return end;
}

// Non-zero bytes past the live data's block (and the end marker's): an older life's.
size_t stale_bytes(const std::string& path, size_t end) {
    auto c = file_contents(path);
    size_t from = std::min(c.size(), (end + 2 * 4096) / 4096 * 4096);
    return size_t(std::count_if(c.begin() + from, c.end(), [](char b) { return b != 0; }));
}

std::vector<written> in_segments(const std::vector<written>& acked, const std::vector<std::string>& files) {
    std::vector<written> out;
    for (auto& w : acked) {
        if (std::any_of(files.begin(), files.end(), [&](auto& f) { return id_of(f) == w.pos.segment_id; })) {
            out.push_back(w);
        }
    }
    return out;
}

// A log recycling its segments: table 1's entries discarded every 5 writes (as flushes would), table 2's, written
// for a while in the middle, pinned; `copy_to` gets the segment files as a crash would leave them (the active one
// unclosed) right after a switch to a reused segment. Returns what was acknowledged, in position order.
future<std::vector<written>> write_recycling(commitlog::commitlog& log, std::mt19937_64& rng, const std::string& dir,
                                             const std::string& copy_to) {
    std::vector<written> acked;
    replay_position last1;
    bool copied = false;
    for (int i = 0; i < 1500 && !copied; ++i) {
        auto t = tid(uint8_t(i < 600 || i >= 620 || i % 2 ? 1 : 2));
        auto data = make_data(rng, int(t[0]), i);
        auto before = log.stats().segments_recycled;
        auto pos = co_await log.add(t, data);
        acked.push_back(written{t, pos, std::move(data)});
        if (t == tid(1)) {
            last1 = pos;
        }
        if (i % 5 == 0) {
            co_await log.discard_completed_segments(tid(1), last1);
        }
        BOOST_REQUIRE_LE(log.recycled_paths().size(), log.config().max_recycled_segments);
        // The segment just switched to is a reused one: a crash now leaves its older life's tail after the data.
        if (i > 900 && log.stats().segments_recycled > before && !copy_to.empty()) {
            for (int k = 0; k < 5; ++k) {
                auto d = make_data(rng, 2, i);
                auto p = co_await log.add(tid(2), d);
                acked.push_back(written{tid(2), p, std::move(d)});
            }
            for (auto& f : segment_files(dir)) {
                if (parse_segment_file_name(fs::path(f).filename().string())) {
                    fs::copy_file(f, copy_to + "/" + fs::path(f).filename().string());
                }
            }
            copied = true;
        }
    }
    BOOST_REQUIRE(copy_to.empty() || copied);
    co_return acked;
}

} // namespace

REEF_TEST_CASE(test_recycled_segments_are_reused_and_replay_skips_their_older_data) {
    for (auto mode : {sync_mode::periodic, sync_mode::batch}) {
        testing::tmpdir dir;
        uint64_t seed = testing::pick_seed();
        BOOST_TEST_MESSAGE("seed " << seed);
        std::mt19937_64 rng(seed);
        auto cfg = small_config(dir.path(), mode);
        cfg.max_recycled_segments = 3;
        auto log = co_await commitlog::commitlog::create(cfg, 0);
        auto acked = co_await write_recycling(*log, rng, dir.path(), "");
        // End on a segment just switched to, reused: however full the last one was, close() now cuts one short
        // (its one entry stays dirty, so close() keeps it).
        auto reused_before = log->stats().segments_recycled;
        for (int i = 0; i < 2000 && log->stats().segments_recycled == reused_before; ++i) {
            if (i % 5 == 0) {
                co_await log->discard_completed_segments(tid(1), acked.back().pos);
            }
            auto d = make_data(rng, 1, 1500 + i);
            auto pos = co_await log->add(tid(1), d);
            acked.push_back(written{tid(1), pos, std::move(d)});
        }
        BOOST_REQUIRE_GT(log->stats().segments_recycled, reused_before);
        BOOST_TEST_MESSAGE(log->stats().segments_created << " segments created, " << log->stats().segments_recycled
                                                         << " reused");
        BOOST_TEST(log->stats().segments_recycled > 5u);
        // The first few, those table 2 pins while the reserve is empty, then reused ones.
        BOOST_TEST(log->stats().segments_created < log->stats().segments_recycled);
        auto recycled = log->recycled_paths();
        for (auto& r : recycled) {
            BOOST_TEST(fs::exists(r));
        }
        co_await log->close();
        // Closed: the recycled files are gone, table 2's segments stay, each ended by its marker.
        for (auto& r : recycled) {
            BOOST_TEST(!fs::exists(r));
        }
        auto files = segment_files(dir.path());
        BOOST_REQUIRE(files.size() >= 2u);
        size_t with_stale = 0;
        for (auto& f : files) {
            BOOST_REQUIRE(parse_segment_file_name(fs::path(f).filename().string()));
            with_stale += stale_bytes(f, live_end(acked, id_of(f))) > 0;
        }
        // The case under test: the last segment, cut short by close(), was reused and holds an older life's
        // entries after its end marker (a reused segment only ever has one).
        BOOST_TEST(with_stale > 0u);
        {
            auto [replayed, stats] = co_await replay_all(dir.path());
            BOOST_TEST(stats.corrupt == 0u);
            BOOST_TEST(stats.torn_tails == 0u);
            BOOST_TEST((replayed == in_segments(acked, files)));
        }
        // A later run's segments make that one an earlier segment, where bytes after the data would be corrupt
        // but for its end marker.
        auto later = co_await commitlog::commitlog::create(small_config(dir.path(), mode), 0);
        for (int i = 0; i < 20; ++i) {
            auto d = make_data(rng, 3, i);
            auto pos = co_await later->add(tid(3), d);
            acked.push_back(written{tid(3), pos, std::move(d)});
        }
        co_await later->close();
        auto all = segment_files(dir.path());
        BOOST_REQUIRE_GT(all.size(), files.size());
        auto [replayed, stats] = co_await replay_all(dir.path());
        BOOST_TEST(stats.corrupt == 0u);
        BOOST_TEST(stats.torn_tails == 0u);
        BOOST_TEST((replayed == in_segments(acked, all)));
    }
}

REEF_TEST_CASE(test_crash_and_corruption_over_recycled_segments) {
    testing::tmpdir src, crashed;
    uint64_t seed = testing::pick_seed();
    BOOST_TEST_MESSAGE("seed " << seed);
    std::mt19937_64 rng(seed);
    auto cfg = small_config(src.path(), sync_mode::batch);
    cfg.max_recycled_segments = 2;
    auto log = co_await commitlog::commitlog::create(cfg, 0);
    auto acked = co_await write_recycling(*log, rng, src.path(), crashed.path());
    co_await log->close();
    auto files = segment_files(crashed.path());
    BOOST_REQUIRE(files.size() >= 2u);
    auto last = files.back();
    BOOST_REQUIRE_GT(stale_bytes(last, live_end(acked, id_of(last))), 0u);  // the crashed active segment was reused
    // The earlier segments that were reused: their entries start at the second block (the first holds the header
    // alone), where a new segment's start right after its header.
    auto first_entry = [&](uint64_t id) {
        size_t first = SIZE_MAX;
        for (auto& w : acked) {
            if (w.pos.segment_id == id) {
                first = std::min<size_t>(first, w.pos.offset);
            }
        }
        return first;
    };
    std::vector<std::string> stale_mid;
    for (size_t i = 0; i + 1 < files.size(); ++i) {
        auto id = id_of(files[i]);
        if (first_entry(id) > segment_header_size && first_entry(id) < live_end(acked, id)) {
            stale_mid.push_back(files[i]);
        }
    }
    BOOST_REQUIRE(!stale_mid.empty());
    auto expected_all = in_segments(acked, files);
    {
        // The crash as it is: the last segment's older tail is a quiet end, nothing of it comes back.
        auto [replayed, stats] = co_await replay_all(crashed.path());
        BOOST_TEST(stats.corrupt == 0u);
        BOOST_TEST((replayed == expected_all));
    }
    for (int trial = 0; trial < 30; ++trial) {
        testing::tmpdir dir;
        for (auto& f : files) {
            fs::copy_file(f, dir.path() + "/" + fs::path(f).filename().string());
        }
        int kind = trial % 3;
        auto from = kind == 2 ? stale_mid[size_t(rng() % stale_mid.size())] : last;
        auto target = dir.path() + "/" + fs::path(from).filename().string();
        uint64_t id = id_of(from);
        size_t end = live_end(acked, id);
        // Within the live data, past the header's block.
        size_t first = first_entry(id);
        BOOST_REQUIRE_LT(first, end);
        uint64_t at = first + rng() % (end - first);
        auto size = fs::file_size(target);
        if (kind == 0) {
            fs::resize_file(target, at);
        } else if (kind == 1) {
            std::fstream f(target, std::ios::in | std::ios::out | std::ios::binary);
            f.seekp(at);
            std::string zeros(size - at, '\0');
            f.write(zeros.data(), zeros.size());
        } else {
            std::fstream f(target, std::ios::in | std::ios::out | std::ios::binary);
            for (int i = 0; i < 3; ++i) {
                f.seekg(at + i * 7);
                char c;
                f.get(c);
                f.seekp(at + i * 7);
                f.put(char(c ^ 0x5a));
            }
        }
        auto [replayed, stats] = co_await replay_all(dir.path());
        BOOST_TEST_CONTEXT("trial " << trial << " kind " << kind << " at " << at << " of " << target) {
            // Only entries that were written in this life come back, in order.
            for (auto& r : replayed) {
                BOOST_TEST((std::find(expected_all.begin(), expected_all.end(), r) != expected_all.end()));
            }
            if (kind < 2) {
                std::vector<written> expected;
                for (auto& w : expected_all) {
                    if (w.pos.segment_id != id || w.pos.offset + entry_size(w.data.size()) <= at) {
                        expected.push_back(w);
                    }
                }
                BOOST_TEST((replayed == expected));
                BOOST_TEST(stats.corrupt == 0u);
            } else {
                for (auto& w : expected_all) {
                    bool touched = w.pos.segment_id == id && w.pos.offset < at + 15 &&
                                   w.pos.offset + entry_size(w.data.size()) > at;
                    if (!touched) {
                        BOOST_TEST((std::find(replayed.begin(), replayed.end(), w) != replayed.end()),
                                   "entry at " << w.pos.to_string() << " lost");
                    }
                }
                BOOST_TEST(stats.corrupt >= 1u);
            }
        }
    }
}

REEF_TEST_CASE(test_recycled_files_left_by_a_crash_are_reused) {
    testing::tmpdir dir;
    auto cfg = small_config(dir.path(), sync_mode::periodic);
    cfg.max_recycled_segments = 2;
    // Three recycled files of shard 0 (one too many) and one of shard 1, as a crash leaves them.
    for (uint64_t id : {11, 12, 13}) {
        std::ofstream(dir.path() + "/" + recycled_file_name(0, id)) << std::string(cfg.segment_size_in_bytes, 'x');
    }
    std::ofstream(dir.path() + "/" + recycled_file_name(1, 14)) << "x";
    auto log = co_await commitlog::commitlog::create(cfg, 0);
    BOOST_TEST(log->recycled_paths().size() == 2u);
    BOOST_TEST(!fs::exists(dir.path() + "/" + recycled_file_name(0, 13)));  // the oldest are kept, the rest deleted
    BOOST_TEST(fs::exists(dir.path() + "/" + recycled_file_name(1, 14)));   // another shard's
    std::vector<written> acked;
    bytes data(3000, 5);
    for (int i = 0; i < 30; ++i) {
        auto pos = co_await log->add(tid(1), data);  // not inside a braced list (coroutine rule 7)
        acked.push_back(written{tid(1), pos, data});
    }
    BOOST_TEST(log->stats().segments_recycled == 2u);
    co_await log->close();
    // Its 'x' bytes never pass for entries.
    auto [replayed, stats] = co_await replay_all(dir.path());
    BOOST_TEST(stats.corrupt == 0u);
    BOOST_TEST((replayed == acked));
}

BOOST_AUTO_TEST_SUITE_END()

REEF_TEST_CASE(test_last_position_separates_past_and_future_entries) {
    // What a TRUNCATE records (db/README.md): at or above every entry added, below every later one, across segment
    // switches and a restart, and before the first entry.
    testing::tmpdir dir;
    std::mt19937_64 rng(7);
    commitlog::replay_position before_any;
    {
        auto log = co_await commitlog::commitlog::create(small_config(dir.path(), sync_mode::periodic), 0);
        before_any = log->last_position();
        std::optional<commitlog::replay_position> mark;
        for (int i = 0; i < 200; ++i) {  // ~300 KiB: several 64 KiB segments
            auto data = make_data(rng, 0, i);
            auto pos = co_await log->add(tid(1), data);
            BOOST_REQUIRE(pos > before_any);
            if (mark) {
                BOOST_REQUIRE(pos > *mark);
            }
            auto last = log->last_position();
            BOOST_REQUIRE(pos <= last);
            mark = last;
        }
        co_await log->close();
    }
    auto log = co_await commitlog::commitlog::create(small_config(dir.path(), sync_mode::periodic), 0);
    auto fresh = log->last_position();
    auto data = make_data(rng, 0, 1000);
    auto pos = co_await log->add(tid(1), data);
    BOOST_REQUIRE(pos > fresh);
    co_await log->close();
}
