// Merging several readers into one stream, skipping what newer tombstones delete. See combined_reader.hh.
#include "reader/combined_reader.hh"

#include "mutation/mutation_partition.hh"
#include "runtime/reactor.hh"

#include <deque>
#include <fmt/core.h>
#include <optional>
#include <stdexcept>

namespace reef {

namespace {

// How far the skip looks ahead in the source whose tombstone covers
// another, for the tombstone's end, before it skips part of the way.
constexpr size_t max_lookahead = 128;

// A fragment taken from a source but not merged yet, with its position.
struct pending_fragment {
    mutation_fragment fragment;
    position_in_partition position;
};

struct source_state {
    mutation_reader reader;
    write_time::timestamp_type max_timestamp;
    // Whether the reader splits partitions into windows (else it gives
    // whole partitions, and is skipped by reading past what is deleted).
    bool forwarding;
    // Taken from the reader, in stream order, not merged yet: the head of
    // the source, and more when the skip looked ahead in it.
    std::deque<pending_fragment> pending;
    // Its current partition is the one being merged.
    bool in_partition = false;
    // Nothing more from it in the current window (between partitions: in
    // the current partition range).
    bool exhausted = false;
    // The range tombstone it has in force at the merge position.
    tombstone tomb;
    // Where its reader was last positioned (window start or skip target):
    // whatever it produces next is at or after it.
    position_in_partition floor = position_in_partition::before_all_clustered_rows();
    // The merge's tombstone epoch at which it was last found not to need a
    // skip (so it is not looked at again until some tombstone changes).
    uint64_t checked_epoch = 0;
    // What other sources' tombstones delete of it, as found at cover_epoch:
    // whether they cover it, up to where (nothing: the window's end), and
    // whether that end is only as far as the look-ahead went.
    uint64_t cover_epoch = 0;
    bool covered = false;
    std::optional<position_in_partition> cover_end;
    bool cover_is_step = false;
};

// Work the synchronous merge cannot do itself.
struct action {
    enum class kind { none, fill, forward, end_window } what = kind::none;
    source_state* src = nullptr;
    std::optional<position_in_partition> target;  // forward: the new window start
};

class combined_reader final : public mutation_reader_impl {
public:
    combined_reader(schema_ptr s, std::vector<combined_reader_source> sources, bool reversed, streamed_forwarding fwd,
                    combined_reader_stats* stats)
        : mutation_reader_impl(std::move(s)), _cmp(*_schema, reversed), _forwarding(fwd == streamed_forwarding::yes),
          _stats(stats ? stats : &_own_stats) {
        for (size_t i = 0; i < sources.size(); ++i) {
            if (_forwarding && sources[i].forwarding != streamed_forwarding::yes) {
                throw std::logic_error(
                    fmt::format("combined reader with forwarding: source {} is not a forwarding reader", i));
            }
        }
        // Its fills cost by the fragment merged: a short read merges little.
        enable_slow_start();
        _sources.reserve(sources.size());
        for (auto& src : sources) {
            _sources.push_back(
                source_state{std::move(src.reader), src.max_timestamp, src.forwarding == streamed_forwarding::yes});
        }
    }

    future<> fill_buffer() override {
        while (!is_buffer_full() && !_end_of_stream) {
            switch (_state) {
            case state::between_partitions:
                co_await start_partition();
                break;
            case state::before_window:
                _end_of_stream = true;  // until the user opens a window
                break;
            case state::in_window: {
                auto a = merge();
                switch (a.what) {
                case action::kind::none:
                    break;
                case action::kind::fill:
                    co_await a.src->reader.fill_buffer();
                    // Fills that give no output (changes that do not change
                    // the winner) could go on for long: let others run, and
                    // (debug builds) unwind the stack (coroutine rule 5).
                    co_await maybe_yield();
                    break;
                case action::kind::forward:
                    co_await forward(*a.src, *a.target);
                    break;
                case action::kind::end_window:
                    co_await end_window();
                    break;
                }
                break;
            }
            }
        }
    }

    future<> next_partition() override {
        if (_state != state::between_partitions) {
            co_await leave_partition();
        }
        _end_of_stream = false;
    }

    future<> fast_forward_to(const dht::partition_range& pr) override {
        for (auto& src : _sources) {
            co_await src.reader.fast_forward_to(pr);
            src.pending.clear();
            src.in_partition = false;
            src.exhausted = false;
            src.tomb = {};
        }
        _state = state::between_partitions;
    }

    future<> fast_forward_to(position_range pr) override {
        if (!_forwarding) {
            throw std::logic_error("fast_forward_to(position_range) on a combined reader without forwarding");
        }
        if (_state == state::between_partitions) {
            _end_of_stream = true;
            co_return;
        }
        co_await open_window(std::move(pr));
    }

    future<> close() noexcept override {
        for (auto& src : _sources) {
            co_await src.reader.close();
        }
    }

private:
    enum class state { between_partitions, before_window, in_window };
    enum class head_state { ready, none, need_fill };

    [[noreturn]] void source_error(const source_state& src, const mutation_fragment& f, const char* where) const {
        throw std::logic_error(fmt::format("combined reader: source {} produced {} {} (a source said to forward must be a forwarding reader)",
                                           &src - _sources.data(), kind_name(f), where));
    }

    // Takes the reader's next buffered fragment into pending.
    static void take(source_state& src) {
        auto f = src.reader.pop_mutation_fragment();
        auto pos = position_of(f);
        src.pending.push_back(pending_fragment{std::move(f), std::move(pos)});
    }

    // Whether src has a head in pending (taking one from its buffer if
    // needed), has nothing more now, or must fill its buffer first.
    static head_state head(source_state& src) {
        if (src.pending.empty() && !src.exhausted && !src.reader.is_buffer_empty()) {
            take(src);
        }
        if (!src.pending.empty()) {
            if (src.in_partition && !src.forwarding &&
                std::holds_alternative<partition_end>(src.pending.front().fragment)) {
                // A whole-partition source's partition ends: so does its
                // part of the window (it is past its partition now).
                src.pending.pop_front();
                src.exhausted = true;
                return head_state::none;
            }
            return head_state::ready;
        }
        if (src.exhausted) {
            return head_state::none;
        }
        if (src.reader.is_end_of_stream()) {
            src.exhausted = true;
            return head_state::none;
        }
        return head_state::need_fill;
    }

    static future<bool> fetch(source_state& src) {
        head_state h;
        while ((h = head(src)) == head_state::need_fill) {
            co_await src.reader.fill_buffer();
        }
        co_return h == head_state::ready;
    }

    // Reads each source's next partition_start, emits the smallest key's
    // merged partition_start and static row, and opens the window.
    future<> start_partition() {
        const dht::decorated_key* key = nullptr;
        for (auto& src : _sources) {
            if (!co_await fetch(src)) {
                continue;
            }
            auto* ps = std::get_if<partition_start>(&src.pending.front().fragment);
            if (!ps) {
                source_error(src, src.pending.front().fragment, "between partitions");
            }
            if (!key || ps->key < *key) {
                key = &ps->key;
            }
        }
        if (!key) {
            _end_of_stream = true;
            co_return;
        }
        partition_start merged{*key, {}};
        for (auto& src : _sources) {
            if (!src.pending.empty() && std::get<partition_start>(src.pending.front().fragment).key == merged.key) {
                merged.partition_tombstone.apply(std::get<partition_start>(src.pending.front().fragment).partition_tombstone);
                src.in_partition = true;
            }
        }
        for (auto& src : _sources) {
            if (src.in_partition) {
                src.pending.pop_front();
            }
        }
        co_await skip_partition_if_covered(merged.partition_tombstone);
        push(std::move(merged));
        std::optional<write_time::timestamp_type> first_max;
        _skips_possible = false;
        _single = nullptr;
        size_t in_partition = 0;
        for (auto& src : _sources) {
            if (src.in_partition) {
                _skips_possible |= first_max && *first_max != src.max_timestamp;
                first_max = src.max_timestamp;
                _single = &src;
                ++in_partition;
            }
        }
        if (in_partition != 1) {
            _single = nullptr;
        }
        // A forwarding source's stream stops after the static row until a
        // window opens.
        std::optional<row> static_cells;
        for (auto& src : _sources) {
            if (!src.in_partition) {
                continue;
            }
            while (co_await fetch(src)) {
                auto& f = src.pending.front().fragment;
                auto* sr = std::get_if<static_row>(&f);
                if (!sr) {
                    if (!src.forwarding) {
                        break;  // the partition's first clustered fragment (or its end)
                    }
                    source_error(src, f, "before a clustering window was opened");
                }
                if (!static_cells) {
                    static_cells = std::move(sr->cells);
                } else {
                    apply_cells(*static_cells, sr->cells, _schema->static_columns());
                }
                src.pending.pop_front();
            }
        }
        if (static_cells && !static_cells->empty()) {
            push(static_row{std::move(*static_cells)});
        }
        _state = state::before_window;
        if (!_forwarding) {
            co_await open_window(position_range::full());
        }
    }

    // A partition tombstone newer than everything a source has deletes all
    // of the source's partition, static row included: the source leaves
    // the partition unread.
    future<> skip_partition_if_covered(const tombstone& t) {
        for (auto& src : _sources) {
            if (src.in_partition && t.timestamp > src.max_timestamp) {
                co_await src.reader.next_partition();
                src.pending.clear();
                src.in_partition = false;
                src.exhausted = false;
                ++_stats->partition_skips;
            }
        }
    }

    // Opens window w (in the read's order) in every source of the partition.
    future<> open_window(position_range w) {
        _window_end = w.end;
        _emitted = {};
        _unflushed.reset();
        ++_epoch;
        for (auto& src : _sources) {
            if (!src.in_partition) {
                continue;
            }
            if (src.forwarding) {
                position_range window = w;
                co_await src.reader.fast_forward_to(std::move(window));
                src.pending.clear();
                src.exhausted = false;
            }
            src.tomb = {};
            src.floor = w.start;
            src.checked_epoch = 0;
            src.cover_epoch = 0;
        }
        _state = state::in_window;
    }

    // Ends the partition in every source that is in it.
    future<> leave_partition() {
        for (auto& src : _sources) {
            if (src.in_partition) {
                co_await src.reader.next_partition();
                src.pending.clear();
                src.in_partition = false;
                src.exhausted = false;
                src.tomb = {};
            }
        }
        _state = state::between_partitions;
    }

    // Merges positions until the buffer is full or something asynchronous
    // is needed. Changes at one position are collected (a source may have
    // several there, and a fill may come in between) and the output's
    // change is emitted once the merge has moved past that position.
    action merge() {
        if (_single && _single->pending.empty() && !_unflushed) {
            return pass_through(*_single);
        }
        while (!is_buffer_full()) {
            if (_skips_possible) {
                if (auto a = settle_skips(); a.what != action::kind::none) {
                    return a;
                }
            }
            pending_fragment* min = nullptr;
            for (auto& src : _sources) {
                if (!src.in_partition) {
                    continue;
                }
                auto h = head(src);
                if (h == head_state::need_fill) {
                    return {action::kind::fill, &src, {}};
                }
                if (h == head_state::none) {
                    continue;
                }
                auto& hd = src.pending.front();
                if (hd.position.region() != partition_region::clustered) {
                    source_error(src, hd.fragment, "inside a clustering window");
                }
                if (!min || _cmp(hd.position, min->position) < 0) {
                    min = &hd;
                }
            }
            if (_unflushed && (!min || _cmp(min->position, *_unflushed) > 0)) {
                flush_change();
                continue;
            }
            if (!min) {
                return {action::kind::end_window, nullptr, {}};
            }
            if (min->position.is_clustering_row()) {
                merge_rows(*min);
                continue;
            }
            auto pos = min->position;
            for (auto& src : _sources) {
                if (src.in_partition && !src.pending.empty() && _cmp(src.pending.front().position, pos) == 0) {
                    src.tomb = std::get<range_tombstone_change>(src.pending.front().fragment).tomb;
                    src.pending.pop_front();
                }
            }
            if (!_unflushed) {
                _unflushed = std::move(pos);
            }
        }
        return {};
    }

    // The partition is in one source: its fragments go out as they are,
    // but for changes that change nothing.
    action pass_through(source_state& src) {
        while (!is_buffer_full()) {
            if (src.exhausted) {
                return {action::kind::end_window, nullptr, {}};
            }
            if (src.reader.is_buffer_empty()) {
                if (src.reader.is_end_of_stream()) {
                    src.exhausted = true;
                    return {action::kind::end_window, nullptr, {}};
                }
                return {action::kind::fill, &src, {}};
            }
            if (_buffer.empty() && src.reader.buffer().only_rows()) {
                // A scan's common case: the source's whole buffer goes out as it is.
                src.reader.move_buffer_content_to(_buffer);
                continue;
            }
            auto f = src.reader.pop_mutation_fragment();
            if (!src.forwarding && std::holds_alternative<partition_end>(f)) {
                src.exhausted = true;
                continue;
            }
            if (auto* rtc = std::get_if<range_tombstone_change>(&f)) {
                src.tomb = rtc->tomb;
                if (rtc->tomb == _emitted) {
                    continue;
                }
                _emitted = rtc->tomb;
            } else if (!std::holds_alternative<clustering_row>(f)) {
                source_error(src, f, "inside a clustering window");
            }
            push(std::move(f));
        }
        return {};
    }

    // Merges the rows at min's key (min is one of the heads) into one.
    void merge_rows(pending_fragment& min) {
        _at_min.clear();
        for (auto& src : _sources) {
            if (src.in_partition && !src.pending.empty() && _cmp(src.pending.front().position, min.position) == 0) {
                _at_min.push_back(&src);
            }
        }
        auto merged = std::move(std::get<clustering_row>(min.fragment));
        for (auto* src : _at_min) {
            if (&src->pending.front() != &min) {
                auto& r = std::get<clustering_row>(src->pending.front().fragment);
                apply_row_marker(merged.marker, r.marker);
                merged.row_tombstone.apply(r.row_tombstone);
                apply_cells(merged.cells, r.cells, _schema->regular_columns());
            }
        }
        for (auto* src : _at_min) {
            src->pending.pop_front();
        }
        push(std::move(merged));
    }

    // The merge is past the position of the last changes: the output gets
    // one change there if the winning tombstone changed.
    void flush_change() {
        tombstone winner;
        for (auto& src : _sources) {
            if (src.in_partition) {
                winner.apply(src.tomb);
            }
        }
        if (winner != _emitted) {
            push(range_tombstone_change{std::move(*_unflushed), winner});
            _emitted = winner;
        }
        _unflushed.reset();
        ++_epoch;
    }

    // Where the tombstones of `a` stop deleting everything written at or
    // before ts: its first pending change to a tombstone not newer than ts.
    struct cover_end {
        action need;                                 // a fill of `a` must come first
        std::optional<position_in_partition> end;    // nothing: up to the window's end
        bool step = false;                           // end is as far as the look-ahead went
    };
    cover_end find_cover_end(source_state& a, write_time::timestamp_type ts) {
        for (size_t i = 0;; ++i) {
            if (i == a.pending.size()) {
                if (i >= max_lookahead) {
                    // Too far to look: skip up to what was seen, which the
                    // tombstone covers all of.
                    auto& last = a.pending.back();
                    if (auto* r = std::get_if<clustering_row>(&last.fragment)) {
                        return {{}, position_in_partition::after_key(r->key), true};
                    }
                    return {{}, last.position, true};
                }
                if (a.exhausted) {
                    return {};
                }
                if (!a.reader.is_buffer_empty()) {
                    take(a);
                } else if (a.reader.is_end_of_stream()) {
                    a.exhausted = true;
                    return {};
                } else {
                    return {{action::kind::fill, &a, {}}, {}};
                }
            }
            auto& p = a.pending[i];
            if (p.position.region() != partition_region::clustered) {
                return {};  // a whole-partition source's partition_end: the window's end
            }
            auto* rtc = std::get_if<range_tombstone_change>(&p.fragment);
            if (rtc && rtc->tomb.timestamp <= ts) {
                return {{}, p.position};
            }
        }
    }

    // The skip: a source whose data another source's range tombstone in
    // force deletes (strictly newer than its max timestamp) drops what it
    // has buffered there and is fast-forwarded to where the cover ends.
    action settle_skips() {
        for (auto& b : _sources) {
            if (!b.in_partition || b.exhausted || (b.checked_epoch == _epoch && !b.pending.empty())) {
                continue;
            }
            auto& next = b.pending.empty() ? b.floor : b.pending.front().position;
            // The cover is found again when a tombstone changed, or when b
            // reached the end of a partial look-ahead.
            if (b.cover_epoch != _epoch || (b.cover_is_step && _cmp(*b.cover_end, next) <= 0)) {
                if (auto a = find_cover(b); a.what != action::kind::none) {
                    return a;
                }
            }
            if (!b.covered || (b.cover_end && _cmp(*b.cover_end, next) <= 0)) {
                b.checked_epoch = _epoch;  // not covered, or already past the cover
                continue;
            }
            auto target = b.cover_end;
            if (auto a = skip(b, target); a.what != action::kind::none) {
                return a;
            }
            b.checked_epoch = _epoch;
        }
        return {};
    }

    // Whether the tombstones in force in other sources delete everything b
    // has, and up to where (b.covered, b.cover_end, b.cover_is_step), as of
    // this epoch.
    action find_cover(source_state& b) {
        bool covered = false;
        std::optional<position_in_partition> end;  // nothing: up to the window's end
        bool step = false;
        for (auto& a : _sources) {
            if (&a == &b || !a.in_partition || a.tomb.timestamp <= b.max_timestamp) {
                continue;
            }
            // Every covering source covers from here; the cover ends where
            // the last of them stops.
            auto c = find_cover_end(a, b.max_timestamp);
            if (c.need.what != action::kind::none) {
                return c.need;  // b's cover stays unknown (cover_epoch)
            }
            if (!c.end) {
                covered = true;
                end.reset();
                step = false;
                break;
            }
            if (!covered || _cmp(*end, *c.end) < 0) {
                end = std::move(c.end);
                step = c.step;
            }
            covered = true;
        }
        b.covered = covered;
        b.cover_end = std::move(end);
        b.cover_is_step = step;
        b.cover_epoch = _epoch;
        return {};
    }

    // Drops what b has taken or buffered before target (nothing: the
    // window's end); returns the fast-forward needed to go further.
    action skip(source_state& b, std::optional<position_in_partition>& target) {
        // (A whole-partition source's partition_end is never dropped.)
        auto before_target = [&](const position_in_partition& p) {
            return p.region() == partition_region::clustered && (!target || _cmp(p, *target) < 0);
        };
        auto drop = [&](const mutation_fragment& f) {
            // What b has in force where it resumes is its own last change.
            if (auto* rtc = std::get_if<range_tombstone_change>(&f)) {
                b.tomb = rtc->tomb;
            }
            ++_stats->covered_fragments_dropped;
        };
        while (!b.pending.empty() && before_target(b.pending.front().position)) {
            drop(b.pending.front().fragment);
            b.pending.pop_front();
        }
        if (!b.pending.empty()) {
            return {};
        }
        while (!b.reader.is_buffer_empty()) {
            take(b);
            if (!before_target(b.pending.front().position)) {
                return {};
            }
            drop(b.pending.front().fragment);
            b.pending.pop_front();
        }
        if (b.reader.is_end_of_stream()) {
            b.exhausted = true;
            return {};
        }
        if (!b.forwarding) {
            return {action::kind::fill, &b, {}};  // no skipping: read on, dropping
        }
        if (!target || _cmp(*target, _window_end) >= 0) {
            // Deleted up to the window's end: the window is over for b.
            b.exhausted = true;
            b.tomb = {};
            ++_stats->range_skips;
            return {};
        }
        return {action::kind::forward, &b, std::move(target)};
    }

    // Moves b's window start to target; b emits there the tombstone it has
    // in force.
    future<> forward(source_state& b, const position_in_partition& target) {
        position_range w{target, _window_end};
        co_await b.reader.fast_forward_to(std::move(w));
        b.floor = target;
        b.tomb = {};
        ++_stats->range_skips;
    }

    future<> end_window() {
        if (_emitted) {
            // Sources close their tombstones at the window's end; this only
            // guards the output's own rule.
            push(range_tombstone_change{_window_end, {}});
            _emitted = {};
        }
        if (_forwarding) {
            _state = state::before_window;
            _end_of_stream = true;
            co_return;
        }
        push(partition_end{});
        co_await leave_partition();
    }

    std::vector<source_state> _sources;
    position_in_partition_comparator _cmp;
    bool _forwarding;
    combined_reader_stats _own_stats;
    combined_reader_stats* _stats;
    state _state = state::between_partitions;
    position_in_partition _window_end = position_in_partition::after_all_clustered_rows();
    tombstone _emitted;                                  // the range tombstone in force in the output
    std::optional<position_in_partition> _unflushed;     // where changes were taken but not yet emitted
    uint64_t _epoch = 1;                                 // counts changes of the sources' tombstones
    // Some source of the partition has a max timestamp below another's, so
    // one may come to cover the other.
    bool _skips_possible = false;
    source_state* _single = nullptr;                     // the partition's only source, if it has one
    std::vector<source_state*> _at_min;                  // merge_rows' scratch
};

} // namespace

mutation_reader make_combined_reader(schema_ptr s, std::vector<combined_reader_source> sources, bool reversed,
                                     streamed_forwarding fwd, combined_reader_stats* stats) {
    return mutation_reader(std::make_unique<combined_reader>(std::move(s), std::move(sources), reversed, fwd, stats));
}

} // namespace reef
