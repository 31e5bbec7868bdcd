// Merging several readers into one stream. See combined_reader.hh.
#include "reader/combined_reader.hh"

#include "mutation/mutation_partition.hh"

#include <deque>
#include <fmt/core.h>
#include <optional>
#include <stdexcept>

namespace reef {

namespace {

// A fragment taken from a source but not merged yet, with its position.
struct pending_fragment {
    mutation_fragment fragment;
    position_in_partition position;
};

struct source_state {
    mutation_reader reader;
    api::timestamp_type max_timestamp;
    // Taken from the reader, in stream order, not merged yet: the head of
    // the source, and more when the merge looked ahead in it.
    std::deque<pending_fragment> pending;
    // Its current partition is the one being merged.
    bool in_partition = false;
    // Nothing more from it in the current window (or, between partitions,
    // in the current partition range).
    bool exhausted = false;
    // The range tombstone it has in force at the merge position.
    tombstone tomb;
};

class combined_reader final : public mutation_reader_impl {
public:
    combined_reader(schema_ptr s, std::vector<combined_reader_source> sources, bool reversed, streamed_forwarding fwd,
                    combined_reader_stats* stats)
        : mutation_reader_impl(std::move(s)), _cmp(*_schema, reversed), _forwarding(fwd == streamed_forwarding::yes),
          _stats(stats ? stats : &_own_stats) {
        _sources.reserve(sources.size());
        for (auto& src : sources) {
            _sources.push_back(source_state{std::move(src.reader), src.max_timestamp, {}, false, false, {}});
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
            case state::in_window:
                co_await merge_position();
                break;
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

    [[noreturn]] void source_error(size_t i, const mutation_fragment& f, const char* where) const {
        throw std::logic_error(fmt::format("combined reader: source {} produced {} {} (sources must be forwarding readers)",
                                           i, kind_name(f), where));
    }

    // Makes sure src has a head in pending unless it has nothing more now;
    // returns whether it has one.
    future<bool> fetch(source_state& src) {
        if (!src.pending.empty()) {
            co_return true;
        }
        co_return co_await fetch_more(src);
    }

    // Takes one more fragment from the reader into pending.
    future<bool> fetch_more(source_state& src) {
        if (src.exhausted) {
            co_return false;
        }
        while (src.reader.is_buffer_empty()) {
            if (src.reader.is_end_of_stream()) {
                src.exhausted = true;
                co_return false;
            }
            co_await src.reader.fill_buffer();
        }
        auto f = src.reader.pop_mutation_fragment();
        auto pos = position_of(f);
        src.pending.push_back(pending_fragment{std::move(f), std::move(pos)});
        co_return true;
    }

    // Reads each source's next partition_start, emits the smallest key's
    // merged partition_start and static row, and opens the window.
    future<> start_partition() {
        const dht::decorated_key* key = nullptr;
        for (size_t i = 0; i < _sources.size(); ++i) {
            auto& src = _sources[i];
            if (!co_await fetch(src)) {
                continue;
            }
            auto* ps = std::get_if<partition_start>(&src.pending.front().fragment);
            if (!ps) {
                source_error(i, src.pending.front().fragment, "between partitions");
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
        if (_skip_enabled) {
            co_await skip_partition_if_covered(merged.partition_tombstone);
        }
        push(std::move(merged));
        // A forwarding source's stream stops after the static row until a
        // window opens.
        std::optional<row> static_cells;
        for (size_t i = 0; i < _sources.size(); ++i) {
            auto& src = _sources[i];
            if (!src.in_partition) {
                continue;
            }
            while (co_await fetch(src)) {
                auto& f = src.pending.front().fragment;
                auto* sr = std::get_if<static_row>(&f);
                if (!sr) {
                    source_error(i, f, "before a clustering window was opened");
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
    // of the source's partition: it leaves the partition unread.
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
        for (auto& src : _sources) {
            if (!src.in_partition) {
                continue;
            }
            position_range window = w;
            co_await src.reader.fast_forward_to(std::move(window));
            src.pending.clear();
            src.exhausted = false;
            src.tomb = {};
        }
        _state = state::in_window;
        _check_skips = true;
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

    // Emits the merge of everything the sources have at the smallest
    // position ahead, or ends the window.
    future<> merge_position() {
        if (_skip_enabled) {
            co_await skip_covered();
        }
        const position_in_partition* min = nullptr;
        for (size_t i = 0; i < _sources.size(); ++i) {
            auto& src = _sources[i];
            if (!src.in_partition || !co_await fetch(src)) {
                continue;
            }
            auto& head = src.pending.front();
            if (head.position.region() != partition_region::clustered) {
                source_error(i, head.fragment, "inside a clustering window");
            }
            if (!min || _cmp(head.position, *min) < 0) {
                min = &head.position;
            }
        }
        if (!min) {
            co_await end_window();
            co_return;
        }
        auto pos = *min;
        if (pos.is_clustering_row()) {
            std::optional<clustering_row> merged;
            for (auto& src : _sources) {
                if (!src.in_partition || src.pending.empty() || _cmp(src.pending.front().position, pos) != 0) {
                    continue;
                }
                auto& r = std::get<clustering_row>(src.pending.front().fragment);
                if (!merged) {
                    merged = std::move(r);
                } else {
                    apply_row_marker(merged->marker, r.marker);
                    merged->row_tombstone.apply(r.row_tombstone);
                    apply_cells(merged->cells, r.cells, _schema->regular_columns());
                }
                src.pending.pop_front();
            }
            push(std::move(*merged));
            co_return;
        }
        // Changes: a source may have several at one position; the output
        // gets one, if the winner changed.
        for (auto& src : _sources) {
            if (!src.in_partition) {
                continue;
            }
            while (co_await fetch(src) && _cmp(src.pending.front().position, pos) == 0) {
                src.tomb = std::get<range_tombstone_change>(src.pending.front().fragment).tomb;
                src.pending.pop_front();
            }
        }
        tombstone winner;
        for (auto& src : _sources) {
            if (src.in_partition) {
                winner.apply(src.tomb);
            }
        }
        if (winner != _emitted) {
            push(range_tombstone_change{std::move(pos), winner});
            _emitted = winner;
        }
        _check_skips = true;
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

    future<> skip_covered() { co_return; }

    std::vector<source_state> _sources;
    position_in_partition_comparator _cmp;
    bool _forwarding;
    combined_reader_stats _own_stats;
    combined_reader_stats* _stats;
    state _state = state::between_partitions;
    position_in_partition _window_end = position_in_partition::after_all_clustered_rows();
    tombstone _emitted;  // the range tombstone in force in the output
    bool _skip_enabled = false;
    bool _check_skips = false;  // a source's tombstone changed since the last look for skips
};

} // namespace

mutation_reader make_combined_reader(schema_ptr s, std::vector<combined_reader_source> sources, bool reversed,
                                     streamed_forwarding fwd, combined_reader_stats* stats) {
    return mutation_reader(std::make_unique<combined_reader>(std::move(s), std::move(sources), reversed, fwd, stats));
}

} // namespace reef
