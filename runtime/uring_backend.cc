// The io_uring backend: every file and socket operation is one SQE whose
// user_data is its io_completion; an eventfd read SQE is the doorbell.
#include "runtime/backends.hh"

#include <cerrno>
#include <cstring>
#include <liburing.h>
#include <sys/eventfd.h>
#include <system_error>
#include <unistd.h>

namespace reef::internal {

namespace {

// user_data values that are not io_completion pointers.
constexpr uint64_t doorbell_tag = 1;
constexpr uint64_t ignore_tag = 0;  // results of cancel requests

class uring_backend final : public io_backend {
public:
    explicit uring_backend(unsigned queue_depth) {
        io_uring_params params{};
        // A larger completion queue absorbs bursts of finished I/O without
        // the kernel's overflow list.
        params.flags = IORING_SETUP_CQSIZE;
        params.cq_entries = queue_depth * 4;
        int r = io_uring_queue_init_params(queue_depth, &_ring, &params);
        if (r < 0) {
            throw std::system_error(-r, std::system_category(), "io_uring_queue_init");
        }
        _doorbell = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (_doorbell < 0) {
            int e = errno;
            io_uring_queue_exit(&_ring);
            throw std::system_error(e, std::system_category(), "eventfd");
        }
    }

    ~uring_backend() override {
        io_uring_queue_exit(&_ring);
        ::close(_doorbell);
    }

    io_backend_kind kind() const noexcept override { return io_backend_kind::uring; }

    void read(int fd, uint64_t pos, void* buf, size_t len, io_completion* c) override {
        io_uring_prep_read(get_sqe(c), fd, buf, len, pos);
    }
    void write(int fd, uint64_t pos, const void* buf, size_t len, io_completion* c) override {
        io_uring_prep_write(get_sqe(c), fd, buf, len, pos);
    }
    void fdatasync(int fd, io_completion* c) override {
        io_uring_prep_fsync(get_sqe(c), fd, IORING_FSYNC_DATASYNC);
    }
    void accept(int fd, io_completion* c) override {
        io_uring_prep_accept(get_sqe(c), fd, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    }
    void connect(int fd, const sockaddr* addr, socklen_t len, io_completion* c) override {
        io_uring_prep_connect(get_sqe(c), fd, addr, len);
    }
    void recv(int fd, void* buf, size_t len, io_completion* c) override {
        io_uring_prep_recv(get_sqe(c), fd, buf, len, 0);
    }
    void send(int fd, const void* buf, size_t len, io_completion* c) override {
        io_uring_prep_send(get_sqe(c), fd, buf, len, MSG_NOSIGNAL);
    }
    void cancel(io_completion* c) override {
        auto* sqe = get_sqe(nullptr);
        io_uring_prep_cancel(sqe, c, 0);
        io_uring_sqe_set_data64(sqe, ignore_tag);
    }

    bool poll() override {
        if (_unsubmitted) {
            submit();
        }
        io_uring_cqe* cqe;
        unsigned head;
        unsigned seen = 0;
        bool delivered = false;
        io_uring_for_each_cqe(&_ring, head, cqe) {
            ++seen;
            uint64_t tag = io_uring_cqe_get_data64(cqe);
            if (tag == doorbell_tag) {
                _doorbell_armed = false;
            } else if (tag != ignore_tag) {
                reinterpret_cast<io_completion*>(tag)->complete(cqe->res);
                delivered = true;
            }
        }
        io_uring_cq_advance(&_ring, seen);
        return delivered;
    }

    void wait(std::optional<std::chrono::nanoseconds> timeout) override {
        if (!_doorbell_armed) {
            auto* sqe = get_sqe(nullptr);
            io_uring_prep_read(sqe, _doorbell, &_doorbell_value, sizeof(_doorbell_value), 0);
            io_uring_sqe_set_data64(sqe, doorbell_tag);
            _doorbell_armed = true;
        }
        io_uring_cqe* cqe = nullptr;
        __kernel_timespec ts{};
        if (timeout) {
            ts.tv_sec = timeout->count() / 1'000'000'000;
            ts.tv_nsec = timeout->count() % 1'000'000'000;
        }
        _unsubmitted = 0;
        // Submits and waits in one system call; the CQE is left for poll().
        int r = io_uring_submit_and_wait_timeout(&_ring, &cqe, 1, timeout ? &ts : nullptr, nullptr);
        if (r < 0 && r != -ETIME && r != -EINTR && r != -EAGAIN && r != -EBUSY) {
            throw std::system_error(-r, std::system_category(), "io_uring wait");
        }
    }

    void wake() noexcept override {
        uint64_t one = 1;
        // A full counter (EAGAIN) already means "wake up": nothing to do.
        [[maybe_unused]] auto r = ::write(_doorbell, &one, sizeof(one));
    }

private:
    io_uring_sqe* get_sqe(io_completion* c) {
        io_uring_sqe* sqe = io_uring_get_sqe(&_ring);
        if (!sqe) [[unlikely]] {
            // The submission queue is full: hand it to the kernel now. The
            // number in flight is not bounded by the queue's size.
            submit();
            sqe = io_uring_get_sqe(&_ring);
            if (!sqe) {
                throw std::system_error(EBUSY, std::system_category(), "io_uring_get_sqe");
            }
        }
        io_uring_sqe_set_data(sqe, c);
        ++_unsubmitted;
        return sqe;
    }

    void submit() {
        int r;
        do {
            r = io_uring_submit(&_ring);
        } while (r == -EINTR);
        if (r == -EAGAIN || r == -EBUSY) {
            return;  // the kernel is busy reaping; the next poll() retries
        }
        if (r < 0) {
            throw std::system_error(-r, std::system_category(), "io_uring_submit");
        }
        _unsubmitted = 0;
    }

    io_uring _ring;
    int _doorbell = -1;
    uint64_t _doorbell_value = 0;
    bool _doorbell_armed = false;
    unsigned _unsubmitted = 0;
};

} // namespace

std::unique_ptr<io_backend> make_uring_backend(unsigned queue_depth) {
    return std::make_unique<uring_backend>(queue_depth);
}

} // namespace reef::internal
