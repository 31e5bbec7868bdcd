// permit_checked_source over a real file: each buffer handed out is charged to the permit (and its semaphore)
// until the next replaces it; once the deadline has passed the next get or skip throws read_timeout_error naming
// the file and reads nothing more; closing and dropping the permit return the semaphore's memory to zero.
#include "reader/permit_checked_source.hh"
#include "reader/reader_concurrency_semaphore.hh"
#include "runtime/file.hh"
#include "runtime/output_stream.hh"
#include "test/lib/reef_test.hh"
#include "test/lib/tmpdir.hh"

#include <boost/test/unit_test.hpp>

#include <chrono>
#include <fstream>

using namespace reef;
using namespace std::chrono_literals;

REEF_TEST_CASE(buffers_are_charged_and_the_deadline_stops_reads) {
    testing::tmpdir dir;
    auto path = dir.path() + "/data";
    {
        std::ofstream out(path, std::ios::binary);
        std::string block(4096, 'x');
        for (int i = 0; i < 32; ++i) {
            out << block;
        }
    }
    reader_concurrency_semaphore sem(4, 1 << 20, "source");
    auto f = co_await open_file_dma(path, open_flags::ro);
    {
        auto permit = co_await sem.obtain_permit("scan", 0, read_clock::now() + 1h);
        auto src = make_permit_checked_source(make_file_data_source(f, 0, 32 * 4096, {8192, 2}), permit, path);
        auto b = co_await src.get();
        BOOST_TEST(b.size() == 8192u);
        BOOST_TEST(permit.consumed_memory() == b.size());
        BOOST_TEST(sem.consumed_memory() == int64_t(b.size()));
        b = co_await src.skip(8192);
        BOOST_TEST(b.size() == 8192u);
        BOOST_TEST(permit.consumed_memory() == 8192u);
        auto reads_before = f.io_counters().reads;
        permit.set_timeout(read_clock::now() - 1ms);
        std::string message;
        try {
            co_await src.get();
        } catch (const read_timeout_error& e) {
            message = e.what();
        }
        BOOST_TEST(message == "read timed out: scan, reading " + path);
        BOOST_CHECK_THROW(co_await src.skip(1), read_timeout_error);
        // Nothing new was submitted after the deadline (read-ahead already in flight aside).
        BOOST_TEST(f.io_counters().reads == reads_before);
        BOOST_TEST(sem.stats().read_timeouts == 2u);
        co_await src.close();
        BOOST_TEST(permit.consumed_memory() == 0u);
    }
    BOOST_TEST(sem.consumed_memory() == 0);
    BOOST_TEST(sem.current_permits() == 0u);
    co_await f.close();
}
