// Tests of semaphore, gate, abort_source, condition_variable, promise,
// with_timeout and sharded<T>.
#include "runtime/abort_source.hh"
#include "runtime/condition_variable.hh"
#include "runtime/gate.hh"
#include "runtime/promise.hh"
#include "runtime/semaphore.hh"
#include "runtime/sharded.hh"
#include "runtime/with_timeout.hh"
#include "test/lib/reef_test.hh"

#include <atomic>
#include <string>
#include <vector>

using namespace reef;
using namespace std::chrono_literals;

REEF_TEST_CASE(test_semaphore_limits_concurrency) {
    semaphore sem(3);
    int running = 0, peak = 0, done = 0;
    std::vector<future<>> fs;
    for (int i = 0; i < 20; ++i) {
        fs.push_back(with_semaphore(sem, 1, [&]() -> future<> {
            peak = std::max(peak, ++running);
            co_await sleep(1ms);
            --running;
            ++done;
        }));
    }
    co_await when_all(std::move(fs));
    BOOST_CHECK_EQUAL(peak, 3);
    BOOST_CHECK_EQUAL(done, 20);
    BOOST_CHECK_EQUAL(sem.available_units(), 3);
}

REEF_TEST_CASE(test_semaphore_fifo_and_units) {
    semaphore sem(0);
    std::vector<int> order;
    auto waiter = [&](int id, size_t n) -> future<> {
        co_await sem.wait(n);
        order.push_back(id);
    };
    std::vector<future<>> fs;
    fs.push_back(waiter(1, 2));
    fs.push_back(waiter(2, 1));
    auto all = when_all(std::move(fs));
    spawn([&]() -> future<> {
        co_await yield();
        // One unit is free, but waiter 1 (needs 2) is first: nobody runs.
        sem.signal(1);
        co_await sleep(1ms);
        BOOST_CHECK(order.empty());
        sem.signal(2);
    });
    co_await std::move(all);
    BOOST_CHECK((order == std::vector<int>{1, 2}));
    BOOST_CHECK_EQUAL(sem.available_units(), 0);

    {
        auto units = consume_units(sem, 5);
        BOOST_CHECK_EQUAL(sem.available_units(), -5);
        units.return_units(2);
        BOOST_CHECK_EQUAL(sem.available_units(), -3);
    }
    BOOST_CHECK_EQUAL(sem.available_units(), 0);
    BOOST_CHECK(!try_get_units(sem, 1));
    sem.signal(4);
    auto u = co_await get_units(sem, 4);
    BOOST_CHECK_EQUAL(u.count(), 4u);
    BOOST_CHECK_EQUAL(sem.available_units(), 0);
}

REEF_TEST_CASE(test_semaphore_timeout_and_broken) {
    semaphore sem(0);
    auto start = steady_clock_type::now();
    BOOST_CHECK_THROW(co_await sem.wait(5ms, 1), semaphore_timed_out);
    BOOST_CHECK(steady_clock_type::now() - start >= 5ms);
    BOOST_CHECK_EQUAL(sem.waiters(), 0u);

    // A large waiter that times out at the head lets a small one through.
    sem.signal(1);
    bool small_done = false;
    auto big = sem.wait(3ms, 10);
    auto small = [&]() -> future<> {
        co_await sem.wait(1);
        small_done = true;
    };
    auto [b_ok, s_ok] = co_await when_all([&]() -> future<bool> {
        try {
            co_await std::move(big);
            co_return true;
        } catch (const semaphore_timed_out&) {
            co_return false;
        }
    }(), [&]() -> future<bool> { co_await sleep(1ms); co_await small(); co_return true; }());
    BOOST_CHECK(!b_ok);
    BOOST_CHECK(s_ok && small_done);

    auto pending = sem.wait(1);
    spawn([&]() -> future<> {
        co_await yield();
        sem.broken();
    });
    BOOST_CHECK_THROW(co_await std::move(pending), broken_semaphore);
    BOOST_CHECK_THROW(co_await sem.wait(1), broken_semaphore);
}

REEF_TEST_CASE(test_gate_waits_for_holders) {
    gate g;
    int finished = 0;
    for (int i = 0; i < 5; ++i) {
        spawn(with_gate(g, [&, i]() -> future<> {
            co_await sleep(std::chrono::milliseconds(i + 1));
            ++finished;
        }));
    }
    BOOST_CHECK_EQUAL(g.get_count(), 5u);
    co_await g.close();
    BOOST_CHECK_EQUAL(finished, 5);
    BOOST_CHECK_THROW(g.enter(), gate_closed_exception);
    BOOST_CHECK(!g.try_enter());
    gate empty;
    co_await empty.close();
    BOOST_CHECK(empty.is_closed());
}

REEF_TEST_CASE(test_abort_source) {
    abort_source as;
    std::vector<int> calls;
    auto s1 = as.subscribe([&] { calls.push_back(1); });
    std::optional<abort_source::subscription> s2 = as.subscribe([&] { calls.push_back(2); });
    auto s3 = as.subscribe([&] { calls.push_back(3); });
    s2.reset();  // unsubscribed: never called
    auto moved = std::move(*s3);
    BOOST_CHECK(!as.abort_requested());
    as.check();
    as.request_abort();
    as.request_abort();
    BOOST_CHECK((calls == std::vector<int>{1, 3}));
    BOOST_CHECK_THROW(as.check(), abort_requested_exception);
    BOOST_CHECK(!as.subscribe([] {}));
    co_return;
}

REEF_TEST_CASE(test_condition_variable) {
    condition_variable cv;
    int value = 0;
    int woke = 0;
    auto waiter = [&]() -> future<> {
        co_await cv.wait([&] { return value >= 2; });
        ++woke;
    };
    std::vector<future<>> fs;
    for (int i = 0; i < 3; ++i) {
        fs.push_back(waiter());
    }
    auto all = when_all(std::move(fs));
    spawn([&]() -> future<> {
        co_await yield();
        value = 1;
        cv.broadcast();  // predicate still false: they wait again
        co_await sleep(1ms);
        BOOST_CHECK_EQUAL(woke, 0);
        value = 2;
        cv.broadcast();
    });
    co_await std::move(all);
    BOOST_CHECK_EQUAL(woke, 3);
    BOOST_CHECK_THROW(co_await cv.wait(steady_clock_type::now() + 2ms), condition_variable_timed_out);
    BOOST_CHECK(!cv.has_waiters());
}

REEF_TEST_CASE(test_promise) {
    promise<std::string> p;
    auto f = p.get_future();
    BOOST_CHECK_THROW((void)p.get_future(), std::logic_error);
    timer t([&] { p.set_value("later"); });
    t.arm(1ms);
    BOOST_CHECK_EQUAL(co_await std::move(f), "later");

    future<int> orphan = [] {
        promise<int> q;
        return q.get_future();
    }();
    BOOST_CHECK_THROW(co_await std::move(orphan), broken_promise);

    promise<> v;
    v.set_exception(std::runtime_error("failed"));
    BOOST_CHECK_THROW(co_await v.get_future(), std::runtime_error);
}

REEF_TEST_CASE(test_with_timeout) {
    BOOST_CHECK_EQUAL(co_await with_timeout(100ms, [] () -> future<int> { co_await sleep(1ms); co_return 5; }()), 5);
    bool late_finished = false;
    auto start = steady_clock_type::now();
    BOOST_CHECK_THROW(co_await with_timeout(2ms, [](bool& f) -> future<> {
        co_await sleep(20ms);
        f = true;
    }(late_finished)), timed_out_error);
    BOOST_CHECK(steady_clock_type::now() - start < 20ms);
    BOOST_CHECK(!late_finished);
    co_await sleep(30ms);
    BOOST_CHECK(late_finished);  // not cancelled, just no longer awaited
    BOOST_CHECK_THROW(co_await with_timeout(10ms, make_exception_future<int>(std::logic_error("x"))),
                      std::logic_error);
}

namespace {
struct counter_service {
    explicit counter_service(int base) : value(base + int(this_shard_id())) {}
    int value;
    bool stopped = false;
    static inline std::atomic<int> stops{0};
    future<> stop() {
        stopped = true;
        ++stops;
        co_return;
    }
};
struct failing_service {
    explicit failing_service(int) {
        if (this_shard_id() == 1) {
            throw std::runtime_error("cannot start on shard 1");
        }
    }
};
}

REEF_TEST_CASE(test_sharded) {
    sharded<counter_service> svc;
    co_await svc.start(100);
    BOOST_CHECK_EQUAL(svc.local().value, 100);
    auto v1 = co_await svc.invoke_on(1, [](counter_service& s) { return s.value; });
    BOOST_CHECK_EQUAL(v1, 101);
    co_await svc.invoke_on_all([](counter_service& s) { s.value *= 2; });
    auto sum = co_await svc.map_reduce0([](counter_service& s) { return s.value; }, 0,
                                        [](int a, int b) { return a + b; });
    int expected = 0;
    for (unsigned s = 0; s < smp::count(); ++s) {
        expected += 2 * (100 + int(s));
    }
    BOOST_CHECK_EQUAL(sum, expected);
    counter_service::stops = 0;
    co_await svc.stop();
    BOOST_CHECK_EQUAL(counter_service::stops.load(), int(smp::count()));

    sharded<failing_service> bad;
    BOOST_CHECK_THROW(co_await bad.start(1), std::runtime_error);
    co_await bad.stop();
}
