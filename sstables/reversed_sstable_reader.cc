// The reversed partition-range sstable reader. See reversed_sstable_reader.hh.
#include "sstables/reversed_sstable_reader.hh"

#include "reader/mutation_fragment_filter.hh"
#include "reader/permit_checked_source.hh"
#include "sstables/index_entry.hh"
#include "sstables/mx_parser.hh"
#include "sstables/mx_reader.hh"
#include "sstables/partition_reversing_data_source.hh"

#include <algorithm>
#include <deque>
#include <optional>
#include <stdexcept>
#include <vector>

namespace reef::sstables {

namespace {

// One partition of the range: where it lies in Data.db and its promoted index as Index.db stores it.
struct partition_location {
    uint64_t start = 0;
    uint64_t end = 0;
    std::string promoted_index;
    uint64_t promoted_index_position = 0;
};

class reversed_sstable_reader final : public mutation_reader_impl {
public:
    reversed_sstable_reader(schema_ptr s, sstable_read_handles h, dht::partition_range range, clustering_ranges slice,
                            streamed_forwarding fwd, bypass_cache bypass, reader_permit permit)
        : mutation_reader_impl(std::move(s)), _h(std::move(h)),
          _hold(_h.hold_readers()), _permit(std::move(permit)),
          _caches(*_h.index_file, *_h.index_cache, bypass),
          _index(*_h.summary, _caches, _h.parse_page), _range(std::move(range)), _slice(std::move(slice)),
          _forwarding(fwd == streamed_forwarding::yes), _forward_order(*_schema), _order(*_schema, true),
          _index_file(_h.index_path) {
        auto& c = *_h.components;
        // Compressed: whole chunks are decompressed whatever is asked. Uncompressed Data.db is read plain (its CRC.db is
        // checked only by validation), so pages are the unit.
        _options.alignment = c.compression ? c.compression->chunk_length : 4096;
        _options.window = std::max<uint64_t>(_options.alignment, 32 * 1024);
        _open_data = [data = _h.data, components = _h.components, permit = _permit,
                      file = _h.data_file](uint64_t pos, uint64_t len) {
            return make_permit_checked_source(make_data_source(data, *components, pos, len, integrity_check::no), permit, file);
        };
    }

    future<> fill_buffer() override {
        if (_buffer.empty()) {
            _fed.clear();  // everything fed so far was consumed
        }
        if (!_end_of_stream) {
            _permit.check_timeout(_h.data_file);  // the partition's rest may be buffered already: no read would check
        }
        while (!is_buffer_full() && !_end_of_stream) {
            switch (_state) {
            case state::seek: co_await seek(); break;
            case state::between: co_await enter_next(); break;
            case state::in_partition:
                if (_forwarding && !_filter) {
                    _end_of_stream = true;  // waits for a window
                    break;
                }
                // Fragments move in a plain loop; only a fill of the inner reader is awaited (coroutine rule 5:
                // in debug builds, awaits that complete at once grow the stack).
                // Before the inner reader parses on: it passes over unwanted rows, but reads every byte on the way.
                if (auto to = jump_target()) {
                    co_await jump(*to);
                    break;
                }
                if (_replay.empty() && _inner->is_buffer_empty()) {
                    if (_inner->is_end_of_stream()) {
                        throw malformed_sstable_exception(_h.data_file, "a partition read backwards ended without its end");
                    }
                    co_await _inner->fill_buffer();
                    break;
                }
                if (step()) {
                    co_await close_inner();
                    _state = state::between;
                }
                break;
            }
        }
    }

    future<> next_partition() override {
        if (_state == state::in_partition) {
            co_await close_inner();
            _state = state::between;
        }
        _end_of_stream = false;
    }

    future<> fast_forward_to(const dht::partition_range& pr) override {
        co_await close_inner();
        _range = pr;
        _state = state::seek;
    }

    future<> fast_forward_to(position_range pr) override {
        if (!_forwarding) {
            throw std::logic_error("fast_forward_to(position_range) on an sstable reader without forwarding");
        }
        if (_state != state::in_partition) {
            _end_of_stream = true;
            co_return;
        }
        clustering_ranges window;
        for (auto& r : _slice) {
            const auto& s = _order(r.start, pr.start) < 0 ? pr.start : r.start;
            const auto& e = _order(r.end, pr.end) < 0 ? r.end : pr.end;
            if (_order(s, e) < 0) {
                window.push_back({s, e});
            }
        }
        _window_end = window.empty() ? std::nullopt : std::optional(window.back().end);
        // A window opened in the middle of the last one: the wrapper dropped what the buffer held, and pr starts at
        // or after everything consumed. What was fed at or after pr's start is fed again, from the tombstone in force
        // before it.
        auto again = std::find_if(_fed.begin(), _fed.end(),
                                  [&](const fed_fragment& f) { return _order(position_of(f.fragment), pr.start) >= 0; });
        if (again != _fed.end()) {
            _in_force = again->in_force_before;
            for (auto it = _fed.rbegin(); it != std::make_reverse_iterator(again); ++it) {
                _replay.push_front(std::move(it->fragment));
            }
        }
        _fed.clear();
        _filter.emplace(*_schema, std::move(window), true);
        _filter->set_tombstone_in_force(_in_force);
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
        _hold.release();
    }

private:
    enum class state {
        seek,          // find the range's first index entry
        between,       // the next index entry is the next partition, if in range
        in_partition,  // reading the partition's fragments from _inner
    };

    // Positions the index cursor at the first entry not before the range.
    future<> seek() {
        auto& points = _h.summary->points;
        _page = {};
        _page_index = points.size();
        _entry_index = 0;
        _state = state::between;
        if (_range.is_singular()) {
            auto& key = _range.start()->position.key()->key();
            if (!_h.components->filter.is_present(key.bytes())) {
                co_return;  // the bloom filter rules it out
            }
        }
        if (points.empty()) {
            co_return;
        }
        auto before = [this](const dht::decorated_key& k) { return _range.before(k); };
        size_t skipped = std::partition_point(points.begin(), points.end(), [&](auto& p) { return before(p.key); }) -
                         points.begin();
        _page_index = skipped == 0 ? 0 : skipped - 1;
        _permit.check_timeout(_index_file);
        _page = co_await _index.page(_page_index);
        _entry_index = index::entry_partition_point(*_page, before);
    }

    // The next partition of the range, if any.
    future<std::optional<partition_location>> next_location() {
        auto& points = _h.summary->points;
        while (_page_index < points.size() && _entry_index >= _page->size()) {
            ++_page_index;
            _entry_index = 0;
            if (_page_index < points.size()) {
                _permit.check_timeout(_index_file);
                _page = co_await _index.page(_page_index);
            }
        }
        if (_page_index >= points.size()) {
            co_return std::nullopt;
        }
        auto key = _page->key(_entry_index);
        if (_range.after(key)) {
            co_return std::nullopt;
        }
        partition_location loc{_page->data_position(_entry_index), _h.summary->data_length,
                               std::string(_page->promoted_index(_entry_index)), _page->promoted_index_position(_entry_index)};
        _key.emplace(std::move(key));
        if (_entry_index + 1 < _page->size()) {
            loc.end = _page->data_position(_entry_index + 1);
        } else if (_page_index + 1 < points.size()) {
            _permit.check_timeout(_index_file);
            auto next = co_await _index.page(_page_index + 1);
            if (!next->empty()) {
                loc.end = next->data_position(0);
            }
        }
        ++_entry_index;
        co_return loc;
    }

    future<> enter_next() {
        auto loc = co_await next_location();
        if (!loc) {
            _end_of_stream = true;  // later partitions only come with a new range
            co_return;
        }
        if (loc->end <= loc->start) {
            throw malformed_sstable_exception(_index_file, "the partition at Data.db " + std::to_string(loc->start) +
                                                               " ends at " + std::to_string(loc->end));
        }
        std::optional<reversal_start> start;
        auto version = _h.components->desc.version;
        _pi = parse_promoted_index(loc->promoted_index, version, _index_file, loc->promoted_index_position);
        _partition_start = loc->start;
        _partition_end = loc->end;
        _jump.reset();
        if (_pi) {
            // The walk starts in the block holding the forward end of the slice's last range (the read's first).
            auto end = _slice.empty() ? position_in_partition::before_all_clustered_rows() : _slice.front().start.reversed();
            start = find_reversal_start(*_pi, loc->start, loc->end, end, _forward_order, _h.header->clustering_types, version,
                                        _index_file);
        }
        auto src = make_partition_reversing_data_source(_open_data, *_h.header, std::string(_h.data_file), loc->start,
                                                        loc->end, start, _options);
        _inner.emplace(make_mx_full_scan_reader(_schema, _h.header, std::move(src), inner_file_name(), UINT64_MAX / 2,
                                                dht::partition_range::full(), _h.token, loc->start,
                                                mx_parser::start_at::partition, row_skipper()));
        _state = state::in_partition;
        _in_force = {};
        _filter.reset();
        _replay.clear();
        _fed.clear();
        _window_end.reset();
        _last_fed.reset();
        if (!_forwarding) {
            // Before the first fill: the inner reader asks it which rows to build (row_skipper).
            _filter.emplace(*_schema, _slice, true);
        }
        auto ps = co_await next_inner();
        if (!ps || !std::holds_alternative<partition_start>(*ps)) {
            throw malformed_sstable_exception(_h.data_file, loc->start, "the reversed partition has no partition start");
        }
        if (std::get<partition_start>(*ps).key.key() != _key->key()) {
            throw malformed_sstable_exception(_h.data_file, loc->start, "the partition's key is not the one Index.db names");
        }
        push(std::move(*ps));
        // The static row comes with the partition start, before any window.
        auto next = co_await next_inner();
        if (next && std::holds_alternative<static_row>(*next)) {
            push(std::move(*next));
        } else if (next) {
            _replay.push_back(std::move(*next));
        }
    }

    // The inner reader's question for each row it parses: whether the slice (or window) cannot want it. The filter
    // has consumed only what came before the row: between ranges, a row before the next range's start is not
    // wanted (nothing between the filter and the row enters a range); without forwarding, nothing after the last
    // range is. A row at or past the end of the filter's current range (or of the window) is built and the parsing
    // pauses there, so that the filter catches up (and the walk may jump) before the rows after it are judged.
    // Without a filter (forwarding, between windows) every row may be wanted by the next window.
    row_skip_function row_skipper() {
        return [this](const clustering_values& ck) {
            auto v = row_verdict::read;
            if (_filter) {
                auto* target = _filter->skip_target_position();
                auto* end = _filter->current_end_position();
                if (target && _rows(ck, *target) < 0) {
                    v = row_verdict::skip;
                } else if (!end) {
                    v = _forwarding ? row_verdict::pause : row_verdict::skip;
                } else if (_rows(ck, *end) >= 0) {
                    v = row_verdict::pause;
                }
            }
            if (_h.stats) {
                ++(v == row_verdict::skip ? _h.stats->rows_skipped : _h.stats->rows_read);
            }
            return v;
        };
    }

    std::string inner_file_name() const {
        return std::string(_h.data_file) + " (the partition at " + std::to_string(_partition_start) + " read backwards)";
    }

    // Where the walk jumps before the next fragment, if anywhere: with the partition's promoted index, when the
    // filter is between ranges (the current one is behind the walk) and the next one's end (forward) lies in a block
    // that ends before the next fragment (or, when none is parsed yet, before the last one fed to the filter), the
    // block holding it. Everything between is outside the slice (and window): the range tombstone in force at the
    // block's end is its end-open marker.
    std::optional<reversal_start> jump_target() {
        if (!_pi || !_filter) {
            return std::nullopt;
        }
        auto* target = _filter->skip_target_position();
        if (!target) {
            return std::nullopt;
        }
        auto& types = _h.header->clustering_types;
        auto version = _h.components->desc.version;
        if (!_jump || _order(_jump->target, *target) != 0) {
            // Once per range: the block holding its forward end, and that block's last position.
            _jump.emplace(jump_state{*target, std::nullopt, false});
            size_t b = _pi->first_block_not_before(target->reversed(), _forward_order, types, version, _index_file);
            if (b < _pi->block_count()) {
                _jump->block_last = _pi->block(b, types, version, _index_file).last.position();
            }
        }
        if (!_jump->block_last || _jump->done) {
            return std::nullopt;
        }
        if (_replay.empty() && !_inner->is_buffer_empty()) {
            _replay.push_back(_inner->pop_mutation_fragment());
        }
        if (!_replay.empty() && std::holds_alternative<partition_end>(_replay.front())) {
            return std::nullopt;  // nothing is left
        }
        const position_in_partition* walk = _replay.empty() ? (_last_fed ? &*_last_fed : nullptr) : nullptr;
        auto next_position = _replay.empty() ? std::nullopt : std::optional(position_of(_replay.front()));
        if (next_position) {
            walk = &*next_position;
        }
        if (!walk || _forward_order(*_jump->block_last, walk->reversed()) >= 0) {
            return std::nullopt;  // the walk is in that block already
        }
        _jump->done = true;
        return find_reversal_start(*_pi, _partition_start, _partition_end, target->reversed(), _forward_order, types,
                                   version, _index_file);
    }

    // Drops the walk and starts it again at `to`. The tombstone open there is put in force by a change fed in place of
    // the next fragment (at its position, or just before it when it is a row; without one, just after the last fed):
    // that position is between the slice's ranges (and windows'), so the change only sets what is in force, and a
    // window that opens again in the middle of this one (fed again from _fed) sees it too.
    future<> jump(reversal_start to) {
        tombstone open;
        if (to.open_at_end) {
            open = to.open_at_end->to_tombstone();
        }
        position_in_partition at = position_in_partition::before_all_clustered_rows();
        if (!_replay.empty()) {
            auto& next = _replay.front();
            at = std::holds_alternative<clustering_row>(next)
                     ? position_in_partition::before_key(std::get<clustering_row>(next).key)
                     : position_of(next);
        } else {
            at = _last_fed->is_clustering_row() ? position_in_partition::after_key(_last_fed->key()) : *_last_fed;
        }
        _replay.clear();
        _replay.push_back(range_tombstone_change{std::move(at), open});
        {
            auto r = std::move(*_inner);
            _inner.reset();
            co_await r.close();
        }
        auto src = make_partition_body_reversing_data_source(_open_data, *_h.header, std::string(_h.data_file), _partition_start,
                                                             _partition_end, _partition_start + _pi->partition_header_length,
                                                             to, _options);
        _inner.emplace(make_mx_full_scan_reader(_schema, _h.header, std::move(src), inner_file_name(), UINT64_MAX / 2,
                                                dht::partition_range::full(), _h.token, _partition_start,
                                                mx_parser::start_at::inside_partition, row_skipper()));
        if (_h.stats) {
            ++_h.stats->reversed_jumps;
        }
    }

    future<std::optional<mutation_fragment>> next_inner() {
        while (_inner->is_buffer_empty()) {
            if (_inner->is_end_of_stream()) {
                co_return std::nullopt;
            }
            co_await _inner->fill_buffer();
        }
        co_return _inner->pop_mutation_fragment();
    }

    // One fragment of the partition (there is one at hand) through the filter; true when the partition is done.
    bool step() {
        mutation_fragment f = partition_end{};
        if (!_replay.empty()) {
            f = std::move(_replay.front());
            _replay.pop_front();
        } else {
            f = _inner->pop_mutation_fragment();
        }
        bool end = std::holds_alternative<partition_end>(f);
        _out.clear();
        auto fed_at = position_of(f);
        if (_forwarding) {
            // The window ends before f (or the partition ends): keep f for the next window.
            if (end || !_window_end || _order(*_window_end, position_of(f)) <= 0) {
                _filter->finish(_out);
                _replay.push_front(std::move(f));
                _filter.reset();
                _end_of_stream = true;
            } else {
                // Kept until consumed: a window opening in the middle of this one feeds it again.
                _last_fed = std::move(fed_at);
                _fed.push_back({f, _in_force});
                if (auto* rtc = std::get_if<range_tombstone_change>(&f)) {
                    _in_force = rtc->tomb;
                }
                _filter->consume(std::move(f), _out);
            }
            for (auto& o : _out) {
                push(std::move(o));
            }
            return false;
        }
        _last_fed = std::move(fed_at);
        bool more = _filter->consume(std::move(f), _out);
        if (!more && !end) {
            // The slice is behind: the rest of the partition is not read.
            _filter->finish(_out);
            _out.push_back(partition_end{});
            end = true;
        }
        for (auto& o : _out) {
            push(std::move(o));
        }
        return end;
    }

    future<> close_inner() {
        _filter.reset();
        _replay.clear();
        _fed.clear();
        if (_inner) {
            auto r = std::move(*_inner);
            _inner.reset();
            co_await r.close();
        }
    }

    sstable_read_handles _h;
    gate::holder _hold;  // the sstable's reader gate, until close()
    reader_permit _permit;
    cache::read_caches<index::partition_index_page> _caches;
    index::index_reader _index;
    dht::partition_range _range;
    clustering_ranges _slice;
    bool _forwarding;
    position_in_partition_comparator _forward_order;
    position_in_partition_comparator _order;
    row_position_comparator _rows{*_schema, true};
    std::string _index_file;
    partition_reversing_options _options;
    state _state = state::seek;
    // The index cursor: the page held and the next entry in it.
    index::index_page_cache::entry_ptr _page;
    size_t _page_index = 0;
    size_t _entry_index = 0;
    std::optional<dht::decorated_key> _key;
    data_source_factory _open_data;
    // The partition being read: where, its promoted index (if any), the walk.
    uint64_t _partition_start = 0;
    uint64_t _partition_end = 0;
    std::optional<promoted_index> _pi;
    // The filter's next range (skip_target) the walk may jump to, the last position of the block holding its
    // forward end (none: no block does), and whether the walk jumped there.
    struct jump_state {
        position_in_partition target;
        std::optional<position_in_partition> block_last;
        bool done = false;
    };
    std::optional<jump_state> _jump;
    // The position of the last fragment fed to the filter.
    std::optional<position_in_partition> _last_fed;
    std::optional<mutation_reader> _inner;
    std::optional<mutation_fragment_filter> _filter;
    std::vector<mutation_fragment> _out;
    // Fragments taken from _inner to feed before the next ones (the one after the static row; forwarding: the one
    // after the last window, and those fed again).
    std::deque<mutation_fragment> _replay;
    // Forwarding: what the window's filter was fed since the buffer was last empty, the tombstone in force in the
    // input, the window's end.
    struct fed_fragment {
        mutation_fragment fragment;
        tombstone in_force_before;
    };
    std::deque<fed_fragment> _fed;
    tombstone _in_force;
    std::optional<position_in_partition> _window_end;
};

} // namespace

mutation_reader make_reversed_sstable_reader(schema_ptr s, sstable_read_handles h, reader_permit permit,
                                             read_options opts) {
    if (!opts.reversed()) {
        throw std::invalid_argument("make_reversed_sstable_reader: read_options::order is read_order::forward");
    }
    return mutation_reader(std::make_unique<reversed_sstable_reader>(std::move(s), std::move(h), std::move(opts.range),
                                                                     std::move(opts.slice), opts.forwarding, opts.bypass,
                                                                     std::move(permit)));
}

} // namespace reef::sstables
