// Tests of the background scheduling class: a background task runs after the foreground tasks that are ready,
// still progresses (every background_max_wait) while the foreground never runs out of ready tasks, gets about
// shares / (1000 + shares) of a busy shard's time, whatever shares it is given, and stays in its class across waits.
#include "runtime/condition_variable.hh"
#include "runtime/file.hh"
#include "runtime/input_stream.hh"
#include "runtime/reactor.hh"
#include "runtime/scheduling.hh"
#include "runtime/semaphore.hh"
#include "runtime/when_all.hh"
#include "test/lib/reef_test.hh"
#include "test/lib/tmpdir.hh"

#include <boost/test/unit_test.hpp>
#include <chrono>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

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
    // Both progress; their steps (empty here) are no measure of their time: a round runs the background's task
    // again and again for its quota (background_gets_its_shares measures the time).
    BOOST_TEST(fg_steps >= 10u);
    BOOST_TEST(engine().background_tasks_processed() - before >= bg_steps);
}

namespace {

// The thread's CPU time: what the reactor's shares divide (the kernel may deschedule the thread on a loaded machine).
std::chrono::nanoseconds cpu_now() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec);
}

// Spins for about `d` of CPU time; adds what it took to `spent`.
void spin(std::chrono::microseconds d, std::chrono::nanoseconds& spent) {
    auto start = cpu_now();
    while (cpu_now() - start < d) {
    }
    spent += cpu_now() - start;
}

// A foreground task and a background one, both always ready (CPU work in steps of `fg_step` and 20 us) for `run`:
// the background's part of the CPU time they spent.
future<double> background_part(unsigned shares, std::chrono::milliseconds run,
                               std::chrono::microseconds fg_step = std::chrono::microseconds(20)) {
    set_background_shares(shares);
    bool stop = false;
    std::chrono::nanoseconds fg{0}, bg{0};
    auto f = [&]() -> future<> {
        while (!stop) {
            spin(fg_step, fg);
            co_await yield();
        }
    };
    auto b = [&]() -> future<> {
        auto until = std::chrono::steady_clock::now() + run;
        while (std::chrono::steady_clock::now() < until) {
            co_await background_yield();
            spin(std::chrono::microseconds(20), bg);
        }
        stop = true;
    };
    co_await when_all(f(), b());
    co_return double(bg.count()) / double(fg.count() + bg.count());
}

} // namespace

REEF_TEST_CASE(background_gets_its_shares) {
    auto before = background_shares();
    BOOST_TEST(before == 125u);  // the reactor_config's defaults: 250 us rounds after 2 ms of foreground
    // Measured: within 20% of what they ask (0.04-0.045 for 0.048, 0.29 for 0.286, 0.505 for 0.5, 0.754 for 0.75).
    std::vector<std::pair<unsigned, double>> parts;
    for (unsigned shares : {50u, 400u, 1000u, 3000u}) {
        double part = co_await background_part(shares, std::chrono::milliseconds(300));
        double want = double(shares) / double(foreground_shares + shares);
        BOOST_TEST_MESSAGE(shares << " shares: " << part << " of the time (" << want << " wanted)");
        parts.emplace_back(shares, part);
        BOOST_TEST_INFO(shares << " shares");
        BOOST_TEST(part > want * 0.7);
        BOOST_TEST(part < want * 1.3 + 0.01);
    }
    for (size_t i = 1; i < parts.size(); ++i) {
        BOOST_TEST_INFO(parts[i].first << " shares against " << parts[i - 1].first);
        BOOST_TEST(parts[i].second > parts[i - 1].second);
    }
    BOOST_TEST(background_shares() == 3000u);
    set_background_shares(0);
    BOOST_TEST(background_shares() == 1u);  // clamped
    set_background_shares(before);
}

// A foreground whose steps fill a whole task quota (a write loop that yields only when preempted): the background
// still gets its shares, including more than half of the time, not one background quota per task quota.
REEF_TEST_CASE(background_gets_its_shares_against_quota_long_steps) {
    auto before = background_shares();
    for (unsigned shares : {400u, 1000u, 4000u}) {
        double part = co_await background_part(shares, std::chrono::milliseconds(300), std::chrono::microseconds(500));
        double want = double(shares) / double(foreground_shares + shares);
        BOOST_TEST_MESSAGE(shares << " shares, 500 us foreground steps: " << part << " of the time (" << want
                                  << " wanted)");
        BOOST_TEST_INFO(shares << " shares");
        BOOST_TEST(part > want * 0.7);
        BOOST_TEST(part < want * 1.3 + 0.01);
    }
    set_background_shares(before);
}

// A task keeps its class across what it waits for (file I/O, a stream's read, a semaphore, a condition variable):
// the shares govern the work that follows a wait, not only the step after a background_yield.
REEF_TEST_CASE(background_class_is_kept_across_waits) {
    testing::tmpdir dir;
    auto path = dir.path() + "/f";
    {
        auto f = co_await open_file_dma(path, open_flags::rw | open_flags::create | open_flags::truncate);
        auto buf = f.allocate_aligned_buffer(8192);
        std::memset(buf.get_write(), 'x', 8192);
        co_await f.dma_write(0, buf.get(), 8192);
        co_await f.close();
    }
    semaphore sem(0);
    condition_variable cv;
    bool signalled = false;
    std::vector<std::string> seen;
    auto note = [&](const char* what) { seen.push_back(std::string(what) + (running_in_background() ? " bg" : " fg")); };
    auto waits = [&]() -> future<> {
        auto f = co_await open_file_dma(path, open_flags::ro);
        note("start");
        (void)co_await f.dma_read(0, 4096);
        note("foreground read");
        co_await background_yield();
        note("yielded");
        (void)co_await f.dma_read(0, 4096);
        note("read");
        auto in = input_stream(make_file_data_source(f, 0, 8192, {}));
        (void)co_await in.read();
        note("stream");
        co_await sem.wait();
        note("semaphore");
        co_await cv.wait([&] { return signalled; });
        note("condition");
        co_await in.close();
        co_await f.close();
    };
    auto wakes = [&]() -> future<> {
        while (seen.size() < 5) {
            co_await yield();
        }
        sem.signal();
        while (seen.size() < 6) {
            co_await yield();
        }
        signalled = true;
        cv.signal();
    };
    co_await when_all(waits(), wakes());
    BOOST_TEST(seen == (std::vector<std::string>{"start fg", "foreground read fg", "yielded bg", "read bg", "stream bg",
                                                  "semaphore bg", "condition bg"}),
               boost::test_tools::per_element());
}
