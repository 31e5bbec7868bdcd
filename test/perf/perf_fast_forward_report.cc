// reef perf-fast-forward: the counters read around each read (I/O, index caches, allocations, tasks,
// instructions, idle time), the iterations of a case reduced to their median, and the table (text or JSON).
#include "test/perf/perf_fast_forward.hh"

#include "utils/json_writer.hh"

#include <algorithm>
#include <cmath>
#include <fmt/core.h>

namespace reef::perf::pff {

metrics_snapshot metrics_snapshot::take() {
    metrics_snapshot m;
    auto& tracker = cache::shard_cache_tracker();
    m.io = engine().io();
    m.index = tracker.index_stats();
    m.pages = tracker.file_stats();
    m.allocs = allocations().value_or(0);
    m.tasks = engine().tasks_processed();
    m.instructions = instructions_retired();
    m.cpu_seconds = thread_cpu_seconds();
    m.time = clock_type::now();
    return m;
}

void test_result::expect_fragments(uint64_t expected) {
    if (fragments != expected && !error) {
        error = fmt::format("expected {} fragments, read {}", expected, fragments);
    }
}

void test_result::expect_no_disk_reads() {
    auto reads = after.io.reads - before.io.reads;
    if (reads && !error) {
        error = fmt::format("expected no disk reads (a row cache hit), did {}", reads);
    }
}

namespace {

// One printed row's figures, in the column order below.
struct stats_row {
    double time = 0;
    uint64_t iterations = 0;
    uint64_t frags = 0;
    double frag_rate = 0, mad = 0, max = 0, min = 0;
    double avg_aio = 0;
    uint64_t aio = 0, kib = 0, blocked = 0, dropped = 0;
    uint64_t idx_hit = 0, idx_miss = 0, idx_blk = 0;
    uint64_t c_hit = 0, c_miss = 0, c_blk = 0;
    std::optional<uint64_t> allocs;
    uint64_t tasks = 0;
    std::optional<uint64_t> insns_per_frag;
    double cpu = 0;
};

struct stat_column {
    const char* name;
    int width;
};

const stat_column stat_columns[] = {
    {"time (s)", 10}, {"iterations", 12}, {"frags", 9},  {"frag/s", 10}, {"mad f/s", 10},  {"max f/s", 10},
    {"min f/s", 10},  {"avg aio", 10},    {"aio", 6},    {"(KiB)", 10},  {"blocked", 7},   {"dropped", 7},
    {"idx hit", 8},   {"idx miss", 8},    {"idx blk", 8}, {"c hit", 8},  {"c miss", 8},    {"c blk", 8},
    {"allocs", 9},    {"tasks", 7},       {"insns/f", 7}, {"cpu", 6},
};

std::string opt_text(const std::optional<uint64_t>& v) {
    return v ? std::to_string(*v) : "-";
}

std::vector<std::string> stats_texts(const stats_row& r) {
    return {
        fmt::format("{:.6f}", r.time), std::to_string(r.iterations), std::to_string(r.frags),
        fmt::format("{:.0f}", r.frag_rate), fmt::format("{:.0f}", r.mad), fmt::format("{:.0f}", r.max),
        fmt::format("{:.0f}", r.min), fmt::format("{:.1f}", r.avg_aio), std::to_string(r.aio), std::to_string(r.kib),
        std::to_string(r.blocked), std::to_string(r.dropped), std::to_string(r.idx_hit), std::to_string(r.idx_miss),
        std::to_string(r.idx_blk), std::to_string(r.c_hit), std::to_string(r.c_miss), std::to_string(r.c_blk),
        opt_text(r.allocs), std::to_string(r.tasks), opt_text(r.insns_per_frag), fmt::format("{:.1f}%", r.cpu),
    };
}

using utils::json_writer;

json_writer& number(json_writer& w, double v) {
    return std::isfinite(v) ? w.raw(fmt::format("{}", v)) : w.null();
}

void write_stats_json(json_writer& w, const stats_row& r) {
    auto opt = [&](const char* name, const std::optional<uint64_t>& v) {
        w.key(name);
        if (v) {
            w.value(*v);
        } else {
            w.null();
        }
    };
    number(w.key("time (s)"), r.time);
    w.key("iterations").value(r.iterations);
    w.key("frags").value(r.frags);
    number(w.key("frag/s"), r.frag_rate);
    number(w.key("mad f/s"), r.mad);
    number(w.key("max f/s"), r.max);
    number(w.key("min f/s"), r.min);
    number(w.key("avg aio"), r.avg_aio);
    w.key("aio").value(r.aio);
    w.key("(KiB)").value(r.kib);
    w.key("blocked").value(r.blocked);
    w.key("dropped").value(r.dropped);
    w.key("idx hit").value(r.idx_hit);
    w.key("idx miss").value(r.idx_miss);
    w.key("idx blk").value(r.idx_blk);
    w.key("c hit").value(r.c_hit);
    w.key("c miss").value(r.c_miss);
    w.key("c blk").value(r.c_blk);
    opt("allocs", r.allocs);
    w.key("tasks").value(r.tasks);
    opt("insns/f", r.insns_per_frag);
    number(w.key("cpu"), r.cpu);
}

// A parameter as JSON: a number when it is an integer, else a string.
void write_param(json_writer& w, const std::string& v) {
    bool integer = !v.empty() && v.size() < 19 &&
                   std::all_of(v.begin() + (v[0] == '-' ? 1 : 0), v.end(), [](char c) { return c >= '0' && c <= '9'; }) &&
                   v != "-";
    if (integer) {
        w.raw(v);
    } else {
        w.value(v);
    }
}

uint64_t aio_ops(const test_result& r) {
    return (r.after.io.reads - r.before.io.reads) + (r.after.io.writes - r.before.io.writes);
}

// The median iteration of one read (by frag/s), with the spread of all of them.
stats_row summarize(std::vector<test_result> results) {
    double aio_sum = 0;
    for (auto& r : results) {
        aio_sum += double(aio_ops(r));
    }
    std::sort(results.begin(), results.end(),
              [](const test_result& a, const test_result& b) { return a.fragment_rate() < b.fragment_rate(); });
    const auto& m = results[results.size() / 2];
    std::vector<double> dev;
    for (auto& r : results) {
        dev.push_back(std::fabs(m.fragment_rate() - r.fragment_rate()));
    }
    std::sort(dev.begin(), dev.end());
    stats_row s;
    s.time = m.seconds();
    s.iterations = results.size();
    s.frags = m.fragments;
    s.frag_rate = m.fragment_rate();
    s.mad = dev[dev.size() / 2];
    s.max = results.back().fragment_rate();
    s.min = results.front().fragment_rate();
    s.avg_aio = aio_sum / double(results.size());
    s.aio = aio_ops(m);
    s.kib = ((m.after.io.bytes_read - m.before.io.bytes_read) + (m.after.io.bytes_written - m.before.io.bytes_written)) /
            1024;
    s.blocked = m.after.io.reads_blocked - m.before.io.reads_blocked;
    s.dropped = m.after.io.read_ahead_dropped - m.before.io.read_ahead_dropped;
    s.idx_hit = m.after.index.hits - m.before.index.hits;
    s.idx_miss = m.after.index.misses - m.before.index.misses;
    s.idx_blk = m.after.index.blocks - m.before.index.blocks;
    s.c_hit = m.after.pages.page_hits - m.before.pages.page_hits;
    s.c_miss = m.after.pages.page_misses - m.before.pages.page_misses;
    s.c_blk = m.after.pages.page_blocks - m.before.pages.page_blocks;
    if (allocations()) {
        s.allocs = m.after.allocs - m.before.allocs;
    }
    s.tasks = m.after.tasks - m.before.tasks;
    if (m.before.instructions && m.after.instructions) {
        s.insns_per_frag = m.fragments ? (*m.after.instructions - *m.before.instructions) / m.fragments : 0;
    }
    // ScyllaDB prints the reactor's busy share; ours is the shard thread's CPU time over the wall time (time
    // waiting for the disk, or for a CPU on a shared machine, is what is missing from 100%).
    double wall = m.seconds();
    s.cpu = wall > 0 ? 100.0 * (m.after.cpu_seconds - m.before.cpu_seconds) / wall : 100.0;
    s.cpu = std::clamp(s.cpu, 0.0, 100.0);
    return s;
}

} // namespace

void report::group(const std::string& name, const std::string& description, const dataset& ds,
                   std::vector<param_column> params) {
    _group = name;
    _params = std::move(params);
    _case = 0;
    auto& out = _format == format::text ? stdout : stderr;
    fmt::print(out, "\nrunning: {} on dataset {}\n{}:\n", name, ds.name, description);
    if (_format == format::text) {
        for (auto& p : _params) {
            fmt::print("{:<{}} ", p.name, p.width);
        }
        for (auto& c : stat_columns) {
            fmt::print("{:>{}} ", c.name, c.width);
        }
        fmt::print("\n");
    }
    std::fflush(out);
}

void report::skipped_group(const std::string& name, const dataset& ds, const std::string& why) {
    fmt::print(_format == format::text ? stdout : stderr, "\nskipping: {} on dataset {} ({})\n", name, ds.name, why);
}

void report::note(const std::string& text) {
    fmt::print(_format == format::text ? stdout : stderr, "{}\n", text);
}

void report::add_case(std::vector<std::vector<test_result>> all) {
    ++_case;
    if (all.empty()) {
        return;
    }
    size_t reads = all.front().size();
    for (size_t j = 0; j < reads; ++j) {
        std::vector<test_result> per_read;
        std::optional<std::string> error;
        for (auto& it : all) {
            if (it[j].error && !error) {
                error = it[j].error;
            }
            per_read.push_back(it[j]);
        }
        auto params = per_read.front().params;
        auto s = summarize(std::move(per_read));
        if (_format == format::text) {
            for (size_t i = 0; i < _params.size(); ++i) {
                fmt::print("{:<{}} ", i < params.size() ? params[i] : "", _params[i].width);
            }
            auto texts = stats_texts(s);
            for (size_t i = 0; i < texts.size(); ++i) {
                fmt::print("{:>{}} ", texts[i], stat_columns[i].width);
            }
            fmt::print("\n");
            if (error) {
                fmt::print("^^^ ERROR: {}\n", *error);
            }
        } else {
            json_writer w(false);
            w.begin_object();
            w.key("group").value(_group);
            w.key("case").value(_case);
            w.key("step").value(uint64_t(j));  // the read's place in its case (several in single-key-slice)
            for (size_t i = 0; i < _params.size() && i < params.size(); ++i) {
                if (!_params[i].name.empty()) {
                    write_param(w.key(_params[i].name), params[i]);
                }
            }
            write_stats_json(w, s);
            if (error) {
                w.key("error").value(*error);
            }
            w.end_object();
            fmt::print("{}\n", w.str());
            if (error) {
                fmt::print(stderr, "ERROR: {} case {}: {}\n", _group, _case, *error);
            }
        }
        if (error) {
            ++_errors;
        }
    }
    std::fflush(stdout);
}

void report::failed_case(const std::string& what) {
    ++_case;
    ++_errors;
    if (_format == format::text) {
        fmt::print("^^^ ERROR: case {}: {}\n", _case, what);
    } else {
        json_writer w(false);
        w.begin_object();
        w.key("group").value(_group);
        w.key("case").value(_case);
        w.key("error").value(what);
        w.end_object();
        fmt::print("{}\n", w.str());
        fmt::print(stderr, "ERROR: {} case {}: {}\n", _group, _case, what);
    }
    std::fflush(stdout);
}

future<> run_test_case(run_context& ctx, std::function<future<std::vector<test_result>>()> fn) {
    std::vector<std::vector<test_result>> all;
    std::optional<std::string> failure;
    auto once = [&]() -> future<> {
        if (!ctx.keep_cache) {
            cache::drop_caches();
        }
        try {
            auto rs = co_await fn();
            if (!all.empty() && rs.size() != all.front().size()) {
                throw std::logic_error("iterations of the case made different numbers of reads");
            }
            all.push_back(std::move(rs));
        } catch (const std::exception& e) {
            failure = e.what();
        }
    };
    auto start = clock_type::now();
    co_await once();
    double first = seconds_since(start);
    if (ctx.test_case_duration > 0 && !failure) {
        auto more = std::max<uint64_t>(3, uint64_t(ctx.test_case_duration / std::max(first, 1e-9)));
        for (uint64_t i = 0; i < more && !failure; ++i) {
            co_await once();
        }
    }
    if (failure) {
        ctx.out.failed_case(*failure);
    } else {
        ctx.out.add_case(std::move(all));
    }
}

} // namespace reef::perf::pff
