// Tests of every io_backend this machine can start, driven directly (no
// reactor): file reads and writes at offsets, O_DIRECT, fdatasync, sockets,
// cancel, wake() from another thread, and more operations than the queue depth.
#include "runtime/io_backend.hh"
#include "runtime/temporary_buffer.hh"
#include "test/lib/reef_test.hh"

#include <atomic>
#include <boost/test/unit_test.hpp>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <functional>
#include <netinet/in.h>
#include <optional>
#include <string>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace reef;
using namespace std::chrono_literals;

namespace {

// Records what an operation completed with, and how many times.
struct recorder final : io_completion {
    std::optional<ssize_t> result;
    int completions = 0;
    void complete(ssize_t r) noexcept override {
        result = r;
        ++completions;
    }
};

// Polls and sleeps on b until done() holds; fails the test after a while
// instead of hanging.
void run_until(io_backend& b, const std::function<bool()>& done) {
    auto deadline = std::chrono::steady_clock::now() + 20s;
    while (!done()) {
        if (!b.poll()) {
            b.wait(std::chrono::milliseconds(50));
        }
        if (std::chrono::steady_clock::now() > deadline) {
            BOOST_FAIL("operations did not complete within 20 s on the " << to_string(b.kind()) << " backend");
        }
    }
}

void run_until_done(io_backend& b, const std::vector<recorder>& rs) {
    run_until(b, [&] {
        for (auto& r : rs) {
            if (!r.result) {
                return false;
            }
        }
        return true;
    });
}

// Polls for a little while: long enough for a stray completion to show up.
void settle(io_backend& b) {
    auto until = std::chrono::steady_clock::now() + 30ms;
    while (std::chrono::steady_clock::now() < until) {
        if (!b.poll()) {
            b.wait(std::chrono::milliseconds(5));
        }
    }
}

// A file in the temporary directory, removed at the end.
struct temp_file {
    std::filesystem::path path;
    int fd = -1;
    explicit temp_file(int extra_flags = 0) {
        static int counter = 0;
        path = std::filesystem::temp_directory_path() /
               ("reef_io_backend_test_" + std::to_string(getpid()) + "_" + std::to_string(counter++));
        fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC | extra_flags, 0600);
    }
    ~temp_file() {
        if (fd >= 0) {
            ::close(fd);
        }
        std::filesystem::remove(path);
    }
};

char pattern_byte(size_t pos) { return char((pos * 2654435761u) >> 11); }

// Runs body once for every backend this kernel allows.
void for_each_backend(unsigned queue_depth, const std::function<void(io_backend&)>& body) {
    auto kinds = testing::available_io_backends();
    BOOST_REQUIRE(!kinds.empty());
    for (auto k : kinds) {
        BOOST_TEST_CONTEXT("backend " << to_string(k)) {
            auto b = make_io_backend(k, queue_depth);
            BOOST_CHECK(b->kind() == k);
            body(*b);
        }
    }
}

// A connected pair of nonblocking stream sockets.
struct socket_pair {
    int fd[2] = {-1, -1};
    socket_pair() { BOOST_REQUIRE_EQUAL(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fd), 0); }
    ~socket_pair() {
        ::close(fd[0]);
        ::close(fd[1]);
    }
};

} // namespace

BOOST_AUTO_TEST_CASE(test_backend_names) {
    BOOST_CHECK(parse_io_backend_kind("aio") == io_backend_kind::aio);
    BOOST_CHECK(parse_io_backend_kind("libaio") == io_backend_kind::aio);
    BOOST_CHECK(parse_io_backend_kind("pread") == io_backend_kind::pread);
    BOOST_CHECK(parse_io_backend_kind("io_uring") == io_backend_kind::uring);
    BOOST_CHECK_THROW(parse_io_backend_kind("epoll"), std::invalid_argument);
    // The fallbacks need nothing io_uring's seccomp refusal would take away.
    auto kinds = testing::available_io_backends();
    BOOST_CHECK(std::find(kinds.begin(), kinds.end(), io_backend_kind::pread) != kinds.end());
}

BOOST_AUTO_TEST_CASE(test_file_reads_and_writes_at_offsets) {
    for_each_backend(64, [](io_backend& b) {
        temp_file f;
        BOOST_REQUIRE(f.fd >= 0);
        // 16 writes of 1000 bytes at scattered offsets, all in flight at once.
        constexpr size_t n = 16, len = 1000;
        std::vector<std::string> data(n);
        std::vector<recorder> wr(n);
        for (size_t i = 0; i < n; ++i) {
            size_t pos = ((i * 7) % n) * len;
            data[i].resize(len);
            for (size_t j = 0; j < len; ++j) {
                data[i][j] = pattern_byte(pos + j);
            }
            b.write(f.fd, pos, data[i].data(), len, &wr[i]);
        }
        run_until_done(b, wr);
        for (auto& r : wr) {
            BOOST_CHECK_EQUAL(*r.result, ssize_t(len));
            BOOST_CHECK_EQUAL(r.completions, 1);
        }
        // Read back in pieces that straddle the writes.
        std::vector<char> back(n * len);
        std::vector<recorder> rd(10);
        size_t piece = back.size() / rd.size();
        for (size_t i = 0; i < rd.size(); ++i) {
            b.read(f.fd, i * piece, back.data() + i * piece, piece, &rd[i]);
        }
        run_until_done(b, rd);
        for (auto& r : rd) {
            BOOST_CHECK_EQUAL(*r.result, ssize_t(piece));
        }
        for (size_t pos = 0; pos < back.size(); ++pos) {
            if (back[pos] != pattern_byte(pos)) {
                BOOST_FAIL("wrong byte at offset " << pos);
            }
        }
        // Near the end a read is short; past it, empty.
        std::vector<recorder> tail(2);
        char buf[4096];
        b.read(f.fd, n * len - 10, buf, sizeof(buf), &tail[0]);
        b.read(f.fd, n * len + 100, buf + 100, 100, &tail[1]);
        run_until_done(b, tail);
        BOOST_CHECK_EQUAL(*tail[0].result, 10);
        BOOST_CHECK_EQUAL(*tail[1].result, 0);
        BOOST_CHECK_EQUAL(buf[9], pattern_byte(n * len - 1));
    });
}

BOOST_AUTO_TEST_CASE(test_errors_come_back_as_negative_errno) {
    for_each_backend(8, [](io_backend& b) {
        int bad = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
        ::close(bad);
        std::vector<recorder> r(3);
        char buf[16];
        b.read(bad, 0, buf, sizeof(buf), &r[0]);
        b.write(bad, 0, buf, sizeof(buf), &r[1]);
        b.fdatasync(bad, &r[2]);
        run_until_done(b, r);
        for (auto& x : r) {
            BOOST_CHECK_EQUAL(*x.result, -EBADF);
            BOOST_CHECK_EQUAL(x.completions, 1);
        }
    });
}

BOOST_AUTO_TEST_CASE(test_o_direct_aligned_io) {
    for_each_backend(32, [](io_backend& b) {
        temp_file f(O_DIRECT);
        if (f.fd < 0 && errno == EINVAL) {
            BOOST_TEST_MESSAGE("the temporary directory's filesystem refuses O_DIRECT; skipped");
            return;
        }
        BOOST_REQUIRE(f.fd >= 0);
        constexpr size_t block = 4096, blocks = 32;
        auto out = temporary_buffer::aligned(block, block * blocks);
        for (size_t i = 0; i < out.size(); ++i) {
            out.get_write()[i] = pattern_byte(i);
        }
        // One write per block, in reverse order, all in flight together.
        std::vector<recorder> wr(blocks);
        for (size_t i = 0; i < blocks; ++i) {
            size_t blk = blocks - 1 - i;
            b.write(f.fd, blk * block, out.get() + blk * block, block, &wr[i]);
        }
        run_until_done(b, wr);
        for (auto& r : wr) {
            BOOST_CHECK_EQUAL(*r.result, ssize_t(block));
        }
        recorder sync;
        b.fdatasync(f.fd, &sync);
        run_until(b, [&] { return sync.result.has_value(); });
        BOOST_CHECK_EQUAL(*sync.result, 0);

        auto in = temporary_buffer::aligned(block, block * blocks);
        std::memset(in.get_write(), 0, in.size());
        std::vector<recorder> rd(4);
        size_t piece = in.size() / rd.size();
        for (size_t i = 0; i < rd.size(); ++i) {
            b.read(f.fd, i * piece, in.get_write() + i * piece, piece, &rd[i]);
        }
        run_until_done(b, rd);
        for (auto& r : rd) {
            BOOST_CHECK_EQUAL(*r.result, ssize_t(piece));
        }
        BOOST_CHECK(std::memcmp(in.get(), out.get(), in.size()) == 0);

        // A misaligned O_DIRECT request fails alone, with EINVAL.
        recorder bad, good;
        b.read(f.fd, 1, in.get_write(), block, &bad);
        b.read(f.fd, 0, in.get_write(), block, &good);
        run_until(b, [&] { return bad.result && good.result; });
        BOOST_CHECK_EQUAL(*bad.result, -EINVAL);
        BOOST_CHECK_EQUAL(*good.result, ssize_t(block));
    });
}

BOOST_AUTO_TEST_CASE(test_fdatasync) {
    for_each_backend(8, [](io_backend& b) {
        temp_file f;
        BOOST_REQUIRE(f.fd >= 0);
        std::string s(100000, 'x');
        recorder w;
        b.write(f.fd, 0, s.data(), s.size(), &w);
        run_until(b, [&] { return w.result.has_value(); });
        BOOST_CHECK_EQUAL(*w.result, ssize_t(s.size()));
        std::vector<recorder> syncs(3);
        for (auto& r : syncs) {
            b.fdatasync(f.fd, &r);
        }
        run_until_done(b, syncs);
        for (auto& r : syncs) {
            BOOST_CHECK_EQUAL(*r.result, 0);
            BOOST_CHECK_EQUAL(r.completions, 1);
        }
    });
}

BOOST_AUTO_TEST_CASE(test_more_operations_than_queue_depth) {
    constexpr unsigned depth = 8;
    for_each_backend(depth, [](io_backend& b) {
        temp_file f;
        BOOST_REQUIRE(f.fd >= 0);
        constexpr size_t ops = 1000, len = 512;
        std::vector<char> src(ops * len);
        for (size_t i = 0; i < src.size(); ++i) {
            src[i] = pattern_byte(i);
        }
        std::vector<recorder> wr(ops);
        for (size_t i = 0; i < ops; ++i) {
            b.write(f.fd, i * len, src.data() + i * len, len, &wr[i]);
        }
        run_until_done(b, wr);
        for (auto& r : wr) {
            BOOST_REQUIRE_EQUAL(*r.result, ssize_t(len));
            BOOST_REQUIRE_EQUAL(r.completions, 1);
        }
        std::vector<char> dst(src.size());
        std::vector<recorder> rd(ops);
        for (size_t i = 0; i < ops; ++i) {
            // Reverse order, so that no op finishes by luck of sequence.
            size_t k = ops - 1 - i;
            b.read(f.fd, k * len, dst.data() + k * len, len, &rd[i]);
        }
        run_until_done(b, rd);
        for (auto& r : rd) {
            BOOST_REQUIRE_EQUAL(*r.result, ssize_t(len));
            BOOST_REQUIRE_EQUAL(r.completions, 1);
        }
        BOOST_CHECK(src == dst);
    });
}

BOOST_AUTO_TEST_CASE(test_socket_send_recv) {
    for_each_backend(16, [](io_backend& b) {
        socket_pair sp;
        // A recv before any data waits for it.
        char in[64] = {};
        recorder r;
        b.recv(sp.fd[1], in, sizeof(in), &r);
        settle(b);
        BOOST_CHECK(!r.result);
        recorder s;
        b.send(sp.fd[0], "ping", 4, &s);
        run_until(b, [&] { return r.result && s.result; });
        BOOST_CHECK_EQUAL(*s.result, 4);
        BOOST_CHECK_EQUAL(*r.result, 4);
        BOOST_CHECK_EQUAL(std::string(in, 4), "ping");

        // A reader and a writer on one fd at once: with the send buffer
        // full the writer waits, and the reader must still be served.
        size_t prefilled = 0;
        std::vector<char> chunk(65536, 'f');
        for (;;) {
            ssize_t n = ::send(sp.fd[0], chunk.data(), chunk.size(), MSG_DONTWAIT);
            if (n < 0) {
                BOOST_REQUIRE(errno == EAGAIN || errno == EWOULDBLOCK);
                break;
            }
            prefilled += size_t(n);
        }
        recorder blocked_send, reply, pong;
        char rbuf[16] = {};
        b.send(sp.fd[0], chunk.data(), chunk.size(), &blocked_send);
        b.recv(sp.fd[0], rbuf, sizeof(rbuf), &reply);
        settle(b);
        BOOST_CHECK(!blocked_send.result);
        b.send(sp.fd[1], "pong", 4, &pong);
        run_until(b, [&] { return reply.result && pong.result; });
        BOOST_CHECK_EQUAL(*reply.result, 4);
        BOOST_CHECK_EQUAL(std::string(rbuf, 4), "pong");
        BOOST_CHECK(!blocked_send.result);
        // Draining the other end lets the writer finish.
        size_t drained = 0;
        std::vector<char> sink(1 << 20);
        while (!blocked_send.result || drained < prefilled + size_t(*blocked_send.result)) {
            recorder d;
            b.recv(sp.fd[1], sink.data(), sink.size(), &d);
            run_until(b, [&] { return d.result.has_value(); });
            BOOST_REQUIRE_GT(*d.result, 0);
            drained += size_t(*d.result);
            b.poll();
        }
        BOOST_CHECK_GT(*blocked_send.result, 0);
        BOOST_CHECK_EQUAL(drained, prefilled + size_t(*blocked_send.result));

        // End of stream reads as 0.
        ::shutdown(sp.fd[0], SHUT_WR);
        recorder eof;
        b.recv(sp.fd[1], in, sizeof(in), &eof);
        run_until(b, [&] { return eof.result.has_value(); });
        BOOST_CHECK_EQUAL(*eof.result, 0);
    });
}

BOOST_AUTO_TEST_CASE(test_accept_and_connect) {
    for_each_backend(16, [](io_backend& b) {
        int ls = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        BOOST_REQUIRE(ls >= 0);
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        BOOST_REQUIRE_EQUAL(::bind(ls, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
        BOOST_REQUIRE_EQUAL(::listen(ls, 16), 0);
        socklen_t alen = sizeof(addr);
        BOOST_REQUIRE_EQUAL(getsockname(ls, reinterpret_cast<sockaddr*>(&addr), &alen), 0);

        recorder acc;
        b.accept(ls, &acc);
        settle(b);
        BOOST_CHECK(!acc.result);
        int cs = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        recorder con;
        b.connect(cs, reinterpret_cast<sockaddr*>(&addr), sizeof(addr), &con);
        run_until(b, [&] { return acc.result && con.result; });
        BOOST_CHECK_EQUAL(*con.result, 0);
        BOOST_REQUIRE_GE(*acc.result, 0);
        ::close(int(*acc.result));
        ::close(cs);

        // Nobody listens once ls is closed: refused.
        ::close(ls);
        int cs2 = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        recorder refused;
        b.connect(cs2, reinterpret_cast<sockaddr*>(&addr), sizeof(addr), &refused);
        run_until(b, [&] { return refused.result.has_value(); });
        BOOST_CHECK_EQUAL(*refused.result, -ECONNREFUSED);
        ::close(cs2);
    });
}

BOOST_AUTO_TEST_CASE(test_cancel) {
    for_each_backend(16, [](io_backend& b) {
        socket_pair sp;
        char in[16];
        recorder r;
        b.recv(sp.fd[1], in, sizeof(in), &r);
        settle(b);
        BOOST_REQUIRE(!r.result);
        b.cancel(&r);
        run_until(b, [&] { return r.result.has_value(); });
        BOOST_CHECK_EQUAL(*r.result, -ECANCELED);
        // Data arriving later must not complete it a second time.
        BOOST_REQUIRE_EQUAL(::send(sp.fd[0], "late", 4, 0), 4);
        settle(b);
        BOOST_CHECK_EQUAL(r.completions, 1);
        // Cancelling what is not in flight changes nothing.
        b.cancel(&r);
        settle(b);
        BOOST_CHECK_EQUAL(r.completions, 1);
        // The socket still works: the late bytes are there to read.
        recorder again;
        b.recv(sp.fd[1], in, sizeof(in), &again);
        run_until(b, [&] { return again.result.has_value(); });
        BOOST_CHECK_EQUAL(*again.result, 4);

        // A pending accept is cancelled the same way.
        int ls = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        BOOST_REQUIRE_EQUAL(::bind(ls, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
        BOOST_REQUIRE_EQUAL(::listen(ls, 4), 0);
        recorder acc;
        b.accept(ls, &acc);
        settle(b);
        b.cancel(&acc);
        run_until(b, [&] { return acc.result.has_value(); });
        BOOST_CHECK_EQUAL(*acc.result, -ECANCELED);
        ::close(ls);
    });
}

BOOST_AUTO_TEST_CASE(test_wake_from_another_thread) {
    for_each_backend(8, [](io_backend& b) {
        // wait() may return early (EINTR: a signal, or io_uring task work
        // left by a ring torn down earlier), so each check loops and counts
        // the returns: a backend that does not really sleep returns often.
        std::atomic<bool> woken{false};
        auto t0 = std::chrono::steady_clock::now();
        std::thread waker([&] {
            std::this_thread::sleep_for(50ms);
            woken = true;
            b.wake();
        });
        int returns = 0;
        while (!woken.load() && std::chrono::steady_clock::now() - t0 < 10s) {
            b.wait(std::nullopt);
            b.poll();
            ++returns;
        }
        auto waited = std::chrono::steady_clock::now() - t0;
        waker.join();
        BOOST_CHECK(woken.load());
        BOOST_CHECK_LT(returns, 5);
        BOOST_CHECK_LT(waited, 5s);

        // A wake() before the wait ends the next wait at once.
        b.wake();
        t0 = std::chrono::steady_clock::now();
        b.wait(10s);
        BOOST_CHECK_LT(std::chrono::steady_clock::now() - t0, 5s);
        b.poll();

        // With nothing pending, a timed wait sleeps for its timeout.
        t0 = std::chrono::steady_clock::now();
        auto until = t0 + 60ms;
        returns = 0;
        for (auto now = t0; now < until; now = std::chrono::steady_clock::now()) {
            b.wait(until - now);
            b.poll();
            ++returns;
        }
        BOOST_CHECK_LT(returns, 5);
        BOOST_CHECK_LT(std::chrono::steady_clock::now() - t0, 5s);
    });
}

BOOST_AUTO_TEST_CASE(test_completion_wakes_a_waiting_backend) {
    for_each_backend(8, [](io_backend& b) {
        // Sleeping in wait() must end when a file operation finishes (aio's
        // eventfd, the pool's notifier) or a socket becomes ready.
        temp_file f;
        std::string s(4096, 'w');
        recorder w;
        b.write(f.fd, 0, s.data(), s.size(), &w);
        run_until(b, [&] { return w.result.has_value(); });
        BOOST_CHECK_EQUAL(*w.result, 4096);

        socket_pair sp;
        char in[8];
        recorder r;
        b.recv(sp.fd[1], in, sizeof(in), &r);
        b.poll();
        std::thread sender([&] {
            std::this_thread::sleep_for(30ms);
            (void)::send(sp.fd[0], "x", 1, 0);
        });
        auto t0 = std::chrono::steady_clock::now();
        while (!r.result && std::chrono::steady_clock::now() - t0 < 10s) {
            b.wait(10s);
            b.poll();
        }
        sender.join();
        BOOST_CHECK_EQUAL(r.result.value_or(-1), 1);
        BOOST_CHECK_LT(std::chrono::steady_clock::now() - t0, 5s);
    });
}
