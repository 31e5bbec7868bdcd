// sharded<T>: one instance of T per shard, each built, used and destroyed on its own shard.
// The container lives on the shard that started it; call its methods from any shard.
#pragma once

#include "runtime/smp.hh"
#include "runtime/when_all.hh"

#include <stdexcept>
#include <tuple>
#include <type_traits>
#include <vector>

namespace reef {

template <typename T>
class sharded {
public:
    sharded() = default;
    sharded(const sharded&) = delete;
    ~sharded() noexcept(false) {
        if (!_instances.empty()) {
            // Destroying live instances from the wrong shard would be worse
            // than leaking; stop() must come first.
            std::terminate();
        }
    }

    // Constructs T(args...) on every shard; each shard gets its own copy of
    // the arguments. If one constructor throws, the built ones are destroyed.
    template <typename... Args>
    future<> start(Args... args) {
        if (!_instances.empty()) {
            throw std::logic_error("sharded::start called twice");
        }
        _instances.assign(smp::count(), nullptr);
        std::exception_ptr error;
        try {
            co_await smp::invoke_on_all([this, &args...] {
                _instances[this_shard_id()] = new T(args...);
            });
        } catch (...) {
            error = std::current_exception();
        }
        if (error) {
            co_await destroy_all();
            std::rethrow_exception(error);
        }
    }

    // Calls T::stop() (if it has one) on every shard, then destroys them.
    future<> stop() {
        if (_instances.empty()) {
            co_return;
        }
        if constexpr (requires(T& t) { t.stop(); }) {
            co_await smp::invoke_on_all([this] {
                return futurize_invoke([this] { return _instances[this_shard_id()]->stop(); });
            });
        }
        co_await destroy_all();
    }

    T& local() { return *_instances.at(this_shard_id()); }
    bool local_is_initialized() const noexcept {
        return this_shard_id() < _instances.size() && _instances[this_shard_id()];
    }

    // fn(T&) on shard s.
    template <typename Func>
    futurize_result_t<Func, T&> invoke_on(shard_id s, Func fn) {
        return smp::submit_to(s, [this, fn = std::move(fn)]() mutable {
            return futurize_invoke(fn, *_instances[this_shard_id()]);
        });
    }

    // fn(T&) on every shard concurrently.
    template <typename Func>
    future<> invoke_on_all(Func fn) {
        return smp::invoke_on_all([this, fn = std::move(fn)]() mutable -> future<> {
            co_await futurize_invoke(fn, *_instances[this_shard_id()]);
        });
    }

    // reduce(reduce(initial, mapper(T@0)), mapper(T@1)) ... in shard order.
    template <typename Mapper, typename Initial, typename Reducer>
    future<Initial> map_reduce0(Mapper mapper, Initial initial, Reducer reduce) {
        using mapped = typename futurize_result_t<Mapper, T&>::value_type;
        std::vector<future<mapped>> parts;
        for (shard_id s = 0; s < _instances.size(); ++s) {
            parts.push_back(invoke_on(s, mapper));
        }
        auto values = co_await when_all(std::move(parts));
        for (auto& v : values) {
            initial = reduce(std::move(initial), std::move(v));
        }
        co_return initial;
    }

private:
    future<> destroy_all() {
        co_await smp::invoke_on_all([this] {
            delete std::exchange(_instances[this_shard_id()], nullptr);
        });
        _instances.clear();
    }

    std::vector<T*> _instances;
};

} // namespace reef
