// compaction_manager: one per shard; runs each table's strategy in the background, owns the running compactions
// (listed with progress, stoppable), keeps an sstable in one compaction at a time, and runs major compactions.
#pragma once

#include "compaction/backlog.hh"
#include "compaction/compaction.hh"
#include "compaction/table_state.hh"
#include "runtime/condition_variable.hh"
#include "runtime/gate.hh"
#include "runtime/metrics.hh"
#include "runtime/semaphore.hh"

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace reef::compaction {

struct compaction_manager_config {
    // The shard's share of compaction_throughput_mb_per_sec, in bytes per second (0: unlimited).
    uint64_t throughput_bytes_per_second = 0;
    // Background compactions running at once on the shard (a table runs one per weight at a time).
    size_t max_concurrent = 2;
    // Benchmarks: a table runs one background compaction at a time, whatever its weight (the baseline of
    // perf-compaction's sustained load).
    bool one_per_table = false;
    // Seconds since the epoch: "now" for gc_grace and expiry (tests move it).
    std::function<deletion_time_type()> clock;
    // The backlog controller's curve: the shard's background class shares (runtime/scheduling.hh) as a function of
    // the largest normalized backlog of its tables.
    std::vector<backlog_controller::control_point> backlog_curve = backlog_controller::default_points();
};

// A running compaction as the REST API lists it (ScyllaDB's compaction_manager/compactions).
struct compaction_info {
    std::string id;  // a time UUID
    std::string keyspace;
    std::string table;
    std::string task_type;  // "COMPACTION" (background or major)
    bool major = false;
    size_t sstables = 0;
    uint64_t completed_bytes = 0;
    uint64_t total_bytes = 0;
};

struct compaction_manager_stats {
    uint64_t completed = 0;  // compactions finished (expired drops included)
    uint64_t failed = 0;     // ended by an error (not by a stop)
    uint64_t stopped = 0;
    uint64_t expired_dropped = 0;  // sstables removed unread
    uint64_t bytes_in = 0;
    uint64_t bytes_out = 0;
};

class compaction_manager {
public:
    explicit compaction_manager(compaction_manager_config cfg = {});
    compaction_manager(const compaction_manager&) = delete;
    ~compaction_manager();

    // Registers the metrics (scylla_compaction_manager_*); once, by the shard's owner.
    void register_metrics();

    // A table starts (after its sstables are loaded): its strategy is checked now and after each submit.
    void add(table_state& t);
    // A table stops (drop, truncate, ALTER's restart, node stop): its compactions are stopped and waited for.
    future<> remove(table_state& t);
    // Its sstable set grew (a flush): check its strategy again, in the background.
    void submit(table_state& t);
    // Major compaction: every sstable of the table when it starts (after its running compactions are stopped
    // and waited for; background ones resume after it) into one, purged as any compaction. t must be added.
    // Throws what the compaction throws (compaction_stopped if the table is removed meanwhile). `now`: the time
    // for gc_grace (the manager's clock when not given).
    future<> perform_major_compaction(table_state& t, std::optional<deletion_time_type> now = std::nullopt);
    // Stops the table's running compactions and waits for them (they resume at the next submit).
    future<> stop_compactions(table_state& t, std::string reason);
    // The node drains or stops: every compaction is stopped and waited for, none starts again.
    future<> drain();

    // The shard's share of compaction_throughput_mb_per_sec (0: unlimited); running compactions follow it at once.
    void set_throughput_bytes_per_second(uint64_t v) noexcept { _limiter.set_bytes_per_second(v); }
    uint64_t throughput_bytes_per_second() const noexcept { return _limiter.bytes_per_second(); }

    std::vector<compaction_info> compactions() const;
    // Pending compactions of a table (the strategy's estimate, as of its last check), and of the shard.
    int64_t pending_tasks(const table_state& t) const;
    int64_t pending_tasks() const;
    // Bytes the pending and running compactions still have to read.
    uint64_t backlog_bytes() const;
    // The backlog controller's input: the largest normalized backlog (backlog.hh) of the tables, less what their
    // running compactions have read; and its output, the shares it last gave the shard's background class.
    double normalized_backlog() const;
    double normalized_backlog(const table_state& t) const;
    unsigned shares() const noexcept { return _shares; }
    const compaction_manager_stats& stats() const noexcept { return _stats; }
    // Tests: waits until no compaction runs and no table has a background check queued.
    future<> wait_idle();

private:
    struct running_compaction;
    struct table_entry;

    table_entry* find(const table_state& t) const;
    deletion_time_type now() const;
    // The table's sstables as candidates (those in a running compaction apart), without their ages.
    strategy_input candidates_of(table_entry& e);
    // The same, with the ages the strategy needs (a file system call each).
    future<strategy_input> input_for(table_entry& e, const compaction_options& o);
    // Its pending tasks and bytes, its backlog, and the shard's shares, from its sstables now.
    void refresh_pending(table_entry& e);
    // The same from a strategy input just built (the background loop's).
    void refresh_pending(table_entry& e, const compaction_options& o, const strategy_input& in);
    double backlog_of(const table_entry& e) const;
    // Sets the shard's background shares from the backlogs now (the controller's one output).
    void update_shares();
    future<> background_loop(table_entry& e);
    // Sorts `inputs` by size and keeps inputs_with_free_weight of them; their weight, or -1 (none will do).
    int free_weight(const table_entry& e, std::vector<sstables::shared_sstable>& inputs, size_t min_inputs) const;
    // Runs one job; false when it failed or was stopped.
    future<bool> run(table_entry& e, std::vector<sstables::shared_sstable> inputs, job_kind kind, bool major,
                     std::optional<deletion_time_type> at = std::nullopt);
    void stop_running(table_entry& e, const std::string& reason);

    compaction_manager_config _cfg;
    backlog_controller _controller;
    unsigned _shares = 0;
    unsigned _shares_before = 0;  // the shard's when it was made, put back by the destructor
    throughput_limiter _limiter;
    semaphore _concurrency;
    std::map<const table_state*, std::unique_ptr<table_entry>> _tables;
    compaction_manager_stats _stats;
    size_t _running = 0;
    bool _draining = false;
    condition_variable _idle;
    metrics::metric_groups _metrics;
};

} // namespace reef::compaction
