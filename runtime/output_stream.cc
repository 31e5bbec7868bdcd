// output_stream and the write-behind file sink. See output_stream.hh.
#include "runtime/output_stream.hh"

#include "runtime/semaphore.hh"
#include "runtime/reactor.hh"

#include <cstring>
#include <exception>

namespace reef {

future<> output_stream::put_buffer() {
    if (_end == 0) {
        co_return;
    }
    _buf.trim(_end);
    auto b = std::move(_buf);
    _end = 0;
    co_await _sink.put(std::move(b));
}

future<> output_stream::write(const char* data, size_t len) {
    _written += len;
    while (len) {
        if (_buf.empty()) {
            _buf = temporary_buffer::aligned(4096, _size);
            _end = 0;
        }
        size_t n = std::min(len, _size - _end);
        std::memcpy(_buf.get_write() + _end, data, n);
        _end += n;
        data += n;
        len -= n;
        if (_end == _size) {
            co_await put_buffer();
        }
    }
}

future<> output_stream::flush() {
    co_await put_buffer();
    co_await _sink.flush();
}

future<> output_stream::close() {
    std::exception_ptr error;
    try {
        co_await put_buffer();
    } catch (...) {
        error = std::current_exception();
    }
    // The sink is closed even after a failed put: closing is what waits for
    // the writes still in flight, which use its buffers.
    try {
        co_await _sink.close();
    } catch (...) {
        if (!error) {
            error = std::current_exception();
        }
    }
    if (error) {
        std::rethrow_exception(error);
    }
}

namespace {

class file_data_sink final : public data_sink_impl {
public:
    file_data_sink(file f, file_output_stream_options opts)
        : _file(std::move(f)), _align(_file.disk_write_dma_alignment()),
          _in_flight(opts.write_behind ? opts.write_behind : 1) {
        _block = std::max<size_t>(_align, (opts.buffer_size + _align - 1) / _align * _align);
        _pending = _file.allocate_aligned_buffer(_block);
    }

    // Bytes arrive in any sizes; they are cut into whole aligned blocks.
    future<> put(temporary_buffer buf) override {
        check_failed();
        if (_pending_len == 0 && buf.size() == _block &&
            reinterpret_cast<uintptr_t>(buf.get()) % _file.memory_dma_alignment() == 0) {
            // A whole aligned block (what output_stream hands over): write it
            // as it is, without copying it into a block of our own.
            co_await write_block(std::move(buf), _block);
            co_return;
        }
        size_t off = 0;
        while (off < buf.size()) {
            size_t n = std::min(buf.size() - off, _block - _pending_len);
            std::memcpy(_pending.get_write() + _pending_len, buf.get() + off, n);
            _pending_len += n;
            off += n;
            if (_pending_len == _block) {
                co_await write_pending();
            }
        }
    }

    future<> flush() override {
        // Whole blocks only: a partial tail would have to be rewritten.
        co_await wait_for_writes();
    }

    future<> close() override {
        std::exception_ptr error;
        try {
            uint64_t length = _pos + _pending_len;
            if (_pending_len) {
                size_t padded = (_pending_len + _align - 1) / _align * _align;
                std::memset(_pending.get_write() + _pending_len, 0, padded - _pending_len);
                _pending.trim(padded);
                _pending_len = padded;
                co_await write_pending();
            }
            co_await wait_for_writes();
            if (length % _align) {
                co_await _file.truncate(length);
            }
        } catch (...) {
            error = std::current_exception();
        }
        // Every write has finished (or failed) here: no buffer is in use.
        if (error) {
            co_await wait_for_writes_ignoring_errors();
            std::rethrow_exception(error);
        }
    }

private:
    future<> write_pending() {
        size_t len = _pending_len;
        _pending_len = 0;
        auto buf = std::exchange(_pending, _file.allocate_aligned_buffer(_block));
        co_await write_block(std::move(buf), len);
    }

    future<> write_block(temporary_buffer buf, size_t len) {
        // At most write_behind writes in flight; this waits for a slot.
        co_await _in_flight.wait(1);
        uint64_t pos = _pos;
        _pos += len;
        ++_writes;
        spawn(do_write(std::move(buf), pos, len));
    }

    future<> do_write(temporary_buffer buf, uint64_t pos, size_t len) {
        try {
            co_await _file.dma_write(pos, buf.get(), len);
        } catch (...) {
            if (!_failure) {
                _failure = std::current_exception();
            }
        }
        --_writes;
        _in_flight.signal(1);
    }

    future<> wait_for_writes() {
        co_await wait_for_writes_ignoring_errors();
        check_failed();
    }

    future<> wait_for_writes_ignoring_errors() {
        size_t total = _in_flight.available_units() + _writes;
        co_await _in_flight.wait(total);
        _in_flight.signal(total);
    }

    void check_failed() const {
        if (_failure) {
            std::rethrow_exception(_failure);
        }
    }

    file _file;
    size_t _align;
    size_t _block = 0;
    temporary_buffer _pending;
    size_t _pending_len = 0;
    uint64_t _pos = 0;
    semaphore _in_flight;
    size_t _writes = 0;
    std::exception_ptr _failure;
};

} // namespace

data_sink make_file_data_sink(file f, file_output_stream_options opts) {
    return data_sink(std::make_unique<file_data_sink>(std::move(f), opts));
}

output_stream make_file_output_stream(file f, file_output_stream_options opts) {
    size_t size = opts.buffer_size;
    return output_stream(make_file_data_sink(std::move(f), opts), size);
}

} // namespace reef
