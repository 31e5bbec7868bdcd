// Partition ranges: a singular range (the key held once) answers every question as the range with that key as
// both inclusive bounds does, copied and moved too; token bounds and open ends place keys as Cassandra's ring does.
#include "mutation/partition_range.hh"

#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

using namespace reef;
using namespace reef::dht;

namespace {

decorated_key key(int64_t t, const char* k) {
    return decorated_key(token(t), partition_key(k));
}

partition_range both_bounds(const decorated_key& k) {
    return partition_range(partition_range::bound{ring_position::for_key(k), true},
                           partition_range::bound{ring_position::for_key(k), true});
}

void check_same(const partition_range& a, const partition_range& b, const std::vector<decorated_key>& probes) {
    BOOST_REQUIRE_EQUAL(a.is_singular(), b.is_singular());
    BOOST_REQUIRE(a.start() && a.end() && b.start() && b.end());
    BOOST_REQUIRE(*a.start()->position.key() == *b.start()->position.key());
    BOOST_REQUIRE(*a.end()->position.key() == *b.end()->position.key());
    BOOST_REQUIRE_EQUAL(a.end()->inclusive, b.end()->inclusive);
    for (auto& p : probes) {
        BOOST_REQUIRE_EQUAL(a.before(p), b.before(p));
        BOOST_REQUIRE_EQUAL(a.after(p), b.after(p));
        BOOST_REQUIRE_EQUAL(a.contains(p), b.contains(p));
    }
}

} // namespace

BOOST_AUTO_TEST_CASE(a_singular_range_is_the_range_with_its_key_at_both_ends) {
    const char* names[] = {"a", "b", "c"};
    std::vector<decorated_key> probes;
    for (int t = -3; t <= 3; ++t) {
        for (auto n : names) {
            probes.push_back(key(t, n));
        }
    }
    for (auto& k : probes) {
        auto s = partition_range::singular(k);
        check_same(s, both_bounds(k), probes);
        auto copy = s;
        check_same(copy, both_bounds(k), probes);
        auto moved = std::move(copy);
        check_same(moved, both_bounds(k), probes);
        partition_range assigned = partition_range::full();
        assigned = s;
        check_same(assigned, both_bounds(k), probes);
        BOOST_CHECK(s.contains(k));
        BOOST_CHECK_EQUAL(s.end()->position.compare(k), 0);
    }
    // A range reassigned from singular to another keeps no trace of it.
    auto s = partition_range::singular(key(1, "a"));
    s = partition_range(partition_range::bound{ring_position::before_token(token(0)), true}, std::nullopt);
    BOOST_CHECK(!s.is_singular());
    BOOST_CHECK(!s.end());
    BOOST_CHECK(s.contains(key(3, "c")));
    BOOST_CHECK(s.before(key(-1, "a")));
}

BOOST_AUTO_TEST_CASE(token_bounds_stand_before_or_after_every_key_of_their_token) {
    partition_range r(partition_range::bound{ring_position::after_token(token(0)), true},
                      partition_range::bound{ring_position::before_token(token(2)), true});
    BOOST_CHECK(!r.is_singular());
    BOOST_CHECK(r.before(key(0, "z")));
    BOOST_CHECK(r.contains(key(1, "a")));
    BOOST_CHECK(r.after(key(2, "a")));
    auto full = partition_range::full();
    BOOST_CHECK(full.contains(key(-5, "a")) && !full.is_singular());
}
