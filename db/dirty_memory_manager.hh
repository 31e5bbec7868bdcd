// dirty_memory_manager: one shard's budget for memtable memory ("dirty" memory: what memtables hold until their
// flush ends): above the soft limit it flushes the largest memtable, at the hard limit writes wait for memory.
// Promises: a write waits (never fails) only while dirty memory and admitted writes' reservations reach the hard
// limit; nothing a flush needs waits for memory, so flushes progress and waiting writes resume.
#pragma once

#include "runtime/condition_variable.hh"
#include "runtime/future.hh"
#include "runtime/gate.hh"
#include "runtime/metrics.hh"

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace reef {

// What the manager flushes: a table (db/table.hh) while it is started.
class dirty_memory_flushable {
public:
    virtual ~dirty_memory_flushable() = default;
    // Dirty bytes of the active memtable (what a flush would seal) and of the sealed ones (being or to be flushed).
    virtual size_t active_dirty_bytes() const noexcept = 0;
    virtual size_t sealed_dirty_bytes() const noexcept = 0;
    // Seals the active memtable and flushes every sealed one; its memory is released as each flush ends.
    virtual future<> flush_for_memory() = 0;
};

struct dirty_memory_stats {
    uint64_t flushes = 0;         // flushes the manager asked for
    uint64_t failed_flushes = 0;  // of which failed (retried after a pause)
    uint64_t blocked_writes = 0;  // writes that waited at the hard limit (ScyllaDB's requests_blocked_memory)
    size_t peak_dirty = 0;        // the most dirty memory seen (tests compare it with the hard limit)
};

class dirty_memory_manager;

// A write's admission: the bytes reserved for it until it is applied (or given up). Move-only.
class dirty_memory_reservation {
public:
    dirty_memory_reservation() noexcept = default;
    dirty_memory_reservation(dirty_memory_manager* m, size_t bytes) noexcept : _m(m), _bytes(bytes) {}
    dirty_memory_reservation(dirty_memory_reservation&& o) noexcept
        : _m(std::exchange(o._m, nullptr)), _bytes(std::exchange(o._bytes, 0)) {}
    dirty_memory_reservation& operator=(dirty_memory_reservation&& o) noexcept;
    ~dirty_memory_reservation() { release(); }
    void release() noexcept;

private:
    dirty_memory_manager* _m = nullptr;
    size_t _bytes = 0;
};

class dirty_memory_manager {
public:
    // ScyllaDB's defaults: writes wait at half the shard's memory, flushes start at 60% of that
    // (unspooled_dirty_soft_limit). Throws std::invalid_argument naming a bad parameter.
    static constexpr double default_soft_limit_fraction = 0.6;
    dirty_memory_manager(std::string name, size_t hard_limit, double soft_limit_fraction = default_soft_limit_fraction);
    dirty_memory_manager(const dirty_memory_manager&) = delete;
    ~dirty_memory_manager();

    // Starts the flusher on this shard; stop() ends it (and wakes and fails nothing: writes still waiting keep
    // waiting for memory a flush or a dropped memtable frees). Call stop() before destruction.
    void start();
    future<> stop();

    void register_flushable(dirty_memory_flushable& f);
    void unregister_flushable(dirty_memory_flushable& f) noexcept;

    // Memtables' accounting (memtable.hh): growth of an active or a sealed memtable, an active one sealed, a
    // memtable's bytes released (flushed, or dropped).
    void grow(size_t bytes, bool sealed) noexcept;
    void seal(size_t bytes) noexcept;
    void release(size_t bytes, bool sealed) noexcept;

    // Waits while dirty memory plus the reservations of admitted writes is at or above the hard limit (in arrival
    // order), then reserves `bytes` for the write (memtable::apply_bound) until the reservation dies.
    future<dirty_memory_reservation> reserve(size_t bytes);

    size_t dirty() const noexcept { return _dirty; }
    // Dirty memory not being flushed yet (ScyllaDB's "unspooled"): the active memtables'.
    size_t unspooled() const noexcept { return _dirty - _sealed; }
    size_t reserved() const noexcept { return _reserved; }
    size_t hard_limit() const noexcept { return _hard_limit; }
    size_t soft_limit() const noexcept { return _soft_limit; }
    size_t blocked_writes_now() const noexcept { return _blocked_now; }
    const dirty_memory_stats& stats() const noexcept { return _stats; }
    const std::string& name() const noexcept { return _name; }

private:
    friend class dirty_memory_reservation;
    void unreserve(size_t bytes) noexcept;
    bool over_hard_limit() const noexcept { return _dirty + _reserved >= _hard_limit; }
    bool needs_flush() const noexcept;
    dirty_memory_flushable* pick_victim() const noexcept;
    future<> run_flusher();

    std::string _name;
    size_t _hard_limit;
    size_t _soft_limit;
    size_t _dirty = 0;
    size_t _sealed = 0;
    size_t _reserved = 0;
    size_t _blocked_now = 0;
    uint64_t _next_ticket = 0;
    uint64_t _serving = 0;
    std::vector<dirty_memory_flushable*> _flushables;
    bool _stopping = false;
    bool _started = false;
    condition_variable _wake_flusher;
    condition_variable _memory_freed;
    gate _flusher;
    dirty_memory_stats _stats;
};

// The shard's dirty memory as metrics, under ScyllaDB's names where it has one (group memory: dirty_bytes,
// unspooled_dirty_bytes, regular_/system_ variants; group database: requests_blocked_memory,
// requests_blocked_memory_current). The managers must outlive the registration.
metrics::metric_groups register_dirty_memory_metrics(const dirty_memory_manager& regular,
                                                     const dirty_memory_manager& system);

} // namespace reef
