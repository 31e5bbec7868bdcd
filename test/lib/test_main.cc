// The main() of every unit test binary: Boost.Test's runner, linked dynamically.
// Test files include <boost/test/unit_test.hpp> (or test/lib/reef_test.hh) and add cases.
#define BOOST_TEST_MODULE reef
#include <boost/test/unit_test.hpp>
