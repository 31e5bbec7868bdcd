// The memtable's merge, memory accounting and timestamp bounds. See memtable.hh.
#include "db/memtable.hh"

#include "db/dirty_memory_manager.hh"

#include <algorithm>
#include <stdexcept>

namespace reef {

namespace memory_accounting {

// What glibc's malloc takes for a block of n bytes: an 8-byte header,
// rounded up to 16, at least 32. Counting this instead of n keeps the
// figure near the allocator's real use for the many small blocks here.
size_t block(size_t n) noexcept { return n == 0 ? 0 : std::max<size_t>(32, (n + 8 + 15) & ~size_t(15)); }

// A std::map node: the tree links (colour and three pointers) and the value.
template <typename Value>
size_t map_node() noexcept {
    return block(32 + sizeof(Value));
}

// libstdc++ keeps strings of up to 15 bytes inside the object.
size_t string_heap(size_t size) noexcept { return size > 15 ? block(size + 1) : 0; }

size_t bytes_heap(const bytes& b) noexcept { return block(b.capacity()); }

size_t key_heap(const clustering_key_prefix& k) noexcept { return block(k.external_memory_usage()); }

size_t cell_heap(const atomic_cell& c) noexcept { return string_heap(c.value().size()); }

size_t row_heap(const row& r) noexcept {
    size_t n = block(r.cells().external_memory_usage());
    for (auto& [id, c] : r.cells()) {
        if (auto* cell = std::get_if<atomic_cell>(&c)) {
            n += cell_heap(*cell);
            continue;
        }
        auto& coll = std::get<collection_cells>(c);
        n += block(coll.cells.capacity() * sizeof(coll.cells[0]));
        for (auto& [path, cell] : coll.cells) {
            n += bytes_heap(path) + cell_heap(cell);
        }
    }
    return n;
}

size_t row_entry(const clustering_key_prefix& key, const deletable_row& r) noexcept {
    return map_node<mutation_partition::rows_type::value_type>() + key_heap(key) + row_heap(r.cells);
}

size_t range_tombstones(const range_tombstone_list& l) noexcept {
    size_t n = block(l.ranges().capacity() * sizeof(range_tombstone_entry));
    for (auto& e : l) {
        n += key_heap(e.start.key()) + key_heap(e.end.key());
    }
    return n;
}

// What a partition costs besides its rows, static row and range tombstones:
// its node, its key, and the two copies of the clustering types that its
// row map's and range list's comparators hold.
size_t partition_entry(const schema& s, const dht::decorated_key& k) noexcept {
    return map_node<memtable::partitions_type::value_type>() + string_heap(k.key().size()) +
           2 * block(s.clustering_key().size() * sizeof(data_type));
}

} // namespace memory_accounting

namespace {

const schema& checked_schema(const schema_ptr& s) {
    if (!s) {
        throw std::invalid_argument("memtable: no schema");
    }
    return *s;
}

} // namespace

memtable::memtable(schema_ptr s)
    : _schema(std::move(s)), _forward_order(checked_schema(_schema), false),
      _reversed_order(_forward_order.clustering(), true) {}

memtable::~memtable() { release_dirty_memory(); }

void memtable::set_dirty_memory(dirty_memory_manager* m) noexcept {
    release_dirty_memory();
    _dirty = m;
    account_growth();
}

void memtable::account_growth() noexcept {
    if (_dirty && _occupancy != _accounted) {
        if (_occupancy > _accounted) {
            _dirty->grow(_occupancy - _accounted, _sealed);
        } else {
            _dirty->release(_accounted - _occupancy, _sealed);
        }
        _accounted = _occupancy;
    }
}

void memtable::mark_sealed() noexcept {
    if (!_sealed && _dirty) {
        _dirty->seal(_accounted);
    }
    _sealed = true;
}

void memtable::release_dirty_memory() noexcept {
    if (_dirty) {
        std::exchange(_dirty, nullptr)->release(std::exchange(_accounted, 0), _sealed);
    }
}

void memtable::note_timestamp(write_time::timestamp_type ts) noexcept {
    if (ts == write_time::missing_timestamp) {
        return;
    }
    _min_timestamp = std::min(_min_timestamp, ts);
    _max_timestamp = std::max(_max_timestamp, ts);
}

void memtable::note_timestamps(const mutation_partition& p) noexcept {
    auto cells = [this](const row& r) {
        for (auto& [id, c] : r.cells()) {
            if (auto* cell = std::get_if<atomic_cell>(&c)) {
                note_timestamp(cell->timestamp());
                continue;
            }
            auto& coll = std::get<collection_cells>(c);
            note_timestamp(coll.tomb.timestamp);
            for (auto& [path, cell] : coll.cells) {
                note_timestamp(cell.timestamp());
            }
        }
    };
    note_timestamp(p.partition_tombstone().timestamp);
    cells(p.static_row());
    for (auto& [key, r] : p.rows()) {
        note_timestamp(r.marker.timestamp);
        note_timestamp(r.tomb.timestamp);
        cells(r.cells);
    }
    for (auto& e : p.range_tombstones()) {
        note_timestamp(e.tomb.timestamp);
    }
}

void memtable::apply(const mutation& m) {
    const reef::schema& ms = *m.schema();
    if (m.schema() != _schema && (ms.keyspace() != _schema->keyspace() || ms.table() != _schema->table())) {
        throw std::invalid_argument("memtable of " + _schema->keyspace() + "." + _schema->table() +
                                    ": mutation of another table, " + ms.keyspace() + "." + ms.table());
    }
    namespace ma = memory_accounting;
    const auto& in = m.partition();
    auto [it, inserted] = _partitions.try_emplace(m.decorated_key(), *_schema);
    if (inserted) {
        _occupancy += ma::partition_entry(*_schema, it->first);
        account_growth();
    }
    auto& p = it->second;
    // Only what the merge can touch is measured before and after it: the
    // static row, the incoming rows' rows, and the range tombstones if any
    // come in (the list may split and join ranges anywhere in it).
    bool has_range_tombstones = !in.range_tombstones().empty();
    auto touched = [&] {
        size_t n = ma::row_heap(p.static_row());
        if (has_range_tombstones) {
            n += ma::range_tombstones(p.range_tombstones());
        }
        for (auto& [key, r] : in.rows()) {
            if (auto f = p.rows().find(key); f != p.rows().end()) {
                n += ma::row_entry(f->first, f->second);
            }
        }
        return n;
    };
    size_t before = touched();
    ++_generation;
    note_timestamps(in);
    try {
        p.apply(*_schema, in);
    } catch (...) {
        // A merge that failed half-way (a malformed collection) may have
        // changed some rows: keep the count true to what is held.
        _occupancy = _occupancy - before + touched();
        account_growth();
        throw;
    }
    _occupancy = _occupancy - before + touched();
    account_growth();
}

std::optional<clustering_key_prefix> memtable::erase_last_rows(const dht::decorated_key& k, size_t n) noexcept {
    namespace ma = memory_accounting;
    auto it = _partitions.find(k);
    if (it == _partitions.end() || n == 0 || it->second.rows().empty()) {
        return std::nullopt;
    }
    auto& p = it->second;
    auto& rows = p.rows();
    auto first = rows.end();
    for (size_t i = 0; i < n && first != rows.begin(); ++i) {
        --first;
        _occupancy -= ma::row_entry(first->first, first->second);
    }
    std::optional<clustering_key_prefix> out(first->first);
    p.erase_rows(first, rows.end());
    ++_generation;
    account_growth();
    return out;
}

size_t memtable::compute_occupancy() const {
    namespace ma = memory_accounting;
    size_t n = 0;
    for (auto& [key, p] : _partitions) {
        n += ma::partition_entry(*_schema, key) + ma::row_heap(p.static_row()) + ma::range_tombstones(p.range_tombstones());
        for (auto& [ck, r] : p.rows()) {
            n += ma::row_entry(ck, r);
        }
    }
    return n;
}

size_t memtable::apply_bound(const reef::schema& s, const mutation& m) {
    namespace ma = memory_accounting;
    using cell_entry = row::cells_type::value_type;
    auto& p = m.partition();
    size_t n = ma::partition_entry(s, m.decorated_key()) + ma::row_heap(p.static_row());
    if (size_t k = p.range_tombstones().ranges().size()) {
        // Each incoming range may split an entry at both ends (copying its bound keys) and the list's vector may
        // double: three times the incoming list, and room for 4k + 4 more entries.
        n += 3 * ma::range_tombstones(p.range_tombstones()) + ma::block((4 * k + 4) * sizeof(range_tombstone_entry));
    }
    if (!p.static_row().empty()) {
        n += ma::block(2 * s.static_columns().size() * sizeof(cell_entry));
    }
    size_t row_growth = ma::block(2 * s.regular_columns().size() * sizeof(cell_entry));
    for (auto& [ck, r] : p.rows()) {
        n += ma::row_entry(ck, r) + row_growth;
    }
    return n;
}

} // namespace reef
