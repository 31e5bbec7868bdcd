// The partition-range sstable reader. See sstable_reader.hh.
#include "sstables/sstable_reader.hh"

#include "reader/mutation_fragment_filter.hh"
#include "sstables/mx_reader.hh"
#include "sstables/reversed_sstable_reader.hh"

#include <optional>
#include <stdexcept>
#include <vector>

namespace reef::sstables {

namespace {

class sstable_reader final : public mutation_reader_impl {
public:
    sstable_reader(schema_ptr s, sstable_read_handles h, dht::partition_range range, clustering_ranges slice,
                   cache::bypass_cache bypass)
        : mutation_reader_impl(std::move(s)), _h(std::move(h)),
          _caches(*_h.index_file, *_h.index_cache, bypass),
          _index(*_h.summary, _caches, _h.parse_page), _range(std::move(range)), _slice(std::move(slice)) {}

    future<> fill_buffer() override {
        while (!is_buffer_full() && !_end_of_stream) {
            if (!_inner) {
                if (_range_done) {
                    _end_of_stream = true;
                    break;
                }
                co_await open_range();
                continue;
            }
            if (_inner->is_buffer_empty()) {
                if (_inner->is_end_of_stream()) {
                    co_await close_inner();
                    _range_done = true;
                    continue;
                }
                co_await _inner->fill_buffer();
                continue;
            }
            while (!_inner->is_buffer_empty() && !is_buffer_full()) {
                take(_inner->pop_mutation_fragment());
            }
        }
    }

    future<> next_partition() override {
        if (_in_partition) {
            _in_partition = false;
            _filter.reset();
            if (_inner) {
                co_await _inner->next_partition();
            }
        }
        _end_of_stream = false;
    }

    future<> fast_forward_to(const dht::partition_range& pr) override {
        co_await close_inner();
        _in_partition = false;
        _filter.reset();
        _range = pr;
        _range_done = false;
    }

    future<> fast_forward_to(position_range) override {
        throw std::logic_error("fast_forward_to(position_range) on an sstable reader without forwarding");
    }

    future<> close() noexcept override {
        try {
            co_await close_inner();
        } catch (...) {
        }
        try {
            co_await _caches.close();
        } catch (...) {
        }
    }

private:
    // Starts the read of _range's byte range of Data.db, or marks the range done when it holds nothing.
    future<> open_range() {
        if (_range.is_singular()) {
            auto& key = _range.start()->position.key()->key();
            if (!_h.components->filter.is_present(key.bytes())) {
                _range_done = true;
                co_return;
            }
        }
        auto dr = co_await _index.range(_range);
        if (dr.start >= dr.end) {
            _range_done = true;
            co_return;
        }
        auto src = make_data_source(_h.data, *_h.components, dr.start, dr.end - dr.start);
        _inner.emplace(make_mx_full_scan_reader(_schema, _h.header, std::move(src), _h.data_file,
                                                _h.components->data_length(), _range, _h.token, dr.start));
    }

    future<> close_inner() {
        if (_inner) {
            auto r = std::move(*_inner);
            _inner.reset();
            co_await r.close();
        }
    }

    // One fragment of the inner stream through the slice.
    void take(mutation_fragment f) {
        if (std::holds_alternative<partition_start>(f)) {
            _filter.emplace(*_schema, _slice, false);
            _skipping = false;
            _in_partition = true;
            push(std::move(f));
            return;
        }
        bool end = std::holds_alternative<partition_end>(f);
        if (end) {
            _in_partition = false;
        }
        if (_skipping) {
            if (end) {
                push(std::move(f));
            }
            return;
        }
        _out.clear();
        bool more = _filter->consume(std::move(f), _out);
        if (!more && !end) {
            _filter->finish(_out);
            _skipping = true;
        }
        for (auto& o : _out) {
            push(std::move(o));
        }
    }

    sstable_read_handles _h;
    cache::read_caches<index::partition_index_page> _caches;
    index::index_reader _index;
    dht::partition_range _range;
    clustering_ranges _slice;
    std::optional<mutation_reader> _inner;
    std::optional<mutation_fragment_filter> _filter;
    std::vector<mutation_fragment> _out;
    bool _range_done = false;
    bool _in_partition = false;
    bool _skipping = false;  // past the slice's last range: drop until partition_end
};

} // namespace

mutation_reader make_sstable_reader(schema_ptr s, sstable_read_handles h, dht::partition_range range,
                                    clustering_ranges slice, bool reversed, streamed_forwarding fwd,
                                    cache::bypass_cache bypass) {
    if (reversed) {
        return make_reversed_sstable_reader(std::move(s), std::move(h), std::move(range), std::move(slice), fwd, bypass);
    }
    if (fwd == streamed_forwarding::yes) {
        throw std::invalid_argument("make_sstable_reader: clustering-window forwarding is not supported yet");
    }
    return mutation_reader(std::make_unique<sstable_reader>(std::move(s), std::move(h), std::move(range),
                                                            std::move(slice), bypass));
}

} // namespace reef::sstables
