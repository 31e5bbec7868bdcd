// reader_concurrency_semaphore: admits reads (reader permits) while fewer than `count` run and memory is left,
// queueing the others in arrival order; a full queue or a passed deadline fails the admission with a clear error.
#pragma once

#include "reader/reader_permit.hh"
#include "runtime/future.hh"
#include "runtime/waiter_list.hh"

#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <sys/types.h>

namespace reef {

// "reader concurrency semaphore <name>: queue overloaded (<read>)": the queue already held max_queue_length.
class reader_queue_overloaded : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// "reader concurrency semaphore <name>: timed out while waiting for admission (<read>)".
class reader_admission_timed_out : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// The semaphore was stopped (or destroyed) while the read waited.
class reader_semaphore_stopped : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct reader_concurrency_semaphore_stats {
    uint64_t permits_created = 0;  // every permit, admitted or tracking only
    uint64_t admitted = 0;         // admissions granted (at once or after waiting)
    uint64_t queued = 0;           // admissions that had to wait
    uint64_t timed_out = 0;        // admissions whose deadline passed in the queue
    uint64_t rejected = 0;         // admissions refused: queue overloaded
    uint64_t read_timeouts = 0;    // admitted reads that hit their deadline (check_timeout threw)
    uint64_t peak_memory = 0;      // the most memory consumed at once
};

class reader_concurrency_semaphore {
public:
    static constexpr size_t unlimited_queue = std::numeric_limits<size_t>::max();

    // At most `count` admitted reads at once; admission also needs the memory it asks for to be free out of
    // `memory` bytes. `name` appears in every error.
    reader_concurrency_semaphore(size_t count, size_t memory, std::string name,
                                 size_t max_queue_length = unlimited_queue);
    reader_concurrency_semaphore(const reader_concurrency_semaphore&) = delete;
    reader_concurrency_semaphore& operator=(const reader_concurrency_semaphore&) = delete;
    // Fails the waiters (as stop()); permits still alive outlive it, detached (their releases go nowhere).
    ~reader_concurrency_semaphore();

    // Admits a read, consuming one of the count and `memory` bytes (the read's first buffers: an estimate).
    // Admission is immediate when nobody waits, a read slot is free and `memory` bytes are free; else the read
    // waits behind the earlier ones (FIFO: a small read never overtakes a big one). A request larger than
    // everything free is admitted once no other admitted read is alive, so nothing waits forever.
    // Throws reader_queue_overloaded when max_queue_length reads already wait, reader_admission_timed_out when
    // `timeout` passes in the queue. The permit's deadline is `timeout`.
    future<reader_permit> obtain_permit(std::string description, size_t memory,
                                        read_clock::time_point timeout = no_timeout);
    // A permit admitted without waiting and without taking a read slot, whose memory still counts (and so holds
    // back admissions): for reads that must not queue (internal ones, compaction).
    reader_permit make_tracking_only_permit(std::string description, read_clock::time_point timeout = no_timeout);

    // Fails every waiting admission with reader_semaphore_stopped; later obtain_permit calls fail too.
    void stop() noexcept;

    const std::string& name() const noexcept { return _name; }
    size_t initial_count() const noexcept { return _initial_count; }
    size_t initial_memory() const noexcept { return _initial_memory; }
    // What is free now; memory may be negative (admitted reads consume without waiting).
    ssize_t available_count() const noexcept { return _count; }
    int64_t available_memory() const noexcept { return _memory; }
    int64_t consumed_memory() const noexcept { return int64_t(_initial_memory) - _memory; }
    // Admitted reads alive now.
    size_t active_reads() const noexcept { return _initial_count - size_t(_count); }
    // Permits alive now (admitted and tracking only).
    size_t current_permits() const noexcept { return _permits; }
    size_t waiters() const noexcept { return _waiters.size(); }
    const reader_concurrency_semaphore_stats& stats() const noexcept { return _stats; }

private:
    friend struct reader_permit::impl;
    friend class reader_permit;
    struct admission_waiter;
    struct admission_awaiter;

    bool can_admit(size_t memory) const noexcept;
    std::shared_ptr<reader_permit::impl> make_permit(std::string description, read_clock::time_point timeout,
                                                      bool admitted, size_t memory);
    // Admits waiters from the head of the queue while they fit.
    void admit_waiters() noexcept;
    // Called by permits.
    void consume(size_t n) noexcept;
    void release(size_t n) noexcept;
    void release_admission() noexcept;
    void detach(reader_permit::impl* p) noexcept;

    std::string _name;
    size_t _initial_count;
    size_t _initial_memory;
    size_t _max_queue_length;
    ssize_t _count;
    int64_t _memory;
    size_t _permits = 0;
    bool _stopped = false;
    internal::waiter_list _waiters;
    reader_concurrency_semaphore_stats _stats;
    // Live permits, so the destructor can detach them.
    reader_permit::impl* _permit_list = nullptr;
};

} // namespace reef
