// Tests of with_closeable, close_on_error, for_each_file_buffer and read_entire_file: the object is closed after
// success and after an exception (close_on_error: only after an exception), the body's exception wins over close()'s,
// values come back, files are read whole.
#include "runtime/file.hh"
#include "runtime/input_stream.hh"
#include "runtime/reactor.hh"
#include "runtime/with_closeable.hh"
#include "test/lib/reef_test.hh"
#include "test/lib/tmpdir.hh"

#include <fstream>
#include <stdexcept>

using namespace reef;

namespace {

struct closeable {
    int* closes;
    bool fail_close = false;
    future<> close() {
        ++*closes;
        co_await yield();
        if (fail_close) {
            throw std::runtime_error("close failed");
        }
    }
};

} // namespace

REEF_TEST_CASE(test_with_closeable_closes_and_returns) {
    int closes = 0;
    auto body = [](closeable&) -> future<int> {
        co_await yield();
        co_return 42;
    };
    int v = co_await with_closeable(closeable{&closes}, body);
    BOOST_CHECK_EQUAL(v, 42);
    BOOST_CHECK_EQUAL(closes, 1);

    auto throws = [](closeable&) -> future<> {
        co_await yield();
        throw std::invalid_argument("body failed");
    };
    bool caught = false;
    try {
        co_await with_closeable(closeable{&closes, true}, throws);
    } catch (const std::invalid_argument&) {
        caught = true;  // the body's error, not close()'s
    }
    BOOST_CHECK(caught);
    BOOST_CHECK_EQUAL(closes, 2);

    auto fine = [](closeable&) -> future<> { co_return; };
    caught = false;
    try {
        co_await with_closeable(closeable{&closes, true}, fine);
    } catch (const std::runtime_error& e) {
        caught = std::string(e.what()) == "close failed";
    }
    BOOST_CHECK(caught);
    BOOST_CHECK_EQUAL(closes, 3);
}

REEF_TEST_CASE(test_close_on_error_closes_only_on_error) {
    int closes = 0;
    closeable c{&closes, true};
    auto body = [](closeable&) -> future<int> {
        co_await yield();
        co_return 7;
    };
    int v = co_await close_on_error(c, body);
    BOOST_CHECK_EQUAL(v, 7);
    BOOST_CHECK_EQUAL(closes, 0);

    auto fine = [](closeable&) -> future<> { co_await yield(); };
    co_await close_on_error(c, fine);
    BOOST_CHECK_EQUAL(closes, 0);

    auto throws = [](closeable&) -> future<> {
        co_await yield();
        throw std::invalid_argument("body failed");
    };
    bool caught = false;
    try {
        co_await close_on_error(c, throws);
    } catch (const std::invalid_argument&) {
        caught = true;  // the body's error, not close()'s
    }
    BOOST_CHECK(caught);
    BOOST_CHECK_EQUAL(closes, 1);

    auto throws_value = [](closeable&) -> future<int> {
        co_await yield();
        throw std::out_of_range("no value");
    };
    caught = false;
    try {
        co_await close_on_error(c, throws_value);
    } catch (const std::out_of_range&) {
        caught = true;
    }
    BOOST_CHECK(caught);
    BOOST_CHECK_EQUAL(closes, 2);
}

REEF_TEST_CASE(test_whole_file_helpers) {
    testing::tmpdir dir;
    auto path = dir.path() + "/f";
    std::string content;
    for (int i = 0; i < 300000; ++i) {
        content += char('a' + i % 26);
    }
    std::ofstream(path, std::ios::binary) << content;
    auto whole = co_await read_entire_file(path);
    BOOST_CHECK(whole == content);
    std::string streamed;
    file_input_stream_options opts;
    opts.buffer_size = 4096;
    size_t buffers = 0;
    co_await for_each_file_buffer(path, opts, [&](const temporary_buffer& b) {
        streamed.append(b.get(), b.size());
        ++buffers;
    });
    BOOST_CHECK(streamed == content);
    BOOST_CHECK_GT(buffers, 1u);
    bool caught = false;
    try {
        co_await for_each_file_buffer(path, opts, [](const temporary_buffer&) { throw std::out_of_range("stop"); });
    } catch (const std::out_of_range&) {
        caught = true;
    }
    BOOST_CHECK(caught);
    caught = false;
    try {
        co_await read_entire_file(dir.path() + "/missing");
    } catch (const std::system_error&) {
        caught = true;
    }
    BOOST_CHECK(caught);
}
