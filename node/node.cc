// The node's start-up, wait and drain. See node.hh for the contract.
//
// Each start-up step is logged with its duration, and only steps that happen are logged.
#include "node/node.hh"

#include "api/api.hh"
#include "api/api_doc.hh"
#include "api/http_server.hh"
#include "api/prometheus.hh"
#include "cache/tracker.hh"
#include "cql/query_processor.hh"
#include "db/database.hh"
#include "node/config.hh"
#include "node/directory_lock.hh"
#include "node/drain.hh"
#include "node/systemd_notify.hh"
#include "runtime/app_options.hh"
#include "runtime/condition_variable.hh"
#include "runtime/log.hh"
#include "runtime/reactor.hh"
#include "runtime/sharded.hh"
#include "runtime/smp.hh"
#include "transport/server.hh"

#include <fmt/format.h>

#include <csignal>
#include <cstdio>
#include <cstring>
#include <map>
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
    // The drain runs once, whether POST /storage_service/drain or a signal asks first; a second asker waits.
    bool drain_started = false;
    bool drain_done = false;
    // The CQL server accepts connections (GET /storage_service/native_transport): from its listen to its drain step.
    bool cql_serving = false;
    size_t drain_failed = 0;
    condition_variable drained;
};

// Runs the stop steps once; later callers wait for that run. Returns the number of failed steps.
future<size_t> drain_once(node_state& st) {
    if (st.drain_started) {
        co_await st.drained.wait([&st] { return st.drain_done; });
        co_return st.drain_failed;
    }
    st.drain_started = true;
    systemd_notify("STOPPING=1\nSTATUS=draining");
    st.drain_failed = co_await st.stop_steps.run();
    st.drain_done = true;
    st.drained.broadcast();
    co_return st.drain_failed;
}

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

database_config make_database_config(const node_state& st) {
    database_config d;
    auto dirs = st.cfg.data_directories();
    d.data_directory = dirs.front();
    d.more_data_directories.assign(dirs.begin() + 1, dirs.end());
    d.cluster_name = st.cfg.cluster_name;
    d.auto_snapshot = st.cfg.auto_snapshot;
    d.compaction_throughput_mb_per_sec = uint64_t(st.cfg.compaction_throughput_mb_per_sec);
    if (st.memory) {
        // Memtables may hold half of each shard's share before writes wait (ScyllaDB's dirty memory threshold);
        // without --memory the database takes half of the machine's share.
        d.dirty_memory_hard_limit = st.memory / smp::count() / 2;
    }
    d.listen_address = st.cfg.listen_address;
    d.rpc_address = st.cfg.rpc_address;
    d.native_transport_port = st.cfg.native_transport_port;
    auto& c = d.commitlog;
    c.commitlog_directory = st.cfg.commitlog_dir();
    c.commitlog_sync = st.cfg.commitlog_sync == commitlog_sync_mode::batch ? commitlog::sync_mode::batch
                                                                            : commitlog::sync_mode::periodic;
    c.commitlog_sync_period_in_ms = uint64_t(st.cfg.commitlog_sync_period_in_ms);
    c.commitlog_segment_size_in_mb = uint64_t(st.cfg.commitlog_segment_size_in_mb);
    // The node's space, shared by the shards' logs. -1: ScyllaDB sizes it from the memory; without --memory,
    // Cassandra's 8 GiB.
    uint64_t total_mb = st.cfg.commitlog_total_space_in_mb >= 0 ? uint64_t(st.cfg.commitlog_total_space_in_mb)
                        : st.memory                             ? st.memory >> 20
                                                                : 8192;
    c.commitlog_total_space_in_mb = std::max<uint64_t>(total_mb / smp::count(), 2 * c.commitlog_segment_size_in_mb);
    return d;
}

// Starts the sharded database and registers its drain steps: the memtables flush, then the commitlog closes.
future<> start_database(node_state& st, sharded<database>& db) {
    auto step_start = clock_type::now();
    auto dcfg = make_database_config(st);
    co_await db.start(&db, dcfg);
    co_await db.local().start();
    // Per table, the sstables every shard loaded (the system tables included).
    auto count = [](database& d) {
        std::map<std::string, size_t> out;
        for (auto& ks : d.keyspace_names()) {
            for (auto& s : d.tables_of(ks)) {
                if (auto* t = d.find_table(s->id())) {
                    out[ks + "." + s->table()] += t->sstable_count();
                }
            }
        }
        return out;
    };
    auto add = [](std::map<std::string, size_t> a, std::map<std::string, size_t> b) {
        for (auto& [name, n] : b) {
            a[name] += n;
        }
        return a;
    };
    auto loaded = co_await db.map_reduce0(count, std::map<std::string, size_t>(), add);
    size_t total = 0;
    for (auto& [name, n] : loaded) {
        if (n) {
            nlog.info("sstables loaded: {}: {}", name, n);
        }
        total += n;
    }
    auto& r = db.local().last_replay();
    nlog.info("commitlog replay: {} segments, {} entries replayed, {} skipped, {} of dropped tables, {} corrupt, "
              "{} schema changes in {:.1f} ms",
              r.segments, r.replayed, r.skipped, r.no_table, r.corrupt, r.schema_batches, r.millis);
    nlog.info("database: {} tables, {} sstables, commitlog {} in {}, started in {:.1f} ms", loaded.size(), total,
              st.cfg.commitlog_sync == commitlog_sync_mode::batch ? "batch" : "periodic", st.cfg.commitlog_dir(),
              ms_since(step_start));
    st.stop_steps.add("close the commitlog", [&db] { return db.local().close_commitlog(); });
    st.stop_steps.add("flush memtables", [&db] { return db.local().flush_all(); });
}

// Starts the query processors and the CQL servers on rpc_address: the plain port (least-loaded shard) and the
// shard-aware one (client port % shards). Their drain step, registered last, runs first: no new connection or
// request once the drain begins, the requests in flight answered. A port in use throws std::system_error naming
// the address.
future<> start_cql(node_state& st, sharded<database>& db, sharded<cql::query_processor>& qp,
                   sharded<transport::cql_server>& server) {
    auto step_start = clock_type::now();
    cql::query_processor_config qcfg;
    qcfg.read_request_timeout = std::chrono::milliseconds(st.cfg.read_request_timeout_in_ms);
    qcfg.write_request_timeout = std::chrono::milliseconds(st.cfg.write_request_timeout_in_ms);
    co_await qp.start(&db, &qp, qcfg);
    transport::server_config scfg;
    scfg.max_frame_size = uint32_t(st.cfg.native_transport_max_frame_size_in_mb) << 20;
    scfg.max_concurrent_requests_per_shard = size_t(st.cfg.max_concurrent_requests_per_shard);
    scfg.shard_aware_port = st.cfg.native_shard_aware_transport_port;
    auto* qpp = &qp;
    std::function<cql::query_handler&()> handler = [qpp]() -> cql::query_handler& { return qpp->local(); };
    co_await server.start(&server, handler, scfg);
    auto plain = server.local().listen(socket_address(st.cfg.rpc_address, st.cfg.native_transport_port),
                                       transport::port_kind::least_loaded);
    auto aware = server.local().listen(socket_address(st.cfg.rpc_address, st.cfg.native_shard_aware_transport_port),
                                       transport::port_kind::shard_aware);
    st.cql_serving = true;
    st.stop_steps.add("stop the CQL server", [&server, &st] {
        st.cql_serving = false;
        return server.stop();
    });
    nlog.info("CQL server: listening on {} (least-loaded shard) and {} (shard-aware: client port % {}) in {:.1f} ms",
              plain, aware, smp::count(), ms_since(step_start));
}

// The REST API (api_address:api_port) and the metrics endpoint (prometheus_address:prometheus_port), each an
// http_server on shard 0. They are no drain step: they stop after the drain, so the API answers while it runs.
struct api_servers {
    api::route_table routes;
    api::route_table metrics_routes;
    std::unique_ptr<api::api_context> ctx;
    std::unique_ptr<api::http_server> api;
    std::unique_ptr<api::http_server> metrics;
    socket_address api_address;
    socket_address metrics_address;

    future<> stop() {
        if (metrics) {
            co_await metrics->stop();
        }
        if (api) {
            co_await api->stop();
        }
    }
};

// Throws std::system_error naming the address when a port is in use.
void start_api(node_state& st, sharded<database>& db, api_servers& s) {
    auto step_start = clock_type::now();
    auto* stp = &st;
    s.ctx = std::make_unique<api::api_context>(api::api_context{db, st.process_start, [stp]() -> future<> {
                                                                    size_t failed = co_await drain_once(*stp);
                                                                    if (failed) {
                                                                        throw std::runtime_error(
                                                                            std::to_string(failed) +
                                                                            " drain steps failed (see the log)");
                                                                    }
                                                                }});
    s.ctx->reef_version = st.version;
    s.ctx->native_transport_running = [stp] { return stp->cql_serving; };
    api::register_api_routes(s.routes, *s.ctx);
    api::register_api_doc(s.routes);
    api::register_prometheus(s.metrics_routes);
    api::http_server_config acfg;
    acfg.name = "REST API";
    s.api = std::make_unique<api::http_server>(s.routes, acfg);
    s.api_address = s.api->listen(socket_address(st.cfg.effective_api_address(), st.cfg.api_port));
    api::http_server_config mcfg;
    mcfg.name = "metrics";
    s.metrics = std::make_unique<api::http_server>(s.metrics_routes, mcfg);
    s.metrics_address =
        s.metrics->listen(socket_address(st.cfg.effective_prometheus_address(), st.cfg.prometheus_port));
    nlog.info("REST API: listening on {} ({} modules), metrics on {} in {:.1f} ms", s.api_address,
              s.routes.modules().size(), s.metrics_address, ms_since(step_start));
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
    sharded<database> db;
    std::exception_ptr failed_start;
    try {
        co_await start_database(st, db);
    } catch (...) {
        failed_start = std::current_exception();
    }
    if (failed_start) {
        co_await db.stop();
        std::rethrow_exception(failed_start);
    }
    sharded<cql::query_processor> qp;
    sharded<transport::cql_server> cql_server;
    try {
        co_await start_cql(st, db, qp, cql_server);
    } catch (...) {
        failed_start = std::current_exception();
    }
    if (failed_start) {
        co_await cql_server.stop();
        co_await qp.stop();
        co_await st.stop_steps.run();
        co_await db.stop();
        try {
            std::rethrow_exception(failed_start);
        } catch (const std::exception& e) {
            nlog.error("cannot start the CQL server: {}", e.what());
        }
        co_return 1;
    }
    api_servers apis;
    try {
        start_api(st, db, apis);
    } catch (...) {
        failed_start = std::current_exception();
    }
    if (failed_start) {
        co_await apis.stop();
        co_await st.stop_steps.run();
        co_await cql_server.stop();
        co_await qp.stop();
        co_await db.stop();
        try {
            std::rethrow_exception(failed_start);
        } catch (const std::exception& e) {
            nlog.error("cannot start the REST API: {}", e.what());
        }
        co_return 1;
    }
    engine().handle_signal(SIGTERM, [&st] { on_stop_signal(st, SIGTERM); });
    engine().handle_signal(SIGINT, [&st] { on_stop_signal(st, SIGINT); });
    if (st.test_drain_delay_ms > 0) {
        // A slow stop step for the process test (`--test-drain-delay-ms`, not listed in --help).
        auto delay = std::chrono::milliseconds(st.test_drain_delay_ms);
        st.stop_steps.add("test delay", [delay] { return sleep(delay); });
    }
    nlog.info("ready: reef {} pid {} with {} shards, data in {}, commitlog in {}, REST API http://{}, metrics "
              "http://{}/metrics (start-up took {:.1f} ms)",
              st.version, ::getpid(), smp::count(), fmt::join(st.cfg.data_directories(), ", "),
              st.cfg.commitlog_dir(), apis.api_address, apis.metrics_address, ms_since(st.process_start));
    nlog.info("connect with: cqlsh {} {}; stop with Ctrl-C or kill -TERM {} (the node drains, then exits)",
              st.cfg.rpc_address, st.cfg.native_transport_port, ::getpid());
    systemd_notify("READY=1\nSTATUS=serving");
    co_await st.stop_requested.wait([&st] { return st.signals_seen > 0; });
    auto drain_start = clock_type::now();
    size_t failed = co_await drain_once(st);
    // The API last: it answered during the drain.
    co_await apis.stop();
    co_await cql_server.stop();
    co_await qp.stop();
    co_await db.stop();
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
