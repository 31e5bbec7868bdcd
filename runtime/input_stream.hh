// data_source and input_stream: a pull stream of buffers (file ranges, sockets, later
// decompressors), with read_exactly and skip; the file source reads ahead.
#pragma once

#include "runtime/file.hh"
#include "runtime/future.hh"
#include "runtime/temporary_buffer.hh"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace reef {

// Produces consecutive buffers; an empty buffer means end of stream.
class data_source_impl {
public:
    virtual ~data_source_impl() = default;
    virtual future<temporary_buffer> get() = 0;
    // Skips n bytes and returns the buffer that follows them (possibly empty
    // at end). The default reads and discards.
    virtual future<temporary_buffer> skip(uint64_t n);
    // Stops outstanding work; the source is not used afterwards.
    virtual future<> close() { return make_ready_future<>(); }
};

class data_source {
public:
    data_source() = default;
    explicit data_source(std::unique_ptr<data_source_impl> impl) noexcept : _impl(std::move(impl)) {}
    future<temporary_buffer> get() { return _impl->get(); }
    future<temporary_buffer> skip(uint64_t n) { return _impl->skip(n); }
    future<> close() { return _impl->close(); }
    explicit operator bool() const noexcept { return bool(_impl); }
private:
    std::unique_ptr<data_source_impl> _impl;
};

class input_stream {
public:
    input_stream() = default;
    explicit input_stream(data_source ds) noexcept : _ds(std::move(ds)) {}
    input_stream(input_stream&&) noexcept = default;
    input_stream& operator=(input_stream&&) noexcept = default;

    // What is buffered, or the next buffer; empty only at end of stream.
    future<temporary_buffer> read();
    // Exactly n bytes, fewer only at end of stream.
    future<temporary_buffer> read_exactly(size_t n);
    // At most n bytes (at least one unless at end of stream).
    future<temporary_buffer> read_up_to(size_t n);
    // Skips n bytes (fewer at end of stream) without reading what the
    // source can seek past.
    future<> skip(uint64_t n);
    bool eof() const noexcept { return _eof && _buf.empty(); }
    future<> close();

private:
    data_source _ds;
    temporary_buffer _buf;
    bool _eof = false;
};

struct file_input_stream_options {
    // Bytes per read (rounded up to the file's alignment).
    size_t buffer_size = 8192;
    // Reads kept in flight beyond the one being consumed (at most 7).
    unsigned read_ahead = 1;
    // When nonzero, the first read is this big (rounded up to the alignment) and each next one twice the last,
    // up to buffer_size, and reading ahead starts with the reads of buffer_size; so again after a skip that
    // leaves no read in flight. A short read (one row of a long range) then reads a few KiB, not buffer_size,
    // while a long scan soon reads whole buffers ahead.
    size_t initial_buffer_size = 0;
};

// A source over [offset, offset + len) of f, reading ahead as configured.
// Counts reads that had to wait and read-ahead buffers it dropped unused
// in engine().io().
data_source make_file_data_source(file f, uint64_t offset, uint64_t len, file_input_stream_options opts = {});
input_stream make_file_input_stream(file f, uint64_t offset, uint64_t len, file_input_stream_options opts = {});

// Opens path, streams the whole file through a file input stream, calls fn
// with each buffer in order, and closes stream and file whatever happens (an
// exception from fn or from a read comes out after the close).
future<> for_each_file_buffer(std::string path, file_input_stream_options opts,
                              std::function<void(const temporary_buffer&)> fn);

} // namespace reef
