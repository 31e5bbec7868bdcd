// The compacting reader. See compacting_reader.hh; the rules are mutation/README.md's (shadowing, purging).
#include "reader/compacting_reader.hh"

#include "mutation/mutation_partition.hh"
#include "runtime/reactor.hh"

#include <algorithm>
#include <stdexcept>

namespace reef {

namespace {

// Keeps the cells and collection elements live at `now`; collection
// tombstones go (a query result carries no tombstones). Returns whether
// anything is left.
bool keep_live_cells(row& r, deletion_time_type now) {
    // A row whose cells are all live and without collection tombstones
    // (the most) is left as it is.
    bool all_live = std::all_of(r.cells().begin(), r.cells().end(), [&](auto& e) {
        if (auto* cell = std::get_if<atomic_cell>(&e.second)) {
            return cell->is_live(now);
        }
        auto& coll = std::get<collection_cells>(e.second);
        return !coll.tomb && !coll.cells.empty() &&
               std::all_of(coll.cells.begin(), coll.cells.end(), [&](auto& c) { return c.second.is_live(now); });
    });
    if (all_live) {
        return !r.empty();
    }
    row kept;
    for (auto& [id, c] : r.cells()) {
        if (auto* cell = std::get_if<atomic_cell>(&c)) {
            if (cell->is_live(now)) {
                kept.apply(id, *cell);
            }
            continue;
        }
        auto& coll = std::get<collection_cells>(c);
        collection_cells live;
        for (auto& e : coll.cells) {
            if (e.second.is_live(now)) {
                live.cells.push_back(e);
            }
        }
        if (!live.cells.empty()) {
            // Into an empty column: the path order is already right.
            kept.apply(id, std::move(live), [](bytes_view, bytes_view) { return 0; });
        }
    }
    r = std::move(kept);
    return !r.empty();
}

class compacting_reader final : public mutation_reader_impl {
public:
    compacting_reader(mutation_reader source, deletion_time_type now, compaction_mode mode,
                      deletion_time_type gc_before, write_time::timestamp_type max_purgeable, max_purgeable_fn per_partition,
                      streamed_forwarding fwd)
        : mutation_reader_impl(source.schema()), _source(std::move(source)), _mode(mode),
          _purger{now, gc_before, max_purgeable}, _max_purgeable_for(std::move(per_partition)),
          _forwarding(fwd == streamed_forwarding::yes) {}

    future<> fill_buffer() override {
        while (!is_buffer_full()) {
            if (_source.is_buffer_empty()) {
                if (!_buffer.empty()) {
                    // What the source gave is compacted: hand it out rather
                    // than fill the source again. The source's fills set the
                    // pace (a short read takes a few small fills, see
                    // enable_slow_start), not this buffer's size.
                    break;
                }
                if (_source.is_end_of_stream()) {
                    _end_of_stream = true;
                    break;
                }
                co_await _source.fill_buffer();
                // A long run of dropped fragments (a deleted partition) must
                // not hold the shard, nor, in a debug build, pile up the
                // frames of sources that fill without suspending
                // (ARCHITECTURE.md, coroutine rule 5).
                co_await maybe_yield();
                continue;
            }
            if (compact_rows_in_place()) {
                continue;
            }
            consume(_source.pop_mutation_fragment());
        }
    }

    future<> next_partition() override {
        // Only a partition whose start went out is the consumer's to skip;
        // one still held back is, for the consumer, not begun.
        if (_in_partition && !_pending_start) {
            _in_partition = false;
            co_await _source.next_partition();
        }
        // A forwarding stream ended with the last window; the next
        // partition is to come.
        _end_of_stream = false;
    }

    future<> fast_forward_to(const dht::partition_range& pr) override {
        _in_partition = false;
        _pending_start.reset();
        co_await _source.fast_forward_to(pr);
    }

    future<> fast_forward_to(position_range pr) override {
        if (!_forwarding) {
            throw std::logic_error("compacting reader: fast_forward_to(position_range) without forwarding");
        }
        // The source opens the window with the range tombstone in force
        // there and closes it at the window's end; the state here follows.
        co_await _source.fast_forward_to(std::move(pr));
    }

    future<> close() noexcept override { return _source.close(); }

private:
    bool for_query() const noexcept { return _mode == compaction_mode::query; }

    // The partition goes out once it has something to show.
    void emit_start() {
        if (_pending_start) {
            push(std::move(*_pending_start));
            _pending_start.reset();
        }
    }

    void consume(mutation_fragment f) {
        std::visit([this](auto& x) { consume(x); }, f);
    }

    void consume(partition_start& ps) {
        _in_partition = true;
        _partition_tomb = ps.partition_tombstone;
        _range_tomb = {};
        _emitted_range_tomb = {};
        if (_max_purgeable_for && !for_query()) {
            _purger.max_purgeable = _max_purgeable_for(ps.key);
        }
        tombstone out = for_query() ? tombstone{} : _purger.purged(ps.partition_tombstone);
        _pending_start.emplace(partition_start{std::move(ps.key), out});
        if (out || _forwarding) {
            emit_start();
        }
    }

    void consume(static_row& sr) {
        drop_shadowed_cells(sr.cells, _partition_tomb);
        bool left = for_query() ? keep_live_cells(sr.cells, _purger.now) : _purger.purge(sr.cells);
        if (left) {
            emit_start();
            push(std::move(sr));
        }
    }

    void consume(clustering_row& cr) {
        if (for_query()) {
            if (query_row(cr)) {
                emit_start();
                _buffer.emplace_back(std::in_place_type<clustering_row>, std::move(cr));
            }
            return;
        }
        tombstone outer = _partition_tomb;
        outer.apply(_range_tomb);
        deletable_row r{cr.marker, cr.row_tombstone, std::move(cr.cells)};
        if (!drop_shadowed_row(r, outer) || !_purger.purge(r)) {
            return;
        }
        emit_start();
        _buffer.emplace_back(std::in_place_type<clustering_row>, std::move(cr.key), r.marker, r.tomb, std::move(r.cells));
    }

    // A query's row where it is: what is shadowed or not live at `now` dropped, the row tombstone too (a query
    // result carries no tombstones). Returns whether anything is left.
    bool query_row(clustering_row& cr) {
        tombstone outer = _partition_tomb;
        outer.apply(_range_tomb);
        if (!drop_shadowed_row(cr.marker, cr.row_tombstone, cr.cells, outer)) {
            return false;
        }
        if (!cr.marker.is_live(_purger.now)) {
            cr.marker = {};
        }
        cr.row_tombstone = {};
        return keep_live_cells(cr.cells, _purger.now) || !cr.marker.empty();
    }

    // A query's common case, a source buffer of rows once the partition went out: the buffer is taken whole and
    // its rows compacted where they are, none moved but to close the gaps of those dropped.
    bool compact_rows_in_place() {
        if (!for_query() || !_buffer.empty() || _pending_start || !_in_partition || !_source.buffer().only_rows()) {
            return false;
        }
        _source.move_buffer_content_to(_buffer);
        _buffer.retain([this](mutation_fragment& f) { return query_row(std::get<clustering_row>(f)); });
        return true;
    }

    void consume(range_tombstone_change& rtc) {
        // The tombstone in force shadows rows whether or not it goes out.
        _range_tomb = rtc.tomb;
        if (for_query()) {
            return;
        }
        // One the partition tombstone covers adds nothing (drop_shadowed);
        // a purgeable one goes (purge).
        tombstone out = rtc.tomb.supersedes(_partition_tomb) ? rtc.tomb : tombstone{};
        out = _purger.purged(out);
        if (out == _emitted_range_tomb) {
            return;
        }
        emit_start();
        _emitted_range_tomb = out;
        push(range_tombstone_change{std::move(rtc.position), out});
    }

    void consume(partition_end& pe) {
        _in_partition = false;
        if (_pending_start) {
            // Nothing of the partition is left: it is not emitted.
            _pending_start.reset();
            return;
        }
        push(std::move(pe));
    }

    mutation_reader _source;
    compaction_mode _mode;
    deletion_purger _purger;
    max_purgeable_fn _max_purgeable_for;
    bool _forwarding;
    // The source is inside a partition (its partition_start was consumed).
    bool _in_partition = false;
    // The partition's start while nothing of it has gone out yet.
    std::optional<partition_start> _pending_start;
    // The source's partition tombstone and range tombstone in force.
    tombstone _partition_tomb;
    tombstone _range_tomb;
    // The range tombstone in force in the output (compaction mode).
    tombstone _emitted_range_tomb;
};

} // namespace

mutation_reader make_compacting_reader(mutation_reader source, deletion_time_type now, compaction_mode mode,
                                       std::optional<deletion_time_type> gc_before,
                                       write_time::timestamp_type max_purgeable, streamed_forwarding fwd) {
    deletion_time_type gc = gc_before ? *gc_before : now - source.schema()->options().gc_grace_seconds;
    return mutation_reader(
        std::make_unique<compacting_reader>(std::move(source), now, mode, gc, max_purgeable, max_purgeable_fn{}, fwd));
}

mutation_reader make_compacting_reader(mutation_reader source, deletion_time_type now, compaction_mode mode,
                                       deletion_time_type gc_before, max_purgeable_fn max_purgeable,
                                       streamed_forwarding fwd) {
    if (!max_purgeable) {
        throw std::invalid_argument("make_compacting_reader: no max_purgeable function");
    }
    return mutation_reader(std::make_unique<compacting_reader>(std::move(source), now, mode, gc_before,
                                                               std::numeric_limits<write_time::timestamp_type>::max(),
                                                               std::move(max_purgeable), fwd));
}

} // namespace reef
