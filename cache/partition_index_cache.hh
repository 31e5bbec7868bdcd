// partition_index_cache: parsed index pages by summary index, on a cache_tracker's LRU and budget.
// One load per key however many ask; a failed load reaches every waiter and caches nothing.
#pragma once

#include "cache/tracker.hh"
#include "runtime/future.hh"
#include "runtime/waiter_list.hh"

#include <cstddef>
#include <cstdint>
#include <exception>
#include <optional>
#include <utility>
#include <vector>

namespace reef::cache {

class index_cache_base;

namespace detail {

// The untyped part of an entry: its state, pins and waiters. An entry is
// loading (neither ready nor failed), ready, or failed (then already
// detached). It lives while it is in its cache's map or pinned.
class index_entry : public lru_item {
public:
    index_entry(index_cache_base* owner, uint64_t key) noexcept : owner(owner), key(key) {}
    ~index_entry() override = default;

    void pin() noexcept;
    void unpin() noexcept;
    void on_evict() noexcept override;

    index_cache_base* owner;  // null once detached
    uint64_t key;
    unsigned pins = 0;
    bool ready = false;
    std::exception_ptr error;
    internal::waiter_list waiters;
};

} // namespace detail

// The part of partition_index_cache that does not depend on the page type.
class index_cache_base {
public:
    explicit index_cache_base(cache_tracker& tracker) noexcept : _tracker(tracker) {}
    index_cache_base(const index_cache_base&) = delete;
    index_cache_base& operator=(const index_cache_base&) = delete;
    // Forgets every entry (pinned ones live on until released).
    ~index_cache_base() { invalidate(); }

    cache_tracker& tracker() noexcept { return _tracker; }
    const index_cache_stats& stats() const noexcept { return _stats; }
    // Entries in memory or loading.
    size_t entries() const noexcept { return _count; }
    bool contains(uint64_t key) const noexcept { return find(key); }
    // Forgets every entry now: unpinned ones are freed, pinned ones when
    // released. Loads in flight complete for their waiters only.
    void invalidate() noexcept;

protected:
    enum class lookup { hit, miss, block };
    // The entry for key, made by make() (and charged) if absent; counted.
    template <typename Make>
    std::pair<detail::index_entry*, lookup> find_or_insert(uint64_t key, size_t entry_size, Make make);
    // The load of e ended: charge its page's memory, or detach it on error;
    // wakes the waiters.
    void loaded(detail::index_entry& e, size_t page_memory, std::exception_ptr ex) noexcept;
    // Waits until e is loaded; rethrows the load's error.
    static future<> wait_for(detail::index_entry& e);
    static size_t entry_overhead(size_t entry_size) noexcept { return entry_size + 4 * sizeof(void*); }

private:
    friend class detail::index_entry;
    void detach(detail::index_entry* e) noexcept;
    void count(lookup how) noexcept;

    detail::index_entry* find(uint64_t key) const noexcept { return key < _slots.size() ? _slots[key] : nullptr; }
    void erase(uint64_t key) noexcept;

    cache_tracker& _tracker;
    // The entry of each key, or null: summary indexes are small and dense, so a slot per index up to the largest
    // asked for (8 bytes a summary entry at most) finds an entry in one load, where a hash map chased two pointers.
    std::vector<detail::index_entry*> _slots;
    size_t _count = 0;
    index_cache_stats _stats;
};

// Asks a page for its memory: Page::memory_usage() by default.
struct page_memory_usage {
    template <typename Page>
    size_t operator()(const Page& p) const noexcept {
        return p.memory_usage();
    }
};

// Keys are summary indexes (small: a cache keeps a slot for each key up to
// the largest). An entry_ptr pins its entry: while one lives the entry is
// off the LRU and its page stays valid, even after eviction of everything
// else, invalidation or the cache's destruction. The tracker must outlive
// the cache, and the cache the get_or_load calls in progress on it (their
// loaders run in the caller's coroutine; a lookup waiting for another's
// load holds only the entry).
template <typename Page, typename Sizer = page_memory_usage>
class partition_index_cache : public index_cache_base {
    struct entry final : detail::index_entry {
        using detail::index_entry::index_entry;
        std::optional<Page> page;
    };

public:
    explicit partition_index_cache(cache_tracker& tracker = shard_cache_tracker(), Sizer sizer = {})
        : index_cache_base(tracker), _sizer(std::move(sizer)) {}

    class entry_ptr {
    public:
        entry_ptr() noexcept = default;
        entry_ptr(const entry_ptr& o) noexcept : _e(o._e) {
            if (_e) {
                _e->pin();
            }
        }
        entry_ptr(entry_ptr&& o) noexcept : _e(std::exchange(o._e, nullptr)) {}
        entry_ptr& operator=(entry_ptr o) noexcept {
            std::swap(_e, o._e);
            return *this;
        }
        ~entry_ptr() {
            if (_e) {
                _e->unpin();
            }
        }
        const Page& operator*() const noexcept { return *_e->page; }
        const Page* operator->() const noexcept { return &*_e->page; }
        explicit operator bool() const noexcept { return _e; }
        uint64_t key() const noexcept { return _e->key; }

    private:
        friend class partition_index_cache;
        explicit entry_ptr(entry* e) noexcept : _e(e) { _e->pin(); }
        entry* _e = nullptr;
    };

    // The page for key: the cached one, the one another lookup is loading
    // (waited for), or the result of loader() (a callable returning
    // future<Page> or Page), which runs at most once at a time per key.
    template <typename Loader>
    future<entry_ptr> get_or_load(uint64_t key, Loader loader) {
        auto [e, how] = find_or_insert(key, sizeof(entry), [this, key] { return new entry(this, key); });
        entry_ptr p(static_cast<entry*>(e));
        switch (how) {
        case lookup::hit:
            return make_ready_future<entry_ptr>(std::move(p));
        case lookup::block:
            return wait(std::move(p));
        case lookup::miss:
            break;
        }
        return load(std::move(p), std::move(loader));
    }

private:
    static future<entry_ptr> wait(entry_ptr p) {
        co_await wait_for(*p._e);
        co_return p;
    }

    template <typename Loader>
    future<entry_ptr> load(entry_ptr p, Loader loader) {
        std::exception_ptr ex;
        size_t memory = 0;
        try {
            auto page_future = futurize_invoke(loader);
            Page page = co_await std::move(page_future);
            p._e->page.emplace(std::move(page));
            memory = _sizer(*p._e->page);
        } catch (...) {
            ex = std::current_exception();
        }
        loaded(*p._e, memory, ex);
        if (ex) {
            std::rethrow_exception(ex);
        }
        co_return p;
    }

    Sizer _sizer;
};

template <typename Make>
std::pair<detail::index_entry*, index_cache_base::lookup> index_cache_base::find_or_insert(uint64_t key,
                                                                                         size_t entry_size, Make make) {
    if (auto* e = find(key)) {
        auto how = e->ready ? lookup::hit : lookup::block;
        count(how);
        return {e, how};
    }
    if (key >= _slots.size()) {
        _slots.resize(key + 1);  // throws before anything is made
    }
    detail::index_entry* e = make();
    _slots[key] = e;
    ++_count;
    count(lookup::miss);
    _tracker.lru().charge(*e, entry_overhead(entry_size));
    return {e, lookup::miss};
}

} // namespace reef::cache
