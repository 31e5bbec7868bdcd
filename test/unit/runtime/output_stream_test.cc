// Tests of output_stream over the write-behind file sink, on every backend:
// what goes in comes back byte for byte, at the exact length, and a failed
// write surfaces as an error naming the file.
#include "runtime/file.hh"
#include "runtime/output_stream.hh"
#include "runtime/reactor.hh"
#include "test/lib/reef_test.hh"
#include "test/lib/tmpdir.hh"

#include <cstdlib>
#include <random>
#include <string>
#include <system_error>

using namespace reef;
using testing::on_every_backend;

namespace {

future<std::string> read_all(const std::string& path) {
    auto f = co_await open_file_dma(path, open_flags::ro);
    auto size = co_await f.size();
    auto buf = co_await f.dma_read(0, size);
    co_await f.close();
    co_return std::string(buf.view());
}

} // namespace

BOOST_AUTO_TEST_CASE(test_file_output_stream_round_trip) {
    testing::tmpdir dir;
    on_every_backend([&](std::string backend) -> future<> {
        std::mt19937 rng(7);
        int n = 0;
        for (size_t bs : {4096u, 65536u, 131072u}) {
            for (unsigned wb : {1u, 2u, 8u}) {
                for (size_t total : {0u, 1u, 4096u, 100000u, 1000000u}) {
                    std::string data(total, '\0');
                    for (auto& c : data) {
                        c = char(rng());
                    }
                    auto path = dir.path() + "/" + backend + "-" + std::to_string(n++);
                    auto f = co_await open_file_dma(path, open_flags::wo | open_flags::create | open_flags::truncate);
                    auto out = make_file_output_stream(f, {bs, wb});
                    size_t off = 0;
                    while (off < data.size()) {
                        size_t len = std::min<size_t>(data.size() - off, 1 + rng() % 20000);
                        co_await out.write(data.data() + off, len);
                        off += len;
                        if (rng() % 50 == 0) {
                            co_await out.flush();
                        }
                    }
                    co_await out.close();
                    BOOST_CHECK_EQUAL(out.written(), data.size());
                    co_await f.flush();
                    co_await f.close();
                    auto back = co_await read_all(path);
                    BOOST_REQUIRE_MESSAGE(back == data, backend << " bs=" << bs << " wb=" << wb << " total=" << total
                                                                << " got " << back.size() << " bytes");
                }
            }
        }
    });
}

BOOST_AUTO_TEST_CASE(test_file_output_stream_write_error) {
    testing::tmpdir dir;
    on_every_backend([&](std::string backend) -> future<> {
        auto path = dir.path() + "/ro-" + backend;
        {
            auto f = co_await open_file_dma(path, open_flags::wo | open_flags::create);
            co_await f.close();
        }
        // Opened read-only: every write fails with EBADF.
        auto f = co_await open_file_dma(path, open_flags::ro);
        auto out = make_file_output_stream(f, {4096, 2});
        std::string chunk(10000, 'x');
        bool failed = false;
        try {
            co_await out.write(chunk);
            co_await out.write(chunk);
            co_await out.close();
        } catch (const std::system_error& e) {
            failed = true;
            BOOST_CHECK_MESSAGE(std::string(e.what()).find(path) != std::string::npos, e.what());
        }
        BOOST_CHECK(failed);
        if (failed) {
            // Closing after a failure waits for the writes still in flight
            // and reports the failure again.
            BOOST_CHECK_THROW(co_await out.close(), std::system_error);
        }
        co_await f.close();
    });
}
