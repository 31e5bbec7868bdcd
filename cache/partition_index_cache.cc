// The untyped part of the partition index cache. See partition_index_cache.hh.
#include "cache/partition_index_cache.hh"

#include "runtime/reactor.hh"

namespace reef::cache {

namespace detail {

void index_entry::pin() noexcept {
    if (pins++ == 0 && owner) {
        owner->_tracker.lru().unlink(*this);
    }
}

void index_entry::unpin() noexcept {
    if (--pins) {
        return;
    }
    if (!owner) {
        delete this;
    } else if (ready) {
        // May evict this very entry (nothing else left to evict).
        owner->_tracker.lru().link(*this);
    }
}

void index_entry::on_evict() noexcept {
    ++owner->_stats.evictions;
    ++owner->_tracker.index_stats().evictions;
    owner->erase(key);
    // The page's destructor may release file pages: they only join the LRU
    // while this eviction runs.
    delete this;
}

} // namespace detail

namespace {

struct entry_awaiter {
    detail::index_entry& e;
    internal::waiter w;
    bool await_ready() const noexcept { return e.ready || e.error; }
    void await_suspend(std::coroutine_handle<> h) noexcept {
        w.task.park(h);
        e.waiters.push_back(&w);
    }
    void await_resume() const noexcept {}
};

} // namespace

future<> index_cache_base::wait_for(detail::index_entry& e) {
    if (!e.ready && !e.error) {
        entry_awaiter aw{e, {}};
        co_await aw;
    }
    if (e.error) {
        std::rethrow_exception(e.error);
    }
}

void index_cache_base::count(lookup how) noexcept {
    auto& t = _tracker.index_stats();
    switch (how) {
    case lookup::hit:
        ++_stats.hits;
        ++t.hits;
        break;
    case lookup::miss:
        ++_stats.misses;
        ++t.misses;
        break;
    case lookup::block:
        ++_stats.blocks;
        ++t.blocks;
        break;
    }
}

void index_cache_base::loaded(detail::index_entry& e, size_t page_memory, std::exception_ptr ex) noexcept {
    if (ex) {
        e.error = std::move(ex);
        if (e.owner) {
            detach(&e);
        }
    } else {
        e.ready = true;
        if (e.owner) {
            ++_stats.populations;
            ++_tracker.index_stats().populations;
            _tracker.lru().charge(e, page_memory);
            // e is pinned by its loader: this makes room among the others.
            _tracker.lru().evict_to_budget();
        }
    }
    while (!e.waiters.empty()) {
        e.waiters.pop_front()->task.wake();
    }
}

void index_cache_base::erase(uint64_t key) noexcept {
    _slots[key] = nullptr;
    --_count;
}

void index_cache_base::detach(detail::index_entry* e) noexcept {
    erase(e->key);
    e->owner = nullptr;
    _tracker.lru().unlink(*e);
    _tracker.lru().discharge(*e);
    if (!e->pins) {
        delete e;
    }
}

void index_cache_base::invalidate() noexcept {
    // By index: nothing here may add an entry, but a freed page's destructor runs inside this loop.
    for (size_t key = 0; key < _slots.size(); ++key) {
        if (auto* e = _slots[key]) {
            detach(e);
        }
    }
    _slots.clear();
}

} // namespace reef::cache
