// Dropwizard's Meter and EWMA (M1, M5, M15 with alpha = 1 - exp(-5 s / window)): the first tick takes what was
// marked since the last one; the ticks after it, with nothing marked, only decay the rates (done in one step).
#include "utils/rate_meter.hh"

#include <cmath>

namespace reef::utils {

namespace {

constexpr std::array<double, 3> window_minutes{1, 5, 15};

double decay(size_t i, uint64_t ticks) noexcept {
    double seconds = double(ticks) * double(rate_meter::tick_interval.count());
    return std::exp(-seconds / (60.0 * window_minutes[i]));
}

} // namespace

void rate_meter::tick_if_necessary(clock::time_point now) noexcept {
    if (now <= _last_tick) {
        return;
    }
    auto age = now - _last_tick;
    uint64_t ticks = uint64_t(age / tick_interval);
    if (ticks == 0) {
        return;
    }
    _last_tick += tick_interval * ticks;
    // The first tick: the events since the last one, as an instant rate.
    double instant = double(_uncounted) / double(tick_interval.count());
    _uncounted = 0;
    for (size_t i = 0; i < _rates.size(); ++i) {
        if (_initialized) {
            double alpha = 1 - decay(i, 1);
            _rates[i] += alpha * (instant - _rates[i]);
        } else {
            _rates[i] = instant;
        }
        // The other ticks saw nothing: each multiplies the rate by (1 - alpha).
        _rates[i] *= decay(i, ticks - 1);
    }
    _initialized = true;
}

void rate_meter::mark(uint64_t n, clock::time_point now) noexcept {
    tick_if_necessary(now);
    _count += n;
    _uncounted += n;
}

rate_meter::figures rate_meter::read(clock::time_point now) noexcept {
    tick_if_necessary(now);
    figures f;
    f.rates = _rates;
    f.count = _count;
    double seconds = std::chrono::duration<double>(now - _start).count();
    f.mean_rate = seconds > 0 ? double(_count) / seconds : 0;
    return f;
}

rate_meter::figures rate_meter::add(const figures& a, const figures& b) noexcept {
    figures f;
    for (size_t i = 0; i < f.rates.size(); ++i) {
        f.rates[i] = a.rates[i] + b.rates[i];
    }
    f.mean_rate = a.mean_rate + b.mean_rate;
    f.count = a.count + b.count;
    return f;
}

} // namespace reef::utils
