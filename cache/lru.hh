// lru: an intrusive least-recently-used list of evictable cache items with a memory budget.
// Charged items count against the budget; only unpinned (linked) items are evicted, coldest first.
#pragma once

#include <cstddef>
#include <cstdint>

namespace reef::cache {

class lru;

// Something a cache can give back: a page, a parsed index page, later a row
// cache entry. An item is charged to an lru for the memory it holds (from
// its creation to its destruction) and sits on that lru's list only while
// nothing uses it; in use it is "pinned" and cannot be evicted.
class lru_item {
public:
    lru_item() noexcept = default;
    lru_item(const lru_item&) = delete;
    lru_item& operator=(const lru_item&) = delete;
    // Leaves the list and gives back its charge.
    virtual ~lru_item();

    bool is_linked() const noexcept { return _linked; }
    size_t charged() const noexcept { return _charged; }
    lru* owner() const noexcept { return _lru; }

protected:
    friend class lru;
    // Called by the lru after it unlinked the item to get its memory back:
    // the item must release its charge now (usually by destroying itself),
    // or, an item that gives back only a part of its memory at a time (a
    // row cache partition, its rows a chunk at a time), release that part
    // (lru::release) and go back to the coldest place (lru::link_coldest).
    // Must not throw, and must not touch other items of the lru.
    virtual void on_evict() noexcept = 0;

private:
    lru_item* _prev = nullptr;
    lru_item* _next = nullptr;
    lru* _lru = nullptr;
    size_t _charged = 0;
    bool _linked = false;
};

struct lru_stats {
    uint64_t evictions = 0;  // items evicted (budget or drop)
};

// One list and one budget; the shard's instance (shard_lru() in
// cache/tracker.hh) is shared by every cache of the shard. Eviction is not
// reentrant: an item evicted while another eviction runs (an index page
// whose destruction unpins file pages) only links items, and the running
// eviction picks them up.
class lru {
public:
    explicit lru(size_t budget) noexcept : _budget(budget) { _head._prev = _head._next = &_head; }
    lru(const lru&) = delete;
    // Evicts what is linked; items still charged (pinned) must be gone
    // already or are detached (their charge forgotten).
    ~lru();

    // Counts bytes of item against the budget (added to what it holds).
    // Does not evict: the item may be pinned by the caller.
    void charge(lru_item& item, size_t bytes) noexcept;
    // Gives back the whole charge of item (which must not be linked).
    void discharge(lru_item& item) noexcept;
    // Gives back `bytes` of item's charge (at most what it holds); it stays charged.
    void release(lru_item& item, size_t bytes) noexcept;

    // Makes item evictable as the most recently used, then evicts down to
    // the budget (which may evict item itself if everything else is gone).
    void link(lru_item& item) noexcept;
    // Makes item evictable as the least recently used, without evicting (the
    // running eviction, if any, takes it next while over the budget).
    void link_coldest(lru_item& item) noexcept;
    // Pins item: takes it off the list (no-op if not linked).
    void unlink(lru_item& item) noexcept;
    // Moves a linked item to the most recently used end.
    void touch(lru_item& item) noexcept;

    // Evicts least recently used items until memory_used() <= budget() or
    // nothing unpinned is left.
    void evict_to_budget() noexcept;
    // Evicts every unpinned item (drop_caches).
    void evict_all() noexcept;

    size_t memory_used() const noexcept { return _used; }
    size_t budget() const noexcept { return _budget; }
    void set_budget(size_t budget) noexcept {
        _budget = budget;
        evict_to_budget();
    }
    size_t linked_items() const noexcept { return _linked_count; }
    size_t charged_items() const noexcept { return _charged_count; }
    const lru_stats& stats() const noexcept { return _stats; }

private:
    // Evicts until pred() is false or the list is empty.
    template <typename Pred>
    void evict_while(Pred pred) noexcept;

    struct sentinel final : lru_item {
        void on_evict() noexcept override {}
    };
    sentinel _head;  // _head._next is the coldest, _head._prev the hottest
    size_t _budget;
    size_t _used = 0;
    size_t _linked_count = 0;
    size_t _charged_count = 0;
    bool _evicting = false;
    lru_stats _stats;
};

} // namespace reef::cache
