// data_sink and output_stream: a buffered push stream of bytes (files now, sockets
// and compressors later); the file sink writes large aligned blocks with writes kept in flight.
#pragma once

#include "runtime/file.hh"
#include "runtime/future.hh"
#include "runtime/temporary_buffer.hh"

#include <cstdint>
#include <memory>
#include <string_view>

namespace reef {

// Consumes buffers in order. put() may return before the bytes are written;
// flush() and close() wait for everything put so far.
class data_sink_impl {
public:
    virtual ~data_sink_impl() = default;
    virtual future<> put(temporary_buffer buf) = 0;
    virtual future<> flush() { return make_ready_future<>(); }
    virtual future<> close() = 0;
};

class data_sink {
public:
    data_sink() = default;
    explicit data_sink(std::unique_ptr<data_sink_impl> impl) noexcept : _impl(std::move(impl)) {}
    future<> put(temporary_buffer buf) { return _impl->put(std::move(buf)); }
    future<> flush() { return _impl->flush(); }
    future<> close() { return _impl->close(); }
    explicit operator bool() const noexcept { return bool(_impl); }
private:
    std::unique_ptr<data_sink_impl> _impl;
};

// Gathers small writes into buffers of buffer_size before handing them to
// the sink. Not copyable; close() must be awaited before destruction for
// the data to be complete.
class output_stream {
public:
    output_stream() = default;
    output_stream(data_sink sink, size_t buffer_size) : _sink(std::move(sink)), _size(buffer_size) {}
    output_stream(output_stream&&) noexcept = default;
    output_stream& operator=(output_stream&&) noexcept = default;

    future<> write(const char* data, size_t len);
    future<> write(std::string_view s) { return write(s.data(), s.size()); }
    // Hands what is buffered to the sink and waits until it is written.
    future<> flush();
    // Flushes and closes the sink.
    future<> close();
    // Bytes accepted by write() so far.
    uint64_t written() const noexcept { return _written; }

private:
    future<> put_buffer();

    data_sink _sink;
    size_t _size = 0;
    temporary_buffer _buf;
    size_t _end = 0;
    uint64_t _written = 0;
};

struct file_output_stream_options {
    // Bytes per write (rounded up to the file's alignment).
    size_t buffer_size = 128 * 1024;
    // Writes kept in flight while the caller fills the next buffer.
    unsigned write_behind = 2;
};

// A sink writing consecutive bytes to f from offset 0. Each write is a whole
// aligned buffer; close() writes the padded last block and truncates the file
// to the exact length. Durability (flush of the file) is the caller's step.
data_sink make_file_data_sink(file f, file_output_stream_options opts = {});
output_stream make_file_output_stream(file f, file_output_stream_options opts = {});

} // namespace reef
