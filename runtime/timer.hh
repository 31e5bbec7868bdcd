// timer: a callback run on this shard's loop at a deadline (once or periodically).
// Armed timers belong to the shard that armed them; destroying one cancels it.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <optional>

namespace reef {

using steady_clock_type = std::chrono::steady_clock;

class timer {
public:
    using clock = steady_clock_type;
    using callback = std::function<void()>;

    timer() = default;
    explicit timer(callback cb) : _cb(std::move(cb)) {}
    timer(const timer&) = delete;
    timer& operator=(const timer&) = delete;
    ~timer() { cancel(); }

    void set_callback(callback cb) { _cb = std::move(cb); }
    // Arming an armed timer moves its deadline.
    void arm(clock::time_point when, std::optional<clock::duration> period = std::nullopt);
    void arm(clock::duration delta) { arm(clock::now() + delta); }
    void arm_periodic(clock::duration period) { arm(clock::now() + period, period); }
    void rearm(clock::time_point when) { arm(when, _period); }
    // Returns true if the timer was armed.
    bool cancel() noexcept;
    bool armed() const noexcept { return _armed; }
    clock::time_point get_timeout() const noexcept { return _when; }

private:
    friend class reactor;
    callback _cb;
    clock::time_point _when{};
    std::optional<clock::duration> _period;
    bool _armed = false;
    std::multimap<clock::time_point, timer*>::iterator _pos;
};

} // namespace reef
