// Tests of reactor::handle_signal: a signal sent while the shard sleeps runs its handler on the shard's loop,
// whichever thread the kernel delivers it to; a stopped runtime puts back the action the signal had before.
#include "runtime/condition_variable.hh"
#include "runtime/reactor.hh"
#include "runtime/smp.hh"
#include "test/lib/reef_test.hh"

#include <csignal>
#include <pthread.h>
#include <thread>
#include <unistd.h>

using namespace reef;
using namespace std::chrono_literals;

// kill() from a plain thread: the kernel may hand the signal to any thread that does not block it (shard 1's,
// or this one's), and the handler must still run on shard 0, where it was registered.
REEF_TEST_CASE(test_signal_runs_handler_on_registering_shard) {
    condition_variable cv;
    int calls = 0;
    shard_id ran_on = 99;
    engine().handle_signal(SIGUSR1, [&] {
        ++calls;
        ran_on = this_shard_id();
        cv.broadcast();
    });
    co_await sleep(10ms);  // let shard 0 fall asleep in its backend
    std::thread sender([] { ::kill(::getpid(), SIGUSR1); });
    sender.join();
    co_await cv.wait(steady_clock_type::now() + 5s, [&] { return calls > 0; });
    BOOST_CHECK_EQUAL(calls, 1);
    BOOST_CHECK_EQUAL(ran_on, 0u);
    // A second delivery runs it again; a replaced handler is the one called.
    int replaced_calls = 0;
    engine().handle_signal(SIGUSR1, [&] {
        ++replaced_calls;
        cv.broadcast();
    });
    co_await smp::submit_to(1, [] { ::raise(SIGUSR1); });
    co_await cv.wait(steady_clock_type::now() + 5s, [&] { return replaced_calls > 0; });
    BOOST_CHECK_EQUAL(calls, 1);
    BOOST_CHECK_EQUAL(replaced_calls, 1);
}

BOOST_AUTO_TEST_CASE(test_stopped_runtime_restores_previous_action) {
    struct sigaction ignore {}, old {};
    ignore.sa_handler = SIG_IGN;
    sigaction(SIGUSR2, &ignore, &old);
    testing::run_in_runtime(testing::test_runtime_config(), []() -> future<> {
        engine().handle_signal(SIGUSR2, [] {});
        struct sigaction now {};
        sigaction(SIGUSR2, nullptr, &now);
        BOOST_CHECK(now.sa_handler != SIG_IGN);
        co_return;
    });
    struct sigaction after {};
    sigaction(SIGUSR2, nullptr, &after);
    BOOST_CHECK(after.sa_handler == SIG_IGN);
    sigaction(SIGUSR2, &old, nullptr);
}
