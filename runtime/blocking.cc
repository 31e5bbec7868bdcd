// The per-shard helper thread behind run_blocking(). See blocking.hh.
#include "runtime/blocking.hh"

#include <pthread.h>
#include <signal.h>

namespace reef::internal {

blocking_executor::~blocking_executor() {
    if (_thread) {
        {
            std::lock_guard lk(_mutex);
            _stopping = true;
        }
        _cv.notify_all();
        _thread->join();
    }
}

void blocking_executor::submit(blocking_job* job) {
    if (!_thread) {
        // Signals belong to the shard threads, never to helpers.
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_BLOCK, &all, &old);
        _thread.emplace([this] { worker(); });
        pthread_sigmask(SIG_SETMASK, &old, nullptr);
    }
    {
        std::lock_guard lk(_mutex);
        _queue.push_back(job);
    }
    _cv.notify_one();
}

void blocking_executor::worker() {
    pthread_setname_np(pthread_self(), "reef-blocking");
    std::unique_lock lk(_mutex);
    while (true) {
        _cv.wait(lk, [this] { return _stopping || !_queue.empty(); });
        if (_queue.empty()) {
            return;  // stopping, and nothing left
        }
        blocking_job* job = _queue.front();
        _queue.pop_front();
        lk.unlock();
        job->run();
        lk.lock();
        _done.push_back(job);
        _has_done.store(true, std::memory_order_release);
        lk.unlock();
        _reactor.wakeup();
        lk.lock();
    }
}

bool blocking_executor::poll() {
    if (!_has_done.load(std::memory_order_acquire)) {
        return false;
    }
    {
        std::lock_guard lk(_mutex);
        _delivering.swap(_done);
        _has_done.store(false, std::memory_order_relaxed);
    }
    for (auto* job : _delivering) {
        schedule(job->waiter);
    }
    _delivering.clear();
    return true;
}

} // namespace reef::internal
