// compaction_strategy: STCS and TWCS bucketing, expiry and tombstone candidates.
#include "compaction/compaction_strategy.hh"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

namespace reef::compaction {

namespace {

uint64_t total_size(const std::vector<candidate>& b) {
    return std::accumulate(b.begin(), b.end(), uint64_t(0), [](uint64_t s, const candidate& c) { return s + c.size; });
}

bool overlaps(const candidate& a, const candidate& b) {
    return a.first_token <= b.last_token && b.first_token <= a.last_token;
}

std::vector<uint64_t> ids_of(const std::vector<candidate>& v) {
    std::vector<uint64_t> out;
    for (auto& c : v) {
        out.push_back(c.id);
    }
    return out;
}

// The sstables the strategy chooses among: the expired ones are handled first and left out here.
std::optional<compaction_job> tombstone_job(const std::vector<candidate>& sstables, const strategy_input& in,
                                            const compaction_options& o) {
    const candidate* best = nullptr;
    for (auto& c : sstables) {
        if (worth_dropping_tombstones(c, in, o) &&
            (!best || c.droppable_tombstone_ratio > best->droppable_tombstone_ratio)) {
            best = &c;
        }
    }
    if (!best) {
        return std::nullopt;
    }
    return compaction_job{job_kind::tombstone, {best->id}};
}

std::optional<compaction_job> size_tiered_job(const std::vector<candidate>& sstables, const compaction_options& o) {
    auto bucket = most_interesting_bucket(size_tiered_buckets(sstables, o), o.min_threshold, o.max_threshold);
    if (bucket.empty()) {
        return std::nullopt;
    }
    return compaction_job{job_kind::regular, ids_of(bucket)};
}

struct backlog {
    int64_t tasks = 0;
    uint64_t bytes = 0;
    void add(const std::vector<candidate>& b, const compaction_options& o) {
        tasks += int64_t((b.size() + o.max_threshold - 1) / o.max_threshold);
        bytes += total_size(b);
    }
};

void size_tiered_backlog(const std::vector<candidate>& sstables, const compaction_options& o, backlog& out) {
    for (auto& b : size_tiered_buckets(sstables, o)) {
        if (b.size() >= size_t(o.min_threshold)) {
            out.add(b, o);
        }
    }
}

// Windows, newest first.
std::map<int64_t, std::vector<candidate>, std::greater<>> windows_of(const std::vector<candidate>& sstables,
                                                                     const compaction_options& o) {
    std::map<int64_t, std::vector<candidate>, std::greater<>> out;
    for (auto& c : sstables) {
        out[window_start(o, c.max_timestamp)].push_back(c);
    }
    return out;
}

std::vector<candidate> smallest(std::vector<candidate> v, size_t n) {
    std::stable_sort(v.begin(), v.end(), [](auto& a, auto& b) { return a.size < b.size; });
    if (v.size() > n) {
        v.resize(n);
    }
    return v;
}

std::optional<compaction_job> time_window_job(const std::vector<candidate>& sstables, const compaction_options& o) {
    auto windows = windows_of(sstables, o);
    bool newest = true;
    for (auto& [start, b] : windows) {
        if (newest) {
            newest = false;
            if (b.size() >= size_t(o.min_threshold)) {
                if (auto job = size_tiered_job(b, o)) {
                    return job;
                }
            }
        } else if (b.size() >= 2) {
            return compaction_job{job_kind::regular, ids_of(smallest(b, size_t(o.max_threshold)))};
        }
    }
    return std::nullopt;
}

} // namespace

std::vector<std::vector<candidate>> size_tiered_buckets(std::vector<candidate> sstables, const compaction_options& o) {
    std::stable_sort(sstables.begin(), sstables.end(), [](auto& a, auto& b) { return a.size < b.size; });
    struct bucket {
        double average = 0;
        std::vector<candidate> members;
    };
    std::vector<bucket> buckets;
    for (auto& c : sstables) {
        double size = double(c.size);
        auto min_size = double(o.min_sstable_size);
        bucket* home = nullptr;
        for (auto& b : buckets) {
            if ((size > b.average * o.bucket_low && size < b.average * o.bucket_high) ||
                (size < min_size && b.average < min_size)) {
                home = &b;
                break;
            }
        }
        if (!home) {
            buckets.push_back({size, {c}});
            continue;
        }
        home->members.push_back(c);
        home->average = double(total_size(home->members)) / double(home->members.size());
    }
    std::vector<std::vector<candidate>> out;
    for (auto& b : buckets) {
        out.push_back(std::move(b.members));
    }
    return out;
}

std::vector<candidate> most_interesting_bucket(const std::vector<std::vector<candidate>>& buckets, int min_threshold,
                                               int max_threshold) {
    std::vector<candidate> best;
    for (auto& b : buckets) {
        if (b.size() < size_t(min_threshold)) {
            continue;
        }
        auto trimmed = smallest(b, size_t(max_threshold));
        if (best.empty() || trimmed.size() > best.size() ||
            (trimmed.size() == best.size() && total_size(trimmed) < total_size(best))) {
            best = std::move(trimmed);
        }
    }
    return best;
}

std::vector<uint64_t> fully_expired(const strategy_input& in) {
    std::vector<const candidate*> expired_candidates, others;
    for (auto& c : in.sstables) {
        (c.max_local_deletion_time < in.gc_before ? expired_candidates : others).push_back(&c);
    }
    for (auto& c : in.compacting) {
        others.push_back(&c);
    }
    std::vector<uint64_t> out;
    for (auto* c : expired_candidates) {
        int64_t oldest_other = in.memtable_min_timestamp;
        for (auto* o : others) {
            if (overlaps(*c, *o)) {
                oldest_other = std::min(oldest_other, o->min_timestamp);
            }
        }
        if (c->max_timestamp < oldest_other) {
            out.push_back(c->id);
        }
    }
    return out;
}

bool worth_dropping_tombstones(const candidate& c, const strategy_input& in, const compaction_options& o) {
    if (c.age_seconds < o.tombstone_compaction_interval || c.droppable_tombstone_ratio <= o.tombstone_threshold) {
        return false;
    }
    if (o.unchecked_tombstone_compaction) {
        return true;
    }
    return non_overlapping_share(c, in) * c.droppable_tombstone_ratio > o.tombstone_threshold;
}

double non_overlapping_share(const candidate& c, const strategy_input& in) {
    // The other sstables' token ranges clipped to c's, then their union's length: tokens are uniform (murmur3),
    // so a share of the range is a share of the keys (Cassandra asks its index summary instead).
    std::vector<std::pair<long double, long double>> covered;
    for (auto* v : {&in.sstables, &in.compacting}) {
        for (auto& x : *v) {
            if (x.id != c.id && overlaps(c, x)) {
                covered.emplace_back(std::max(x.first_token, c.first_token), std::min(x.last_token, c.last_token));
            }
        }
    }
    std::sort(covered.begin(), covered.end());
    long double span = (long double)c.last_token - c.first_token + 1, overlap = 0, end = -INFINITY;
    for (auto [first, last] : covered) {
        first = std::max(first, end + 1);
        if (first <= last) {
            overlap += last - first + 1;
        }
        end = std::max(end, last);
    }
    return double(std::max<long double>(0, 1 - overlap / span));
}

int64_t window_start(const compaction_options& o, int64_t timestamp) {
    // Timestamps in seconds (floor, also for negative ones), then the window's start.
    int64_t per_second = 1000000 / o.timestamp_resolution_micros;
    int64_t seconds = timestamp / per_second - (timestamp % per_second < 0 ? 1 : 0);
    int64_t w = o.window_seconds();
    int64_t rem = seconds % w;
    return seconds - (rem < 0 ? rem + w : rem);
}

std::optional<compaction_job> next_job(const compaction_options& o, const strategy_input& in) {
    if (!o.enabled) {
        return std::nullopt;
    }
    auto expired = fully_expired(in);
    if (!expired.empty()) {
        return compaction_job{job_kind::expired, std::move(expired)};
    }
    std::optional<compaction_job> job;
    if (o.type == strategy_type::time_window) {
        job = time_window_job(in.sstables, o);
    } else {
        job = size_tiered_job(in.sstables, o);
    }
    if (!job) {
        job = tombstone_job(in.sstables, in, o);
    }
    return job;
}

namespace {

backlog backlog_of(const compaction_options& o, const strategy_input& in) {
    backlog out;
    if (!o.enabled) {
        return out;
    }
    if (!fully_expired(in).empty()) {
        out.tasks += 1;
    }
    if (o.type != strategy_type::time_window) {
        size_tiered_backlog(in.sstables, o, out);
        return out;
    }
    bool newest = true;
    for (auto& [start, b] : windows_of(in.sstables, o)) {
        if (newest) {
            newest = false;
            size_tiered_backlog(b, o, out);
        } else if (b.size() >= 2) {
            out.add(b, o);
        }
    }
    return out;
}

} // namespace

int64_t pending_tasks(const compaction_options& o, const strategy_input& in) { return backlog_of(o, in).tasks; }

uint64_t pending_bytes(const compaction_options& o, const strategy_input& in) { return backlog_of(o, in).bytes; }

int compaction_weight(uint64_t input_bytes) noexcept {
    // floor(log4(bytes)): ScyllaDB's size classes.
    int w = 0;
    for (; input_bytes >= 4; input_bytes /= 4) {
        ++w;
    }
    return w;
}

size_t inputs_with_free_weight(const std::vector<uint64_t>& sizes, const std::set<int>& taken, size_t min_inputs) {
    uint64_t bytes = 0;
    for (auto s : sizes) {
        bytes += s;
    }
    // A job smaller than min_inputs (a time window's two) is taken whole or not at all.
    size_t least = std::min(std::max<size_t>(min_inputs, 1), sizes.size());
    for (size_t n = sizes.size(); n >= least && n > 0; bytes -= sizes[--n]) {
        if (!taken.contains(compaction_weight(bytes))) {
            return n;
        }
    }
    return 0;
}

} // namespace reef::compaction
