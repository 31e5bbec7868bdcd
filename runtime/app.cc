// Shard start-up and shut-down. See app.hh.
#include "runtime/app.hh"

#include "runtime/smp.hh"

#include <barrier>
#include <pthread.h>
#include <sched.h>
#include <stdexcept>
#include <system_error>
#include <thread>
#include <vector>

namespace reef {

namespace {

io_backend_kind running_backend = io_backend_kind::automatic;

std::vector<int> allowed_cpus() {
    cpu_set_t set;
    CPU_ZERO(&set);
    std::vector<int> cpus;
    if (sched_getaffinity(0, sizeof(set), &set) == 0) {
        for (int i = 0; i < CPU_SETSIZE; ++i) {
            if (CPU_ISSET(i, &set)) {
                cpus.push_back(i);
            }
        }
    }
    if (cpus.empty()) {
        cpus.push_back(0);
    }
    return cpus;
}

void pin_to(int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    // Pinning is an optimization; a container that forbids it still runs.
    (void)pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

future<> stop_all_shards() {
    for (shard_id s = 1; s < smp::count(); ++s) {
        co_await smp::submit_to(s, [] { engine().stop(); });
    }
    engine().stop();
}

future<> run_main(std::function<future<int>()>& main_fn, int& exit_code, std::exception_ptr& error) {
    // Start from inside shard 0's loop, once it has set itself up (metrics).
    co_await yield();
    try {
        exit_code = co_await main_fn();
    } catch (...) {
        error = std::current_exception();
    }
    co_await stop_all_shards();
}

} // namespace

unsigned available_cpus() { return allowed_cpus().size(); }

io_backend_kind current_io_backend() noexcept { return running_backend; }

int run(const runtime_config& cfg, std::function<future<int>()> main_fn) {
    auto cpus = allowed_cpus();
    cpu_set_t caller_affinity;
    bool restore_affinity = sched_getaffinity(0, sizeof(caller_affinity), &caller_affinity) == 0;
    unsigned n = cfg.smp ? cfg.smp : cpus.size();
    io_backend_kind kind = cfg.io_backend == io_backend_kind::automatic ? probe_io_backend() : cfg.io_backend;

    // Backends are made here, before any thread starts, so that a backend
    // the kernel refuses fails the whole start cleanly.
    std::vector<std::unique_ptr<reactor>> reactors;
    for (unsigned i = 0; i < n; ++i) {
        reactors.push_back(std::make_unique<reactor>(i, make_io_backend(kind, cfg.io_queue_depth), cfg.reactor));
    }
    std::vector<reactor*> raw;
    for (auto& r : reactors) {
        raw.push_back(r.get());
    }
    internal::smp_configure(n, raw);
    internal::shard_count = n;
    running_backend = kind;

    // Nobody destroys a reactor while another shard might still ring it.
    std::barrier<> all_stopped(n);
    std::vector<std::thread> threads;
    for (unsigned i = 1; i < n; ++i) {
        threads.emplace_back([&, i] {
            internal::current_shard = i;
            if (cfg.pin_threads) {
                pin_to(cpus[i % cpus.size()]);
            }
            internal::local_reactor = reactors[i].get();
            reactors[i]->run();
            all_stopped.arrive_and_wait();
            internal::local_reactor = nullptr;
            internal::frame_pool_release();
        });
    }

    internal::current_shard = 0;
    if (cfg.pin_threads) {
        pin_to(cpus[0]);
    }
    internal::local_reactor = reactors[0].get();
    int exit_code = 0;
    std::exception_ptr error;
    spawn(run_main(main_fn, exit_code, error));
    reactors[0]->run();
    all_stopped.arrive_and_wait();
    for (auto& t : threads) {
        t.join();
    }
    internal::local_reactor = nullptr;
    if (restore_affinity) {
        // The calling thread served as shard 0; give it back its CPUs.
        (void)sched_setaffinity(0, sizeof(caller_affinity), &caller_affinity);
    }
    reactors.clear();
    internal::smp_cleanup();
    internal::shard_count = 1;
    running_backend = io_backend_kind::automatic;
    if (error) {
        std::rethrow_exception(error);
    }
    return exit_code;
}

} // namespace reef
