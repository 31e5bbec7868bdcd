// sync_generator: yields in order, runs lazily, ends, passes the body's exception out of resume() once, and
// frees its frame when destroyed mid-body (ASan checks the last).
#include "utils/sync_generator.hh"

#include <boost/test/unit_test.hpp>

#include <memory>
#include <stdexcept>
#include <vector>

using reef::utils::sync_generator;

namespace {

sync_generator<int> count_to(int n, int* started) {
    ++*started;
    for (int i = 1; i <= n; ++i) {
        co_yield i;
    }
}

sync_generator<int> throws_after(int n) {
    for (int i = 0; i < n; ++i) {
        co_yield i;
    }
    throw std::runtime_error("boom");
}

sync_generator<int> holds(std::shared_ptr<int> p) {
    auto local = p;
    while (true) {
        co_yield *local;
    }
}

} // namespace

BOOST_AUTO_TEST_CASE(test_yields_in_order_and_ends) {
    int started = 0;
    auto g = count_to(3, &started);
    BOOST_CHECK_EQUAL(started, 0);  // lazy
    std::vector<int> got;
    while (auto v = g.resume()) {
        got.push_back(*v);
    }
    BOOST_CHECK_EQUAL(started, 1);
    BOOST_CHECK((got == std::vector<int>{1, 2, 3}));
    BOOST_CHECK(g.done());
    BOOST_CHECK(!g.resume());
}

BOOST_AUTO_TEST_CASE(test_exception_comes_out_of_resume) {
    auto g = throws_after(2);
    BOOST_CHECK_EQUAL(*g.resume(), 0);
    BOOST_CHECK_EQUAL(*g.resume(), 1);
    BOOST_CHECK_THROW(g.resume(), std::runtime_error);
    BOOST_CHECK(g.done());
    BOOST_CHECK(!g.resume());
}

BOOST_AUTO_TEST_CASE(test_destroying_a_suspended_generator_frees_its_frame) {
    auto p = std::make_shared<int>(7);
    {
        auto g = holds(p);
        BOOST_CHECK_EQUAL(*g.resume(), 7);
        BOOST_CHECK_EQUAL(p.use_count(), 3);
        auto moved = std::move(g);
        BOOST_CHECK(g.done());
        BOOST_CHECK_EQUAL(*moved.resume(), 7);
    }
    BOOST_CHECK_EQUAL(p.use_count(), 1);
}
