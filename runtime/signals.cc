// Signals delivered to a reactor's loop (reactor::handle_signal). See reactor.hh for the contract.
//
// The sigaction handler only sets a bit and rings the owner's doorbell (both async-signal-safe); the Seastar-style
// handler runs later on the owner's loop, where it may do anything a task may. Whichever thread the kernel picks
// to take the signal (helper threads block all signals), the owner is woken.
#include "runtime/reactor.hh"

#include <array>
#include <cerrno>
#include <csignal>
#include <system_error>

namespace reef {

namespace {
// The reactor each signal goes to; read inside the signal handler, so a lock-free atomic.
std::array<std::atomic<reactor*>, 64> signal_owner{};
static_assert(std::atomic<reactor*>::is_always_lock_free);
}

void reactor::on_signal(int signo) noexcept {
    int saved_errno = errno;  // wakeup()'s write may change it under the interrupted code
    if (reactor* r = signal_owner[signo].load(std::memory_order_acquire)) {
        r->_pending_signals.fetch_or(uint64_t(1) << signo, std::memory_order_seq_cst);
        r->wakeup();
    }
    errno = saved_errno;
}

void reactor::handle_signal(int signo, std::function<void()> handler) {
    if (signo <= 0 || signo >= int(signal_owner.size())) {
        throw std::system_error(EINVAL, std::system_category(), "handle_signal: bad signal number");
    }
    auto& slot = _signal_handlers[signo];
    if (slot) {
        slot->handler = std::move(handler);
        return;
    }
    auto fresh = std::make_unique<signal_slot>();
    fresh->handler = std::move(handler);
    signal_owner[signo].store(this, std::memory_order_release);
    struct sigaction sa {};
    sa.sa_handler = &reactor::on_signal;
    sigfillset(&sa.sa_mask);
    // Interrupted system calls restart: the loop's waits handle EINTR, other code need not.
    sa.sa_flags = SA_RESTART;
    if (sigaction(signo, &sa, &fresh->previous) != 0) {
        int e = errno;
        signal_owner[signo].store(nullptr, std::memory_order_release);
        _signal_handlers.erase(signo);
        throw std::system_error(e, std::system_category(), "sigaction");
    }
    slot = std::move(fresh);
}

bool reactor::poll_signals() {
    if (!_pending_signals.load(std::memory_order_relaxed)) {
        return false;
    }
    uint64_t pending = _pending_signals.exchange(0, std::memory_order_seq_cst);
    for (int signo = 1; signo < int(signal_owner.size()); ++signo) {
        if (!(pending & (uint64_t(1) << signo))) {
            continue;
        }
        auto it = _signal_handlers.find(signo);
        if (it != _signal_handlers.end() && it->second->handler) {
            // A copy: the handler may replace itself (handle_signal) while it runs.
            auto fn = it->second->handler;
            try {
                fn();
            } catch (...) {
                internal::report_detached_exception(std::current_exception());
            }
        }
    }
    return true;
}

void reactor::restore_signals() noexcept {
    for (auto& [signo, slot] : _signal_handlers) {
        sigaction(signo, &slot->previous, nullptr);
        reactor* self = this;
        signal_owner[signo].compare_exchange_strong(self, nullptr, std::memory_order_acq_rel);
    }
    _signal_handlers.clear();
}

} // namespace reef
