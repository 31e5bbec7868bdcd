// Tests of the compaction strategies as pure functions: option maps read and refused as Cassandra does, STCS
// buckets against a model of Cassandra's getBuckets, the bucket chosen, TWCS windows, fully expired sstables and
// tombstone compaction candidates, on random sstable sets.
#include "compaction/compaction_options.hh"
#include "compaction/compaction_strategy.hh"

#include <boost/test/unit_test.hpp>
#include <algorithm>
#include <bit>
#include <random>
#include <set>

using namespace reef::compaction;

namespace {

std::string refusal(const std::map<std::string, std::string>& m) {
    try {
        parse_compaction_options(m);
    } catch (const invalid_compaction_options& e) {
        return e.what();
    }
    return "";
}

candidate sst(uint64_t id, uint64_t size, int64_t min_ts = 0, int64_t max_ts = 0) {
    candidate c;
    c.id = id;
    c.size = size;
    c.min_timestamp = min_ts;
    c.max_timestamp = max_ts;
    return c;
}

constexpr uint64_t MiB = 1 << 20;

} // namespace

BOOST_AUTO_TEST_CASE(options_defaults_and_class_names) {
    auto d = parse_compaction_options({});
    BOOST_TEST((d.type == strategy_type::size_tiered));
    BOOST_TEST(d.min_threshold == 4);
    BOOST_TEST(d.max_threshold == 32);
    BOOST_TEST(d.bucket_low == 0.5);
    BOOST_TEST(d.bucket_high == 1.5);
    BOOST_TEST(d.min_sstable_size == 50 * MiB);
    BOOST_TEST(d.tombstone_threshold == 0.2);
    BOOST_TEST(d.tombstone_compaction_interval == 86400);
    BOOST_TEST(!d.unchecked_tombstone_compaction);
    BOOST_TEST(d.enabled);
    auto full = parse_compaction_options({{"class", "org.apache.cassandra.db.compaction.TimeWindowCompactionStrategy"},
                                          {"compaction_window_unit", "hours"},
                                          {"compaction_window_size", "6"},
                                          {"min_threshold", "6"},
                                          {"max_threshold", "40"}});
    BOOST_TEST((full.type == strategy_type::time_window));
    BOOST_TEST(full.window_seconds() == 6 * 3600);
    BOOST_TEST(full.min_threshold == 6);
    BOOST_TEST(full.max_threshold == 40);
    BOOST_TEST((parse_compaction_options({{"class", "TimeWindowCompactionStrategy"}}).window_seconds() == 86400));
    // Strategies Reef compacts size-tiered: accepted with their own options.
    auto lcs = parse_compaction_options({{"class", "LeveledCompactionStrategy"}, {"sstable_size_in_mb", "160"}});
    BOOST_TEST((lcs.type == strategy_type::other));
    // Their run size: LCS's sstable_size_in_mb (Cassandra's default 160), ICS's (ScyllaDB's 1000); UCS none.
    BOOST_TEST(lcs.max_sstable_size == 160ull << 20);
    BOOST_TEST(parse_compaction_options({{"class", "LeveledCompactionStrategy"}}).max_sstable_size == 160ull << 20);
    BOOST_TEST(parse_compaction_options({{"class", "LeveledCompactionStrategy"}, {"sstable_size_in_mb", "8"}})
                   .max_sstable_size == 8ull << 20);
    BOOST_TEST(parse_compaction_options({{"class", "IncrementalCompactionStrategy"}}).max_sstable_size == 1000ull << 20);
    BOOST_TEST(parse_compaction_options({{"class", "UnifiedCompactionStrategy"}}).max_sstable_size == 0u);
    BOOST_TEST(parse_compaction_options({{"class", "SizeTieredCompactionStrategy"}}).max_sstable_size == 0u);
    BOOST_TEST(!parse_compaction_options({{"class", "SizeTieredCompactionStrategy"}, {"enabled", "false"}}).enabled);
    auto m = parse_map_literal("{'class': 'SizeTieredCompactionStrategy', 'min_threshold': '6', 'x''y': 7}");
    BOOST_TEST(m.size() == 3u);
    BOOST_TEST(m["min_threshold"] == "6");
    BOOST_TEST(m["x'y"] == "7");
    BOOST_TEST(parse_map_literal("{}").empty());
    BOOST_CHECK_THROW(parse_map_literal("{'a': "), invalid_compaction_options);
    BOOST_CHECK_THROW(parse_map_literal("'a'"), invalid_compaction_options);
}

BOOST_AUTO_TEST_CASE(options_refused_with_the_option_named) {
    auto stcs = [](std::string k, std::string v) {
        return refusal({{"class", "SizeTieredCompactionStrategy"}, {k, v}});
    };
    auto twcs = [](std::string k, std::string v) {
        return refusal({{"class", "TimeWindowCompactionStrategy"}, {k, v}});
    };
    BOOST_TEST(refusal({{"class", "NoSuchStrategy"}}) == "Unable to find compaction strategy class 'NoSuchStrategy'");
    // Cassandra's LeveledCompactionStrategy.validateOptions.
    auto lcs = [](std::string v) { return refusal({{"class", "LeveledCompactionStrategy"}, {"sstable_size_in_mb", v}}); };
    BOOST_TEST(lcs("0") == "sstable_size_in_mb must be larger than 0, but was 0");
    BOOST_TEST(lcs("-3") == "sstable_size_in_mb must be larger than 0, but was -3");
    BOOST_TEST(lcs("big") == "big is not a parsable int (base10) for sstable_size_in_mb");
    BOOST_TEST(lcs("4294967296") == "4294967296 is not a parsable int (base10) for sstable_size_in_mb");
    BOOST_TEST(stcs("tombstone_threshold", "-0.4") == "tombstone_threshold must be greater than 0, but was -0.400000");
    BOOST_TEST(twcs("tombstone_threshold", "5.5") == "tombstone_threshold value (5.5) must be between 0.0 and 1.0");
    BOOST_TEST(stcs("tombstone_compaction_interval", "-7") ==
               "tombstone_compaction_interval must be nonnegative, but was -7");
    BOOST_TEST(stcs("unchecked_tombstone_compaction", "maybe") ==
               "'unchecked_tombstone_compaction' should be either 'true' or 'false', not 'maybe'");
    BOOST_TEST(stcs("enabled", "certainly") == "enabled should either be 'true' or 'false', not certainly");
    BOOST_TEST(stcs("min_sstable_size", "-1") == "min_sstable_size must be non negative: -1");
    BOOST_TEST(stcs("bucket_low", "0.0") == "bucket_low value (0.0) must be between 0.0 and 1.0");
    BOOST_TEST(stcs("bucket_low", "1.3") == "bucket_low value (1.3) must be between 0.0 and 1.0");
    BOOST_TEST(stcs("bucket_high", "0.7") == "bucket_high value (0.7) must be greater than 1.0");
    BOOST_TEST(stcs("min_threshold", "1") == "min_threshold value (1) must be bigger or equal to 2");
    BOOST_TEST(stcs("min_threshold", "x") == "Invalid value x for 'min_threshold'");
    BOOST_TEST(stcs("max_threshold", "3") ==
               "Min compaction threshold (got 4) cannot be greater than max compaction threshold (got 3)");
    BOOST_TEST(stcs("bucket_high", "abc") == "abc is not a parsable float for bucket_high");
    BOOST_TEST(stcs("abc", "-54.54") == "Properties specified [abc] are not understood by SizeTieredCompactionStrategy");
    BOOST_TEST(stcs("compaction_window_size", "4") ==
               "Properties specified [compaction_window_size] are not understood by SizeTieredCompactionStrategy");
    BOOST_TEST(twcs("dog", "3") == "Properties specified [dog] are not understood by TimeWindowCompactionStrategy");
    BOOST_TEST(twcs("compaction_window_unit", "SECONDS") == "SECONDS is not valid for compaction_window_unit");
    BOOST_TEST(twcs("compaction_window_size", "-8") == "-8 must be greater than 1 for compaction_window_size");
    BOOST_TEST(twcs("timestamp_resolution", "SECONDS") == "SECONDS is not valid for timestamp_resolution");
    BOOST_TEST(twcs("max_threshold", "1") == "max_threshold value (1) must be bigger or equal to 2");
}

// Cassandra's getBuckets, as its source reads (a map from average size to bucket; the first that takes it).
std::vector<std::set<uint64_t>> model_buckets(std::vector<candidate> v, const compaction_options& o) {
    std::stable_sort(v.begin(), v.end(), [](auto& a, auto& b) { return a.size < b.size; });
    std::vector<std::pair<double, std::vector<candidate>>> buckets;
    for (auto& c : v) {
        bool found = false;
        for (auto& [avg, members] : buckets) {
            double s = double(c.size);
            if ((s > avg * o.bucket_low && s < avg * o.bucket_high) ||
                (s < double(o.min_sstable_size) && avg < double(o.min_sstable_size))) {
                double total = avg * double(members.size()) + s;
                members.push_back(c);
                avg = total / double(members.size());
                found = true;
                break;
            }
        }
        if (!found) {
            buckets.push_back({double(c.size), {c}});
        }
    }
    std::vector<std::set<uint64_t>> out;
    for (auto& [avg, members] : buckets) {
        std::set<uint64_t> ids;
        for (auto& c : members) {
            ids.insert(c.id);
        }
        out.push_back(ids);
    }
    return out;
}

BOOST_AUTO_TEST_CASE(size_tiered_buckets_random) {
    std::mt19937_64 rng(20261126);
    for (int iter = 0; iter < 2000; ++iter) {
        compaction_options o;
        o.min_threshold = 2 + int(rng() % 4);
        o.max_threshold = o.min_threshold + int(rng() % 8);
        o.min_sstable_size = (rng() % 3) * 10 * MiB;
        std::vector<candidate> v;
        size_t n = rng() % 40;
        for (size_t i = 0; i < n; ++i) {
            // Sizes spread over tiers: 1 MiB to 1 GiB, log-uniform.
            uint64_t size = uint64_t(MiB * std::pow(2.0, double(rng() % 1000) / 100.0));
            v.push_back(sst(i, size));
        }
        auto buckets = size_tiered_buckets(v, o);
        std::vector<std::set<uint64_t>> got;
        std::multiset<uint64_t> all;
        for (auto& b : buckets) {
            std::set<uint64_t> ids;
            for (auto& c : b) {
                ids.insert(c.id);
                all.insert(c.id);
            }
            got.push_back(ids);
        }
        BOOST_REQUIRE(all.size() == n);
        BOOST_REQUIRE(std::set<uint64_t>(all.begin(), all.end()).size() == n);
        BOOST_REQUIRE((got == model_buckets(v, o)));
        auto chosen = most_interesting_bucket(buckets, o.min_threshold, o.max_threshold);
        bool any = std::any_of(buckets.begin(), buckets.end(), [&](auto& b) { return b.size() >= size_t(o.min_threshold); });
        BOOST_REQUIRE(chosen.empty() != any);
        if (!chosen.empty()) {
            BOOST_REQUIRE(chosen.size() >= size_t(o.min_threshold));
            BOOST_REQUIRE(chosen.size() <= size_t(o.max_threshold));
            // All from one bucket, and no qualifying bucket offers more sstables.
            auto home = std::find_if(got.begin(), got.end(), [&](auto& b) { return b.contains(chosen.front().id); });
            for (auto& c : chosen) {
                BOOST_REQUIRE(home->contains(c.id));
            }
            for (auto& b : got) {
                BOOST_REQUIRE(std::min(b.size(), size_t(o.max_threshold)) <= chosen.size() || b.size() < size_t(o.min_threshold));
            }
            strategy_input in;
            in.sstables = v;
            in.now = 1000000;
            in.gc_before = 0;
            auto job = next_job(o, in);
            BOOST_REQUIRE(job);
            BOOST_REQUIRE((job->kind == job_kind::regular));
            BOOST_REQUIRE(pending_tasks(o, in) >= 1);
        }
    }
}

BOOST_AUTO_TEST_CASE(size_tiered_examples) {
    compaction_options o;
    // Four small sstables (under min_sstable_size) share a bucket whatever their sizes.
    std::vector<candidate> small{sst(1, 1 * MiB), sst(2, 3 * MiB), sst(3, 10 * MiB), sst(4, 40 * MiB)};
    strategy_input in;
    in.sstables = small;
    auto job = next_job(o, in);
    BOOST_REQUIRE(job);
    BOOST_TEST(job->ids.size() == 4u);
    // Three 100 MiB and a 1 GiB: two buckets, none of four.
    in.sstables = {sst(1, 100 * MiB), sst(2, 110 * MiB), sst(3, 90 * MiB), sst(4, 1024 * MiB)};
    BOOST_TEST(!next_job(o, in).has_value());
    BOOST_TEST(pending_tasks(o, in) == 0);
    in.sstables.push_back(sst(5, 105 * MiB));
    job = next_job(o, in);
    BOOST_REQUIRE(job);
    BOOST_TEST((std::set<uint64_t>(job->ids.begin(), job->ids.end()) == std::set<uint64_t>{1, 2, 3, 5}));
    // max_threshold: the smallest 32 of 40.
    in.sstables.clear();
    for (uint64_t i = 0; i < 40; ++i) {
        in.sstables.push_back(sst(i, (100 + i) * MiB));
    }
    job = next_job(o, in);
    BOOST_REQUIRE(job);
    BOOST_TEST(job->ids.size() == 32u);
    BOOST_TEST(*std::max_element(job->ids.begin(), job->ids.end()) == 31u);
    BOOST_TEST(pending_tasks(o, in) == 2);
    o.enabled = false;
    BOOST_TEST(!next_job(o, in).has_value());
}

BOOST_AUTO_TEST_CASE(time_window_windows) {
    auto o = parse_compaction_options(
        {{"class", "TimeWindowCompactionStrategy"}, {"compaction_window_unit", "HOURS"}, {"compaction_window_size", "1"}});
    int64_t us = 1000000;
    BOOST_TEST(window_start(o, 7200 * us + 5) == 7200);
    BOOST_TEST(window_start(o, 10799 * us) == 7200);
    BOOST_TEST(window_start(o, -1) == -3600);
    // Window 0 (old) has two sstables; window 3 (newest) three, under min_threshold 4.
    strategy_input in;
    in.sstables = {sst(1, MiB, 0, 10 * us), sst(2, MiB, 20 * us, 30 * us), sst(3, MiB, 3 * 3600 * us, 3 * 3600 * us + 1),
                   sst(4, MiB, 3 * 3600 * us, 3 * 3600 * us + 2), sst(5, MiB, 3 * 3600 * us, 3 * 3600 * us + 3)};
    auto job = next_job(o, in);
    BOOST_REQUIRE(job);
    BOOST_TEST((std::set<uint64_t>(job->ids.begin(), job->ids.end()) == std::set<uint64_t>{1, 2}));
    BOOST_TEST(pending_tasks(o, in) == 1);
    // A fourth in the newest window: size-tiered there first (the newest window goes first).
    in.sstables.push_back(sst(6, MiB, 3 * 3600 * us + 100, 3 * 3600 * us + 200));
    job = next_job(o, in);
    BOOST_REQUIRE(job);
    BOOST_TEST((std::set<uint64_t>(job->ids.begin(), job->ids.end()) == std::set<uint64_t>{3, 4, 5, 6}));
    BOOST_TEST(pending_tasks(o, in) == 2);
    // An old window with one sstable is left alone.
    in.sstables = {sst(1, MiB, 0, 10 * us), sst(3, MiB, 3 * 3600 * us, 3 * 3600 * us + 1)};
    BOOST_TEST(!next_job(o, in).has_value());
}

// No sstable yet, at a time past the default gc_grace_seconds (10 days).
strategy_input input_at_default_gc_grace() {
    strategy_input in;
    in.now = 1000000;
    in.gc_before = in.now - 864000;
    return in;
}

BOOST_AUTO_TEST_CASE(fully_expired_and_tombstone_candidates) {
    compaction_options o;
    auto in = input_at_default_gc_grace();
    auto expired = sst(1, MiB, 100, 200);
    expired.max_local_deletion_time = int32_t(in.gc_before - 1);
    auto live = sst(2, MiB, 300, 400);  // newer data, never expires
    in.sstables = {expired, live};
    auto job = next_job(o, in);
    BOOST_REQUIRE(job);
    BOOST_TEST((job->kind == job_kind::expired));
    BOOST_TEST((job->ids == std::vector<uint64_t>{1}));
    // An overlapping sstable with older data (the expired one may shadow it): kept.
    in.sstables.push_back(sst(3, MiB, 150, 160));
    BOOST_TEST(fully_expired(in).empty());
    // ... unless it does not overlap its token range.
    in.sstables.back().first_token = 10;
    in.sstables[0].last_token = 5;
    BOOST_TEST((fully_expired(in) == std::vector<uint64_t>{1}));
    // Older data in a memtable: kept; in an sstable being compacted: kept.
    in.sstables.pop_back();
    in.memtable_min_timestamp = 50;
    BOOST_TEST(fully_expired(in).empty());
    in.memtable_min_timestamp = INT64_MAX;
    in.compacting = {sst(9, MiB, 10, 20)};
    BOOST_TEST(fully_expired(in).empty());
    in.compacting.clear();
    // Not expired until gc_before passes its max_local_deletion_time.
    in.sstables[0].max_local_deletion_time = int32_t(in.gc_before);
    BOOST_TEST(fully_expired(in).empty());

    // Tombstone compaction: ratio over the threshold, old enough, no overlap (or unchecked).
    auto t = sst(5, MiB, 0, 10);
    t.droppable_tombstone_ratio = 0.5;
    t.age_seconds = 2 * 86400;
    t.first_token = 0;
    t.last_token = 100;
    auto other = sst(6, 100 * MiB, 0, 10);
    other.first_token = 200;
    other.last_token = 300;
    in.sstables = {t, other};
    job = next_job(o, in);
    BOOST_REQUIRE(job);
    BOOST_TEST((job->kind == job_kind::tombstone));
    BOOST_TEST((job->ids == std::vector<uint64_t>{5}));
    in.sstables[1].first_token = 20;  // overlaps 80% of it now: 0.5 x 0.2 of droppable tombstones left
    BOOST_TEST(!next_job(o, in).has_value());
    o.unchecked_tombstone_compaction = true;
    BOOST_TEST(next_job(o, in).has_value());
    in.sstables[0].age_seconds = 100;  // too young
    BOOST_TEST(!next_job(o, in).has_value());
    in.sstables[0].age_seconds = 2 * 86400;
    in.sstables[0].droppable_tombstone_ratio = 0.1;  // under tombstone_threshold
    BOOST_TEST(!next_job(o, in).has_value());
}

// Cassandra's estimate of the tombstones an overlapped sstable can still drop: its ratio times the share of its keys
// (here: of its token range) outside every other sstable's range, against tombstone_threshold (0.2).
BOOST_AUTO_TEST_CASE(tombstone_compaction_counts_the_non_overlapping_share) {
    compaction_options o;
    auto in = input_at_default_gc_grace();
    auto c = sst(1, MiB, 0, 10);
    c.droppable_tombstone_ratio = 0.5;
    c.age_seconds = 2 * 86400;
    c.first_token = -500;
    c.last_token = 499;  // 1000 tokens
    auto other = [](uint64_t id, int64_t first, int64_t last) {
        auto x = sst(id, MiB, 0, 10);
        x.first_token = first;
        x.last_token = last;
        return x;
    };
    in.sstables = {c};
    BOOST_TEST(non_overlapping_share(c, in) == 1.0);
    in.sstables = {c, other(2, -1000, -1)};  // covers half: 0.5 x 0.5 = 0.25 > 0.2
    BOOST_TEST(non_overlapping_share(c, in) == 0.5);
    BOOST_TEST(worth_dropping_tombstones(c, in, o));
    in.compacting = {other(3, 0, 199)};  // and 200 more, being compacted: 0.3 x 0.5 = 0.15
    BOOST_TEST(non_overlapping_share(c, in) == 0.3, boost::test_tools::tolerance(1e-12));
    BOOST_TEST(!worth_dropping_tombstones(c, in, o));
    // Overlapping ranges of others are counted once: [-1000, -1] and [-300, 99] cover 600 of the 1000.
    in.compacting = {other(3, -300, 99)};
    BOOST_TEST(non_overlapping_share(c, in) == 0.4, boost::test_tools::tolerance(1e-12));
    BOOST_TEST(!worth_dropping_tombstones(c, in, o));  // 0.2 is not above the threshold
    // One covering everything: nothing droppable for sure; the full token range does not overflow.
    in.compacting = {other(3, INT64_MIN, INT64_MAX)};
    BOOST_TEST(non_overlapping_share(c, in) == 0.0);
    auto whole = other(4, INT64_MIN, INT64_MAX);
    in.sstables = {whole};
    in.compacting.clear();
    BOOST_TEST(non_overlapping_share(whole, in) == 1.0);
    in.compacting = {other(5, INT64_MIN, -1)};
    BOOST_TEST(non_overlapping_share(whole, in) == 0.5, boost::test_tools::tolerance(1e-12));
}

BOOST_AUTO_TEST_CASE(compaction_weight_is_floor_log4) {
    BOOST_CHECK_EQUAL(compaction_weight(0), 0);
    BOOST_CHECK_EQUAL(compaction_weight(3), 0);
    BOOST_CHECK_EQUAL(compaction_weight(4), 1);
    BOOST_CHECK_EQUAL(compaction_weight(15), 1);
    BOOST_CHECK_EQUAL(compaction_weight(16), 2);
    BOOST_CHECK_EQUAL(compaction_weight(uint64_t(1) << 20), 10);
    BOOST_CHECK_EQUAL(compaction_weight((uint64_t(1) << 20) - 1), 9);
    BOOST_CHECK_EQUAL(compaction_weight(UINT64_MAX), 31);
}

// Against a model: the largest prefix (down to min_inputs) whose total's floor(log4) is free.
BOOST_AUTO_TEST_CASE(inputs_with_free_weight_random) {
    std::mt19937_64 rng(11);
    for (int i = 0; i < 2000; ++i) {
        std::vector<uint64_t> sizes(1 + rng() % 12);
        for (auto& s : sizes) {
            s = 1 + rng() % (uint64_t(1) << (4 + rng() % 24));
        }
        std::sort(sizes.begin(), sizes.end());
        std::set<int> taken;
        for (int k = int(rng() % 4); k > 0; --k) {
            taken.insert(int(rng() % 16));
        }
        size_t min_inputs = 1 + rng() % 5;
        size_t want = 0;
        for (size_t n = sizes.size(); n >= std::min(min_inputs, sizes.size()) && n > 0 && !want; --n) {
            uint64_t total = 0;
            for (size_t j = 0; j < n; ++j) {
                total += sizes[j];
            }
            int w = (int(std::bit_width(total)) - 1) / 2;  // floor(log4) = floor(floor(log2) / 2)
            if (!taken.contains(w)) {
                want = n;
            }
        }
        BOOST_REQUIRE_EQUAL(inputs_with_free_weight(sizes, taken, min_inputs), want);
    }
    // The case it is for: the small tier of 16 flushes of 3.4 MB (weight 12) while one of weight 12 runs: its
    // 4 smallest (13.6 MB, weight 11) go now.
    std::vector<uint64_t> flushes(16, 3'400'000);
    BOOST_CHECK_EQUAL(inputs_with_free_weight(flushes, {12}, 4), 4u);
    BOOST_CHECK_EQUAL(inputs_with_free_weight(flushes, {11, 12}, 4), 0u);
    // A time window's two sstables, under min_threshold: whole when free (the regression of a TWCS table left
    // with a pending compaction), not at all when taken.
    BOOST_CHECK_EQUAL(inputs_with_free_weight({100, 200}, {}, 4), 2u);
    BOOST_CHECK_EQUAL(inputs_with_free_weight({100, 200}, {4}, 4), 0u);
}
