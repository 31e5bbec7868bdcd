// Tests of node::drain: steps run last registered first, each once, and a failing step does not stop the others.
#include "node/drain.hh"
#include "runtime/reactor.hh"
#include "test/lib/reef_test.hh"

#include <stdexcept>
#include <string>
#include <vector>

using namespace reef;
using namespace std::chrono_literals;

REEF_TEST_CASE(test_steps_run_in_reverse_order_past_failures) {
    node::drain d;
    std::vector<std::string> ran;
    d.add("commitlog", [&ran]() -> future<> {
        ran.push_back("commitlog");
        co_return;
    });
    d.add("memtables", [&ran]() -> future<> {
        co_await sleep(1ms);  // a step that really waits
        ran.push_back("memtables");
        throw std::runtime_error("flush failed");
    });
    d.add("cql", [&ran]() -> future<> {
        ran.push_back("cql");
        co_return;
    });
    BOOST_CHECK_EQUAL(d.size(), 3u);
    size_t failed = co_await d.run();
    BOOST_CHECK_EQUAL(failed, 1u);
    BOOST_CHECK((ran == std::vector<std::string>{"cql", "memtables", "commitlog"}));
    // Each step runs once: a second drain has nothing left.
    BOOST_CHECK_EQUAL(d.size(), 0u);
    BOOST_CHECK_EQUAL(co_await d.run(), 0u);
    BOOST_CHECK_EQUAL(ran.size(), 3u);
}
