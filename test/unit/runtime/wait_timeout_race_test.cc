// A semaphore or condition variable wait granted in the same loop round in which its deadline passes: the grant
// wins, the waiter is resumed once, and the units it was given are its own (the timer, due in that round after the
// granting task ran, used to mark the wait timed out and schedule the waiter a second time).
#include "runtime/condition_variable.hh"
#include "runtime/reactor.hh"
#include "runtime/semaphore.hh"
#include "test/lib/reef_test.hh"

#include <boost/test/unit_test.hpp>

#include <chrono>

using namespace reef;
using namespace std::chrono_literals;

namespace {

// Spins without yielding until t has passed, so that a timer due before t fires in this loop round's poll.
void spin_until(steady_clock_type::time_point t) {
    while (steady_clock_type::now() < t) {
    }
}

} // namespace

REEF_TEST_CASE(semaphore_grant_and_deadline_in_one_round) {
    for (int i = 0; i < 20; ++i) {
        semaphore sem(0);
        int resumed = 0;
        bool granted = false, timed_out = false;
        auto deadline = steady_clock_type::now() + 2ms;
        spawn([&]() -> future<> {
            try {
                co_await sem.wait(deadline, 1);
                granted = true;
            } catch (const semaphore_timed_out&) {
                timed_out = true;
            }
            ++resumed;
        });
        co_await yield();
        BOOST_REQUIRE(sem.waiters() == 1u);
        spin_until(deadline + 1ms);
        sem.signal(1);
        co_await sleep(5ms);
        BOOST_TEST(resumed == 1);
        BOOST_TEST(granted);
        BOOST_TEST(!timed_out);
        // The waiter holds the unit it was given: none is free.
        BOOST_TEST(sem.available_units() == 0);
    }
}

REEF_TEST_CASE(condition_variable_signal_and_deadline_in_one_round) {
    for (int i = 0; i < 20; ++i) {
        condition_variable cv;
        int resumed = 0;
        bool woken = false, timed_out = false;
        auto deadline = steady_clock_type::now() + 2ms;
        spawn([&]() -> future<> {
            try {
                co_await cv.wait(deadline);
                woken = true;
            } catch (const condition_variable_timed_out&) {
                timed_out = true;
            }
            ++resumed;
        });
        co_await yield();
        BOOST_REQUIRE(cv.has_waiters());
        spin_until(deadline + 1ms);
        cv.signal();
        co_await sleep(5ms);
        BOOST_TEST(resumed == 1);
        BOOST_TEST(woken);
        BOOST_TEST(!timed_out);
    }
}
