// Chunk-by-chunk checked Data.db sources. See checked_data_source.hh and FORMAT.md.
#include "sstables/checked_data_source.hh"

#include "runtime/reactor.hh"
#include "sstables/compressor.hh"
#include "sstables/exceptions.hh"
#include "utils/big_endian.hh"
#include "utils/crc32.hh"

#include <fmt/format.h>

namespace reef::sstables {

namespace {

// Serves [pos, end) of a stream cut into chunks of chunk_size bytes, loading (and checking) one chunk at a
// time and keeping the last one, so that consecutive reads inside a chunk cost nothing. Chunks are read through
// a file input stream with read-ahead over the stored bytes [pos, end) needs, so a sequential scan waits for
// the disk only when the read-ahead has not kept up; a skip to a later chunk moves that stream (re-opening it
// only for a long jump).
class chunked_source : public data_source_impl {
public:
    chunked_source(file f, std::string name, uint64_t chunk_size, uint64_t pos, uint64_t end)
        : _file(std::move(f)), _name(std::move(name)), _chunk_size(chunk_size), _pos(pos), _end(end) {}

    future<temporary_buffer> get() override {
        if (_pos >= _end) {
            return make_ready_future<temporary_buffer>();
        }
        uint64_t index = _pos / _chunk_size;
        if (_chunk_loaded && index == _chunk_index) {
            // Served from the chunk in hand as a ready future: no coroutine frame, and nothing to resume (a
            // completed coroutine awaited in a loop deepens the stack in debug builds).
            return make_ready_future<temporary_buffer>(serve());
        }
        return load_and_serve(index);
    }

    future<temporary_buffer> load_and_serve(uint64_t index) {
        // A long scan whose reads are always ready would otherwise never let the loop poll.
        co_await maybe_yield();
        _chunk_loaded = false;
        _chunk = co_await load_chunk(index);
        _chunk_index = index;
        _chunk_loaded = true;
        co_return serve();
    }

    // The bytes from _pos to the end of the chunk in hand or of the range.
    temporary_buffer serve() {
        uint64_t in_chunk = _pos - _chunk_index * _chunk_size;
        if (in_chunk >= _chunk.size()) {
            // load_chunk produced fewer bytes than the layout promised; it checks this, so this is a bug guard.
            throw malformed_sstable_exception(_name, _pos, "expected a chunk covering this position");
        }
        uint64_t n = std::min<uint64_t>(_chunk.size() - in_chunk, _end - _pos);
        auto out = _chunk.share(in_chunk, n);
        _pos += n;
        return out;
    }

    future<temporary_buffer> skip(uint64_t n) override {
        _pos = n > _end - std::min(_pos, _end) ? _end : _pos + n;
        return get();
    }

    future<> close() override {
        if (_stream_open) {
            _stream_open = false;
            co_await _stream.close();
        }
    }

protected:
    // Chunk index's uncompressed bytes, checked.
    virtual future<temporary_buffer> load_chunk(uint64_t index) = 0;
    // Where chunk index's stored bytes start and end in the file.
    virtual std::pair<uint64_t, uint64_t> stored_extent(uint64_t index) const = 0;

    // Chunk index's stored bytes, read through the read-ahead stream.
    future<temporary_buffer> read_stored(uint64_t index) {
        auto [start, stop] = stored_extent(index);
        // Jumps of up to this many bytes are skipped over in the stream; longer ones re-open it there.
        constexpr uint64_t max_skip = 256 * 1024;
        if (_stream_open && (start < _stream_pos || start - _stream_pos > max_skip)) {
            _stream_open = false;
            co_await _stream.close();
        }
        if (!_stream_open) {
            // Up to the end of the chunk holding the source's last byte: nothing past what the range needs.
            uint64_t last = stored_extent((_end - 1) / _chunk_size).second;
            file_input_stream_options opts;
            opts.buffer_size = std::max<uint64_t>(64 * 1024, stop - start);
            opts.read_ahead = 1;
            _stream = make_file_input_stream(_file, start, last - start, opts);
            _stream_open = true;
            _stream_pos = start;
        }
        if (start > _stream_pos) {
            co_await _stream.skip(start - _stream_pos);
            _stream_pos = start;
        }
        auto raw = co_await _stream.read_exactly(stop - start);
        _stream_pos += raw.size();
        if (raw.size() != stop - start) {
            throw malformed_sstable_exception(_name, start + raw.size(),
                                              fmt::format("expected chunk {} to end at {}, but the file ends first",
                                                          index, stop));
        }
        co_return raw;
    }

    file _file;
    std::string _name;

private:
    uint64_t _chunk_size;
    uint64_t _pos;
    uint64_t _end;
    temporary_buffer _chunk;
    uint64_t _chunk_index = 0;
    bool _chunk_loaded = false;
    input_stream _stream;
    bool _stream_open = false;
    uint64_t _stream_pos = 0;  // file offset of the stream's next byte
};

std::string crc_mismatch(uint64_t index, uint32_t stored, uint32_t computed) {
    return fmt::format("expected chunk {}'s CRC32 {:#010x} (as stored), computed {:#010x}", index, stored, computed);
}

class compressed_source final : public chunked_source {
public:
    compressed_source(file f, std::string name, std::shared_ptr<const compression_info> ci, uint64_t compressed_size,
                      uint64_t pos, uint64_t end)
        : chunked_source(std::move(f), std::move(name), ci->chunk_length, pos, end), _ci(std::move(ci)),
          _compressed_size(compressed_size) {}

protected:
    std::pair<uint64_t, uint64_t> stored_extent(uint64_t index) const override {
        uint64_t off = _ci->chunk_offsets[index];
        uint64_t stop = index + 1 < _ci->chunk_count() ? _ci->chunk_offsets[index + 1] : _compressed_size;
        return {off, stop};
    }

    future<temporary_buffer> load_chunk(uint64_t index) override {
        if (index >= _ci->chunk_count()) {
            throw malformed_sstable_exception(_name, "expected a chunk " + std::to_string(index) + ", but CompressionInfo.db lists " +
                                                         std::to_string(_ci->chunk_count()));
        }
        auto [off, stop] = stored_extent(index);
        // parse_compression_info guaranteed stop - off >= 5.
        uint64_t stored_len = stop - off - 4;
        auto raw = co_await read_stored(index);
        uint32_t stored = utils::read_be_unchecked<uint32_t>(raw.get() + stored_len);
        uint32_t computed = utils::crc32(std::span<const char>(raw.get(), stored_len));
        if (stored != computed) {
            throw malformed_sstable_exception(_name, off + stored_len, crc_mismatch(index, stored, computed));
        }
        uint64_t expected = _ci->uncompressed_chunk_length(index);
        if (stored_len >= _ci->max_compressed_length) {
            // Stored as is: compressing did not pay (na and later).
            if (stored_len != expected) {
                throw malformed_sstable_exception(_name, off, fmt::format("expected uncompressed chunk {} of {} bytes, found {}",
                                                                          index, expected, stored_len));
            }
            raw.trim(stored_len);
            co_return raw;
        }
        temporary_buffer out(expected);
        decompress_chunk(_ci->algorithm, std::string_view(raw.get(), stored_len), out.get_write(), expected, _name, off);
        co_return out;
    }

private:
    std::shared_ptr<const compression_info> _ci;
    uint64_t _compressed_size;
};

class crc_checked_source final : public chunked_source {
public:
    crc_checked_source(file f, std::string name, std::shared_ptr<const crc_component> crc, uint64_t data_size,
                       uint64_t pos, uint64_t end)
        : chunked_source(std::move(f), std::move(name), crc->chunk_size, pos, end), _crc(std::move(crc)),
          _data_size(data_size) {}

protected:
    std::pair<uint64_t, uint64_t> stored_extent(uint64_t index) const override {
        uint64_t off = index * _crc->chunk_size;
        return {off, std::min<uint64_t>(off + _crc->chunk_size, _data_size)};
    }

    future<temporary_buffer> load_chunk(uint64_t index) override {
        if (index >= _crc->checksums.size()) {
            throw malformed_sstable_exception(_name, "expected a checksum for chunk " + std::to_string(index) +
                                                         ", but CRC.db has " + std::to_string(_crc->checksums.size()));
        }
        auto raw = co_await read_stored(index);
        uint32_t computed = utils::crc32(std::span<const char>(raw.get(), raw.size()));
        if (computed != _crc->checksums[index]) {
            throw malformed_sstable_exception(_name, stored_extent(index).first,
                                              crc_mismatch(index, _crc->checksums[index], computed));
        }
        co_return raw;
    }

private:
    std::shared_ptr<const crc_component> _crc;
    uint64_t _data_size;
};

uint64_t clamp_end(uint64_t pos, uint64_t len, uint64_t size) {
    return len > size - std::min(pos, size) ? size : pos + len;
}

} // namespace

data_source make_compressed_data_source(file f, std::string file_name, std::shared_ptr<const compression_info> ci,
                                        uint64_t compressed_size, uint64_t pos, uint64_t len) {
    uint64_t end = clamp_end(pos, len, ci->data_length);
    return data_source(std::make_unique<compressed_source>(std::move(f), std::move(file_name), std::move(ci),
                                                           compressed_size, pos, end));
}

data_source make_crc_checked_data_source(file f, std::string file_name, std::shared_ptr<const crc_component> crc,
                                         uint64_t data_size, uint64_t pos, uint64_t len) {
    uint64_t end = clamp_end(pos, len, data_size);
    return data_source(std::make_unique<crc_checked_source>(std::move(f), std::move(file_name), std::move(crc),
                                                            data_size, pos, end));
}

} // namespace reef::sstables
