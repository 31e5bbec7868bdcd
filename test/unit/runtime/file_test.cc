// Tests of the file layer and the read-ahead file input stream, run on every
// I/O backend this machine can start.
#include "runtime/file.hh"
#include "runtime/input_stream.hh"
#include "runtime/reactor.hh"
#include "runtime/when_all.hh"
#include "test/lib/reef_test.hh"
#include "test/lib/tmpdir.hh"

#include <algorithm>
#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <random>
#include <string>
#include <sys/stat.h>
#include <system_error>
#include <unistd.h>

using namespace reef;
using testing::on_every_backend;

namespace {

std::string pattern(size_t n, unsigned seed) {
    std::string s(n, '\0');
    std::mt19937 rng(seed);
    for (auto& c : s) {
        c = char(rng());
    }
    return s;
}

future<file> write_file(const std::string& path, const std::string& data) {
    auto f = co_await open_file_dma(path, open_flags::rw | open_flags::create | open_flags::truncate);
    uint64_t a = f.disk_write_dma_alignment();
    size_t padded = (data.size() + a - 1) / a * a;
    auto buf = f.allocate_aligned_buffer(padded);
    std::memset(buf.get_write(), 0, padded);
    std::memcpy(buf.get_write(), data.data(), data.size());
    co_await f.dma_write(0, buf.get(), padded);
    co_await f.truncate(data.size());
    co_await f.flush();
    co_return f;
}

} // namespace

BOOST_AUTO_TEST_CASE(test_write_read_back_every_backend) {
    testing::tmpdir dir;
    on_every_backend([&](std::string) -> future<> {
        auto data = pattern(100000, 1);
        auto path = dir.path() + "/a";
        auto f = co_await write_file(path, data);
        BOOST_CHECK_EQUAL(co_await f.size(), data.size());
        // Unaligned ranges through the temporary_buffer form.
        for (auto [pos, len] : std::vector<std::pair<size_t, size_t>>{{0, 10}, {4095, 2}, {5000, 70000}, {99990, 10}}) {
            auto b = co_await f.dma_read(pos, len);
            BOOST_REQUIRE_EQUAL(b.size(), len);
            BOOST_CHECK(b.view() == std::string_view(data).substr(pos, len));
        }
        // Reading past the end returns what exists.
        auto tail = co_await f.dma_read(99000, 5000);
        BOOST_CHECK_EQUAL(tail.size(), 1000u);
        BOOST_CHECK((co_await f.dma_read(200000, 10)).empty());
        try {
            (void)co_await f.dma_read_exactly(99000, 5000);
            BOOST_FAIL("expected a short-read error");
        } catch (const std::system_error& e) {
            std::string what = e.what();
            BOOST_CHECK_MESSAGE(what.find(path) != std::string::npos && what.find("99000") != std::string::npos, what);
        }
        auto before = engine().io();
        co_await f.dma_read(0, 4096);
        BOOST_CHECK_EQUAL(engine().io().reads, before.reads + 1);
        BOOST_CHECK_EQUAL(engine().io().bytes_read, before.bytes_read + 4096);
        co_await f.close();
        BOOST_CHECK_THROW(co_await f.dma_read(0, 10), std::system_error);
    });
}

BOOST_AUTO_TEST_CASE(test_concurrent_reads_every_backend) {
    testing::tmpdir dir;
    on_every_backend([&](std::string) -> future<> {
        auto data = pattern(1 << 20, 2);
        auto f = co_await write_file(dir.path() + "/b", data);
        std::vector<future<temporary_buffer>> reads;
        for (size_t i = 0; i < 256; ++i) {
            reads.push_back(f.dma_read((i * 4096 * 7) % (data.size() - 4096), 4096));
        }
        auto bufs = co_await when_all(std::move(reads));
        for (size_t i = 0; i < bufs.size(); ++i) {
            size_t pos = (i * 4096 * 7) % (data.size() - 4096);
            BOOST_REQUIRE(bufs[i].view() == std::string_view(data).substr(pos, 4096));
        }
        co_await f.close();
    });
}

BOOST_AUTO_TEST_CASE(test_open_errors_name_the_path) {
    testing::tmpdir dir;
    on_every_backend([&](std::string) -> future<> {
        auto missing = dir.path() + "/no/such/file";
        try {
            co_await open_file_dma(missing, open_flags::ro);
            BOOST_FAIL("expected an error");
        } catch (const std::system_error& e) {
            BOOST_CHECK_EQUAL(e.code().value(), ENOENT);
            BOOST_CHECK(std::string(e.what()).find(missing) != std::string::npos);
        }
        BOOST_CHECK(!(co_await file_exists(missing)));
        auto d = dir.path() + "/" + std::string(to_string(current_io_backend()));
        co_await make_directory(d);
        BOOST_CHECK_THROW(co_await make_directory(d), std::system_error);
        auto f = co_await write_file(d + "/x.tmp", "hello");
        co_await f.close();
        co_await rename_file(d + "/x.tmp", d + "/x");
        co_await sync_directory(d);
        BOOST_CHECK(co_await file_exists(d + "/x"));
        co_await remove_file(d + "/x");
        BOOST_CHECK(!(co_await file_exists(d + "/x")));
        BOOST_CHECK_THROW(co_await remove_file(d + "/x"), std::system_error);
    });
}

BOOST_AUTO_TEST_CASE(test_input_stream_every_backend) {
    testing::tmpdir dir;
    on_every_backend([&](std::string) -> future<> {
        auto data = pattern(300000, 3);
        auto f = co_await write_file(dir.path() + "/c", data);
        // Whole-range reads with several buffer sizes and read-ahead depths,
        // from unaligned offsets, compared byte for byte.
        for (size_t bs : {4096u, 8192u, 65536u}) {
            for (unsigned ra : {0u, 1u, 4u}) {
                for (auto [off, len] : std::vector<std::pair<uint64_t, uint64_t>>{{0, 300000}, {777, 123456}, {299999, 1}, {1000, 0}}) {
                    auto in = make_file_input_stream(f, off, len, {bs, ra});
                    std::string got;
                    while (true) {
                        auto b = co_await in.read();
                        if (b.empty()) {
                            break;
                        }
                        got.append(b.get(), b.size());
                    }
                    co_await in.close();
                    BOOST_REQUIRE_MESSAGE(got == data.substr(off, len),
                                          "bs=" << bs << " ra=" << ra << " off=" << off << " len=" << len);
                }
            }
        }
        // read_exactly across buffers, skip within and beyond the read-ahead.
        auto in = make_file_input_stream(f, 10, 290000, {4096, 2});
        auto a = co_await in.read_exactly(5000);
        BOOST_CHECK(a.view() == std::string_view(data).substr(10, 5000));
        co_await in.skip(3);
        auto b = co_await in.read_exactly(10);
        BOOST_CHECK(b.view() == std::string_view(data).substr(5013, 10));
        auto dropped_before = engine().io().read_ahead_dropped;
        co_await in.skip(100000);
        BOOST_CHECK_GT(engine().io().read_ahead_dropped, dropped_before);
        auto c = co_await in.read_exactly(100);
        BOOST_CHECK(c.view() == std::string_view(data).substr(105023, 100));
        auto rest = co_await in.read_exactly(1000000);
        BOOST_CHECK_EQUAL(rest.size(), 290010u - 105123u);
        BOOST_CHECK(in.eof());
        co_await in.close();

        // bytes_read counts what the disk delivered, read-ahead closed unread included: one 4 KiB buffer
        // handed out, then a close with up to two more in flight or done, counts every read's bytes.
        {
            auto reads_before = engine().io().reads;
            auto bytes_before = engine().io().bytes_read;
            auto ahead = make_file_input_stream(f, 0, 300000, {4096, 2});
            auto first = co_await ahead.read();
            BOOST_CHECK_EQUAL(first.size(), 4096u);
            co_await ahead.close();
            auto reads = engine().io().reads - reads_before;
            BOOST_CHECK_GE(reads, 1u);
            BOOST_CHECK_EQUAL(engine().io().bytes_read - bytes_before, reads * 4096);
        }

        // A range that runs past the end of the file stops at the end.
        auto past = make_file_input_stream(f, 299000, 10000);
        auto all = co_await past.read_exactly(10000);
        BOOST_CHECK_EQUAL(all.size(), 1000u);
        co_await past.close();

        // Read-ahead hides the disk: with deep read-ahead, later reads are
        // mostly already done when asked for.
        auto blocked_before = engine().io().reads_blocked;
        auto deep = make_file_input_stream(f, 0, 300000, {4096, 8});
        size_t n = 0;
        while (true) {
            auto x = co_await deep.read();
            if (x.empty()) {
                break;
            }
            ++n;
        }
        co_await deep.close();
        BOOST_CHECK_GE(n, 70u);
        BOOST_CHECK_LT(engine().io().reads_blocked - blocked_before, n);
        co_await f.close();
    });
}

// initial_buffer_size: reads start small and double up to buffer_size, and start small again after a skip past
// the reads in flight; the bytes are the same as with fixed-size reads.
BOOST_AUTO_TEST_CASE(test_input_stream_growing_reads) {
    testing::tmpdir dir;
    on_every_backend([&](std::string) -> future<> {
        auto data = pattern(1 << 20, 5);
        auto f = co_await write_file(dir.path() + "/g", data);
        uint64_t a = f.disk_read_dma_alignment();
        file_input_stream_options opts;
        opts.buffer_size = 128 * 1024;
        opts.initial_buffer_size = 4096;
        for (auto [off, len] : std::vector<std::pair<uint64_t, uint64_t>>{{0, 1 << 20}, {4097, 700000}, {123, 10}}) {
            auto in = make_file_input_stream(f, off, len, opts);
            std::string got;
            std::vector<size_t> sizes;
            while (true) {
                auto b = co_await in.read();
                if (b.empty()) {
                    break;
                }
                sizes.push_back(b.size());
                got.append(b.get(), b.size());
            }
            co_await in.close();
            BOOST_REQUIRE_MESSAGE(got == data.substr(off, len), "off=" << off << " len=" << len);
            // Buffers grow from one read of at most max(4096, alignment) to 128 KiB.
            BOOST_CHECK_LE(sizes.front(), std::max<uint64_t>(4096, a));
            if (len >= 700000) {
                BOOST_CHECK_EQUAL(*std::max_element(sizes.begin(), sizes.end()), 128u * 1024);
                BOOST_CHECK_LT(sizes.size(), 20u);
            }
        }
        // A short read of a long range reads little: one small read (the read-ahead starts with the second).
        auto before = f.io_counters();
        auto in = make_file_input_stream(f, 8192, 900000, opts);
        auto x = co_await in.read_exactly(100);
        BOOST_CHECK(x.view() == std::string_view(data).substr(8192, 100));
        // A skip far past the reads in flight starts small again.
        co_await in.skip(500000);
        auto y = co_await in.read_exactly(100);
        BOOST_CHECK(y.view() == std::string_view(data).substr(8192 + 100 + 500000, 100));
        co_await in.close();
        uint64_t small = std::max<uint64_t>(4096, a);
        BOOST_CHECK_LE(f.io_counters().bytes - before.bytes, 2 * small + 2 * a);
        // A first read of half the buffer size (a promoted index block) is the only read until it is consumed:
        // the full-size read it grows into is not read ahead with it.
        file_input_stream_options block_opts = opts;
        block_opts.initial_buffer_size = 64 * 1024;
        auto reads_before = f.io_counters();
        auto bin = make_file_input_stream(f, 65536, 900000, block_opts);
        auto z = co_await bin.read_exactly(100);
        BOOST_CHECK(z.view() == std::string_view(data).substr(65536, 100));
        BOOST_CHECK_EQUAL(f.io_counters().reads - reads_before.reads, 1u);
        BOOST_CHECK_EQUAL(f.io_counters().bytes - reads_before.bytes, std::max<uint64_t>(64 * 1024, a));
        co_await bin.close();
        co_await f.close();
    });
}

BOOST_AUTO_TEST_CASE(test_stream_destroyed_with_reads_in_flight) {
    testing::tmpdir dir;
    on_every_backend([&](std::string) -> future<> {
        auto data = pattern(1 << 20, 4);
        auto f = co_await write_file(dir.path() + "/d", data);
        for (int i = 0; i < 20; ++i) {
            auto in = make_file_input_stream(f, 0, data.size(), {65536, 8});
            auto first = co_await in.read();
            BOOST_CHECK(!first.empty());
            // Destroyed without close(): in-flight reads free themselves.
        }
        co_await f.close();
    });
}

// A file on tmpfs is read on the shard at once: dma_read does not suspend, and a stream's reads
// (submit_read) complete before they are awaited; both read what was written, including a read past the end and
// one of a closed file (an error).
BOOST_AUTO_TEST_CASE(test_reads_of_a_memory_backed_file_are_done_at_once) {
    if (!std::filesystem::is_directory("/dev/shm")) {
        BOOST_TEST_MESSAGE("no /dev/shm: skipped");
        return;
    }
    auto dir = std::filesystem::path("/dev/shm") / ("reef-file-test-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    on_every_backend([&](std::string) -> future<> {
        auto data = pattern(200000, 9);
        auto f = co_await write_file((dir / "m").string(), data);
        // Buffered, whether or not this kernel's tmpfs takes O_DIRECT: reads copy only what they ask for.
        BOOST_CHECK(!f.is_direct());
        BOOST_CHECK_EQUAL(f.disk_read_dma_alignment(), 1u);
        auto before = engine().io();
        // A task queued before the read has not run after it: the read never suspended.
        bool queued_ran = false;
        spawn([&queued_ran]() -> future<> {
            co_await yield();
            queued_ran = true;
        });
        auto b = co_await f.dma_read(5000, 70000);
        BOOST_CHECK(!queued_ran);
        while (!queued_ran) {
            co_await yield();
        }
        BOOST_CHECK(b.view() == std::string_view(data).substr(5000, 70000));
        BOOST_CHECK_EQUAL(engine().io().reads, before.reads + 1);
        BOOST_CHECK_EQUAL(engine().io().in_flight, 0u);
        auto tail = co_await f.dma_read(199000, 5000);
        BOOST_CHECK_EQUAL(tail.size(), 1000u);
        auto in = make_file_input_stream(f, 777, 150000, {8192, 4});
        std::string got;
        while (true) {
            auto part = co_await in.read();
            if (part.empty()) {
                break;
            }
            BOOST_CHECK_EQUAL(engine().io().in_flight, 0u);
            got.append(part.get(), part.size());
        }
        co_await in.close();
        BOOST_CHECK(got == data.substr(777, 150000));
        co_await f.close();
        BOOST_CHECK_THROW(co_await f.dma_read(0, 10), std::system_error);
    });
    std::filesystem::remove_all(dir);
}

// A read-only open does not touch the access time (O_NOATIME): an access time two days old, which relatime would
// renew on the first read, stays as it was. (On a filesystem mounted noatime this cannot fail.)
BOOST_AUTO_TEST_CASE(test_read_only_reads_leave_the_access_time) {
    testing::tmpdir dir;
    auto path = dir.path() + "/a";
    on_every_backend([&](std::string) -> future<> {
        auto w = co_await write_file(path, pattern(10000, 3));
        co_await w.close();
        struct timespec times[2];
        times[0].tv_sec = ::time(nullptr) - 2 * 86400;
        times[0].tv_nsec = 0;
        times[1].tv_nsec = UTIME_OMIT;
        BOOST_REQUIRE_EQUAL(::utimensat(AT_FDCWD, path.c_str(), times, 0), 0);
        auto f = co_await open_file_dma(path, open_flags::ro);
        auto b = co_await f.dma_read(0, 4096);
        BOOST_CHECK_EQUAL(b.size(), 4096u);
        co_await f.close();
        struct stat st {};
        BOOST_REQUIRE_EQUAL(::stat(path.c_str(), &st), 0);
        BOOST_CHECK_EQUAL(st.st_atim.tv_sec, times[0].tv_sec);
    });
}
