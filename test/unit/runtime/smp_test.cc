// Tests of cross-shard calls: results, exceptions, ordering and a stress run
// of every shard calling every shard.
#include "runtime/smp.hh"
#include "runtime/when_all.hh"
#include "test/lib/reef_test.hh"

#include <atomic>
#include <stdexcept>
#include <string>

using namespace reef;
using namespace std::chrono_literals;

REEF_TEST_CASE(test_submit_to_returns_values_from_other_shard) {
    BOOST_REQUIRE_GE(smp::count(), 2u);
    auto id = co_await smp::submit_to(1, [] { return this_shard_id(); });
    BOOST_CHECK_EQUAL(id, 1u);
    auto s = co_await smp::submit_to(1, []() -> future<std::string> {
        co_await sleep(1ms);
        co_return "from " + std::to_string(this_shard_id());
    });
    BOOST_CHECK_EQUAL(s, "from 1");
    co_await smp::submit_to(1, [] {});
    BOOST_CHECK_EQUAL(co_await smp::submit_to(0, [] { return 42; }), 42);
    BOOST_CHECK_THROW(co_await smp::submit_to(smp::count(), [] { return 0; }), std::invalid_argument);
}

REEF_TEST_CASE(test_exception_on_other_shard_reaches_caller) {
    try {
        co_await smp::submit_to(1, []() -> future<int> {
            co_await sleep(1ms);
            throw std::runtime_error("thrown on shard " + std::to_string(this_shard_id()));
        });
        BOOST_FAIL("expected an exception");
    } catch (const std::runtime_error& e) {
        BOOST_CHECK_EQUAL(std::string(e.what()), "thrown on shard 1");
    }
    BOOST_CHECK_THROW(co_await smp::submit_to(1, [] { throw std::logic_error("sync"); }), std::logic_error);
}

REEF_TEST_CASE(test_invoke_on_all) {
    std::atomic<unsigned> mask{0};
    co_await smp::invoke_on_all([&] { mask.fetch_or(1u << this_shard_id()); });
    BOOST_CHECK_EQUAL(mask.load(), (1u << smp::count()) - 1);
}

REEF_TEST_CASE(test_messages_arrive_in_order) {
    // Calls from one shard to another run in the order they were sent.
    std::vector<future<int>> fs;
    static thread_local int next_seen;
    next_seen = 0;
    co_await smp::submit_to(1, [] { next_seen = 0; });
    std::atomic<bool> in_order{true};
    for (int i = 0; i < 5000; ++i) {
        fs.push_back(smp::submit_to(1, [i, &in_order] {
            if (next_seen != i) {
                in_order = false;
            }
            next_seen = i + 1;
            return i;
        }));
    }
    auto vals = co_await when_all(std::move(fs));
    BOOST_CHECK(in_order.load());
    BOOST_CHECK_EQUAL(vals.back(), 4999);
}

// Every shard sends to every shard (itself included) from many concurrent
// fibers; each call returns a value the caller checks, so a lost, duplicated
// or misdelivered message fails the test, and a deadlock times it out.
REEF_TEST_CASE(test_all_to_all_stress) {
    constexpr unsigned fibers = 64;
    constexpr unsigned calls_per_fiber = 16000;  // 2M calls on 2 shards
    auto per_shard = [] () -> future<uint64_t> {
        std::vector<future<uint64_t>> fs;
        for (unsigned f = 0; f < fibers; ++f) {
            fs.push_back([](unsigned f) -> future<uint64_t> {
                uint64_t sum = 0;
                for (unsigned i = 0; i < calls_per_fiber; ++i) {
                    shard_id to = (f + i) % smp::count();
                    uint64_t x = (uint64_t(this_shard_id()) << 40) | (uint64_t(f) << 20) | i;
                    auto r = co_await smp::submit_to(to, [x, to] {
                        if (this_shard_id() != to) {
                            throw std::runtime_error("ran on the wrong shard");
                        }
                        return x * 2 + 1;
                    });
                    if (r != x * 2 + 1) {
                        throw std::runtime_error("wrong reply");
                    }
                    sum += 1;
                }
                co_return sum;
            }(f));
        }
        auto sums = co_await when_all(std::move(fs));
        uint64_t total = 0;
        for (auto s : sums) {
            total += s;
        }
        co_return total;
    };
    std::vector<future<uint64_t>> shards;
    for (shard_id s = 0; s < smp::count(); ++s) {
        shards.push_back(smp::submit_to(s, per_shard));
    }
    auto totals = co_await when_all(std::move(shards));
    uint64_t total = 0;
    for (auto t : totals) {
        total += t;
    }
    BOOST_CHECK_EQUAL(total, uint64_t(smp::count()) * fibers * calls_per_fiber);
}

BOOST_AUTO_TEST_CASE(test_runtime_restarts_and_returns_exit_code) {
    auto cfg = testing::test_runtime_config();
    for (int round = 0; round < 3; ++round) {
        int rc = run(cfg, [round]() -> future<int> {
            auto other = co_await smp::submit_to(smp::count() - 1, [] { return this_shard_id(); });
            co_return round * 10 + int(other);
        });
        BOOST_CHECK_EQUAL(rc, round * 10 + int(cfg.smp) - 1);
    }
    BOOST_CHECK_THROW(run(cfg, []() -> future<int> { throw std::runtime_error("main failed"); }),
                      std::runtime_error);
}
