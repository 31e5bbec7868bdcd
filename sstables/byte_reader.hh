// A bounds-checked cursor over a component held in memory (Statistics.db and other small components):
// big-endian integers, doubles, vints and length-prefixed byte strings. Every read that would run past the end
// throws malformed_sstable_exception naming the file, the offset and what was being read; nothing reads out of bounds.
#pragma once

#include "sstables/exceptions.hh"
#include "utils/big_endian.hh"
#include "utils/vint.hh"

#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace reef::sstables {

class byte_reader {
public:
    // base_offset: the offset of data[0] in the file, so that errors name file offsets.
    byte_reader(std::string file, std::span<const std::byte> data, uint64_t base_offset = 0)
        : _file(std::move(file)), _data(data), _base(base_offset) {}

    const std::string& file() const noexcept { return _file; }
    // The file offset of the next byte.
    uint64_t offset() const noexcept { return _base + _pos; }
    size_t position() const noexcept { return _pos; }
    size_t remaining() const noexcept { return _data.size() - _pos; }
    bool at_end() const noexcept { return _pos == _data.size(); }

    [[noreturn]] void fail(const std::string& what) const { throw malformed_sstable_exception(_file, offset(), what); }
    [[noreturn]] void fail_at(uint64_t file_offset, const std::string& what) const {
        throw malformed_sstable_exception(_file, file_offset, what);
    }

    template <std::integral T>
    T read_be(std::string_view what) {
        need(sizeof(T), what);
        T v = utils::read_be_unchecked<T>(_data.data() + _pos);
        _pos += sizeof(T);
        return v;
    }
    uint8_t read_u8(std::string_view what) { return read_be<uint8_t>(what); }
    int32_t read_i32(std::string_view what) { return read_be<int32_t>(what); }
    int64_t read_i64(std::string_view what) { return read_be<int64_t>(what); }
    double read_double(std::string_view what) { return std::bit_cast<double>(read_be<uint64_t>(what)); }
    // Java's DataOutput.writeBoolean: one byte, 0 or 1.
    bool read_bool(std::string_view what) {
        auto at = offset();
        uint8_t b = read_u8(what);
        if (b > 1) {
            fail_at(at, "expected " + std::string(what) + " (a boolean byte 0 or 1), found " + std::to_string(b));
        }
        return b != 0;
    }

    // The next byte, not consumed.
    uint8_t peek_u8(std::string_view what) const {
        need(1, what);
        return uint8_t(_data[_pos]);
    }
    int64_t read_signed_vint(std::string_view what) {
        auto d = utils::try_decode_signed_vint(_data.subspan(_pos));
        if (!d) {
            fail("the data ends inside " + std::string(what) + " (a vint)");
        }
        _pos += d->length;
        return d->value;
    }

    uint64_t read_unsigned_vint(std::string_view what) {
        auto d = utils::try_decode_unsigned_vint(_data.subspan(_pos));
        if (!d) {
            fail("the data ends inside " + std::string(what) + " (a vint)");
        }
        _pos += d->length;
        return d->value;
    }

    std::span<const std::byte> read_bytes(size_t n, std::string_view what) {
        need(n, what);
        auto s = _data.subspan(_pos, n);
        _pos += n;
        return s;
    }
    // Length-prefixed strings: a 2-byte unsigned length (writeWithShortLength, writeUTF), a 4-byte signed one
    // (writeWithLength), an unsigned vint one (writeWithVIntLength).
    std::span<const std::byte> read_short_length_bytes(std::string_view what) {
        uint16_t n = read_be<uint16_t>(what);
        return read_bytes(n, what);
    }
    std::span<const std::byte> read_int_length_bytes(std::string_view what) {
        auto at = offset();
        int32_t n = read_i32(what);
        if (n < 0) {
            fail_at(at, "expected the length of " + std::string(what) + ", found " + std::to_string(n));
        }
        return read_bytes(size_t(n), what);
    }
    std::span<const std::byte> read_vint_length_bytes(std::string_view what) {
        auto at = offset();
        uint64_t n = read_unsigned_vint(what);
        if (n > remaining()) {
            fail_at(at, "the length of " + std::string(what) + " (" + std::to_string(n) + ") runs past the end (" +
                            std::to_string(remaining()) + " bytes left)");
        }
        return read_bytes(size_t(n), what);
    }

    void skip(size_t n, std::string_view what) { read_bytes(n, what); }

    static std::string to_string(std::span<const std::byte> b) {
        return std::string(reinterpret_cast<const char*>(b.data()), b.size());
    }
    static std::string_view to_view(std::span<const std::byte> b) {
        return std::string_view(reinterpret_cast<const char*>(b.data()), b.size());
    }
    static std::span<const std::byte> to_bytes(std::string_view s) { return std::as_bytes(std::span<const char>(s)); }

private:
    void need(size_t n, std::string_view what) const {
        if (remaining() < n) {
            fail("expected " + std::string(what) + " (" + std::to_string(n) + " bytes), only " +
                 std::to_string(remaining()) + " left");
        }
    }

    std::string _file;
    std::span<const std::byte> _data;
    uint64_t _base;
    size_t _pos = 0;
};

} // namespace reef::sstables
