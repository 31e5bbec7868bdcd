// Tests of tombstone ordering and cell reconciliation against the rules in
// mutation/README.md, rule by rule and by random merging in every order.
#include "mutation/atomic_cell.hh"
#include "mutation/tombstone.hh"

#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <random>
#include <vector>

using namespace reef;

BOOST_AUTO_TEST_CASE(test_tombstone_supersedes) {
    tombstone none;
    tombstone t1{100, 50};
    tombstone t2{100, 60};
    tombstone t3{101, 10};
    BOOST_CHECK(none.empty());
    BOOST_CHECK(t1.supersedes(none));
    BOOST_CHECK(t2.supersedes(t1));
    BOOST_CHECK(!t1.supersedes(t2));
    BOOST_CHECK(t3.supersedes(t2));
    BOOST_CHECK(!t1.supersedes(t1));
    tombstone acc;
    for (auto t : {t2, none, t3, t1}) {
        acc.apply(t);
    }
    BOOST_CHECK(acc == t3);
    BOOST_CHECK(t1.deletes(100));
    BOOST_CHECK(!t1.deletes(101));
    BOOST_CHECK(!none.deletes(write_time::missing_timestamp + 1));
}

BOOST_AUTO_TEST_CASE(test_reconcile_rules) {
    auto live = atomic_cell::make_live(10, "b");
    // 1. Greater timestamp wins, even over a tombstone.
    BOOST_CHECK(reconcile(atomic_cell::make_live(11, "a"), atomic_cell::make_dead(10, 500)).value() == "a");
    // 2. Tie: expiring or dead beats live.
    auto expiring = atomic_cell::make_expiring(10, "a", 60, 1000);
    BOOST_CHECK(reconcile(live, expiring) == expiring);
    BOOST_CHECK(reconcile(expiring, live) == expiring);
    auto dead = atomic_cell::make_dead(10, 900);
    BOOST_CHECK(reconcile(live, dead) == dead);
    // 3. Tie: dead beats expiring, even with an earlier deletion time.
    BOOST_CHECK(reconcile(expiring, dead) == dead);
    BOOST_CHECK(reconcile(dead, expiring) == dead);
    // 4. Both expiring: later expiry wins regardless of value.
    auto later = atomic_cell::make_expiring(10, "0", 60, 2000);
    BOOST_CHECK(reconcile(expiring, later) == later);
    // 5. Otherwise the greater value as unsigned bytes: 0xff > 'z'.
    auto high = atomic_cell::make_live(10, std::string("\xff", 1));
    auto z = atomic_cell::make_live(10, "z");
    BOOST_CHECK(reconcile(z, high) == high);
    BOOST_CHECK(reconcile(high, z) == high);
    BOOST_CHECK(reconcile(atomic_cell::make_live(10, "ab"), atomic_cell::make_live(10, "a")).value() == "ab");
}

BOOST_AUTO_TEST_CASE(test_expiry) {
    auto c = atomic_cell::make_expiring(10, "v", 100, 1100);
    BOOST_CHECK(c.is_live(1099));
    BOOST_CHECK(!c.is_live(1100));
    BOOST_CHECK(c.expired_to_dead(1099) == c);
    auto d = c.expired_to_dead(1100);
    BOOST_CHECK(d.is_dead_marker());
    BOOST_CHECK_EQUAL(d.timestamp(), 10);
    BOOST_CHECK_EQUAL(d.local_deletion_time(), 1000);
    BOOST_CHECK(d.value().empty());
    BOOST_CHECK(atomic_cell::make_live(1, "x").is_live(1 << 30));
    BOOST_CHECK(!atomic_cell::make_dead(1, 5).is_live(0));
}

// Merging versions in any order and grouping gives the same cell.
BOOST_AUTO_TEST_CASE(test_reconcile_is_order_independent) {
    std::mt19937 rng(12345);
    auto pick = [&](int n) { return int(rng() % unsigned(n)); };
    auto random_cell = [&]() {
        write_time::timestamp_type ts = pick(3);
        std::string v(size_t(pick(3)), char(pick(3) * 120));
        switch (pick(3)) {
        case 0: return atomic_cell::make_live(ts, v);
        case 1: return atomic_cell::make_expiring(ts, v, 10, 100 + pick(3));
        default: return atomic_cell::make_dead(ts, 100 + pick(3));
        }
    };
    for (int round = 0; round < 20000; ++round) {
        std::vector<atomic_cell> cells;
        int n = 2 + pick(4);
        for (int i = 0; i < n; ++i) {
            cells.push_back(random_cell());
        }
        auto fold = [](const std::vector<atomic_cell>& cs) {
            atomic_cell acc = cs[0];
            for (size_t i = 1; i < cs.size(); ++i) {
                acc = reconcile(acc, cs[i]);
            }
            return acc;
        };
        auto expected = fold(cells);
        std::shuffle(cells.begin(), cells.end(), rng);
        BOOST_REQUIRE_MESSAGE(fold(cells) == expected, "round " << round);
        // Right fold too: reconcile(a, reconcile(b, c)).
        atomic_cell acc = cells.back();
        for (size_t i = cells.size() - 1; i-- > 0;) {
            acc = reconcile(cells[i], acc);
        }
        BOOST_REQUIRE_MESSAGE(acc == expected, "round " << round);
    }
}
