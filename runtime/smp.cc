// The grid of single-producer single-consumer rings behind smp::submit_to.
// Ring [a][b] is written only by shard a's thread and read only by shard b's.
#include "runtime/smp.hh"

#include <array>
#include <deque>
#include <memory>
#include <thread>

namespace reef::internal {

namespace {

class spsc_ring {
public:
    static constexpr size_t capacity = 1024;

    bool try_push(smp_message* m) noexcept {
        size_t tail = _tail.load(std::memory_order_relaxed);
        if (tail - _head_cache == capacity) {
            _head_cache = _head.load(std::memory_order_acquire);
            if (tail - _head_cache == capacity) {
                return false;
            }
        }
        _items[tail & (capacity - 1)] = m;
        _tail.store(tail + 1, std::memory_order_release);
        return true;
    }

    // Consumer side. Pops up to max messages into out.
    size_t pop(smp_message** out, size_t max) noexcept {
        size_t head = _head.load(std::memory_order_relaxed);
        if (head == _tail_cache) {
            _tail_cache = _tail.load(std::memory_order_acquire);
            if (head == _tail_cache) {
                return 0;
            }
        }
        size_t n = std::min(max, _tail_cache - head);
        for (size_t i = 0; i < n; ++i) {
            out[i] = _items[(head + i) & (capacity - 1)];
        }
        _head.store(head + n, std::memory_order_release);
        return n;
    }

    bool empty_for_consumer() const noexcept {
        return _head.load(std::memory_order_relaxed) == _tail.load(std::memory_order_acquire);
    }

private:
    // Consumer-owned line.
    alignas(64) std::atomic<size_t> _head{0};
    size_t _tail_cache = 0;
    // Producer-owned line.
    alignas(64) std::atomic<size_t> _tail{0};
    size_t _head_cache = 0;
    alignas(64) std::array<smp_message*, capacity> _items{};
};

// What the producer side of one ring parks when the ring is full; only the
// producer's thread touches it.
struct outgoing {
    std::deque<smp_message*> parked;
};

struct smp_grid {
    unsigned n = 0;
    std::unique_ptr<spsc_ring[]> rings;      // n * n, [from * n + to]
    std::unique_ptr<outgoing[]> parked;      // n * n, same index
    std::vector<reactor*> reactors;

    spsc_ring& ring(shard_id from, shard_id to) { return rings[from * n + to]; }
    outgoing& out(shard_id from, shard_id to) { return parked[from * n + to]; }
};

smp_grid* grid = nullptr;

// Delivers parked messages from `from` to `to` in order; true if all went.
bool flush_parked(shard_id from, shard_id to) noexcept {
    auto& o = grid->out(from, to);
    bool pushed = false;
    while (!o.parked.empty() && grid->ring(from, to).try_push(o.parked.front())) {
        o.parked.pop_front();
        pushed = true;
    }
    if (pushed) {
        grid->reactors[to]->wakeup();
    }
    return o.parked.empty();
}

} // namespace

void smp_configure(unsigned n, std::vector<reactor*> reactors) {
    auto* g = new smp_grid;
    g->n = n;
    g->rings = std::make_unique<spsc_ring[]>(size_t(n) * n);
    g->parked = std::make_unique<outgoing[]>(size_t(n) * n);
    g->reactors = std::move(reactors);
    grid = g;
}

void smp_cleanup() {
    delete grid;
    grid = nullptr;
}

void smp_send(smp_message* m) noexcept {
    shard_id from = m->_replied ? m->_to : m->_from;
    shard_id to = m->_replied ? m->_from : m->_to;
    auto& o = grid->out(from, to);
    // Once something is parked, later messages queue behind it so the
    // target sees them in the order they were sent.
    if (o.parked.empty() && grid->ring(from, to).try_push(m)) {
        grid->reactors[to]->wakeup();
        return;
    }
    o.parked.push_back(m);
}

bool smp_poll(shard_id me) {
    bool did = false;
    for (shard_id other = 0; other < grid->n; ++other) {
        if (other == me) {
            continue;
        }
        if (!grid->out(me, other).parked.empty()) {
            flush_parked(me, other);
            did = true;
        }
        smp_message* batch[64];
        size_t n;
        while ((n = grid->ring(other, me).pop(batch, std::size(batch))) != 0) {
            did = true;
            for (size_t i = 0; i < n; ++i) {
                smp_message* m = batch[i];
                if (m->_replied) {
                    m->complete_on_source();
                } else {
                    m->run_on_target();
                }
            }
        }
    }
    return did;
}

bool smp_pending(shard_id me) noexcept {
    for (shard_id other = 0; other < grid->n; ++other) {
        if (other == me) {
            continue;
        }
        if (!grid->ring(other, me).empty_for_consumer() || !grid->out(me, other).parked.empty()) {
            return true;
        }
    }
    return false;
}

void smp_drain_outgoing(shard_id me) noexcept {
    for (shard_id other = 0; other < grid->n; ++other) {
        if (other == me) {
            continue;
        }
        while (!flush_parked(me, other)) {
            std::this_thread::yield();
        }
    }
}

} // namespace reef::internal
