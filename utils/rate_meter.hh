// rate_meter: Dropwizard's Meter, whose figures Cassandra's and ScyllaDB's REST "moving averages" report: a count and
// the exponentially weighted 1, 5 and 15 minute rates, ticked every 5 s lazily (when marked or read), in events/s.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>

namespace reef::utils {

class rate_meter {
public:
    using clock = std::chrono::steady_clock;
    static constexpr std::chrono::seconds tick_interval{5};

    explicit rate_meter(clock::time_point start = clock::now()) noexcept : _start(start), _last_tick(start) {}

    // n events at `now` (now never goes back: an earlier time counts as the last tick's).
    void mark(uint64_t n = 1, clock::time_point now = clock::now()) noexcept;

    struct figures {
        // Per second, over 1, 5 and 15 minutes.
        std::array<double, 3> rates{};
        // count / seconds since the meter started (0 in its first instant).
        double mean_rate = 0;
        uint64_t count = 0;
    };
    // The figures at `now` (ticking first, as Dropwizard's getters do).
    figures read(clock::time_point now = clock::now()) noexcept;

    // Another meter's figures added to these (the sum over shards, as ScyllaDB's REST API adds them up).
    static figures add(const figures& a, const figures& b) noexcept;

private:
    void tick_if_necessary(clock::time_point now) noexcept;

    clock::time_point _start;
    clock::time_point _last_tick;
    uint64_t _count = 0;
    uint64_t _uncounted = 0;
    std::array<double, 3> _rates{};
    bool _initialized = false;
};

} // namespace reef::utils
