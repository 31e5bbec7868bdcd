// The intrusive LRU and its budget. See lru.hh.
#include "cache/lru.hh"

#include <cassert>
#include <utility>

namespace reef::cache {

lru_item::~lru_item() {
    if (_lru) {
        _lru->unlink(*this);
        _lru->discharge(*this);
    }
}

lru::~lru() {
    evict_all();
    // Pinned items outliving their lru are a bug of the cache owning them.
    assert(_charged_count == 0);
}

void lru::charge(lru_item& item, size_t bytes) noexcept {
    assert(!item._lru || item._lru == this);
    if (!item._lru) {
        item._lru = this;
        ++_charged_count;
    }
    item._charged += bytes;
    _used += bytes;
}

void lru::discharge(lru_item& item) noexcept {
    if (item._lru != this) {
        return;
    }
    assert(!item._linked);
    _used -= item._charged;
    item._charged = 0;
    item._lru = nullptr;
    --_charged_count;
}

void lru::release(lru_item& item, size_t bytes) noexcept {
    assert(item._lru == this);
    bytes = bytes < item._charged ? bytes : item._charged;
    item._charged -= bytes;
    _used -= bytes;
}

void lru::link_coldest(lru_item& item) noexcept {
    if (item._linked) {
        unlink(item);
    }
    item._prev = &_head;
    item._next = _head._next;
    _head._next->_prev = &item;
    _head._next = &item;
    item._linked = true;
    ++_linked_count;
}

void lru::link(lru_item& item) noexcept {
    if (item._linked) {
        touch(item);
    } else {
        item._prev = _head._prev;
        item._next = &_head;
        _head._prev->_next = &item;
        _head._prev = &item;
        item._linked = true;
        ++_linked_count;
    }
    evict_to_budget();
}

void lru::unlink(lru_item& item) noexcept {
    if (!item._linked) {
        return;
    }
    item._prev->_next = item._next;
    item._next->_prev = item._prev;
    item._prev = item._next = nullptr;
    item._linked = false;
    --_linked_count;
}

void lru::touch(lru_item& item) noexcept {
    if (!item._linked || _head._prev == &item) {
        return;
    }
    unlink(item);
    item._prev = _head._prev;
    item._next = &_head;
    _head._prev->_next = &item;
    _head._prev = &item;
    item._linked = true;
    ++_linked_count;
}

template <typename Pred>
void lru::evict_while(Pred pred) noexcept {
    if (_evicting) {
        return;
    }
    _evicting = true;
    while (pred() && _head._next != &_head) {
        lru_item* victim = _head._next;
        unlink(*victim);
        ++_stats.evictions;
        // Gives the charge back (usually by destroying victim).
        victim->on_evict();
    }
    _evicting = false;
}

void lru::evict_to_budget() noexcept {
    evict_while([this] { return _used > _budget; });
}

void lru::evict_all() noexcept {
    evict_while([] { return true; });
}

} // namespace reef::cache
