// parser_input: staging across buffers. See parser_input.hh.
#include "sstables/parser_input.hh"

#include "utils/vint.hh"

#include <algorithm>

namespace reef::sstables {

bool parser_input::ensure_slow(size_t n, std::string_view what) {
    if (staged() == 0) {
        _stage.clear();
        _stage_pos = 0;
        if (_buf.size() - _pos >= n) {
            _ptr = _buf.data() + _pos;
            return true;
        }
    }
    // Gather the bytes in the stage: what is left of it, then as much of the buffer as needed.
    if (staged() < n) {
        if (_stage_pos > 0 && _stage_pos == _stage.size()) {
            _stage.clear();
            _stage_pos = 0;
        }
        size_t take = std::min(n - staged(), _buf.size() - _pos);
        _stage.insert(_stage.end(), _buf.begin() + _pos, _buf.begin() + _pos + take);
        _pos += take;
        if (staged() < n) {
            if (_eof || (_end && _offset + staged() >= *_end)) {
                fail_truncated(n, what);
            }
            return false;
        }
    }
    _ptr = _stage.data() + _stage_pos;
    return true;
}

bool parser_input::read_unsigned_vint_slow(uint64_t& v, std::string_view what) {
    if (!ensure(1, what)) {
        return false;
    }
    size_t len = utils::vint_length_from_first_byte(*_ptr);
    if (!ensure(len, what)) {
        return false;
    }
    auto d = utils::try_decode_unsigned_vint(std::span<const std::byte>(_ptr, len));
    // ensure() gave exactly the length the first byte announces.
    v = d->value;
    consume(len);
    return true;
}

uint64_t parser_input::skip(uint64_t n) {
    uint64_t left = n;
    size_t from_stage = size_t(std::min<uint64_t>(left, staged()));
    _stage_pos += from_stage;
    left -= from_stage;
    size_t from_buf = size_t(std::min<uint64_t>(left, _buf.size() - _pos));
    _pos += from_buf;
    left -= from_buf;
    _offset += n;
    return left;
}

void parser_input::fail_length(uint64_t length, std::optional<uint64_t> limit, std::string_view what) const {
    if (_end && (!limit || *limit > *_end)) {
        limit = _end;
    }
    fail(_offset, "impossible length " + std::to_string(length) + " of " + std::string(what) + ": only " +
                      std::to_string(*limit > _offset ? *limit - _offset : 0) + " bytes are left" +
                      (limit == _end ? " in the stream" : " in the enclosing row"));
}

void parser_input::fail_truncated(size_t n, std::string_view what) const {
    fail(_offset, "the data ends after " + std::to_string(staged()) + " of the " + std::to_string(n) +
                      " bytes of " + std::string(what));
}

} // namespace reef::sstables
