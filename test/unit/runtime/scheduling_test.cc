// Tests of the background scheduling class: a background task runs after the foreground tasks that are ready,
// and still progresses (every background_max_wait) while the foreground never runs out of ready tasks.
#include "runtime/reactor.hh"
#include "runtime/when_all.hh"
#include "test/lib/reef_test.hh"

#include <boost/test/unit_test.hpp>
#include <chrono>
#include <string>

using namespace reef;

REEF_TEST_CASE(background_runs_after_ready_foreground) {
    std::string order;
    auto fg = [&]() -> future<> {
        for (int i = 0; i < 3; ++i) {
            co_await yield();
            order += 'f';
        }
    };
    auto bg = [&]() -> future<> {
        co_await background_yield();
        order += 'b';
    };
    co_await when_all(bg(), fg());
    // The foreground task stays ready across its yields: the background one runs only when it has finished.
    BOOST_TEST(order == "fffb");
}

REEF_TEST_CASE(background_is_not_starved) {
    bool stop = false;
    uint64_t fg_steps = 0, bg_steps = 0;
    auto fg = [&]() -> future<> {
        while (!stop) {
            co_await yield();
            ++fg_steps;
        }
    };
    auto bg = [&]() -> future<> {
        auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(100);
        while (std::chrono::steady_clock::now() < until) {
            co_await background_yield();
            ++bg_steps;
        }
        stop = true;
    };
    auto before = engine().background_tasks_processed();
    co_await when_all(fg(), bg());
    // 100 ms with a foreground always ready: the background class ran every ~2 ms at least.
    BOOST_TEST(bg_steps >= 10u);
    BOOST_TEST(fg_steps > bg_steps);
    BOOST_TEST(engine().background_tasks_processed() - before >= bg_steps);
}
