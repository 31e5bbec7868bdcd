// input_stream and the read-ahead file data source. See input_stream.hh.
#include "runtime/input_stream.hh"

#include "runtime/with_closeable.hh"

#include "runtime/reactor.hh"

#include <algorithm>
#include <array>
#include <fmt/core.h>
#include <system_error>

namespace reef {

future<temporary_buffer> data_source_impl::skip(uint64_t n) {
    while (true) {
        auto buf = co_await get();
        if (buf.empty() || buf.size() > n) {
            buf.trim_front(std::min<uint64_t>(n, buf.size()));
            co_return buf;
        }
        n -= buf.size();
    }
}

future<temporary_buffer> input_stream::read() {
    if (!_buf.empty()) {
        co_return std::move(_buf);
    }
    if (_eof) {
        co_return temporary_buffer();
    }
    auto b = co_await _ds.get();
    if (b.empty()) {
        _eof = true;
    }
    co_return b;
}

future<temporary_buffer> input_stream::read_up_to(size_t n) {
    if (_buf.empty()) {
        if (_eof) {
            co_return temporary_buffer();
        }
        _buf = co_await _ds.get();
        if (_buf.empty()) {
            _eof = true;
            co_return temporary_buffer();
        }
    }
    if (_buf.size() <= n) {
        co_return std::move(_buf);
    }
    auto front = _buf.share(0, n);
    _buf.trim_front(n);
    co_return front;
}

future<temporary_buffer> input_stream::read_exactly(size_t n) {
    if (_buf.size() >= n) {
        auto front = _buf.share(0, n);
        _buf.trim_front(n);
        co_return front;
    }
    // Crosses buffers: gather into one contiguous buffer.
    temporary_buffer out(n);
    size_t filled = 0;
    while (filled < n) {
        if (_buf.empty()) {
            if (_eof) {
                break;
            }
            _buf = co_await _ds.get();
            if (_buf.empty()) {
                _eof = true;
                break;
            }
        }
        size_t take = std::min(n - filled, _buf.size());
        std::memcpy(out.get_write() + filled, _buf.get(), take);
        _buf.trim_front(take);
        filled += take;
    }
    out.trim(filled);
    co_return out;
}

future<> input_stream::skip(uint64_t n) {
    if (_buf.size() >= n) {
        _buf.trim_front(n);
        co_return;
    }
    n -= _buf.size();
    _buf = temporary_buffer();
    if (_eof) {
        co_return;
    }
    _buf = co_await _ds.skip(n);
    if (_buf.empty()) {
        _eof = true;
    }
}

future<> input_stream::close() {
    _buf = temporary_buffer();
    if (_ds) {
        co_await _ds.close();
    }
}

namespace {

// One read in flight or done. Owned by the source; if the source dies while
// the kernel still writes into it, the read frees itself on completion.
struct pending_read final : io_completion {
    temporary_buffer buf;
    uint64_t pos = 0;       // aligned file offset of buf
    size_t len = 0;         // bytes requested
    ssize_t result = 0;
    bool done = false;
    bool orphaned = false;
    internal::parked_task waiter;

    void complete(ssize_t r) noexcept override {
        --engine().io().in_flight;
        result = r;
        done = true;
        if (orphaned) {
            delete this;
            return;
        }
        if (waiter) {
            std::exchange(waiter, {}).wake();
        }
    }
};

// The reads of one source, oldest first: a fixed ring (at most max_reads in flight), so that a short read's source
// allocates no container.
class read_queue {
public:
    static constexpr unsigned max_reads = 8;

    bool empty() const noexcept { return _size == 0; }
    unsigned size() const noexcept { return _size; }
    pending_read* front() const noexcept { return _slots[_head]; }
    void pop_front() noexcept {
        _head = (_head + 1) % max_reads;
        --_size;
    }
    void push_back(pending_read* r) noexcept { _slots[(_head + _size++) % max_reads] = r; }
    void pop_back() noexcept { --_size; }
    template <typename F>
    void for_each(F f) const noexcept {
        for (unsigned i = 0; i < _size; ++i) {
            f(_slots[(_head + i) % max_reads]);
        }
    }

private:
    std::array<pending_read*, max_reads> _slots{};
    unsigned _head = 0;
    unsigned _size = 0;
};

struct read_awaiter {
    pending_read& r;
    bool await_ready() const noexcept { return r.done; }
    void await_suspend(std::coroutine_handle<> h) noexcept { r.waiter.park(h); }
    void await_resume() const noexcept {}
};

class file_data_source final : public data_source_impl {
public:
    file_data_source(file f, uint64_t offset, uint64_t len, file_input_stream_options opts)
        : _file(std::move(f)), _pos(offset), _end(offset + len),
          _read_ahead(std::min(opts.read_ahead, read_queue::max_reads - 1)) {
        uint64_t a = _file.disk_read_dma_alignment();
        _buffer_size = std::max<uint64_t>(a, (opts.buffer_size + a - 1) / a * a);
        _initial_size = opts.initial_buffer_size ? std::min<uint64_t>(_buffer_size, std::max<uint64_t>(a, (opts.initial_buffer_size + a - 1) / a * a))
                                                 : _buffer_size;
        _next_size = _initial_size;
        _full_issued = _initial_size >= _buffer_size;
        // Reads start at the aligned offset below `offset`; the first
        // buffer's front is trimmed.
        _next_issue = offset / a * a;
    }

    ~file_data_source() override {
        _reads.for_each(abandon);
    }

    // Not a coroutine: a read already done (a memory-backed file's, or one read ahead) comes back as a ready
    // future, with no frame made for it.
    future<temporary_buffer> get() override {
        try {
            if (_pos >= _end) {
                return make_ready_future<temporary_buffer>();
            }
            issue_reads();
            if (!_reads.front()->done) {
                return wait_and_take();
            }
            return make_ready_future<temporary_buffer>(take_front());
        } catch (...) {
            return make_exception_future<temporary_buffer>(std::current_exception());
        }
    }

    future<temporary_buffer> skip(uint64_t n) override {
        _pos = std::min(_end, _pos + n);
        // Reads wholly before the new position are dropped; the one that
        // holds it is kept.
        while (!_reads.empty() && _reads.front()->pos + _reads.front()->len <= _pos) {
            abandon(_reads.front());
            _reads.pop_front();
            ++engine().io().read_ahead_dropped;
        }
        if (_reads.empty()) {
            uint64_t a = _file.disk_read_dma_alignment();
            if (_next_issue < _pos / a * a) {
                _next_issue = _pos / a * a;
                _next_size = _initial_size;  // a jump: maybe a short read again
                _full_issued = _initial_size >= _buffer_size;
            }
        }
        return get();
    }

    future<> close() override {
        if (_reads.empty()) {
            _pos = _end;
            return make_ready_future<>();  // nothing in flight: no frame
        }
        return close_reads();
    }

private:
    // The kernel may still write into read-ahead buffers: waits for them.
    future<> close_reads() {
        while (!_reads.empty()) {
            pending_read* r = _reads.front();
            if (!r->done) {
                co_await read_awaiter{*r};
            }
            _reads.pop_front();
            count_bytes(*r);
            delete r;
            ++engine().io().read_ahead_dropped;
        }
        _pos = _end;
    }

    future<temporary_buffer> wait_and_take() {
        ++engine().io().reads_blocked;
        co_await read_awaiter{*_reads.front()};
        co_return take_front();
    }

    // The first read, done: its bytes from _pos on (empty when the file ended before the range did).
    temporary_buffer take_front() {
        pending_read* r = _reads.front();
        _reads.pop_front();
        std::unique_ptr<pending_read> owned(r);
        count_bytes(*r);
        if (r->result < 0) {
            throw std::system_error(int(-r->result), std::system_category(),
                                    fmt::format("read {} at offset {} ({} bytes)", _file.path(), r->pos, r->len));
        }
        auto buf = std::move(r->buf);
        buf.trim(size_t(r->result));
        // This buffer covers [r->pos, r->pos + result); hand out from _pos.
        uint64_t skip_front = _pos - r->pos;
        if (skip_front >= buf.size()) {
            // The file ended before the range did.
            _pos = _end;
            drop_reads();
            return temporary_buffer();
        }
        buf.trim_front(skip_front);
        buf.trim(std::min<uint64_t>(buf.size(), _end - _pos));
        _pos += buf.size();
        if (size_t(r->result) < r->len && _pos < _end) {
            // Short read: end of file inside our range.
            _end = _pos;
            drop_reads();
        }
        return buf;
    }

    void issue_reads() {
        // Growing reads are not read ahead, and neither is the first full-size read after them (issued when the
        // last growing one is consumed): a short read (a row, or a promoted index block of up to half buffer_size)
        // reads no more than it asks for; a scan reads ahead from its second full-size read on.
        bool ahead = _full_issued;
        while (_reads.size() < 1 + (ahead ? _read_ahead : 0) && _next_issue < _end) {
            auto* r = new pending_read;
            r->pos = _next_issue;
            uint64_t a = _file.disk_read_dma_alignment();
            uint64_t want_end = std::min<uint64_t>(_next_issue + _next_size, (_end + a - 1) / a * a);
            _full_issued = _next_size >= _buffer_size;
            _next_size = std::min(_buffer_size, _next_size * 2);
            r->len = want_end - _next_issue;
            r->buf = _file.allocate_aligned_buffer(r->len);
            _next_issue += r->len;
            _reads.push_back(r);
            try {
                _file.submit_read(r->pos, r->buf.get_write(), r->len, r);
            } catch (...) {
                _reads.pop_back();
                delete r;
                throw;
            }
        }
    }

    void drop_reads() {
        while (!_reads.empty()) {
            abandon(_reads.front());
            _reads.pop_front();
            ++engine().io().read_ahead_dropped;
        }
    }

    // bytes_read counts every read the source is done with: handed out, or dropped unread (a skip, a close: read
    // from disk all the same). A read dropped in flight counts the bytes it asked for now, so that the count
    // belongs to the operation that issued it, not to whatever runs when the kernel completes it.
    static void count_bytes(const pending_read& r) noexcept {
        engine().io().bytes_read += r.done ? size_t(std::max<ssize_t>(r.result, 0)) : r.len;
    }

    static void abandon(pending_read* r) noexcept {
        count_bytes(*r);
        if (r->done) {
            delete r;
        } else {
            r->orphaned = true;
        }
    }

    file _file;
    uint64_t _pos;          // next byte to hand out
    uint64_t _end;          // end of the range (shrinks at end of file)
    uint64_t _next_issue;   // file offset of the next read to issue
    uint64_t _buffer_size;
    uint64_t _initial_size;  // first read's size (== _buffer_size unless growing)
    uint64_t _next_size;     // the next read's size, doubling up to _buffer_size
    bool _full_issued;       // the last read issued was full-size: the next ones may be read ahead
    unsigned _read_ahead;
    read_queue _reads;
};

} // namespace

data_source make_file_data_source(file f, uint64_t offset, uint64_t len, file_input_stream_options opts) {
    return data_source(std::make_unique<file_data_source>(std::move(f), offset, len, opts));
}

input_stream make_file_input_stream(file f, uint64_t offset, uint64_t len, file_input_stream_options opts) {
    return input_stream(make_file_data_source(std::move(f), offset, len, opts));
}

future<> for_each_file_buffer(std::string path, file_input_stream_options opts,
                              std::function<void(const temporary_buffer&)> fn) {
    auto f = co_await open_file_dma(std::move(path), open_flags::ro);
    co_await with_closeable(std::move(f), [&](file& f) -> future<> {
        auto size = co_await f.size();
        co_await with_closeable(make_file_input_stream(f, 0, size, opts), [&](input_stream& in) -> future<> {
            while (true) {
                auto buf = co_await in.read();
                if (buf.empty()) {
                    break;
                }
                fn(buf);
            }
        });
    });
}

} // namespace reef
