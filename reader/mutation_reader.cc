// The reader wrapper and the in-memory fragment reader. See mutation_reader.hh.
#include "reader/mutation_reader.hh"

#include "reader/mutation_fragment_filter.hh"

#include <algorithm>
#include <fmt/core.h>
#include <stdexcept>

namespace reef {

namespace {

future<std::optional<mutation_fragment>> fill_and_pop(mutation_reader& r) {
    co_await r.fill_buffer();
    if (r.is_buffer_empty()) {
        co_return std::nullopt;
    }
    co_return r.pop_mutation_fragment();
}

} // namespace

future<std::optional<mutation_fragment>> mutation_reader::operator()() {
    // A buffered fragment comes back as a ready future, with no coroutine
    // to run and resume: in a debug build, where symmetric transfer is not
    // a tail call, every completed coroutine awaited in a loop deepens the
    // stack until something really suspends, and a loop over a long
    // partition ran out of stack.
    if (!is_buffer_empty()) {
        return make_ready_future<std::optional<mutation_fragment>>(pop_mutation_fragment());
    }
    if (is_end_of_stream()) {
        return make_ready_future<std::optional<mutation_fragment>>(std::nullopt);
    }
    return fill_and_pop(*this);
}

future<> mutation_reader::next_partition() {
    auto& buf = _impl->_buffer;
    while (!buf.empty() && !std::holds_alternative<partition_start>(buf.front())) {
        buf.pop_front();
    }
    if (buf.empty()) {
        co_await _impl->next_partition();
    }
}

future<> mutation_reader::fast_forward_to(const dht::partition_range& pr) {
    // Not a coroutine: a reader that forwards without waiting makes no frame here either.
    _impl->clear_buffer();
    _impl->_end_of_stream = false;
    return _impl->fast_forward_to(pr);
}

future<> mutation_reader::fast_forward_to(position_range pr) {
    _impl->clear_buffer();
    _impl->_end_of_stream = false;
    co_await _impl->fast_forward_to(std::move(pr));
}

future<std::vector<mutation_fragment>> read_all(mutation_reader& r) {
    std::vector<mutation_fragment> out;
    while (auto f = co_await r()) {
        out.push_back(std::move(*f));
    }
    co_return out;
}

namespace {

class fragment_vector_reader final : public mutation_reader_impl {
public:
    fragment_vector_reader(schema_ptr s, std::vector<mutation_fragment> fragments, dht::partition_range range,
                           streamed_forwarding fwd, bool reversed, size_t buffer_fragments)
        : mutation_reader_impl(std::move(s)), _fragments(std::move(fragments)), _range(std::move(range)),
          _forwarding(fwd == streamed_forwarding::yes), _reversed(reversed) {
        _max_buffer_fragments = std::max<size_t>(buffer_fragments, 1);
    }

    future<> fill_buffer() override {
        while (!is_buffer_full() && !_end_of_stream) {
            if (_i == _fragments.size()) {
                _end_of_stream = true;
                break;
            }
            auto& f = _fragments[_i];
            if (!_in_partition) {
                auto& ps = std::get<partition_start>(f);
                if (_range.after(ps.key)) {
                    _end_of_stream = true;  // later partitions only come with a new range
                    break;
                }
                if (_range.before(ps.key)) {
                    skip_partition();
                    continue;
                }
                _in_partition = true;
                _passed = {};
                _window.reset();
                push(f);
                ++_i;
                continue;
            }
            if (std::holds_alternative<static_row>(f)) {
                push(f);
                ++_i;
                continue;
            }
            if (!_forwarding) {
                if (std::holds_alternative<partition_end>(f)) {
                    _in_partition = false;
                }
                push(f);
                ++_i;
                continue;
            }
            // Forwarding: clustered fragments only through the open window.
            if (!_window) {
                _end_of_stream = true;
                break;
            }
            std::vector<mutation_fragment> out;
            bool more = !std::holds_alternative<partition_end>(f) && _window->consume(f, out);
            if (!more) {
                // The window is behind this fragment: close it and stop here,
                // keeping the fragment for a later window.
                _window->finish(out);
                _window.reset();
                _end_of_stream = true;
            } else {
                if (auto* rtc = std::get_if<range_tombstone_change>(&f)) {
                    _passed = rtc->tomb;
                }
                ++_i;
            }
            for (auto& o : out) {
                push(std::move(o));
            }
        }
        co_return;
    }

    future<> next_partition() override {
        if (_in_partition) {
            skip_partition();
            _in_partition = false;
            _window.reset();
        }
        _end_of_stream = false;
        co_return;
    }

    future<> fast_forward_to(const dht::partition_range& pr) override {
        if (_in_partition) {
            skip_partition();
            _in_partition = false;
        }
        _window.reset();
        _range = pr;
        co_return;
    }

    future<> fast_forward_to(position_range pr) override {
        if (!_forwarding) {
            throw std::logic_error("fast_forward_to(position_range) on a reader without forwarding");
        }
        if (!_in_partition) {
            _end_of_stream = true;
            co_return;
        }
        _window.emplace(*_schema, clustering_ranges{std::move(pr)}, _reversed);
        // The tombstone in force where the window opens is the last change
        // passed. (Not replayed through the filter: a change passed at the
        // window's start would count as already emitted there.)
        _window->set_tombstone_in_force(_passed);
        co_return;
    }

    future<> close() noexcept override { co_return; }

private:
    void skip_partition() {
        // From partition_start (or inside) to just past partition_end.
        while (_i < _fragments.size() && !std::holds_alternative<partition_end>(_fragments[_i])) {
            ++_i;
        }
        ++_i;
    }

    std::vector<mutation_fragment> _fragments;
    dht::partition_range _range;
    bool _forwarding;
    bool _reversed;
    size_t _i = 0;
    tombstone _passed;  // forwarding: in force after the fragments passed in the partition
    bool _in_partition = false;
    std::optional<mutation_fragment_filter> _window;
};

// Each partition of a whole-partition stream, clipped to the ranges.
std::vector<mutation_fragment> slice_fragments(const schema& s, std::vector<mutation_fragment> in,
                                               const clustering_ranges& ranges, bool reversed) {
    std::vector<mutation_fragment> out;
    std::optional<mutation_fragment_filter> filter;
    bool skipping = false;  // past the last range: until partition_end
    for (auto& f : in) {
        if (std::holds_alternative<partition_start>(f)) {
            filter.emplace(s, ranges, reversed);
            skipping = false;
            out.push_back(std::move(f));
            continue;
        }
        if (!filter) {
            throw std::invalid_argument(fmt::format("fragment vector reader: {} outside a partition", kind_name(f)));
        }
        bool end = std::holds_alternative<partition_end>(f);
        if (skipping) {
            if (end) {
                out.push_back(std::move(f));
            }
            continue;
        }
        if (!filter->consume(std::move(f), out) && !end) {
            filter->finish(out);
            skipping = true;
        }
    }
    return out;
}

} // namespace

mutation_reader make_fragment_vector_reader(schema_ptr s, std::vector<mutation_fragment> fragments,
                                            dht::partition_range range, streamed_forwarding fwd, bool reversed,
                                            const std::optional<clustering_ranges>& slice, size_t buffer_fragments) {
    if (slice) {
        fragments = slice_fragments(*s, std::move(fragments), *slice, reversed);
    }
    return mutation_reader(
        std::make_unique<fragment_vector_reader>(std::move(s), std::move(fragments), std::move(range), fwd, reversed,
                                                                            buffer_fragments));
}

void mutation_reader::move_buffer_content_to(fragment_buffer& to) {
    auto& from = _impl->_buffer;
    if (to.empty()) {
        to.swap(from);
        return;
    }
    while (!from.empty()) {
        to.push_back(std::move(from.front()));
        from.pop_front();
    }
}

} // namespace reef
