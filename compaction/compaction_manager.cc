// compaction_manager: background strategy loops per table, running compactions, major compaction, stops, metrics.
#include "compaction/compaction_manager.hh"

#include "runtime/log.hh"
#include "runtime/scheduling.hh"
#include "utils/uuid.hh"

#include <algorithm>
#include <numeric>
#include <ctime>

namespace reef::compaction {

namespace {
logger mlog("compaction_manager");
}

struct compaction_manager::running_compaction {
    utils::uuid_bytes id{};
    bool major = false;
    std::vector<sstables::shared_sstable> inputs;
    compaction_control ctl;
};

struct compaction_manager::table_entry {
    table_state* t = nullptr;
    std::vector<std::shared_ptr<running_compaction>> running;
    // The sstables in a running compaction: never chosen again until it ends.
    std::set<const sstables::sstable*> compacting;
    // The weights of its running background compactions.
    std::set<int> weights;
    bool loop_running = false;
    bool look_again = false;  // submitted while its loop ran
    // Major compactions and stop_compactions in progress: no background compaction starts meanwhile.
    int paused = 0;
    bool removed = false;
    int64_t pending = 0;
    uint64_t pending_bytes = 0;
    // The size-tiered backlog of its whole set (backlog.hh) and the sizes it was computed over, as of its last check.
    double backlog = 0;
    std::vector<uint64_t> sizes;
    gate g;
    condition_variable changed;
    semaphore major_sem{1};
};

compaction_manager::compaction_manager(compaction_manager_config cfg)
    : _cfg(std::move(cfg)), _controller(_cfg.backlog_curve), _concurrency(std::max<size_t>(1, _cfg.max_concurrent)) {
    _limiter.set_bytes_per_second(_cfg.throughput_bytes_per_second);
    _shares_before = background_shares();
    update_shares();
}

compaction_manager::~compaction_manager() {
    set_background_shares(_shares_before);
}

void compaction_manager::register_metrics() {
    namespace m = metrics;
    _metrics.add_group("compaction_manager", {
        m::make_gauge("compactions", [this] { return int64_t(_running); },
                      m::description("compactions running on the shard")),
        m::make_gauge("pending_compactions", [this] { return pending_tasks(); },
                      m::description("compactions the strategies estimate are still to run")),
        m::make_counter("completed_compactions", [this] { return _stats.completed; },
                        m::description("compactions finished")),
        m::make_counter("failed_compactions", [this] { return _stats.failed; },
                        m::description("compactions ended by an error")),
        m::make_gauge("backlog", [this] { return int64_t(backlog_bytes()); },
                      m::description("bytes the pending and running compactions still have to read")),
        m::make_gauge("normalized_backlog", [this] { return normalized_backlog(); },
                      m::description("the largest of the tables' size-tiered backlogs (bytes still to rewrite), in "
                                     "units of their mean sstable size: the backlog controller's input")),
        m::make_gauge("shares", [this] { return int64_t(_shares); },
                      m::description("the background class's shares (the foreground's are 1000) the backlog "
                                     "controller set from the normalized backlog")),
    });
}

deletion_time_type compaction_manager::now() const {
    return _cfg.clock ? _cfg.clock() : deletion_time_type(std::time(nullptr));
}

compaction_manager::table_entry* compaction_manager::find(const table_state& t) const {
    auto it = _tables.find(&t);
    return it == _tables.end() ? nullptr : it->second.get();
}

void compaction_manager::add(table_state& t) {
    if (!find(t)) {
        auto e = std::make_unique<table_entry>();
        e->t = &t;
        _tables.emplace(&t, std::move(e));
    }
    submit(t);
}

future<> compaction_manager::remove(table_state& t) {
    auto* e = find(t);
    if (!e) {
        co_return;
    }
    e->removed = true;
    stop_running(*e, "table removed");
    co_await e->g.close();
    _tables.erase(&t);
    update_shares();
    _idle.broadcast();
}

void compaction_manager::stop_running(table_entry& e, const std::string& reason) {
    for (auto& r : e.running) {
        r->ctl.stop(reason);
    }
}

strategy_input compaction_manager::candidates_of(table_entry& e) {
    strategy_input in;
    in.now = now();
    in.gc_before = in.now - e.t->schema()->options().gc_grace_seconds;
    in.memtable_min_timestamp = e.t->min_memtable_timestamp();
    auto& set = e.t->sstable_set();
    for (uint64_t i = 0; i < set.size(); ++i) {
        auto c = candidate_of(set[i], i, in.gc_before);
        (e.compacting.contains(set[i].get()) ? in.compacting : in.sstables).push_back(c);
    }
    return in;
}

future<strategy_input> compaction_manager::input_for(table_entry& e, const compaction_options& o) {
    auto in = candidates_of(e);
    // Ages only where they matter (a tombstone compaction candidate): each is a file system call, and the set may
    // change meanwhile (a copy).
    auto copy = e.t->sstable_set();
    for (auto& c : in.sstables) {
        if (c.droppable_tombstone_ratio > o.tombstone_threshold) {
            c.age_seconds = co_await sstable_age(copy[c.id], in.now);
        }
    }
    co_return in;
}

void compaction_manager::refresh_pending(table_entry& e) {
    refresh_pending(e, compaction_options_of(*e.t->schema()), candidates_of(e));
}

void compaction_manager::refresh_pending(table_entry& e, const compaction_options& o, const strategy_input& in) {
    e.pending = reef::compaction::pending_tasks(o, in);
    e.pending_bytes = reef::compaction::pending_bytes(o, in);
    auto all = in.sstables;
    all.insert(all.end(), in.compacting.begin(), in.compacting.end());
    e.backlog = table_backlog(o, all);
    e.sizes.clear();
    for (auto& c : all) {
        e.sizes.push_back(c.size);
    }
    update_shares();
}

double compaction_manager::backlog_of(const table_entry& e) const {
    double done = 0;
    for (auto& r : e.running) {
        done += double(r->ctl.completed_bytes);
    }
    return reef::compaction::normalized_backlog(e.backlog - done, e.sizes);
}

double compaction_manager::normalized_backlog(const table_state& t) const {
    auto* e = find(t);
    return e ? backlog_of(*e) : 0;
}

double compaction_manager::normalized_backlog() const {
    double n = 0;
    for (auto& [t, e] : _tables) {
        n = std::max(n, backlog_of(*e));
    }
    return n;
}

void compaction_manager::update_shares() {
    _shares = _controller.shares(normalized_backlog());
    set_background_shares(_shares);
}

void compaction_manager::submit(table_state& t) {
    auto* e = find(t);
    if (!e || e->removed) {
        return;
    }
    refresh_pending(*e);
    if (e->loop_running) {
        e->look_again = true;  // the running loop may have chosen already: it runs once more
        return;
    }
    if (_draining || e->paused) {
        return;
    }
    e->loop_running = true;
    e->g.enter();
    spawn([this, e]() -> future<> {
        do {
            e->look_again = false;
            try {
                co_await background_loop(*e);
            } catch (const std::exception& ex) {
                mlog.warn("{}.{}: background compaction check failed: {}", e->t->schema()->keyspace(),
                          e->t->schema()->table(), ex.what());
            }
        } while (e->look_again && !_draining && !e->removed && !e->paused);
        e->loop_running = false;
        _idle.broadcast();
        e->g.leave();  // the last touch of e: remove() may free it once the gate is empty
    });
}

int compaction_manager::free_weight(const table_entry& e, std::vector<sstables::shared_sstable>& inputs,
                                    size_t min_inputs) const {
    auto size = [](const sstables::shared_sstable& s) { return s->components().data_file_size; };
    std::stable_sort(inputs.begin(), inputs.end(), [&](auto& a, auto& b) { return size(a) < size(b); });
    std::vector<uint64_t> sizes;
    for (auto& s : inputs) {
        sizes.push_back(size(s));
    }
    size_t n = inputs_with_free_weight(sizes, e.weights, min_inputs);
    if (n == 0) {
        return -1;
    }
    inputs.resize(n);
    return compaction_weight(std::accumulate(sizes.begin(), sizes.begin() + ptrdiff_t(n), uint64_t(0)));
}

future<> compaction_manager::background_loop(table_entry& e) {
    auto stop = [&] { return _draining || e.removed || e.paused; };
    while (!stop()) {
        auto units = co_await get_units(_concurrency, 1);
        if (stop()) {
            break;
        }
        auto o = compaction_options_of(*e.t->schema());
        auto set = e.t->sstable_set();
        auto in = co_await input_for(e, o);
        // The set may have changed while the ages were read: choose again next round if so.
        if (stop() || e.t->sstable_set() != set) {
            continue;
        }
        refresh_pending(e, o, in);
        auto job = next_job(o, in);  // among the sstables no running compaction holds
        if (!job) {
            break;
        }
        std::vector<sstables::shared_sstable> inputs;
        for (auto id : job->ids) {
            inputs.push_back(set[id]);
        }
        // A tier compacts while another does (new flushes need not wait for a long compaction of large sstables),
        // but one compaction per weight: two of the same size class would only race for the same tier.
        int weight = free_weight(e, inputs, job->kind == job_kind::regular ? size_t(o.min_threshold) : inputs.size());
        if (weight < 0 || (_cfg.one_per_table && !e.weights.empty())) {
            break;  // the running one submits again when it ends
        }
        e.weights.insert(weight);
        e.g.enter();
        spawn([this, &e, inputs = std::move(inputs), kind = job->kind, weight,
               units = std::move(units)]() mutable -> future<> {
            bool ok = co_await run(e, std::move(inputs), kind, false);
            e.weights.erase(weight);
            units.return_all();
            if (ok) {
                submit(*e.t);  // its output may complete a tier; a failed or stopped one waits for the next flush
            }
            e.g.leave();  // the last touch of e: remove() may free it once the gate is empty
        });
    }
    refresh_pending(e);
}

future<bool> compaction_manager::run(table_entry& e, std::vector<sstables::shared_sstable> inputs, job_kind kind,
                                     bool major, std::optional<deletion_time_type> at) {
    auto r = std::make_shared<running_compaction>();
    r->id = utils::make_time_uuid();
    r->major = major;
    r->inputs = inputs;
    r->ctl.limiter = &_limiter;
    for (auto& sst : inputs) {
        e.compacting.insert(sst.get());
    }
    e.running.push_back(r);
    ++_running;
    std::exception_ptr err;
    bool stopped = false;
    uint64_t written = 0;
    try {
        // A major compaction of an LCS or ICS table writes a run (the background ones stay whole).
        uint64_t split = major ? compaction_options_of(*e.t->schema()).max_sstable_size : 0;
        written = co_await compact_sstables(*e.t, inputs, kind, at ? *at : now(), r->ctl, split);
    } catch (const compaction_stopped&) {
        stopped = true;
        err = std::current_exception();
    } catch (...) {
        err = std::current_exception();
    }
    for (auto& sst : inputs) {
        e.compacting.erase(sst.get());
    }
    std::erase(e.running, r);
    --_running;
    refresh_pending(e);  // its set changed (or not, if it failed): the backlog and the shares follow
    e.changed.broadcast();
    _idle.broadcast();
    auto& s = *e.t->schema();
    if (stopped) {
        ++_stats.stopped;
        mlog.info("{}.{}: compaction of {} sstables stopped: {}", s.keyspace(), s.table(), inputs.size(),
                  r->ctl.stop_reason);
    } else if (err) {
        ++_stats.failed;
        try {
            std::rethrow_exception(err);
        } catch (const std::exception& ex) {
            mlog.warn("{}.{}: compaction of {} sstables failed: {}", s.keyspace(), s.table(), inputs.size(), ex.what());
        } catch (...) {
            mlog.warn("{}.{}: compaction of {} sstables failed", s.keyspace(), s.table(), inputs.size());
        }
    } else {
        ++_stats.completed;
        _stats.bytes_in += r->ctl.total_bytes;
        _stats.bytes_out += written;
        if (kind == job_kind::expired) {
            _stats.expired_dropped += inputs.size();
        }
    }
    if (err && major) {
        std::rethrow_exception(err);
    }
    co_return !err;
}

future<> compaction_manager::perform_major_compaction(table_state& t, std::optional<deletion_time_type> at) {
    auto* e = find(t);
    if (!e) {
        throw std::logic_error(t.schema()->keyspace() + "." + t.schema()->table() + ": not in the compaction manager");
    }
    if (e->removed || _draining) {
        throw compaction_stopped("the table or the node is stopping");
    }
    e->g.enter();
    ++e->paused;
    std::exception_ptr err;
    try {
        auto units = co_await get_units(e->major_sem, 1);
        stop_running(*e, "a major compaction takes over");
        co_await e->changed.wait([e] { return e->running.empty(); });
        if (e->removed || _draining) {
            throw compaction_stopped("the table or the node is stopping");
        }
        auto inputs = t.sstable_set();
        if (!inputs.empty()) {
            co_await run(*e, std::move(inputs), job_kind::regular, true, at);
        }
    } catch (...) {
        err = std::current_exception();
    }
    --e->paused;
    e->g.leave();
    submit(t);
    if (err) {
        std::rethrow_exception(err);
    }
}

future<> compaction_manager::stop_compactions(table_state& t, std::string reason) {
    auto* e = find(t);
    if (!e) {
        co_return;
    }
    ++e->paused;
    stop_running(*e, reason);
    co_await e->changed.wait([e] { return e->running.empty(); });
    --e->paused;
}

future<> compaction_manager::drain() {
    _draining = true;
    for (auto& [t, e] : _tables) {
        stop_running(*e, "the node drains");
    }
    co_await _idle.wait([this] {
        return _running == 0 && std::none_of(_tables.begin(), _tables.end(), [](auto& p) { return p.second->loop_running; });
    });
}

future<> compaction_manager::wait_idle() {
    co_await _idle.wait([this] {
        return _running == 0 && std::none_of(_tables.begin(), _tables.end(), [](auto& p) { return p.second->loop_running; });
    });
}

std::vector<compaction_info> compaction_manager::compactions() const {
    std::vector<compaction_info> out;
    for (auto& [t, e] : _tables) {
        for (auto& r : e->running) {
            out.push_back({utils::to_string(r->id), e->t->schema()->keyspace(), e->t->schema()->table(), "COMPACTION",
                           r->major, r->inputs.size(), r->ctl.completed_bytes, r->ctl.total_bytes});
        }
    }
    return out;
}

int64_t compaction_manager::pending_tasks(const table_state& t) const {
    auto* e = find(t);
    return e ? e->pending : 0;
}

int64_t compaction_manager::pending_tasks() const {
    int64_t n = 0;
    for (auto& [t, e] : _tables) {
        n += e->pending;
    }
    return n;
}

uint64_t compaction_manager::backlog_bytes() const {
    uint64_t n = 0;
    for (auto& [t, e] : _tables) {
        n += e->pending_bytes;
        for (auto& r : e->running) {
            n += r->ctl.total_bytes - std::min(r->ctl.total_bytes, r->ctl.completed_bytes);
        }
    }
    return n;
}

} // namespace reef::compaction
