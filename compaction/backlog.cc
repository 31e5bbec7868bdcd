// backlog: the size-tiered backlog estimate, its per-table and normalized forms, the controller's curve.
#include "compaction/backlog.hh"

#include <cmath>
#include <fmt/core.h>
#include <map>
#include <stdexcept>

namespace reef::compaction {

double size_tiered_backlog(const std::vector<uint64_t>& sizes) {
    double total = 0;
    for (auto s : sizes) {
        total += double(s);
    }
    double b = 0;
    for (auto s : sizes) {
        if (s > 0) {
            b += double(s) * std::log(total / double(s)) / std::log(4.0);
        }
    }
    return b;
}

double table_backlog(const compaction_options& o, const std::vector<candidate>& sstables) {
    if (!o.enabled) {
        return 0;
    }
    if (o.type != strategy_type::time_window) {
        std::vector<uint64_t> sizes;
        for (auto& c : sstables) {
            sizes.push_back(c.size);
        }
        return size_tiered_backlog(sizes);
    }
    std::map<int64_t, std::vector<uint64_t>> windows;
    for (auto& c : sstables) {
        windows[window_start(o, c.max_timestamp)].push_back(c.size);
    }
    double b = 0;
    for (auto& [w, sizes] : windows) {
        b += size_tiered_backlog(sizes);
    }
    return b;
}

double normalized_backlog(double backlog, const std::vector<uint64_t>& sizes) {
    double total = 0;
    for (auto s : sizes) {
        total += double(s);
    }
    if (backlog <= 0 || total <= 0) {
        return 0;
    }
    return backlog * double(sizes.size()) / total;
}

std::vector<backlog_controller::control_point> backlog_controller::default_points() {
    return {{0, 50}, {4, 100}, {12, 1000}, {32, 4000}};
}

std::vector<backlog_controller::control_point> backlog_controller::capped_at_half() {
    return {{0, 50}, {4, 100}, {12, 1000}};
}

backlog_controller::backlog_controller(std::vector<control_point> points) : _points(std::move(points)) {
    if (_points.empty()) {
        throw std::invalid_argument("backlog controller: no control point");
    }
    for (size_t i = 1; i < _points.size(); ++i) {
        if (!(_points[i].backlog > _points[i - 1].backlog) || _points[i].shares < _points[i - 1].shares) {
            throw std::invalid_argument(fmt::format("backlog controller: control point {} ({}, {}) does not follow "
                                                    "({}, {}): backlogs must ascend and shares not decrease",
                                                    i, _points[i].backlog, _points[i].shares,
                                                    _points[i - 1].backlog, _points[i - 1].shares));
        }
    }
}

unsigned backlog_controller::shares(double normalized) const noexcept {
    if (!(normalized > _points.front().backlog)) {  // NaN too
        return _points.front().shares;
    }
    for (size_t i = 1; i < _points.size(); ++i) {
        auto& a = _points[i - 1];
        auto& b = _points[i];
        if (normalized <= b.backlog) {
            double f = (normalized - a.backlog) / (b.backlog - a.backlog);
            return a.shares + unsigned(std::lround(f * double(b.shares - a.shares)));
        }
    }
    return _points.back().shares;
}

} // namespace reef::compaction
