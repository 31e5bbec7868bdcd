// temporary_buffer: an owning, cheaply shareable byte buffer (optionally aligned for O_DIRECT).
// Shares of one buffer keep its memory alive; the count is not atomic: shard-local use only.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string_view>
#include <utility>

namespace reef {

class temporary_buffer {
public:
    temporary_buffer() noexcept = default;
    explicit temporary_buffer(size_t size) : temporary_buffer(aligned(alignof(std::max_align_t), size)) {}
    temporary_buffer(const char* src, size_t size) : temporary_buffer(size) {
        if (size) {
            std::memcpy(_data, src, size);
        }
    }
    // size bytes whose address is a multiple of align (a power of two).
    static temporary_buffer aligned(size_t align, size_t size) {
        size_t rounded = (std::max<size_t>(size, 1) + align - 1) / align * align;
        void* mem = std::aligned_alloc(align, rounded);
        if (!mem) {
            throw std::bad_alloc();
        }
        return temporary_buffer(static_cast<char*>(mem), size, new block{1, mem});
    }
    static temporary_buffer copy_of(std::string_view s) { return temporary_buffer(s.data(), s.size()); }
    // A buffer over size bytes at data that another object owns (a cache page):
    // release(owner) runs, instead of a free, when the last share of it dies.
    using release_fn = void (*)(void* owner) noexcept;
    static temporary_buffer borrowed(char* data, size_t size, release_fn release, void* owner) {
        return temporary_buffer(data, size, new block{1, owner, release});
    }

    temporary_buffer(temporary_buffer&& o) noexcept
        : _data(std::exchange(o._data, nullptr)), _size(std::exchange(o._size, 0)),
          _block(std::exchange(o._block, nullptr)) {}
    temporary_buffer& operator=(temporary_buffer&& o) noexcept {
        if (this != &o) {
            release();
            _data = std::exchange(o._data, nullptr);
            _size = std::exchange(o._size, 0);
            _block = std::exchange(o._block, nullptr);
        }
        return *this;
    }
    temporary_buffer(const temporary_buffer&) = delete;
    temporary_buffer& operator=(const temporary_buffer&) = delete;
    ~temporary_buffer() { release(); }

    const char* get() const noexcept { return _data; }
    char* get_write() noexcept { return _data; }
    const char* begin() const noexcept { return _data; }
    const char* end() const noexcept { return _data + _size; }
    size_t size() const noexcept { return _size; }
    bool empty() const noexcept { return _size == 0; }
    char operator[](size_t i) const noexcept { return _data[i]; }
    std::string_view view() const noexcept { return {_data, _size}; }

    // Another buffer over the same bytes (or [pos, pos + len) of them).
    temporary_buffer share() const noexcept { return share(0, _size); }
    temporary_buffer share(size_t pos, size_t len) const noexcept {
        if (_block) {
            ++_block->refs;
        }
        return temporary_buffer(_data + pos, len, _block);
    }
    // Drops bytes from the front / keeps only the first n.
    void trim_front(size_t n) noexcept {
        _data += n;
        _size -= n;
    }
    void trim(size_t n) noexcept { _size = n; }
    // A copy that owns exactly its bytes (to stop pinning a large block).
    temporary_buffer clone() const { return temporary_buffer(_data, _size); }

private:
    struct block {
        unsigned refs;
        void* mem;                     // malloc'ed memory, or the owner of borrowed memory
        release_fn release = nullptr;  // set for borrowed memory
    };
    temporary_buffer(char* data, size_t size, block* b) noexcept : _data(data), _size(size), _block(b) {}
    void release() noexcept {
        if (_block && --_block->refs == 0) {
            if (_block->release) {
                _block->release(_block->mem);
            } else {
                std::free(_block->mem);
            }
            delete _block;
        }
        _block = nullptr;
    }

    char* _data = nullptr;
    size_t _size = 0;
    block* _block = nullptr;
};

} // namespace reef
