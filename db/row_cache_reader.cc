// The row cache's reader: walks the partition range over the cache's entries, serving each partition from its
// memtable when the cache holds the slice, and asking the underlying for the rest (populating as it goes).
#include "db/memtable_reader.hh"
#include "db/row_cache.hh"
#include "runtime/with_closeable.hh"

namespace reef {

namespace {

// The next whole partition of r (forward, no forwarding), shadowed data dropped, or nothing at the end of its
// stream. Dropping what the partition's own tombstones delete changes no read's result, and the rows a range
// deletion covers are then neither kept in the cache nor walked by every read that passes them.
future<std::optional<mutation>> read_partition(mutation_reader& r, schema_ptr s) {
    mutation_partition_builder builder(std::move(s));
    while (auto f = co_await r()) {
        if (auto m = builder.consume(std::move(*f))) {
            m->partition().drop_shadowed();
            co_return std::move(m);
        }
    }
    co_return std::nullopt;
}

dht::partition_range after_key(const dht::decorated_key& k, const dht::partition_range& r) {
    return dht::partition_range(dht::partition_range::bound{dht::ring_position::for_key(k), false}, r.end());
}

// The key of a range that holds exactly one key (partition_range::is_singular does not look at inclusiveness).
const dht::decorated_key* single_key(const dht::partition_range& r) {
    if (r.is_singular() && r.start()->inclusive && r.end()->inclusive) {
        return &*r.start()->position.key();
    }
    return nullptr;
}

} // namespace

// Partition by partition: the cache's entry when partition continuity says the ring up to it holds nothing else
// and its clustering continuity holds the slice; one partition read from the underlying when the entry lacks the
// slice or a single key is asked for; otherwise a scan of the underlying over the rest of the range, which
// populates as it goes. Every partition is then streamed by a memtable reader over its entry's memtable (or, in
// an outdated population phase, over a private one), which gives the slice, the direction and the windows.
class row_cache_reader final : public mutation_reader_impl {
public:
    row_cache_reader(row_cache& c, const dht::partition_range& range, clustering_ranges slice, bool reversed,
                     streamed_forwarding fwd, reader_permit permit)
        : mutation_reader_impl(c._schema), _cache(c), _range(range), _slice(std::move(slice)),
          _forward_slice(reversed ? reverse_ranges(_slice) : _slice), _reversed(reversed), _fwd(fwd),
          _permit(std::move(permit)), _from_ring_start(!range.start()) {}

    future<> fill_buffer() override {
        while (!is_buffer_full() && !_end_of_stream) {
            if (!_partition) {
                if (_range_done) {
                    _end_of_stream = true;
                    break;
                }
                co_await next_source();
                continue;
            }
            auto& p = *_partition;
            if (p.is_buffer_empty()) {
                if (p.is_end_of_stream()) {
                    if (_fwd == streamed_forwarding::yes) {
                        // The partition's header or window is over: the consumer moves on.
                        _end_of_stream = true;
                        break;
                    }
                    co_await close_partition();
                    continue;
                }
                co_await p.fill_buffer();
                continue;
            }
            // Hits are served by the memtable reader: its buffer is handed on whole when this one is empty.
            if (_buffer.empty()) {
                p.move_buffer_content_to(_buffer);
                _emitted = true;
            }
            while (!p.is_buffer_empty() && !is_buffer_full()) {
                push(p.pop_mutation_fragment());
                _emitted = true;
            }
        }
    }

    future<> next_partition() override {
        if (_partition && _emitted) {
            co_await close_partition();
        }
        _end_of_stream = false;
    }

    future<> fast_forward_to(const dht::partition_range& pr) override {
        co_await close_partition();
        co_await close_scan();
        _range = pr;
        _range_done = false;
        _after.reset();
        _from_ring_start = !pr.start();
    }

    future<> fast_forward_to(position_range pr) override {
        if (!_partition) {
            _end_of_stream = true;
            co_return;
        }
        co_await _partition->fast_forward_to(std::move(pr));
    }

    future<> close() noexcept override {
        co_await close_partition();
        co_await close_scan();
    }

private:
    future<> close_partition() noexcept {
        if (_partition) {
            co_await _partition->close();
            _partition.reset();
        }
    }

    future<> close_scan() noexcept {
        if (_scan) {
            co_await _scan->close();
            _scan.reset();
        }
    }

    void advance_past(const dht::decorated_key& k) {
        if (_range.end() && _range.end()->position.key() && *_range.end()->position.key() == k) {
            _range_done = true;  // k was the range's last key
        }
        _range = after_key(k, _range);
        _after = k;
        _from_ring_start = false;
    }

    void start_partition(std::shared_ptr<memtable> data, const dht::decorated_key& k) {
        _partition.emplace(make_memtable_reader(std::move(data), _schema,
                                                {.range = dht::partition_range::singular(k),
                                                 .slice = _slice,
                                                 .order = read_order_for(_reversed),
                                                 .forwarding = _fwd}));
        _emitted = false;
    }

    // The partition's memtable: the cache's entry when the population phase is still `phase`, else a private one.
    std::shared_ptr<memtable> place(const dht::decorated_key& k, const std::optional<mutation>& m, uint64_t phase,
                                    bool adjacent) {
        if (_cache._phase == phase) {
            return _cache.populate(k, m ? &*m : nullptr, _forward_slice, adjacent ? _after : std::nullopt,
                                   adjacent && _from_ring_start);
        }
        if (!m) {
            return nullptr;
        }
        auto mt = std::make_shared<memtable>(_schema);
        mt->apply(*m);
        return mt;
    }

    // One partition from the underlying, then served.
    future<> read_one(dht::decorated_key k) {
        _cache.count_miss();
        auto phase = _cache._phase;
        auto r = _cache._underlying(dht::partition_range::singular(k), _forward_slice, _permit);
        auto m = co_await with_closeable(std::move(r), [this](mutation_reader& r) { return read_partition(r, _schema); });
        auto data = place(k, m, phase, false);
        if (data) {
            start_partition(std::move(data), k);
        }
    }

    future<> next_source() {
        if (_scan) {
            auto m = co_await read_partition(*_scan, _schema);
            if (!m) {
                co_await close_scan();
                if (!_range.end() && _cache._phase == _scan_phase) {
                    _cache.mark_continuous_before(_cache._entries.end(), _after, _from_ring_start);
                }
                _range_done = true;
                co_return;
            }
            auto k = m->decorated_key();
            auto data = place(k, m, _scan_phase, true);
            advance_past(k);
            start_partition(std::move(data), k);
            co_return;
        }
        auto it = _cache.lower_bound(_range);
        bool in_range = it != _cache._entries.end() && !_range.after(it->first);
        // Nothing can be missing before the entry when the range starts at its key.
        bool starts_at_entry = in_range && _range.start() && _range.start()->inclusive &&
                               _range.start()->position.key() && *_range.start()->position.key() == it->first;
        if (starts_at_entry || _cache.continuous_before(it)) {
            if (!in_range) {
                if (single_key(_range)) {
                    _cache.count_hit();  // a key known absent
                }
                _range_done = true;
                co_return;
            }
            auto& e = *it->second;
            auto k = e.key;
            advance_past(k);
            if (!e.data) {
                _cache.count_hit();
                _cache.touch(e);
                co_return;
            }
            if (e.continuity.contains(_cache._cmp, _forward_slice)) {
                _cache.count_hit();
                _cache.touch(e);
                start_partition(e.data, k);
                co_return;
            }
            co_await read_one(std::move(k));
            co_return;
        }
        if (auto key = single_key(_range)) {
            auto k = *key;
            _range_done = true;
            co_await read_one(std::move(k));
            co_return;
        }
        _cache.count_miss();
        _scan_phase = _cache._phase;
        _scan.emplace(_cache._underlying(_range, _forward_slice, _permit));
    }

    row_cache& _cache;
    dht::partition_range _range;  // what is left to read
    clustering_ranges _slice;
    clustering_ranges _forward_slice;
    bool _reversed;
    streamed_forwarding _fwd;
    reader_permit _permit;
    // Where _range starts, for partition continuity: just after this key (which the reader served), or at the
    // ring's start; neither when the read's own range starts elsewhere.
    std::optional<dht::decorated_key> _after;
    bool _from_ring_start;
    bool _range_done = false;
    std::optional<mutation_reader> _partition;  // the partition being streamed
    bool _emitted = false;                      // whether a fragment of it was
    std::optional<mutation_reader> _scan;       // the underlying over the rest of the range
    uint64_t _scan_phase = 0;
};

mutation_reader row_cache::make_reader(reader_permit permit, read_options opts) {
    // A hit on one partition (a query's usual read): its memtable's reader alone, without the walk above it.
    if (auto k = single_key(opts.range)) {
        auto it = _entries.find(*k);
        // (A forward slice is looked at in place: `reversed ? reverse_ranges(slice) : slice` would copy it.)
        if (it != _entries.end() && it->second->data &&
            (opts.reversed() ? it->second->continuity.contains(_cmp, reverse_ranges(opts.slice))
                             : it->second->continuity.contains(_cmp, opts.slice))) {
            count_hit();
            touch(*it->second);
            return make_memtable_reader(it->second->data, _schema, std::move(opts));
        }
    }
    return mutation_reader(std::make_unique<row_cache_reader>(*this, opts.range, std::move(opts.slice), opts.reversed(),
                                                              opts.forwarding, std::move(permit)));
}

} // namespace reef
