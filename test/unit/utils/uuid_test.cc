// Time UUIDs: the RFC 4122 layout (against the value Cassandra's UUIDGen gives for the Unix epoch), version,
// variant and multicast bits, increasing order across threads; random UUIDs' version and variant.
#include "utils/uuid.hh"

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <set>
#include <thread>
#include <vector>

using namespace reef::utils;

BOOST_AUTO_TEST_CASE(time_uuid_layout) {
    // Cassandra's UUIDGen.minTimeUUID(0): clock sequence and node bytes 0x80.
    BOOST_REQUIRE_EQUAL(to_string(make_time_uuid_at(0, 0x0080, 0x808080808080ULL)), "13814000-1dd2-11b2-8080-808080808080");
    BOOST_REQUIRE_EQUAL(to_string(make_time_uuid_at(0, 0x0080, 0x808080808080ULL), false), "138140001dd211b28080808080808080");
    uint64_t t = 16'000'000'000'000'000ULL;
    BOOST_REQUIRE_EQUAL(time_uuid_unix_100ns(make_time_uuid_at(t, 5, 7)), t);
}

BOOST_AUTO_TEST_CASE(time_uuids_are_v1_unique_and_increasing) {
    auto a = make_time_uuid();
    BOOST_REQUIRE_EQUAL(uuid_version(a), 1u);
    BOOST_REQUIRE_EQUAL(a[8] >> 6, 2);           // variant 10
    BOOST_REQUIRE_EQUAL(a[10] & 1, 1);           // multicast bit of the random node
    std::vector<std::vector<uint64_t>> per_thread(4);
    std::vector<std::thread> threads;
    for (auto& v : per_thread) {
        threads.emplace_back([&v] {
            for (int i = 0; i < 2000; ++i) {
                v.push_back(time_uuid_unix_100ns(make_time_uuid()));
            }
        });
    }
    for (auto& th : threads) {
        th.join();
    }
    std::set<uint64_t> all;
    for (auto& v : per_thread) {
        BOOST_REQUIRE(std::is_sorted(v.begin(), v.end()));
        all.insert(v.begin(), v.end());
    }
    BOOST_REQUIRE_EQUAL(all.size(), 8000u);
}

BOOST_AUTO_TEST_CASE(random_uuids) {
    auto a = make_random_uuid(), b = make_random_uuid();
    BOOST_REQUIRE(a != b);
    BOOST_REQUIRE_EQUAL(uuid_version(a), 4u);
    BOOST_REQUIRE_EQUAL(a[8] >> 6, 2);
}
