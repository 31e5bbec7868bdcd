// The page cache of one file and its data source. See cached_file.hh.
#include "cache/cached_file.hh"

#include "runtime/reactor.hh"
#include "runtime/waiter_list.hh"

#include <deque>
#include <fmt/core.h>
#include <stdexcept>
#include <system_error>
#include <vector>

namespace reef::cache {

namespace detail {

// One page: loading (ready and error unset), ready, or failed (then already
// detached). Lives while it is in its file's map or pinned.
class cached_page final : public lru_item {
public:
    cached_page(cached_file* owner, uint64_t idx, temporary_buffer mem) noexcept
        : owner(owner), idx(idx), mem(std::move(mem)) {}

    void pin() noexcept {
        if (pins++ == 0 && owner) {
            owner->_tracker.lru().unlink(*this);
        }
    }
    void unpin() noexcept {
        if (--pins) {
            return;
        }
        if (!owner) {
            delete this;
        } else if (ready) {
            // May evict this very page (nothing else left to evict).
            owner->_tracker.lru().link(*this);
        }
    }
    static void release_buffer(void* p) noexcept { static_cast<cached_page*>(p)->unpin(); }

    // A buffer over [off, off + n) of the page that pins it while it lives.
    temporary_buffer share(size_t off, size_t n) {
        auto b = temporary_buffer::borrowed(mem.get_write() + off, n, &release_buffer, this);
        pin();
        return b;
    }

    // The read finished: n bytes, or ex.
    void loaded(size_t n, std::exception_ptr ex) noexcept {
        if (owner) {
            --owner->_reads_in_flight;
        }
        if (ex) {
            error = std::move(ex);
            if (owner) {
                owner->detach(this);
            }
        } else {
            len = n;
            ready = true;
            if (owner) {
                ++owner->_stats.page_populations;
                ++owner->_tracker.file_stats().page_populations;
            }
        }
        while (!waiters.empty()) {
            waiters.pop_front()->task.wake();
        }
    }

    void on_evict() noexcept override {
        ++owner->_stats.page_evictions;
        ++owner->_tracker.file_stats().page_evictions;
        owner->_pages.erase(idx);
        delete this;
    }

    cached_file* owner;  // null once detached
    uint64_t idx;
    temporary_buffer mem;  // page_size bytes, aligned for the file
    size_t len = 0;        // bytes of the file in the page (less at its end)
    unsigned pins = 0;
    bool ready = false;
    std::exception_ptr error;
    internal::waiter_list waiters;
};

// A pin on a page.
class page_ptr {
public:
    page_ptr() noexcept = default;
    explicit page_ptr(cached_page* p) noexcept : _p(p) { _p->pin(); }
    page_ptr(page_ptr&& o) noexcept : _p(std::exchange(o._p, nullptr)) {}
    page_ptr& operator=(page_ptr&& o) noexcept {
        if (this != &o) {
            reset();
            _p = std::exchange(o._p, nullptr);
        }
        return *this;
    }
    ~page_ptr() { reset(); }
    void reset() noexcept {
        if (auto* p = std::exchange(_p, nullptr)) {
            p->unpin();
        }
    }
    cached_page* operator->() const noexcept { return _p; }
    cached_page& operator*() const noexcept { return *_p; }
    explicit operator bool() const noexcept { return _p; }

private:
    cached_page* _p = nullptr;
};

namespace {

struct page_awaiter {
    cached_page& p;
    internal::waiter w;
    bool await_ready() const noexcept { return p.ready || p.error; }
    void await_suspend(std::coroutine_handle<> h) noexcept {
        w.task.park(h);
        p.waiters.push_back(&w);
    }
    void await_resume() const noexcept {}
};

// Waits until p is read; rethrows its read's error.
future<> wait_for(const page_ptr& p) {
    if (!p->ready && !p->error) {
        page_awaiter aw{*p, {}};
        co_await aw;
    }
    if (p->error) {
        std::rethrow_exception(p->error);
    }
}

// Reads page p of f (whose cached size is size) and completes it; touches
// nothing but the page, so the cached_file may go away meanwhile.
future<> load(page_ptr p, file f, uint64_t size) {
    uint64_t pos = p->idx * cached_file::page_size;
    size_t want = size_t(std::min<uint64_t>(cached_file::page_size, size - pos));
    std::exception_ptr ex;
    size_t got = 0;
    try {
        got = co_await f.dma_read(pos, p->mem.get_write(), cached_file::page_size);
        if (got < want) {
            throw std::system_error(EIO, std::system_category(),
                                    fmt::format("cached_file {}: the file ends at {}, before its size {}",
                                                f.path(), pos + got, size));
        }
    } catch (...) {
        ex = std::current_exception();
    }
    p->loaded(std::min(got, want), std::move(ex));
}

} // namespace
} // namespace detail

using detail::cached_page;
using detail::page_ptr;

size_t cached_file::page_charge() noexcept {
    // The page, its entry, and the hash node that maps its index to it.
    return page_size + sizeof(cached_page) + 4 * sizeof(void*);
}

cached_file::cached_file(file f, uint64_t size, cache_tracker& tracker)
    : _file(std::move(f)), _size(size), _tracker(tracker) {
    if (page_size % _file.disk_read_dma_alignment() || page_size % _file.memory_dma_alignment()) {
        throw std::invalid_argument(fmt::format("cached_file {}: read alignment {} does not divide the page size {}",
                                                _file.path(), _file.disk_read_dma_alignment(), page_size));
    }
}

cached_file::~cached_file() {
    invalidate();
}

void cached_file::count(lookup how) noexcept {
    auto& t = _tracker.file_stats();
    switch (how) {
    case lookup::hit:
        ++_stats.page_hits;
        ++t.page_hits;
        break;
    case lookup::miss:
        ++_stats.page_misses;
        ++t.page_misses;
        break;
    case lookup::block:
        ++_stats.page_blocks;
        ++t.page_blocks;
        break;
    }
}

page_ptr cached_file::get_or_start(uint64_t idx, lookup* how) {
    if (_closed) {
        throw std::logic_error(fmt::format("cached_file {}: read after close", _file.path()));
    }
    if (auto it = _pages.find(idx); it != _pages.end()) {
        page_ptr p(it->second);
        auto h = p->ready ? lookup::hit : lookup::block;
        count(h);
        if (how) {
            *how = h;
        }
        return p;
    }
    count(lookup::miss);
    if (how) {
        *how = lookup::miss;
    }
    auto* raw = new cached_page(this, idx, _file.allocate_aligned_buffer(page_size));
    try {
        _pages.emplace(idx, raw);
    } catch (...) {
        delete raw;
        throw;
    }
    _tracker.lru().charge(*raw, page_charge());
    page_ptr p(raw);
    // The new page is pinned: this makes room among the others.
    _tracker.lru().evict_to_budget();
    ++_reads_in_flight;
    spawn(detail::load(page_ptr(raw), _file, _size));
    return p;
}

void cached_file::detach(cached_page* p) noexcept {
    _pages.erase(p->idx);
    if (!p->ready && !p->error) {
        --_reads_in_flight;
    }
    p->owner = nullptr;
    _tracker.lru().unlink(*p);
    _tracker.lru().discharge(*p);
    if (!p->pins) {
        delete p;
    }
}

void cached_file::invalidate() noexcept {
    while (!_pages.empty()) {
        detach(_pages.begin()->second);
    }
}

future<> cached_file::close() {
    _closed = true;
    std::vector<page_ptr> loading;
    for (auto& [idx, p] : _pages) {
        if (!p->ready) {
            loading.emplace_back(p);
        }
    }
    invalidate();
    for (auto& p : loading) {
        if (!p->ready && !p->error) {
            detail::page_awaiter aw{*p, {}};
            co_await aw;
        }
    }
}

future<temporary_buffer> cached_file::read(uint64_t pos, size_t len) {
    if (pos >= _size || len == 0) {
        return make_ready_future<temporary_buffer>();
    }
    len = size_t(std::min<uint64_t>(len, _size - pos));
    uint64_t idx = pos / page_size;
    if ((pos + len - 1) / page_size != idx) {
        return read_pages(pos, len);
    }
    auto p = get_or_start(idx);
    size_t off = size_t(pos - idx * page_size);
    if (p->ready) {
        // In memory: no coroutine at all.
        return make_ready_future<temporary_buffer>(p->share(off, len));
    }
    return read_in_page(std::move(p), off, len);
}

future<temporary_buffer> cached_file::read_in_page(page_ptr p, size_t off, size_t len) {
    co_await detail::wait_for(p);
    co_return p->share(off, len);
}

future<temporary_buffer> cached_file::read_pages(uint64_t pos, size_t len) {
    uint64_t first = pos / page_size;
    uint64_t last = (pos + len - 1) / page_size;
    std::vector<page_ptr> pages;
    pages.reserve(last - first + 1);
    for (uint64_t i = first; i <= last; ++i) {
        pages.push_back(get_or_start(i));
    }
    temporary_buffer out(len);
    size_t filled = 0;
    for (auto& p : pages) {
        co_await detail::wait_for(p);
        size_t off = size_t(pos + filled - p->idx * page_size);
        size_t n = std::min(len - filled, p->len - off);
        std::memcpy(out.get_write() + filled, p->mem.get() + off, n);
        filled += n;
        p.reset();
    }
    co_return out;
}

// Hands out the pages of [pos, end) in order, keeping the next few
// requested and pinned in _ahead (consecutive pages from _ahead_first).
class cached_file_source final : public data_source_impl {
public:
    cached_file_source(cached_file& cf, uint64_t offset, uint64_t len, cached_file_source_options opts)
        : _cf(cf), _pos(std::min(offset, cf.size())), _end(std::min(cf.size(), _pos + std::min(len, cf.size() - _pos))),
          _read_ahead(opts.read_ahead) {}

    future<temporary_buffer> get() override {
        if (_pos >= _end) {
            return make_ready_future<temporary_buffer>();
        }
        uint64_t idx = _pos / cached_file::page_size;
        while (!_ahead.empty() && _ahead_first < idx) {
            _ahead.pop_front();
            ++_ahead_first;
        }
        if (_ahead.empty()) {
            _ahead_first = idx;
        }
        uint64_t last = (_end - 1) / cached_file::page_size;
        while (_ahead.size() < 1 + _read_ahead && _ahead_first + _ahead.size() <= last) {
            _ahead.push_back(_cf.get_or_start(_ahead_first + _ahead.size()));
        }
        page_ptr p = std::move(_ahead.front());
        _ahead.pop_front();
        ++_ahead_first;
        if (p->ready) {
            return make_ready_future<temporary_buffer>(hand_out(*p));
        }
        return wait_and_hand_out(std::move(p));
    }

    future<temporary_buffer> skip(uint64_t n) override {
        _pos = std::min<uint64_t>(_end, _pos + std::min<uint64_t>(n, _end - _pos));
        return get();
    }

    future<> close() override {
        _ahead.clear();
        _pos = _end;
        return make_ready_future<>();
    }

private:
    temporary_buffer hand_out(cached_page& p) {
        size_t off = size_t(_pos - p.idx * cached_file::page_size);
        size_t n = size_t(std::min<uint64_t>(p.len - off, _end - _pos));
        _pos += n;
        return p.share(off, n);
    }
    future<temporary_buffer> wait_and_hand_out(page_ptr p) {
        ++engine().io().reads_blocked;
        co_await detail::wait_for(p);
        co_return hand_out(*p);
    }

    cached_file& _cf;
    uint64_t _pos;
    uint64_t _end;
    unsigned _read_ahead;
    std::deque<page_ptr> _ahead;
    uint64_t _ahead_first = 0;
};

data_source cached_file::make_data_source(uint64_t offset, uint64_t len, cached_file_source_options opts) {
    return data_source(std::make_unique<cached_file_source>(*this, offset, len, opts));
}

input_stream cached_file::make_input_stream(uint64_t offset, uint64_t len, cached_file_source_options opts) {
    return input_stream(make_data_source(offset, len, opts));
}

} // namespace reef::cache
