// The node's start-up, wait and drain. See node.hh for the contract.
//
// Each start-up step is logged with its duration, and only steps that happen are logged: the CQL server,
// the commitlog and the tables will add theirs (and their drain steps) as they arrive.
#include "node/node.hh"

#include "cache/tracker.hh"
#include "node/config.hh"
#include "node/directory_lock.hh"
#include "node/drain.hh"
#include "runtime/app_options.hh"
#include "runtime/condition_variable.hh"
#include "runtime/log.hh"
#include "runtime/reactor.hh"
#include "runtime/smp.hh"

#include <fmt/format.h>

#include <csignal>
#include <cstdio>
#include <cstring>
#include <string>
#include <unistd.h>
#include <vector>

namespace reef::node {

namespace {

logger nlog("node");

using clock_type = steady_clock_type;

double ms_since(clock_type::time_point start) {
    return std::chrono::duration<double, std::milli>(clock_type::now() - start).count();
}

struct node_state {
    config cfg;
    std::string version;
    int64_t test_drain_delay_ms = 0;
    // --memory, the node's memory in bytes (0: not given).
    uint64_t memory = 0;
    clock_type::time_point process_start;
    clock_type::time_point runtime_start;
    drain stop_steps;
    int signals_seen = 0;
    condition_variable stop_requested;
};

// The signal handler, run on shard 0's loop. The first signal starts the drain; a second one means the operator
// will not wait for it: exit now, skipping what is left (the commitlog will cover unflushed writes). 128 + signo is
// the shell's code for a death by that signal, so scripts and supervisors read it as one.
void on_stop_signal(node_state& st, int signo) {
    if (++st.signals_seen == 1) {
        nlog.info("received SIG{}: draining (send it again to exit at once)", sigabbrev_np(signo));
        st.stop_requested.broadcast();
        return;
    }
    nlog.warn("received SIG{} again while draining: exiting at once, without finishing the drain",
              sigabbrev_np(signo));
    std::fflush(nullptr);
    ::_exit(128 + signo);
}

future<int> serve(node_state& st) {
    nlog.info("runtime: {} shards on {} in {:.1f} ms", smp::count(), to_string(current_io_backend()),
              ms_since(st.runtime_start));
    if (st.memory) {
        // Without an allocator of our own, the memory the node is given is what its caches may keep: half of each
        // shard's share (the rest is for memtables, buffers and requests), as ScyllaDB leaves the cache what
        // memtables do not use.
        auto step_start = clock_type::now();
        size_t budget = st.memory / smp::count() / 2;
        co_await smp::invoke_on_all([budget] { cache::shard_cache_tracker().lru().set_budget(budget); });
        // Read back from the last shard: the line reports what the caches now keep to.
        size_t applied =
            co_await smp::submit_to(smp::count() - 1, [] { return cache::shard_cache_tracker().lru().budget(); });
        nlog.info("memory: {} MiB per shard, cache budget {} MiB per shard in {:.1f} ms",
                  st.memory / smp::count() >> 20, applied >> 20, ms_since(step_start));
    }
    engine().handle_signal(SIGTERM, [&st] { on_stop_signal(st, SIGTERM); });
    engine().handle_signal(SIGINT, [&st] { on_stop_signal(st, SIGINT); });
    if (st.test_drain_delay_ms > 0) {
        // A slow stop step for the process test (`--test-drain-delay-ms`, not listed in --help).
        auto delay = std::chrono::milliseconds(st.test_drain_delay_ms);
        st.stop_steps.add("test delay", [delay] { return sleep(delay); });
    }
    nlog.info("ready: reef {} pid {} with {} shards, data in {}, commitlog in {} (start-up took {:.1f} ms)",
              st.version, ::getpid(), smp::count(), fmt::join(st.cfg.data_directories(), ", "),
              st.cfg.commitlog_dir(), ms_since(st.process_start));
    co_await st.stop_requested.wait([&st] { return st.signals_seen > 0; });
    auto drain_start = clock_type::now();
    size_t failed = co_await st.stop_steps.run();
    if (failed) {
        nlog.error("drain finished in {:.1f} ms with {} failed steps", ms_since(drain_start), failed);
        co_return 1;
    }
    nlog.info("drain finished in {:.1f} ms: exiting", ms_since(drain_start));
    co_return 0;
}

} // namespace

int node_main(int argc, char** argv, std::string_view version) {
    node_state st;
    st.process_start = clock_type::now();
    st.version = std::string(version);
    program_options::options opts("reef server",
                                  "Runs a Reef node (also `reef` with no subcommand). The configuration comes from "
                                  "--options-file, else ./reef.yaml if present, else built-in defaults; the options "
                                  "below override it.");
    runtime_options rt_opts;
    rt_opts.add(opts);
    config_options cfg_opts;
    cfg_opts.declare(opts);
    std::string memory;
    opts.add("memory", "the node's memory, e.g. 4G (K, M, G, T suffixes); each shard's caches get half its share",
             &memory);
    opts.add("test-drain-delay-ms", "", &st.test_drain_delay_ms, 0, 0, 3'600'000);
    runtime_config rt_cfg;
    try {
        opts.parse(argc, argv);
        if (opts.help_requested()) {
            std::fputs(opts.help().c_str(), stdout);
            return 0;
        }
        rt_cfg = rt_opts.to_config();
    } catch (const std::invalid_argument& e) {
        std::fprintf(stderr, "reef: %s\n", e.what());
        return 2;
    }

    auto step_start = clock_type::now();
    std::vector<std::string> warnings;
    try {
        st.cfg = cfg_opts.load(opts, warnings);
        if (opts.was_set("memory")) {
            st.memory = parse_memory_size(memory, "memory");
        }
    } catch (const config_error& e) {
        nlog.error("bad configuration: {}", e.what());
        return 1;
    }
    for (auto& w : warnings) {
        nlog.warn("{}", w);
    }
    nlog.info("config: {} in {:.1f} ms", cfg_opts.source().empty() ? "built-in defaults" : "read " + cfg_opts.source(),
              ms_since(step_start));

    step_start = clock_type::now();
    std::vector<directory_lock> locks;
    auto dirs = st.cfg.data_directories();
    dirs.push_back(st.cfg.commitlog_dir());
    try {
        for (auto& d : dirs) {
            locks.push_back(directory_lock::acquire(d));
        }
    } catch (const directory_lock_error& e) {
        nlog.error("{}", e.what());
        return 1;
    }
    nlog.info("directories locked: {} in {:.1f} ms", fmt::join(dirs, ", "), ms_since(step_start));

    st.runtime_start = clock_type::now();
    try {
        return run(rt_cfg, [&st] { return serve(st); });
    } catch (const std::exception& e) {
        nlog.error("node failed: {}", e.what());
        return 1;
    }
}

} // namespace reef::node
