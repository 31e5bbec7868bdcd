// The row cache's entries, continuity, population, invalidation and eviction. Its reader is row_cache_reader.cc.
#include "db/row_cache.hh"

#include <algorithm>

namespace reef {

void clustering_continuity::add(const position_in_partition_comparator& cmp, const clustering_ranges& ranges) {
    for (auto& r : ranges) {
        if (cmp(r.start, r.end) >= 0) {
            continue;
        }
        // The first range that ends at or after r's start (touching ones merge).
        auto first = std::partition_point(_ranges.begin(), _ranges.end(),
                                          [&](const position_range& x) { return cmp(x.end, r.start) < 0; });
        // One past the last range that starts at or before r's end.
        auto last = std::partition_point(first, _ranges.end(),
                                         [&](const position_range& x) { return cmp(x.start, r.end) <= 0; });
        if (first == last) {
            _ranges.insert(first, r);
            continue;
        }
        position_range merged{cmp(first->start, r.start) < 0 ? first->start : r.start,
                              cmp(std::prev(last)->end, r.end) > 0 ? std::prev(last)->end : r.end};
        auto at = _ranges.erase(first, last);
        _ranges.insert(at, std::move(merged));
    }
}

bool clustering_continuity::contains(const position_in_partition_comparator& cmp, const clustering_ranges& ranges) const {
    for (auto& r : ranges) {
        if (cmp(r.start, r.end) >= 0) {
            continue;
        }
        // The only range that can hold r: the first one ending after r's start.
        auto it = std::partition_point(_ranges.begin(), _ranges.end(),
                                       [&](const position_range& x) { return cmp(x.end, r.start) <= 0; });
        if (it == _ranges.end() || cmp(it->start, r.start) > 0 || cmp(it->end, r.end) < 0) {
            return false;
        }
    }
    return true;
}

void clustering_continuity::trim_from(const position_in_partition_comparator& cmp, const position_in_partition& p) {
    // The first range that ends after p.
    auto it = std::partition_point(_ranges.begin(), _ranges.end(),
                                   [&](const position_range& x) { return cmp(x.end, p) <= 0; });
    if (it != _ranges.end() && cmp(it->start, p) < 0) {
        it->end = p;
        ++it;
    }
    _ranges.erase(it, _ranges.end());
}

namespace {

// What an entry costs besides its memtable's occupancy: the entry, its map node and its key (as the memtable
// counts a partition's).
size_t entry_overhead(const dht::decorated_key& k) noexcept {
    return 160 + k.key().size();
}

} // namespace

row_cache::row_cache(schema_ptr s, row_cache_underlying underlying, cache::cache_tracker& tracker)
    : _schema(std::move(s)), _cmp(*_schema), _underlying(std::move(underlying)), _tracker(tracker) {}

row_cache::~row_cache() {
    _tracker.row_stats().partitions -= _entries.size();
    _tracker.row_stats().rows -= _stats.rows;
    // Entries leave the LRU as they are destroyed (lru_item's destructor).
    _entries.clear();
}

size_t row_cache::rows_of(const entry& e) noexcept {
    return e.data && !e.data->empty() ? e.data->partitions().begin()->second.rows().size() : 0;
}

void row_cache::count_row_insertions(size_t before, size_t after) noexcept {
    _stats.row_insertions += after - before;
    _tracker.row_stats().row_insertions += after - before;
    _stats.rows += after - before;
    _tracker.row_stats().rows += after - before;
}

bool row_cache::fits(const dht::decorated_key& key, const mutation& m, std::shared_ptr<memtable>& alone) const {
    size_t cap = _tracker.lru().budget() / max_partition_share;
    auto it = _entries.find(key);
    size_t have = it != _entries.end() ? it->second->charged() : entry_overhead(key);
    if (have > cap) {
        return false;
    }
    if (memtable::apply_bound(*_schema, m) <= cap - have) {
        return true;
    }
    // The bound is loose (cell vectors at their largest): measure.
    alone = std::make_shared<memtable>(_schema);
    alone->apply(m);
    return alone->occupancy() <= cap - have;
}

bool row_cache::evict_rows(entry& e) noexcept {
    size_t rows = rows_of(e);
    // Only the cache holds the memtable: no reader's row iterator can point into it.
    if (rows < 2 || e.data.use_count() != 1) {
        return false;
    }
    size_t n = std::clamp<size_t>(rows / 4, 1, max_eviction_chunk);
    auto first = e.data->erase_last_rows(e.key, n);
    e.continuity.trim_from(_cmp, position_in_partition::before_key(*first));
    _stats.row_evictions += n;
    _tracker.row_stats().row_evictions += n;
    _stats.rows -= n;
    _tracker.row_stats().rows -= n;
    size_t want = entry_overhead(e.key) + e.data->occupancy();
    if (e.charged() > want) {
        _tracker.lru().release(e, e.charged() - want);
    }
    _tracker.lru().link_coldest(e);
    return true;
}

void row_cache::entry::on_evict() noexcept {
    auto& c = cache;
    if (c.evict_rows(*this)) {
        return;
    }
    auto rows = rows_of(*this);
    c._stats.row_evictions += rows;
    c._tracker.row_stats().row_evictions += rows;
    ++c._stats.evictions;
    ++c._tracker.row_stats().evictions;
    // Destroys this entry: nothing of it is touched afterwards.
    c.erase(c._entries.find(key));
}

void row_cache::break_continuity_before(entries_type::iterator it) noexcept {
    if (it == _entries.end()) {
        _continuous_after_last = false;
    } else {
        it->second->continuous_before = false;
    }
}

void row_cache::erase(entries_type::iterator it) noexcept {
    break_continuity_before(std::next(it));
    auto rows = rows_of(*it->second);
    _stats.rows -= rows;
    _tracker.row_stats().rows -= rows;
    --_stats.partitions;
    --_tracker.row_stats().partitions;
    // The entry's destructor unlinks it and gives its charge back.
    _entries.erase(it);
}

void row_cache::recharge(entry& e) noexcept {
    size_t want = entry_overhead(e.key);
    if (e.data) {
        want += e.data->occupancy();
        for (auto& [k, p] : e.data->partitions()) {
            want += p.row_lookup_index_memory();
        }
    }
    if (want > e.charged()) {
        _tracker.lru().charge(e, want - e.charged());
    }
}

std::shared_ptr<memtable> row_cache::populate(const dht::decorated_key& key, const mutation* m,
                                              const clustering_ranges& forward_slice,
                                              const std::optional<dht::decorated_key>& after, bool from_ring_start) {
    std::shared_ptr<memtable> alone;
    if (m && !fits(key, *m, alone)) {
        // Too big to cache (see the class comment): served from a memtable of its own, the cache unchanged.
        if (!alone) {
            alone = std::make_shared<memtable>(_schema);
            alone->apply(*m);
        }
        return alone;
    }
    auto it = _entries.find(key);
    if (it == _entries.end()) {
        auto next = _entries.lower_bound(key);
        auto e = std::make_unique<entry>(*this, key);
        // The entry splits its range in two: both halves are as continuous as the whole was.
        e->continuous_before = continuous_before(next);
        it = _entries.emplace_hint(next, key, std::move(e));
        ++_stats.partitions;
        ++_tracker.row_stats().partitions;
        ++_stats.partition_insertions;
        ++_tracker.row_stats().partition_insertions;
    }
    auto& e = *it->second;
    if (m) {
        auto rows = rows_of(e);
        if (!e.data && alone) {
            e.data = std::move(alone);  // measured: m alone already
        } else {
            if (!e.data) {
                e.data = std::make_shared<memtable>(_schema);
            }
            e.data->apply(*m);
        }
        count_row_insertions(rows, rows_of(e));
        e.continuity.add(_cmp, forward_slice);
        // From now on the partition is read again and again, and changes only by populations: its row lookup
        // index is built now, while its rows are fresh in cache, when this population brought in at least half
        // of its rows (a partition populated a few rows at a time is left to the lazy build, or each small
        // population would pay for a walk of the whole partition).
        for (auto& [k, p] : e.data->partitions()) {
            if (2 * m->partition().rows().size() >= p.rows().size()) {
                p.build_row_lookup_index(*_schema);
            }
        }
    }
    mark_continuous_before(it, after, from_ring_start);
    ++_stats.populations;
    ++_tracker.row_stats().populations;
    auto data = e.data;
    recharge(e);
    // Most recently used; may evict anything, this entry included (its data lives on in `data`).
    _tracker.lru().link(e);
    return data;
}

row_cache::lookup_result row_cache::lookup(const dht::decorated_key& k, const clustering_ranges& forward_slice) {
    auto it = _entries.lower_bound(k);
    if (it != _entries.end() && it->first == k) {
        auto& e = *it->second;
        if (!e.data || e.continuity.contains(_cmp, forward_slice)) {
            count_hit();
            touch(e);
            return {true, e.data};
        }
    } else if (continuous_before(it)) {
        count_hit();  // known absent
        return {true, nullptr};
    }
    count_miss();
    return {};
}

std::shared_ptr<memtable> row_cache::fill(const dht::decorated_key& k, const mutation* m,
                                          const clustering_ranges& forward_slice, uint64_t phase) {
    if (_phase == phase) {
        return populate(k, m, forward_slice, std::nullopt, false);
    }
    if (!m) {
        return nullptr;
    }
    auto mt = std::make_shared<memtable>(_schema);
    mt->apply(*m);
    return mt;
}

void row_cache::mark_continuous_before(entries_type::iterator it, const std::optional<dht::decorated_key>& after,
                                       bool from_ring_start) noexcept {
    // Back from `it` over absences (which the underlying's answer agrees with) to `after` or the ring's start.
    auto first = it;
    while (true) {
        if (first == _entries.begin()) {
            if (after || !from_ring_start) {
                return;
            }
            break;
        }
        auto p = std::prev(first);
        if (after && p->first == *after) {
            break;
        }
        if (p->second->data) {
            return;
        }
        first = p;
    }
    for (; first != it; ++first) {
        first->second->continuous_before = true;
    }
    if (it == _entries.end()) {
        _continuous_after_last = true;
    } else {
        it->second->continuous_before = true;
    }
}

void row_cache::update(const memtable& flushed) {
    ++_phase;
    for (auto& [k, p] : flushed.partitions()) {
        auto it = _entries.lower_bound(k);
        bool held = it != _entries.end() && it->first == k;
        if (!held && !continuous_before(it)) {
            continue;  // the cache says nothing about k: it still does not
        }
        mutation m(_schema, k);
        m.partition().apply(*_schema, p);
        std::shared_ptr<memtable> alone;
        if (!held && !fits(k, m, alone)) {
            break_continuity_before(it);  // too big to cache: the ring there is no longer all in the cache
            continue;
        }
        if (!held) {
            // Inside a continuous range the sstables held nothing for k: now exactly the memtable's partition.
            auto e = std::make_unique<entry>(*this, k);
            e->continuous_before = true;
            it = _entries.emplace_hint(it, k, std::move(e));
            ++_stats.partitions;
            ++_tracker.row_stats().partitions;
            ++_stats.partition_insertions;
            ++_tracker.row_stats().partition_insertions;
        }
        auto& e = *it->second;
        if (!e.data) {
            // An absence (or the new entry): the partition is the memtable's, whole.
            e.data = std::make_shared<memtable>(_schema);
            e.continuity.add(_cmp, clustering_ranges{position_range::full()});
        }
        auto rows = rows_of(e);
        e.data->apply(m);
        count_row_insertions(rows, rows_of(e));
        ++_stats.merges;
        ++_tracker.row_stats().merges;
        recharge(e);
        // Most recently used (it was just written); may evict anything, this entry included.
        _tracker.lru().link(e);
    }
}

void row_cache::clear() {
    ++_phase;
    _stats.row_removals += _stats.rows;
    _tracker.row_stats().row_removals += _stats.rows;
    _tracker.row_stats().rows -= _stats.rows;
    _stats.rows = 0;
    _stats.invalidations += _entries.size();
    _tracker.row_stats().invalidations += _entries.size();
    _tracker.row_stats().partitions -= _entries.size();
    _stats.partitions = 0;
    _entries.clear();
    _continuous_after_last = false;
}

} // namespace reef
