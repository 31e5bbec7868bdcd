// Tests of the reactor itself: idle shards sleep instead of spinning, and every
// shard registers its loop and I/O counters in the metrics registry.
#include "runtime/metrics.hh"
#include "runtime/reactor.hh"
#include "runtime/smp.hh"
#include "test/lib/reef_test.hh"

#include <sys/resource.h>

using namespace reef;
using namespace std::chrono_literals;

namespace {
double process_cpu_seconds() {
    rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return double(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) + double(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}
}

// An idle runtime must not burn the CPUs it shares with everything else: over
// half a second with nothing to do, all shards together use a small fraction
// of one core (a polling loop would use one core per shard).
REEF_TEST_CASE(test_idle_shards_sleep) {
    auto sleeps_before = co_await smp::submit_to(1, [] { return engine().sleeps(); });
    double cpu_before = process_cpu_seconds();
    co_await sleep(500ms);
    double used = process_cpu_seconds() - cpu_before;
    auto sleeps_after = co_await smp::submit_to(1, [] { return engine().sleeps(); });
    BOOST_TEST_MESSAGE("idle CPU over 0.5 s: " << used << " s");
    BOOST_CHECK_LT(used, 0.5 * 0.25);
    BOOST_CHECK_GT(sleeps_after, sleeps_before);
}

REEF_TEST_CASE(test_every_shard_registers_metrics) {
    auto names_on = [](shard_id s) {
        return smp::submit_to(s, [] {
            std::vector<std::string> names;
            for (auto& sample : metrics::collect()) {
                names.push_back(sample.group + "_" + sample.name);
                BOOST_REQUIRE_EQUAL(sample.shard, this_shard_id());
            }
            return names;
        });
    };
    for (shard_id s = 0; s < smp::count(); ++s) {
        auto names = co_await names_on(s);
        for (auto expected : {"reactor_tasks_processed", "reactor_sleeps", "reactor_aio_reads", "reactor_aio_bytes_read",
                              "io_reads_blocked", "io_read_ahead_dropped"}) {
            BOOST_CHECK_MESSAGE(std::find(names.begin(), names.end(), expected) != names.end(),
                                "shard " << s << " lacks " << expected);
        }
    }
    auto text = metrics::format_prometheus(metrics::collect());
    BOOST_CHECK(text.find("reef_reactor_tasks_processed{shard=\"0\"}") != std::string::npos);
}
