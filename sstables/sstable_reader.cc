// The partition-range sstable reader. See sstable_reader.hh.
#include "sstables/sstable_reader.hh"

#include "reader/mutation_fragment_filter.hh"
#include "reader/permit_checked_source.hh"
#include "sstables/exceptions.hh"
#include "sstables/index_entry.hh"
#include "sstables/mx_parser.hh"
#include "sstables/promoted_index_cursor.hh"
#include "sstables/reversed_sstable_reader.hh"

#include <optional>
#include <stdexcept>
#include <vector>

namespace reef::sstables {

namespace {

// As mx_fragment_consumer, but the parser also stops after each partition start and after a static row, so the
// reader can look the partition up in the index, and skip, before any clustered fragment is parsed.
// It also passes over, unread, the clustering rows the reader said it does not want (skip_rows): the parser then
// builds neither their keys nor their cells.
class pausing_consumer final : public mx_fragment_consumer {
public:
    pausing_consumer(schema_ptr s, const serialization_header& h, std::string_view file, size_t max_buffered,
                     token_function token, sstable_reader_stats* stats)
        : mx_fragment_consumer(s, h, file, max_buffered, std::move(token)), _rows(*s), _stats(stats) {}

    // What becomes of the rows at or after the end skip_rows names.
    enum class past_end {
        skip,  // passed over: nothing after the end is wanted, and nothing can be jumped over
        stop,  // the first is read, then the parser stops: the reader jumps, or keeps it for its next window
    };

    // Which clustering rows of the current partition are not wanted: all of them, or those before `before`, and
    // those at or after `end` (as `how` says). Forgotten at the partition's end.
    void skip_rows(bool all, std::optional<position_in_partition> before, std::optional<position_in_partition> end,
                   past_end how = past_end::skip) {
        _skip_all = all;
        _skip_before = std::move(before);
        _end = std::move(end);
        _past_end = how;
        _stop_after_row = false;
    }

    row_action consume_row_key(const clustering_values& ck, uint64_t) override {
        bool skip = _skip_all || (_skip_before && _rows(ck, *_skip_before) < 0);
        if (!skip && _end && _rows(ck, *_end) >= 0) {
            skip = _past_end == past_end::skip;
            _stop_after_row = !skip;
        }
        if (_stats) {
            ++(skip ? _stats->rows_skipped : _stats->rows_read);
        }
        return skip ? row_action::skip : row_action::read;
    }
    proceed consume_row_end(const mx_row& row) override {
        auto p = mx_fragment_consumer::consume_row_end(row);
        if (_stop_after_row) {
            _stop_after_row = false;
            return proceed::no;
        }
        return row.is_static ? proceed::no : p;
    }
    proceed consume_partition_end(uint64_t end) override {
        skip_rows(false, std::nullopt, std::nullopt);
        return mx_fragment_consumer::consume_partition_end(end);
    }

    proceed consume_partition_start(bytes_view key, tombstone deletion, uint64_t position, uint64_t header_end) override {
        mx_fragment_consumer::consume_partition_start(key, deletion, position, header_end);
        _partition_position = position;
        return proceed::no;
    }
    // Where the last partition started in Data.db.
    uint64_t partition_position() const noexcept { return _partition_position; }

private:
    uint64_t _partition_position = 0;
    row_position_comparator _rows;
    sstable_reader_stats* _stats;
    bool _skip_all = false;
    std::optional<position_in_partition> _skip_before;
    std::optional<position_in_partition> _end;
    past_end _past_end = past_end::skip;
    bool _stop_after_row = false;
};

// A located partition's bytes, read already, as a data source: the buffer from `at` on.
class prefetched_source final : public data_source_impl {
public:
    explicit prefetched_source(temporary_buffer b) noexcept : _buf(std::move(b)) {}
    future<temporary_buffer> get() override { return make_ready_future<temporary_buffer>(std::move(_buf)); }
    future<temporary_buffer> skip(uint64_t n) override {
        _buf.trim_front(std::min<uint64_t>(n, _buf.size()));
        return get();
    }

private:
    temporary_buffer _buf;
};

bool is_full(const clustering_ranges& slice) {
    return slice.size() == 1 && slice[0] == position_range::full();
}

// The part of Data.db an sstable_reader is reading, while it is: the source, the parser over it and what the parser
// was fed.
struct data_read {
    data_source src;         // empty while none is open
    uint64_t src_next = 0;   // Data.db offset of the next byte src gives
    // What the parser was fed last (it must live until the parser asks for more), and where it starts.
    temporary_buffer buf;
    uint64_t buf_start = 0;
    std::optional<mx_parser> parser;  // in place: the read allocates none for it
    bool parser_done = false;           // it reached the range's end: the range is read once its output is
    bool expect_partition_end = false;  // it starts at the end-of-partition byte the promoted index gives
};

class sstable_reader final : public mutation_reader_impl {
public:
    sstable_reader(schema_ptr s, sstable_read_handles h, dht::partition_range range, clustering_ranges slice,
                   streamed_forwarding fwd, bypass_cache bypass, reader_permit permit,
                   std::vector<located_partition> located = {}, bool located_mode = false)
        : mutation_reader_impl(std::move(s)), _located(std::move(located)), _located_mode(located_mode),
          _sstable(std::move(h)), _hold(_sstable.hold_readers()),
          _permit(std::move(permit)),
          _caches(*_sstable.index_file, *_sstable.index_cache, bypass),
          _index(*_sstable.summary, _caches, _sstable.parse_page), _range(std::move(range)), _slice(std::move(slice)),
          _forwarding(fwd == streamed_forwarding::yes), _full_slice(is_full(_slice)),
          _consumer(_schema, *_sstable.header, _sstable.data_file, _max_buffer_fragments, _sstable.token,
                    _sstable.stats),
          _cmp(*_schema) {}

    future<> fill_buffer() override {
        if (!_end_of_stream) {
            // Before each fill, not only before each read: the rest of a partition may already be buffered, and an
            // expired read must not go on producing from it.
            _permit.check_timeout(_sstable.data_file);
        }
        while (!is_buffer_full() && !_end_of_stream) {
            if (!_read) {
                if (_range_done && !(_located_mode && _next_located < _located.size())) {
                    _end_of_stream = true;
                    break;
                }
                _range_done = false;
                co_await open_range();
                continue;
            }
            if (!_consumer.buffer().empty()) {
                if (!emit_parsed_fragment()) {
                    break;
                }
                continue;
            }
            if (_lookup) {
                co_await look_up();
                continue;
            }
            if (_partition != partition_state::outside) {
                bool jumped = co_await maybe_jump();
                if (jumped) {
                    continue;
                }
                if (_forwarding && in_partition() && !_filter && _cursor && _read->parser->offset() >= header_end()) {
                    _end_of_stream = true;  // the header and static row are out; windows come by fast_forward_to
                    break;
                }
            }
            if (_read->parser_done) {
                co_await close_range();
                _range_done = true;
                continue;
            }
            co_await parse();
        }
    }

    future<> next_partition() override {
        if (in_partition()) {
            _partition = partition_state::leaving;
            _filter.reset();
        }
        _end_of_stream = false;
        co_return;
    }

    // Not a coroutine: with nothing in flight to wait for, no frame is made.
    future<> fast_forward_to(const dht::partition_range& pr) override {
        if (_located_mode) {
            return make_exception_future<>(
                std::logic_error("fast_forward_to(partition_range) on a reader of located partitions"));
        }
        // Reset before the old range's source is closed, which touches none of it: what throws here (the copy of
        // pr) leaves no close future dropped.
        _partition = partition_state::outside;
        _lookup.reset();
        _cursor.reset();
        _filter.reset();
        _range = pr;
        _range_done = false;
        return close_range();
    }

    future<> fast_forward_to(position_range pr) override {
        if (!_forwarding) {
            throw std::logic_error("fast_forward_to(position_range) on an sstable reader without forwarding");
        }
        if (!in_partition()) {
            _end_of_stream = true;
            co_return;
        }
        open_filter(intersect(pr));
        _filter->set_tombstone_in_force(_input_tomb);
    }

    future<> close() noexcept override {
        if (!_read && !_caches.bypassing()) {
            // Nothing open (a read that ended, or never started): nothing to wait for, and no frame made.
            _consumer.buffer().clear();
            _hold.release();
            return make_ready_future<>();
        }
        return close_all();
    }

private:
    // Where the reader is in the partition the parser is in (or last was in).
    enum class partition_state : uint8_t {
        outside,     // between partitions: every partition_start out has its partition_end out
        reading,     // its partition_start is out, its partition_end is not: fragments go through the filter
        past_slice,  // as reading, but past the slice (not forwarding): nothing more until its partition_end
        leaving,     // next_partition() left it: what remains of it is dropped, its partition_end included
    };
    bool in_partition() const noexcept {
        return _partition == partition_state::reading || _partition == partition_state::past_slice;
    }

    // close() with something open: the Data.db source (its reads in flight), then the private caches.
    future<> close_all() noexcept {
        try {
            co_await close_range();
        } catch (...) {
        }
        try {
            co_await _caches.close();
        } catch (...) {
        }
        _hold.release();
    }

    // Starts reading _range's byte range of Data.db, or marks the range done when it holds nothing. Not a
    // coroutine: with the filter, the index page and Data.db's bytes at hand, it makes no frame (nor do the
    // index_reader and the data sources under it).
    future<> open_range() {
        if (_located_mode) {
            if (_next_located == _located.size()) {
                _range_done = true;  // no partitions were located
                return make_ready_future<>();
            }
            // The batch probed the filter and found the entry: the range is the next located partition.
            _loc = &_located[_next_located++];
            _range = dht::partition_range::singular(_loc->key);
            return open_data_range(_loc->range);
        }
        if (_range.is_singular()) {
            auto& key = _range.start()->position.key()->key();
            if (!_sstable.components->filter.is_present(key.bytes())) {
                _range_done = true;
                return make_ready_future<>();
            }
        }
        _permit.check_timeout(_sstable.index_path);
        auto dr = _index.range(_range);
        if (!dr.available()) {
            return open_data_range_later(std::move(dr));
        }
        return open_data_range(dr.await_resume());
    }
    future<> open_data_range_later(future<index::data_range> dr) {
        auto range = co_await std::move(dr);  // named first: an aggregate inside co_await (coroutine rule 2)
        co_await open_data_range(range);
    }

    // open_range() once the index has given the range's bytes in Data.db.
    future<> open_data_range(index::data_range dr) {
        if (dr.start >= dr.end) {
            _range_done = true;
            return make_ready_future<>();
        }
        _range_end = dr.end;
        if ((_forwarding || !_full_slice) && _sstable.header->static_columns.empty()) {
            return start_from_index_or_read(dr.start);
        }
        start_read(dr.start, mx_parser::start_at::partition);
        return make_ready_future<>();
    }
    future<> start_from_index_or_read(uint64_t position) {
        bool started = co_await start_from_index(position);
        if (!started) {
            start_read(position, mx_parser::start_at::partition);
        }
    }

    // A read that skips inside partitions, in a table without static columns (so a partition's header is its key
    // and deletion alone): the range's first partition starts from the index (its entry's key, the deletion the
    // promoted index repeats), and Data.db is read from the first block the slice (or window) needs on, never from
    // the header; the partitions after it are read as usual. False, with nothing done, when that partition has no
    // promoted index (it is read from its start).
    future<bool> start_from_index(uint64_t position) {
        std::optional<index::entry_ref> first;
        if (_loc) {
            first = _loc->entry;
        } else {
            _permit.check_timeout(_sstable.index_path);
            first = co_await _index.first_entry(_range);
        }
        if (!first || first->data_position() != position) {
            co_return false;  // the index disagrees with itself: the ordinary path says where
        }
        auto key = first->key();
        first.reset();
        _partition_position = position;
        _lookup = key;
        co_await look_up();
        if (!_cursor) {
            co_return false;
        }
        auto tomb = partition_tombstone(_cursor->partition_deletion(), _sstable.components->desc.version);
        uint64_t at = header_end();
        if (!tomb || at >= _range_end) {
            _cursor.reset();
            co_return false;
        }
        start_read(at, mx_parser::start_at::inside_partition);
        auto cursor = std::move(_cursor);
        partition_start ps{key, *tomb};
        start_partition(ps, position);
        _lookup.reset();
        _cursor = std::move(cursor);
        push(std::move(ps));
        if (_sstable.stats) {
            ++_sstable.stats->headers_skipped;
        }
        co_return true;
    }

    // Reads the range's Data.db from `at` on, parsing from there as `start` says.
    void start_read(uint64_t at, mx_parser::start_at start) {
        _read.emplace();
        open_source(at);
        restart_parser(at, start);
    }

    // The one place Data.db is opened: a source over [at, the range's end), whose next buffer starts at `at`.
    // first_read: the bytes its first read asks for. No source may be open.
    void open_source(uint64_t at, uint64_t first_read = 4096) {
        if (_loc && !_loc->bytes.empty() && at >= _loc->range.start && at <= _loc->range.end) {
            // Read with the batch's others: parsed from memory.
            uint64_t from = at - _loc->range.start;
            _read->src = data_source(std::make_unique<prefetched_source>(
                _loc->bytes.share(from, std::min<uint64_t>(_loc->bytes.size() - from, _range_end - at))));
            _read->src_next = at;
            _read->buf = temporary_buffer();
            _read->buf_start = at;
            return;
        }
        _read->src = make_permit_checked_source(make_data_source(_sstable.data, *_sstable.components, at, _range_end - at,
                                                                 integrity_check::no, first_read),
                                                _permit, _sstable.data_file);
        _read->src_next = at;
        _read->buf = temporary_buffer();
        _read->buf_start = at;
    }

    future<> close_source() {
        if (_read->src) {
            auto src = std::move(_read->src);
            co_await src.close();
        }
    }

    // A new parser starting at `at` (fed nothing yet).
    void restart_parser(uint64_t at, mx_parser::start_at start) {
        _read->parser.reset();
        _read->parser.emplace(*_sstable.header, _sstable.data_file, _consumer, at, _range_end, start);
        _read->parser_done = false;
        _read->expect_partition_end = false;
    }

    // Not a coroutine: a source with nothing in flight closes at once, and no frame is made.
    future<> close_range() {
        _consumer.buffer().clear();
        if (!_read) {
            return make_ready_future<>();
        }
        auto src = std::move(_read->src);
        _read.reset();
        if (!src) {
            return make_ready_future<>();
        }
        auto closed = src.close();
        if (closed.available()) {
            return closed;
        }
        return close_later(std::move(src), std::move(closed));
    }
    // Waits for src's close, keeping src alive until it is done.
    static future<> close_later(data_source src, future<> closed) { co_await std::move(closed); }

    // Tells the consumer which rows the parser may pass over unread: those the filter would drop. A partition being
    // left keeps none. Otherwise rows before the filter's next range (the walker never goes back, so a row before it
    // stays unwanted whatever the fragments parsed before it do to the filter). At the end of the range the read is
    // in or before, the first row is read and parsing stops there, so that emit_parsed_fragment() moves the filter on
    // (and the reader jumps ahead, or keeps the row for its next window) before more rows are built; past the slice's
    // last range, read without forwarding and without a promoted index (nothing to jump with), rows are skipped to the
    // partition's end instead. Range tombstone markers always reach the filter: they set the tombstone in force.
    void set_row_skip() {
        if (_partition == partition_state::leaving || _partition == partition_state::past_slice) {
            _consumer.skip_rows(true, std::nullopt, std::nullopt);
            return;
        }
        if (_partition != partition_state::reading || !_filter) {
            _consumer.skip_rows(false, std::nullopt, std::nullopt);
            return;
        }
        auto end = _filter->current_end();
        bool last = !end || (_filter_end && _cmp(*end, *_filter_end) == 0);
        auto how = last && !_forwarding && !_cursor ? pausing_consumer::past_end::skip : pausing_consumer::past_end::stop;
        // No range left: every row is past the end.
        _consumer.skip_rows(false, _filter->skip_target(), end ? std::move(*end) : position_in_partition::before_all_clustered_rows(),
                            how);
    }

    // One parser step, feeding it what it asks for. Not a coroutine: a step that needs no bytes, or whose bytes the
    // source has ready, makes no frame.
    future<> parse() {
        set_row_skip();
        auto step = _read->parser->run();
        switch (step.what) {
        case parse_step::kind::need_more_data: return feed_from(_read->src.get(), _read->src_next);
        case parse_step::kind::skip: {
            uint64_t at = _read->src_next + step.bytes;
            return feed_from(_read->src.skip(step.bytes), at);
        }
        case parse_step::kind::consumer_full: break;
        case parse_step::kind::done: _read->parser_done = true; break;
        }
        return make_ready_future<>();
    }
    // Feeds the parser the buffer b gives, which starts at Data.db offset at.
    future<> feed_from(future<temporary_buffer> b, uint64_t at) {
        if (!b.available()) {
            return feed_later(std::move(b), at);
        }
        set_buffer(b.await_resume(), at);
        return make_ready_future<>();
    }
    future<> feed_later(future<temporary_buffer> b, uint64_t at) { set_buffer(co_await std::move(b), at); }

    // b, from the source, starts at stream offset at: the parser's next buffer.
    void set_buffer(temporary_buffer b, uint64_t at) {
        _read->buf = std::move(b);
        _read->buf_start = at;
        _read->src_next = at + _read->buf.size();
        feed();
    }
    void feed() {
        auto& r = *_read;
        if (r.buf.empty()) {
            r.parser->feed_end_of_stream();
        } else {
            r.parser->feed(std::as_bytes(std::span<const char>(r.buf.get(), r.buf.size())));
        }
    }

    // Restarts parsing at Data.db offset `at` of the range (after the parser's position): an unfiltered of the
    // current partition or its end-of-partition byte, or (start_at::partition) the next partition's start. What
    // lies between is neither read nor parsed. first_read: the bytes from `at` on the read will want at least (a
    // promoted index block), read in one I/O when the source does not hold `at` yet; 0 when not known.
    future<> jump(uint64_t at, mx_parser::start_at start = mx_parser::start_at::inside_partition,
                  uint64_t first_read = 0) {
        if (at >= _range_end) {
            throw malformed_sstable_exception(_sstable.data_file, at,
                                              "the promoted index points past the partition's end (" +
                                                  std::to_string(_range_end) + ")");
        }
        _consumer.buffer().clear();
        restart_parser(at, start);
        auto& r = *_read;
        if (at >= r.buf_start && at < r.buf_start + r.buf.size()) {
            r.buf.trim_front(at - r.buf_start);
            r.buf_start = at;
            feed();
            co_return;
        }
        // A compressed source reads whole chunks whatever it is told: it skips.
        if (at >= r.src_next && (!first_read || _sstable.components->compression)) {
            uint64_t n = at - r.src_next;
            auto b = co_await r.src.skip(n);
            set_buffer(std::move(b), at);
            co_return;
        }
        // Behind the source (a value staged across buffers), or ahead of it with a known need: a new source there,
        // whose first read is the whole need (a skipped source would start again with a short read, then double).
        co_await close_source();
        open_source(at, first_read ? first_read : 4096);
    }

    uint64_t header_end() const noexcept { return _partition_position + _cursor->header_length(); }

    // With the partition's promoted index, and nothing parsed waiting: skips to where the next wanted position
    // may be (the block holding the filter's next range start, or the partition's end), if that is ahead of the
    // parser. Never before the header and static row are out.
    future<bool> maybe_jump() {
        if (!_cursor || _read->parser->offset() < header_end()) {
            co_return false;
        }
        uint64_t at = _read->parser->offset();
        if (_partition == partition_state::leaving || _partition == partition_state::past_slice) {
            // The rest of the partition is not wanted, and the index says where the next one starts: the partition
            // ends here, and parsing goes on there, without reading even the end-of-partition byte.
            uint64_t next = _partition_position + _cursor->partition_end();
            if (next - 1 <= at) {
                co_return false;
            }
            if (_partition == partition_state::past_slice) {
                push(partition_end{});
            }
            _partition = partition_state::outside;
            _cursor.reset();
            if (next >= _range_end) {
                _read->parser_done = true;  // the range's last partition: nothing more to read
                co_return true;
            }
            co_await jump(next, mx_parser::start_at::partition);
            co_return true;
        }
        if (!_filter) {
            co_return false;
        }
        auto target = _filter->skip_target();
        if (!target) {
            co_return false;
        }
        auto ep = _cursor->advance_to(*target);
        uint64_t to = _partition_position + ep.offset;
        if (to <= at) {
            co_return false;
        }
        co_await jump(to, mx_parser::start_at::inside_partition, ep.width);
        _read->expect_partition_end = ep.block == _cursor->block_count();
        _input_tomb = ep.open;
        _filter->set_tombstone_in_force(ep.open);
        co_return true;
    }

    // The partition's index entry, for its promoted index.
    future<> look_up() {
        auto key = std::move(*_lookup);
        _lookup.reset();
        std::optional<index::entry_ref> e;
        if (_loc && _loc->entry.is(key)) {
            e = _loc->entry;
        } else {
            _permit.check_timeout(_sstable.index_path);
            e = co_await _index.find(key);
        }
        if (!e) {
            throw malformed_sstable_exception(_sstable.data_file, _partition_position,
                                              "a partition the index does not list (" + key.get_token().to_string() + ")");
        }
        uint64_t entry_position = e->data_position();
        if (entry_position != _partition_position) {
            throw malformed_sstable_exception(_sstable.data_file, _partition_position,
                                              "the index places this partition at " + std::to_string(entry_position));
        }
        auto index_file = std::string(_sstable.index_path);
        auto pi = parse_promoted_index(e->page->promoted_index(e->index), _sstable.components->desc.version, index_file,
                                       e->page->promoted_index_position(e->index));
        if (pi) {
            uint64_t end = 0;
            if (_loc && _loc->entry.is(key)) {
                end = _loc->range.end;
            } else {
                _permit.check_timeout(_sstable.index_path);
                end = co_await _index.next_position(*e);
            }
            if (end <= _partition_position || end > _range_end) {
                throw malformed_sstable_exception(index_file, e->page->promoted_index_position(e->index),
                                                  "the next partition starts at " + std::to_string(end) +
                                                      ", outside this one's byte range");
            }
            _cursor.emplace(std::move(*pi), end - _partition_position, *_schema, _sstable.header->clustering_types,
                            _sstable.components->desc.version, std::move(index_file));
        }
    }

    clustering_ranges intersect(const position_range& w) const {
        clustering_ranges out;
        for (auto& r : _slice) {
            const auto& s = _cmp(r.start, w.start) < 0 ? w.start : r.start;
            const auto& e = _cmp(r.end, w.end) < 0 ? r.end : w.end;
            if (_cmp(s, e) < 0) {
                out.push_back({s, e});
            }
        }
        return out;
    }

    void open_filter(clustering_ranges ranges) {
        if (ranges.empty()) {
            _filter_end.reset();
        } else {
            _filter_end = ranges.back().end;
        }
        _filter.emplace(*_schema, std::move(ranges), false);
    }

    // The parser's first fragment waiting, into the reader's buffer (through the filter) or dropped, as the
    // partition's state says. False when the stream (or the window) stops before it: it then stays for later.
    bool emit_parsed_fragment() {
        auto& parsed = _consumer.buffer();
        auto& f = parsed.front();
        if (auto* ps = std::get_if<partition_start>(&f)) {
            if (_partition == partition_state::leaving || _read->expect_partition_end) {
                throw malformed_sstable_exception(_sstable.data_file, _consumer.partition_position(),
                                                  "a partition starts where the previous one should end");
            }
            start_partition(*ps, _consumer.partition_position());
            push(std::move(f));
            parsed.pop_front();
            return true;
        }
        bool end = std::holds_alternative<partition_end>(f);
        if (_read->expect_partition_end && !end) {
            throw malformed_sstable_exception(_sstable.data_file, _read->parser->offset(),
                                              "expected the end of the partition that its promoted index gives, found " +
                                                  std::string(kind_name(f)));
        }
        _read->expect_partition_end = false;
        if (_partition == partition_state::leaving) {
            // The rest of a partition the consumer skipped.
            if (end) {
                _partition = partition_state::outside;
            }
            parsed.pop_front();
            return true;
        }
        if (std::holds_alternative<static_row>(f)) {
            push(std::move(f));
            parsed.pop_front();
            return true;
        }
        if (_forwarding) {
            if (!_filter) {
                _end_of_stream = true;  // waits for a window
                return false;
            }
            if (end || !_filter_end || _cmp(position_of(f), *_filter_end) >= 0) {
                // Past the window (and slice): close it, keep f for a later window.
                _filter->finish(_buffer);
                _filter.reset();
                _end_of_stream = true;
                return false;
            }
        } else if (end) {
            if (_filter) {
                _filter->finish(_buffer);
                _filter.reset();
            }
            _partition = partition_state::outside;
            push(std::move(f));
            parsed.pop_front();
            return true;
        } else if (_partition == partition_state::past_slice) {
            parsed.pop_front();
            return true;
        } else if (!_filter_end || _cmp(position_of(f), *_filter_end) >= 0) {
            // Past the slice: the rest of the partition is not wanted.
            _filter->finish(_buffer);
            _filter.reset();
            _partition = partition_state::past_slice;
            parsed.pop_front();
            return true;
        }
        if (auto* rtc = std::get_if<range_tombstone_change>(&f)) {
            _input_tomb = rtc->tomb;
        }
        _filter->consume(std::move(f), _buffer);
        parsed.pop_front();
        return true;
    }

    void start_partition(const partition_start& ps, uint64_t position) {
        _partition = partition_state::reading;
        _partition_position = position;
        _input_tomb = {};
        _cursor.reset();
        _filter.reset();
        if (!_forwarding) {
            // The read's own slice, borrowed (it lives as long as the reader): nothing copied per partition.
            _filter_end.reset();
            if (!_slice.empty()) {
                _filter_end = _slice.back().end;
            }
            _filter.emplace(_cmp, &_slice);
        }
        // Only a read that may skip rows needs the promoted index.
        if (_forwarding || !_full_slice) {
            _lookup = ps.key;
        }
    }

    // A reader of located partitions: they, the next one to read and the one being read.
    std::vector<located_partition> _located;
    bool _located_mode = false;
    size_t _next_located = 0;
    const located_partition* _loc = nullptr;

    sstable_read_handles _sstable;  // the open sstable read
    gate::holder _hold;  // the sstable's reader gate, until close()
    reader_permit _permit;
    cache::read_caches<index::partition_index_page> _caches;
    index::index_reader _index;
    dht::partition_range _range;
    clustering_ranges _slice;
    bool _forwarding;
    bool _full_slice;
    pausing_consumer _consumer;
    position_in_partition_comparator _cmp;

    // The byte range of _range: [its start, _range_end) of Data.db, read through _read while it is.
    bool _range_done = false;
    uint64_t _range_end = 0;
    std::optional<data_read> _read;

    // The partition being read.
    partition_state _partition = partition_state::outside;
    uint64_t _partition_position = 0;
    std::optional<dht::decorated_key> _lookup;  // its index entry is still to be read
    std::optional<promoted_index_cursor> _cursor;
    // The slice (or, forwarding, the window's part of it) and where its last range ends.
    std::optional<mutation_fragment_filter> _filter;
    std::optional<position_in_partition> _filter_end;
    tombstone _input_tomb;  // in force in the partition just before the next fragment to parse
};

} // namespace

mutation_reader make_located_sstable_reader(schema_ptr s, sstable_read_handles h, reader_permit permit,
                                            read_options opts, std::vector<located_partition> located) {
    if (opts.reversed() || opts.forwarding == streamed_forwarding::yes) {
        throw std::invalid_argument("make_located_sstable_reader: forward reads without forwarding only");
    }
    return mutation_reader(std::make_unique<sstable_reader>(std::move(s), std::move(h), dht::partition_range::full(),
                                                            std::move(opts.slice), opts.forwarding, opts.bypass,
                                                            std::move(permit), std::move(located), true));
}

mutation_reader make_sstable_reader(schema_ptr s, sstable_read_handles h, reader_permit permit, read_options opts) {
    if (opts.reversed()) {
        return make_reversed_sstable_reader(std::move(s), std::move(h), std::move(permit), std::move(opts));
    }
    return mutation_reader(std::make_unique<sstable_reader>(std::move(s), std::move(h), std::move(opts.range),
                                                            std::move(opts.slice), opts.forwarding, opts.bypass,
                                                            std::move(permit)));
}

} // namespace reef::sstables
