// The libaio backend: file reads and writes as iocbs whose completions ring an
// eventfd; fdatasync on a helper thread; sockets by epoll readiness.
#include "runtime/backends.hh"
#include "runtime/epoll_poller.hh"
#include "runtime/syscall_pool.hh"

#include <algorithm>
#include <cerrno>
#include <deque>
#include <libaio.h>
#include <string>
#include <sys/eventfd.h>
#include <system_error>
#include <unistd.h>
#include <vector>

namespace reef::internal {

namespace {

class aio_backend final : public io_backend {
public:
    explicit aio_backend(unsigned queue_depth)
        : _depth(std::max(queue_depth, 1u)), _iocbs(_depth), _events(_depth), _fsync_pool(1, "reef-fsync") {
        int r = io_setup(int(_depth), &_ctx);
        if (r < 0) {
            // EAGAIN here means /proc/sys/fs/aio-max-nr is used up.
            throw std::system_error(-r, std::system_category(),
                                    "io_setup(" + std::to_string(_depth) + ") for the libaio backend");
        }
        _efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (_efd < 0) {
            int e = errno;
            io_destroy(_ctx);
            throw std::system_error(e, std::system_category(), "eventfd (libaio completions)");
        }
        try {
            _poller.watch(_efd);
            _poller.watch(_fsync_pool.notifier());
        } catch (...) {
            ::close(_efd);
            io_destroy(_ctx);
            throw;
        }
        _free.reserve(_depth);
        for (auto& cb : _iocbs) {
            _free.push_back(&cb);
        }
        _to_submit.reserve(_depth);
    }

    ~aio_backend() override {
        // io_destroy waits for the operations still in flight, so no iocb or
        // buffer is written after this.
        io_destroy(_ctx);
        ::close(_efd);
    }

    io_backend_kind kind() const noexcept override { return io_backend_kind::aio; }

    void read(int fd, uint64_t pos, void* buf, size_t len, io_completion* c) override {
        enqueue(file_op{c, IO_CMD_PREAD, fd, pos, buf, len});
    }
    void write(int fd, uint64_t pos, const void* buf, size_t len, io_completion* c) override {
        enqueue(file_op{c, IO_CMD_PWRITE, fd, pos, const_cast<void*>(buf), len});
    }
    void fdatasync(int fd, io_completion* c) override {
        // IOCB_CMD_FDSYNC is refused (EINVAL) by ext4 and xfs, so a thread
        // does it.
        _fsync_pool.fdatasync(fd, c);
    }

    void accept(int fd, io_completion* c) override { _poller.accept(fd, c); }
    void connect(int fd, const sockaddr* addr, socklen_t len, io_completion* c) override {
        _poller.connect(fd, addr, len, c);
    }
    void recv(int fd, void* buf, size_t len, io_completion* c) override { _poller.recv(fd, buf, len, c); }
    void send(int fd, const void* buf, size_t len, io_completion* c) override { _poller.send(fd, buf, len, c); }

    void cancel(io_completion* c) override {
        if (_poller.cancel(c)) {
            return;
        }
        // File operations the kernel has not seen yet can still be withdrawn;
        // submitted iocbs run to the end (io_cancel is a no-op for files).
        auto w = std::find_if(_waiting.begin(), _waiting.end(), [c](const file_op& op) { return op.c == c; });
        if (w != _waiting.end()) {
            _waiting.erase(w);
            _poller.complete_later(c, -ECANCELED);
            return;
        }
        auto s = std::find_if(_to_submit.begin(), _to_submit.end(),
                              [c](iocb* cb) { return cb->data == static_cast<void*>(c); });
        if (s != _to_submit.end()) {
            _free.push_back(*s);
            _to_submit.erase(s);
            refill();
            _poller.complete_later(c, -ECANCELED);
            return;
        }
        if (_fsync_pool.cancel(c)) {
            _poller.complete_later(c, -ECANCELED);
        }
    }

    bool poll() override {
        submit();
        bool delivered = false;
        if (_in_flight > 0 || !_reaped.empty()) {
            reap();
            delivered |= deliver_reaped();
            // Slots freed by the reaped iocbs go to waiting operations now,
            // not one loop iteration later.
            submit();
        }
        delivered |= _fsync_pool.poll();
        delivered |= _poller.poll();
        return delivered;
    }

    void wait(std::optional<std::chrono::nanoseconds> timeout) override {
        submit();
        // Drained before looking, so a completion that lands after the look
        // rings the eventfd again and ends the epoll_wait below.
        uint64_t v;
        [[maybe_unused]] auto r = ::read(_efd, &v, sizeof(v));
        _fsync_pool.drain_notifier();
        if (_in_flight > 0) {
            reap();
        }
        if (!_reaped.empty() || _fsync_pool.has_completions()) {
            return;
        }
        if (!_to_submit.empty() && _in_flight == 0) {
            // io_submit said EAGAIN with nothing of ours in flight, so no
            // completion will wake us: retry soon instead.
            constexpr std::chrono::nanoseconds retry = std::chrono::milliseconds(1);
            timeout = timeout ? std::min(*timeout, retry) : retry;
        }
        _poller.wait(timeout);
    }

    void wake() noexcept override { _poller.wake(); }

private:
    struct file_op {
        io_completion* c;
        io_iocb_cmd cmd;
        int fd;
        uint64_t pos;
        void* buf;
        size_t len;
    };

    void enqueue(const file_op& op) {
        if (_free.empty()) {
            // Every iocb is taken: the operation waits here, in order, for a
            // completion to free one.
            _waiting.push_back(op);
            return;
        }
        prepare(op);
    }

    void prepare(const file_op& op) {
        iocb* cb = _free.back();
        _free.pop_back();
        if (op.cmd == IO_CMD_PREAD) {
            io_prep_pread(cb, op.fd, op.buf, op.len, static_cast<long long>(op.pos));
        } else {
            io_prep_pwrite(cb, op.fd, op.buf, op.len, static_cast<long long>(op.pos));
        }
        io_set_eventfd(cb, _efd);
        cb->data = op.c;
        _to_submit.push_back(cb);
    }

    void refill() {
        while (!_free.empty() && !_waiting.empty()) {
            prepare(_waiting.front());
            _waiting.pop_front();
        }
    }

    void submit() {
        size_t done = 0;
        while (done < _to_submit.size()) {
            int r = io_submit(_ctx, long(_to_submit.size() - done), _to_submit.data() + done);
            if (r > 0) {
                done += size_t(r);
                _in_flight += unsigned(r);
                continue;
            }
            if (r == -EAGAIN || r == -EINTR || r == 0) {
                break;  // the kernel is short of resources: next poll() retries
            }
            // The first iocb was refused (EBADF, EINVAL for a misaligned
            // O_DIRECT request...): it fails alone, the rest go on.
            iocb* bad = _to_submit[done++];
            _poller.complete_later(static_cast<io_completion*>(bad->data), r);
            _free.push_back(bad);
        }
        _to_submit.erase(_to_submit.begin(), _to_submit.begin() + long(done));
        refill();
    }

    void reap() {
        // libaio reads the completion ring in user space when the timeout is
        // zero and it is empty, so this costs no syscall when idle.
        timespec zero{};
        int n = io_getevents(_ctx, 0, long(_events.size()), _events.data(), &zero);
        if (n < 0) {
            if (n == -EINTR) {
                return;
            }
            throw std::system_error(-n, std::system_category(), "io_getevents");
        }
        for (int i = 0; i < n; ++i) {
            auto& ev = _events[i];
            _reaped.emplace_back(static_cast<io_completion*>(ev.data), static_cast<ssize_t>(static_cast<long>(ev.res)));
            _free.push_back(ev.obj);
        }
        _in_flight -= unsigned(n);
    }

    bool deliver_reaped() {
        if (_reaped.empty()) {
            return false;
        }
        refill();
        _delivering.swap(_reaped);
        for (auto& [c, r] : _delivering) {
            c->complete(r);
        }
        _delivering.clear();
        return true;
    }

    unsigned _depth;
    io_context_t _ctx{};
    int _efd = -1;
    std::vector<iocb> _iocbs;
    std::vector<iocb*> _free;
    std::vector<iocb*> _to_submit;  // prepared, not yet accepted by io_submit
    std::deque<file_op> _waiting;   // no free iocb yet
    unsigned _in_flight = 0;
    std::vector<io_event> _events;
    std::vector<std::pair<io_completion*, ssize_t>> _reaped;
    std::vector<std::pair<io_completion*, ssize_t>> _delivering;
    epoll_poller _poller;
    syscall_pool _fsync_pool;
};

} // namespace

std::unique_ptr<io_backend> make_aio_backend(unsigned queue_depth) {
    return std::make_unique<aio_backend>(queue_depth);
}

} // namespace reef::internal
