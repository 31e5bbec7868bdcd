// reader_permit: one read's admission ticket and account: the memory its buffers hold (through RAII
// resource_units) and its deadline. Copies share one permit; the last copy to die gives everything back.
#pragma once

#include "runtime/timer.hh"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

namespace reef {

class reader_concurrency_semaphore;

using read_clock = steady_clock_type;
// The deadline of a read that has none.
inline constexpr read_clock::time_point no_timeout = read_clock::time_point::max();

// A read that ran past its deadline: the message names the read and what it was about to read.
class read_timeout_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// A permit comes from a reader_concurrency_semaphore (admitted: it holds one of the semaphore's reads and the
// memory it asked for), or is made without one (`reader_permit()`: no limits, no deadline; what it consumes is
// still counted on the permit). Readers take one as an optional parameter defaulting to the latter, so callers
// that do not care about limits need not change.
//
// Memory is consumed without waiting: a read already admitted must be able to finish, so the semaphore's free
// memory may go negative, and that is what holds back the next admissions. Everything a permit holds (its
// admission, its memory) goes back to the semaphore when the last copy of the permit and the last of its
// resource_units are gone, whatever way the read ended (success, exception, timeout).
class reader_permit {
public:
    class resource_units;

    // A permit with no semaphore and no deadline.
    reader_permit();
    // Also no semaphore, with a description (for messages) and a deadline.
    explicit reader_permit(std::string description, read_clock::time_point timeout = no_timeout);

    const std::string& description() const noexcept;
    read_clock::time_point timeout() const noexcept;
    void set_timeout(read_clock::time_point t) noexcept;
    bool timed_out(read_clock::time_point now = read_clock::now()) const noexcept { return now >= timeout(); }
    // Throws read_timeout_error ("read timed out: <description>, reading <what>") once the deadline has passed.
    // Readers call it before each I/O they start.
    void check_timeout(std::string_view what) const;

    // Charges n bytes to this permit (and its semaphore) until the returned units die.
    resource_units consume_memory(size_t n = 0);
    // Bytes this permit holds now (the admission's estimate included).
    size_t consumed_memory() const noexcept;

    // The semaphore that admitted (or tracks) it; null for a permit without one, or once that semaphore is gone.
    reader_concurrency_semaphore* semaphore() const noexcept;
    // Whether it holds one of its semaphore's concurrent reads.
    bool admitted() const noexcept;

    bool operator==(const reader_permit& o) const noexcept { return _impl == o._impl; }

    struct impl;

private:
    explicit reader_permit(std::shared_ptr<impl> i) noexcept : _impl(std::move(i)) {}
    friend class reader_concurrency_semaphore;

    std::shared_ptr<impl> _impl;
};

// Memory charged to a permit while the object lives (a buffer's bytes, say). Movable, not copyable.
class reader_permit::resource_units {
public:
    resource_units(reader_permit p, size_t memory) noexcept;
    resource_units(resource_units&& o) noexcept;
    resource_units& operator=(resource_units&& o) noexcept;
    resource_units(const resource_units&) = delete;
    ~resource_units();

    size_t memory() const noexcept { return _memory; }
    const reader_permit& permit() const noexcept { return _permit; }
    // Now charges n bytes instead (consuming or giving back the difference).
    void reset(size_t n = 0) noexcept;
    // Takes over o's bytes (o must be of the same permit).
    void add(resource_units&& o);

private:
    reader_permit _permit;
    size_t _memory = 0;
};

} // namespace reef
