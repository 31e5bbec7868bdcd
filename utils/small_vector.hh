// small_vector<T, N>: a vector whose first N elements live inside the object, spilling to the heap past N.
// Promises: std::vector's meaning for the operations it has (iterators are pointers; any growth or move invalidates them).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

namespace reef::utils {

// Small collections (a key's values, a row's cells) are built and dropped by the million on the read path; with
// their elements inline they cost no allocation. Moving a vector that is inline moves its elements one by one
// (a spilled one hands over its heap block). Growth relocates by move: T's move constructor must not throw.
template <typename T, size_t N>
class small_vector {
    static_assert(N > 0, "small_vector: use std::vector for no inline elements");
    static_assert(std::is_nothrow_move_constructible_v<T>, "small_vector relocates elements by move");

public:
    using value_type = T;
    using size_type = size_t;
    using difference_type = std::ptrdiff_t;
    using reference = T&;
    using const_reference = const T&;
    using pointer = T*;
    using const_pointer = const T*;
    using iterator = T*;
    using const_iterator = const T*;
    using reverse_iterator = std::reverse_iterator<iterator>;
    using const_reverse_iterator = std::reverse_iterator<const_iterator>;

    static constexpr size_t inline_capacity = N;

    small_vector() noexcept = default;
    small_vector(std::initializer_list<T> init) { assign(init.begin(), init.end()); }
    template <std::input_iterator It>
    small_vector(It first, It last) {
        assign(first, last);
    }
    explicit small_vector(size_t n) { resize(n); }
    small_vector(size_t n, const T& value) {
        reserve(n);
        for (size_t i = 0; i < n; ++i) {
            emplace_back(value);
        }
    }
    small_vector(const small_vector& o) {
        reserve(o._size);
        std::uninitialized_copy(o.begin(), o.end(), _begin);
        _size = o._size;
    }
    small_vector(small_vector&& o) noexcept { take(std::move(o)); }
    ~small_vector() { release(); }

    small_vector& operator=(const small_vector& o) {
        if (this != &o) {
            assign(o.begin(), o.end());
        }
        return *this;
    }
    small_vector& operator=(small_vector&& o) noexcept {
        if (this != &o) {
            release();
            _begin = inline_data();
            _size = 0;
            _capacity = N;
            take(std::move(o));
        }
        return *this;
    }
    small_vector& operator=(std::initializer_list<T> init) {
        assign(init.begin(), init.end());
        return *this;
    }

    template <std::input_iterator It>
    void assign(It first, It last) {
        clear();
        if constexpr (std::forward_iterator<It>) {
            reserve(size_t(std::distance(first, last)));
        }
        for (; first != last; ++first) {
            emplace_back(*first);
        }
    }

    iterator begin() noexcept { return _begin; }
    iterator end() noexcept { return _begin + _size; }
    const_iterator begin() const noexcept { return _begin; }
    const_iterator end() const noexcept { return _begin + _size; }
    const_iterator cbegin() const noexcept { return begin(); }
    const_iterator cend() const noexcept { return end(); }
    reverse_iterator rbegin() noexcept { return reverse_iterator(end()); }
    reverse_iterator rend() noexcept { return reverse_iterator(begin()); }
    const_reverse_iterator rbegin() const noexcept { return const_reverse_iterator(end()); }
    const_reverse_iterator rend() const noexcept { return const_reverse_iterator(begin()); }

    size_t size() const noexcept { return _size; }
    bool empty() const noexcept { return _size == 0; }
    size_t capacity() const noexcept { return _capacity; }
    // Elements live inside the object (no heap block).
    bool is_inline() const noexcept { return _begin == inline_data(); }
    // Bytes of heap this vector holds (0 while inline).
    size_t external_memory_usage() const noexcept { return is_inline() ? 0 : _capacity * sizeof(T); }

    T* data() noexcept { return _begin; }
    const T* data() const noexcept { return _begin; }
    T& operator[](size_t i) noexcept { return _begin[i]; }
    const T& operator[](size_t i) const noexcept { return _begin[i]; }
    T& at(size_t i) {
        check_index(i);
        return _begin[i];
    }
    const T& at(size_t i) const {
        check_index(i);
        return _begin[i];
    }
    T& front() noexcept { return _begin[0]; }
    const T& front() const noexcept { return _begin[0]; }
    T& back() noexcept { return _begin[_size - 1]; }
    const T& back() const noexcept { return _begin[_size - 1]; }

    void reserve(size_t n) {
        if (n > _capacity) {
            reallocate(n);
        }
    }

    template <typename... Args>
    T& emplace_back(Args&&... args) {
        if (_size == _capacity) {
            // The argument may be one of our elements: build the new one before the old block goes.
            T tmp(std::forward<Args>(args)...);
            reallocate(grown(_size + 1));
            ::new (static_cast<void*>(_begin + _size)) T(std::move(tmp));
        } else {
            ::new (static_cast<void*>(_begin + _size)) T(std::forward<Args>(args)...);
        }
        return _begin[_size++];
    }
    void push_back(const T& v) { emplace_back(v); }
    void push_back(T&& v) { emplace_back(std::move(v)); }
    void pop_back() noexcept { std::destroy_at(_begin + --_size); }

    template <typename... Args>
    iterator emplace(const_iterator pos, Args&&... args) {
        size_t i = size_t(pos - _begin);
        if (i == _size) {
            emplace_back(std::forward<Args>(args)...);
            return _begin + i;
        }
        T tmp(std::forward<Args>(args)...);
        if (_size == _capacity) {
            reallocate(grown(_size + 1));
        }
        // Open a gap at i: the last element moves into the new slot, the rest shift by one.
        ::new (static_cast<void*>(_begin + _size)) T(std::move(_begin[_size - 1]));
        ++_size;
        std::move_backward(_begin + i, _begin + _size - 2, _begin + _size - 1);
        _begin[i] = std::move(tmp);
        return _begin + i;
    }
    iterator insert(const_iterator pos, const T& v) { return emplace(pos, v); }
    iterator insert(const_iterator pos, T&& v) { return emplace(pos, std::move(v)); }
    template <std::input_iterator It>
    iterator insert(const_iterator pos, It first, It last) {
        size_t i = size_t(pos - _begin);
        size_t old = _size;
        if constexpr (std::forward_iterator<It>) {
            size_t n = size_t(std::distance(first, last));
            reserve(_size + n);
            std::uninitialized_copy(first, last, _begin + _size);
            _size += uint32_t(n);
            first = last;
        }
        for (; first != last; ++first) {
            emplace_back(*first);
        }
        std::rotate(_begin + i, _begin + old, _begin + _size);
        return _begin + i;
    }

    iterator erase(const_iterator pos) { return erase(pos, pos + 1); }
    iterator erase(const_iterator first, const_iterator last) {
        T* f = _begin + (first - _begin);
        T* l = _begin + (last - _begin);
        if (f != l) {
            T* new_end = std::move(l, end(), f);
            std::destroy(new_end, end());
            _size -= uint32_t(l - f);
        }
        return f;
    }

    void clear() noexcept {
        std::destroy(begin(), end());
        _size = 0;
    }
    void resize(size_t n) {
        if (n < _size) {
            erase(begin() + n, end());
            return;
        }
        reserve(n);
        while (_size < n) {
            ::new (static_cast<void*>(_begin + _size)) T();
            ++_size;
        }
    }
    // Gives back a heap block the elements would fit without (they move inline when they fit there).
    void shrink_to_fit() {
        if (!is_inline() && _size < _capacity) {
            reallocate(_size);
        }
    }

    friend bool operator==(const small_vector& a, const small_vector& b) {
        return std::equal(a.begin(), a.end(), b.begin(), b.end());
    }

private:
    T* inline_data() noexcept { return std::launder(reinterpret_cast<T*>(_storage)); }
    const T* inline_data() const noexcept { return std::launder(reinterpret_cast<const T*>(_storage)); }

    void check_index(size_t i) const {
        if (i >= _size) {
            throw std::out_of_range("small_vector::at: index " + std::to_string(i) + " of " + std::to_string(_size));
        }
    }
    size_t grown(size_t need) const noexcept { return std::max(need, size_t(_capacity) * 2); }

    // Moves the elements to a block of capacity n (inline when n fits there), n >= size.
    void reallocate(size_t n) {
        if (n > UINT32_MAX) {
            throw std::length_error("small_vector: too many elements");
        }
        T* to = n <= N ? inline_data() : std::allocator<T>().allocate(n);
        if (to == _begin) {
            return;
        }
        std::uninitialized_move(begin(), end(), to);
        std::destroy(begin(), end());
        free_heap();
        _begin = to;
        _capacity = uint32_t(n <= N ? N : n);
    }
    void free_heap() noexcept {
        if (!is_inline()) {
            std::allocator<T>().deallocate(_begin, _capacity);
        }
    }
    void release() noexcept {
        std::destroy(begin(), end());
        free_heap();
    }
    // From an empty inline state, o's elements (its block when spilled); o is left empty and inline.
    void take(small_vector&& o) noexcept {
        if (o.is_inline()) {
            std::uninitialized_move(o.begin(), o.end(), inline_data());
            std::destroy(o.begin(), o.end());
            _size = o._size;
        } else {
            _begin = o._begin;
            _size = o._size;
            _capacity = o._capacity;
            o._begin = o.inline_data();
            o._capacity = N;
        }
        o._size = 0;
    }

    T* _begin = inline_data();
    uint32_t _size = 0;
    uint32_t _capacity = N;
    alignas(T) unsigned char _storage[N * sizeof(T)];
};

} // namespace reef::utils
