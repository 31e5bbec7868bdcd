// table_stats: one table's local reads and writes on one shard, counted and timed by the database (ScyllaDB's
// column_family_stats reads/writes), for the REST API's per-table metrics. Promises: cheap (a few adds per operation,
// no allocation) and mergeable across shards.
#pragma once

#include "utils/rate_meter.hh"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

namespace reef {

// A latency distribution's summary, in microseconds: what ScyllaDB's REST "hist" reports (count, sum, min, max,
// mean, variance), without its sample of recent values.
struct latency_summary {
    uint64_t count = 0;
    double sum = 0;
    double sum_of_squares = 0;
    double min = 0;
    double max = 0;

    void add(double micros) noexcept {
        min = count ? std::min(min, micros) : micros;
        max = count ? std::max(max, micros) : micros;
        ++count;
        sum += micros;
        sum_of_squares += micros * micros;
    }
    double mean() const noexcept { return count ? sum / double(count) : 0; }
    // The population variance (0 for fewer than two values).
    double variance() const noexcept {
        if (count < 2) {
            return 0;
        }
        double m = mean();
        return std::max(0.0, sum_of_squares / double(count) - m * m);
    }
    // The summary of both sets of values (the shards' summaries of one table).
    static latency_summary merge(const latency_summary& a, const latency_summary& b) noexcept {
        if (!a.count) {
            return b;
        }
        if (!b.count) {
            return a;
        }
        return {a.count + b.count, a.sum + b.sum, a.sum_of_squares + b.sum_of_squares, std::min(a.min, b.min),
                std::max(a.max, b.max)};
    }
};

// One kind of operation: its latencies and its rate.
struct operation_stats {
    latency_summary latency;
    utils::rate_meter meter;

    void record(utils::rate_meter::clock::time_point start, utils::rate_meter::clock::time_point end) noexcept {
        latency.add(std::chrono::duration<double, std::micro>(end - start).count());
        meter.mark(1, end);
    }
};

struct table_stats {
    // Reads of the table on this shard: a query's, a page's or a multi-get's part on this shard, from its start to
    // its last partition read.
    operation_stats reads;
    // Writes applied on this shard (commitlog and memtable), from the write's arrival on the owner shard.
    operation_stats writes;
};

} // namespace reef
