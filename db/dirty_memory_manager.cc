// The dirty memory manager: accounting, write admission and the flusher. See dirty_memory_manager.hh.
#include "db/dirty_memory_manager.hh"

#include "runtime/log.hh"
#include "runtime/reactor.hh"

#include <algorithm>
#include <chrono>
#include <stdexcept>

namespace reef {

namespace {
logger dmlog("dirty_memory");
}

dirty_memory_reservation& dirty_memory_reservation::operator=(dirty_memory_reservation&& o) noexcept {
    if (this != &o) {
        release();
        _m = std::exchange(o._m, nullptr);
        _bytes = std::exchange(o._bytes, 0);
    }
    return *this;
}

void dirty_memory_reservation::release() noexcept {
    if (_m) {
        std::exchange(_m, nullptr)->unreserve(std::exchange(_bytes, 0));
    }
}

dirty_memory_manager::dirty_memory_manager(std::string name, size_t hard_limit, double soft_limit_fraction)
    : _name(std::move(name)), _hard_limit(hard_limit) {
    if (hard_limit == 0) {
        throw std::invalid_argument(_name + " dirty memory: the hard limit must be above 0 bytes");
    }
    if (!(soft_limit_fraction > 0 && soft_limit_fraction <= 1)) {
        throw std::invalid_argument(_name + " dirty memory: the soft limit fraction " +
                                    std::to_string(soft_limit_fraction) + " is not in (0, 1]");
    }
    _soft_limit = size_t(double(hard_limit) * soft_limit_fraction);
}

dirty_memory_manager::~dirty_memory_manager() = default;

void dirty_memory_manager::start() {
    if (_started) {
        return;
    }
    _started = true;
    _flusher.enter();
    spawn([this]() -> future<> {
        co_await run_flusher();
        _flusher.leave();
    });
}

future<> dirty_memory_manager::stop() {
    _stopping = true;
    _wake_flusher.broadcast();
    co_await _flusher.close();
}

void dirty_memory_manager::register_flushable(dirty_memory_flushable& f) {
    _flushables.push_back(&f);
    _wake_flusher.broadcast();
}

void dirty_memory_manager::unregister_flushable(dirty_memory_flushable& f) noexcept {
    std::erase(_flushables, &f);
}

void dirty_memory_manager::grow(size_t bytes, bool sealed) noexcept {
    _dirty += bytes;
    if (sealed) {
        _sealed += bytes;
    }
    _stats.peak_dirty = std::max(_stats.peak_dirty, _dirty);
    if (needs_flush()) {
        _wake_flusher.broadcast();
    }
}

void dirty_memory_manager::seal(size_t bytes) noexcept {
    _sealed += bytes;
}

void dirty_memory_manager::release(size_t bytes, bool sealed) noexcept {
    _dirty -= bytes;
    if (sealed) {
        _sealed -= bytes;
    }
    _memory_freed.broadcast();
    _wake_flusher.broadcast();
}

void dirty_memory_manager::unreserve(size_t bytes) noexcept {
    _reserved -= bytes;
    _memory_freed.broadcast();
}

future<dirty_memory_reservation> dirty_memory_manager::reserve(size_t bytes) {
    // Tickets keep arrival order: a write never overtakes one that waits.
    uint64_t ticket = _next_ticket++;
    if (ticket != _serving || over_hard_limit()) {
        ++_stats.blocked_writes;
        ++_blocked_now;
        _wake_flusher.broadcast();
        try {
            co_await _memory_freed.wait([this, ticket] { return ticket == _serving && !over_hard_limit(); });
        } catch (...) {
            --_blocked_now;
            ++_serving;  // the manager is being destroyed: let the others see it too
            _memory_freed.broadcast();
            throw;
        }
        --_blocked_now;
    }
    ++_serving;
    _reserved += bytes;
    // The next in line may fit too.
    _memory_freed.broadcast();
    co_return dirty_memory_reservation(this, bytes);
}

bool dirty_memory_manager::needs_flush() const noexcept {
    // Writes waiting while little is dirty wait for admitted writes' reservations, which end without a flush; with
    // much dirty and little unspooled, sealed memtables are being flushed, or failed to be and need a retry.
    return unspooled() > _soft_limit || (_blocked_now && over_hard_limit() && _dirty >= _soft_limit);
}

dirty_memory_flushable* dirty_memory_manager::pick_victim() const noexcept {
    // Over the soft limit: the largest active memtable (ScyllaDB's choice), so one flush frees the most. At the
    // hard limit with nothing active to flush: the table with the most memory, which retries its sealed memtables
    // (a failed flush leaves them) or waits for the flush in progress.
    dirty_memory_flushable* best = nullptr;
    size_t best_bytes = 0;
    bool soft = unspooled() > _soft_limit;
    for (auto* f : _flushables) {
        size_t b = soft ? f->active_dirty_bytes() : f->active_dirty_bytes() + f->sealed_dirty_bytes();
        if (b > best_bytes) {
            best = f;
            best_bytes = b;
        }
    }
    return best;
}

future<> dirty_memory_manager::run_flusher() {
    while (!_stopping) {
        auto* victim = needs_flush() ? pick_victim() : nullptr;
        if (!victim) {
            co_await _wake_flusher.wait();
            continue;
        }
        ++_stats.flushes;
        bool failed = false;
        try {
            co_await victim->flush_for_memory();
        } catch (const std::exception& e) {
            failed = true;
            dmlog.warn("{}: flush to free memory failed (retried): {}", _name, e.what());
        } catch (...) {
            failed = true;
            dmlog.warn("{}: flush to free memory failed (retried)", _name);
        }
        if (failed) {
            ++_stats.failed_flushes;
            co_await sleep(std::chrono::milliseconds(100));
        }
    }
}

metrics::metric_groups register_dirty_memory_metrics(const dirty_memory_manager& regular,
                                                     const dirty_memory_manager& system) {
    namespace m = metrics;
    m::metric_groups g;
    const auto* r = &regular;
    const auto* s = &system;
    g.add_group("memory", {
        m::make_gauge("dirty_bytes", [r, s] { return int64_t(r->dirty() + s->dirty()); },
                      m::description("memory held by memtables, until their flush ends (regular and system)")),
        m::make_gauge("unspooled_dirty_bytes", [r, s] { return int64_t(r->unspooled() + s->unspooled()); },
                      m::description("memory held by memtables not being flushed yet (regular and system)")),
        m::make_gauge("regular_dirty_bytes", [r] { return int64_t(r->dirty()); },
                      m::description("memory held by the user tables' memtables")),
        m::make_gauge("regular_unspooled_dirty_bytes", [r] { return int64_t(r->unspooled()); },
                      m::description("memory held by the user tables' memtables not being flushed yet")),
        m::make_gauge("system_dirty_bytes", [s] { return int64_t(s->dirty()); },
                      m::description("memory held by the system tables' memtables")),
        m::make_gauge("system_unspooled_dirty_bytes", [s] { return int64_t(s->unspooled()); },
                      m::description("memory held by the system tables' memtables not being flushed yet")),
        m::make_gauge("regular_dirty_soft_limit_bytes", [r] { return int64_t(r->soft_limit()); },
                      m::description("user tables: flushes start above this much unspooled dirty memory")),
        m::make_gauge("regular_dirty_hard_limit_bytes", [r] { return int64_t(r->hard_limit()); },
                      m::description("user tables: writes wait at this much dirty memory")),
    });
    g.add_group("database", {
        m::make_counter("requests_blocked_memory", [r, s] { return r->stats().blocked_writes + s->stats().blocked_writes; },
                        m::description("writes that waited for memtable memory at the hard limit")),
        m::make_gauge("requests_blocked_memory_current", [r, s] { return int64_t(r->blocked_writes_now() + s->blocked_writes_now()); },
                      m::description("writes waiting for memtable memory now")),
        m::make_counter("dirty_memory_flushes", [r, s] { return r->stats().flushes + s->stats().flushes; },
                        m::description("memtable flushes started to free dirty memory")),
    });
    return g;
}

} // namespace reef
