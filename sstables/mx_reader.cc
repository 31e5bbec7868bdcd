// The full-scan reader. See mx_reader.hh.
#include "sstables/mx_reader.hh"

#include "sstables/mx_parser.hh"

#include <stdexcept>
#include <utility>

namespace reef::sstables {

namespace {

// The fragment consumer of the full-scan reader: it builds the fragments straight into the reader's buffer, keeps
// to the reader's partition range (the partitions before it dropped, the first one past it held back), drops the
// rest of a partition the caller left (next_partition), and passes over the rows the caller does not want.
class scan_consumer final : public mx_fragment_consumer {
public:
    scan_consumer(schema_ptr s, const serialization_header& h, std::string_view file, size_t max_buffered,
                  token_function token, row_skip_function skip, fragment_buffer& out, dht::partition_range range,
                  bool in_partition)
        : mx_fragment_consumer(std::move(s), h, file, max_buffered, std::move(token)),
          _skip(std::move(skip)), _range(std::move(range)), _full_range(is_full(_range)), _in_partition(in_partition) {
        set_output(out);
    }

    proceed consume_partition_start(bytes_view key, tombstone deletion, uint64_t position,
                                     uint64_t header_end) override {
        _dropping = false;
        auto p = mx_fragment_consumer::consume_partition_start(key, deletion, position, header_end);
        if (_full_range) {
            _in_partition = true;
            return p;
        }
        auto& ps = *std::get_if<partition_start>(&buffer().back());
        if (_range.after(ps.key)) {
            // Past the range: the stream ends here, and the partition waits for a later range.
            _held.emplace(std::move(ps));
            buffer().pop_back();
            return proceed::no;
        }
        if (_range.before(ps.key)) {
            buffer().pop_back();
            _dropping = true;
            return proceed::yes;
        }
        _in_partition = true;
        return p;
    }
    row_action consume_row_key(const clustering_values& ck, uint64_t) override {
        auto v = _skip ? _skip(ck) : row_verdict::read;
        _pause_after_row = v == row_verdict::pause;
        return v == row_verdict::skip ? row_action::skip : row_action::read;
    }
    proceed consume_row_end(const mx_row& row) override {
        auto p = mx_fragment_consumer::consume_row_end(row);
        if (_pause_after_row) {
            _pause_after_row = false;
            _paused = true;
            return proceed::no;
        }
        return p;
    }
    proceed consume_partition_end(uint64_t end) override {
        auto p = mx_fragment_consumer::consume_partition_end(end);
        _dropping = false;
        _in_partition = false;
        return p;
    }

    using mx_fragment_consumer::detach_row;
    // Whether the parser stopped after a row the caller paused at (once).
    bool take_pause() noexcept { return std::exchange(_paused, false); }
    // The rest of the current partition (if the stream is inside one) is not wanted.
    void drop_partition() noexcept {
        if (_in_partition) {
            _dropping = true;
            _in_partition = false;
        }
    }
    void set_range(const dht::partition_range& pr) {
        _range = pr;
        _full_range = is_full(_range);
    }
    // A partition start past the range's end waits (the parser stopped right after it).
    bool holding() const noexcept { return _held.has_value(); }
    // Decides the held partition start by the (new) range: false while it is still past the range's end; else it
    // goes to the buffer, or (before the range) its partition is dropped.
    bool release_held() {
        if (_range.after(_held->key)) {
            return false;
        }
        if (_range.before(_held->key)) {
            _dropping = true;
        } else {
            buffer().emplace_back(std::in_place_type<partition_start>, std::move(*_held));
            _in_partition = true;
        }
        _held.reset();
        return true;
    }

private:
    static bool is_full(const dht::partition_range& r) noexcept { return !r.start() && !r.end(); }

    row_skip_function _skip;
    dht::partition_range _range;
    bool _full_range;
    // Inside a partition whose fragments go to the buffer (its start pushed, not yet its end).
    bool _in_partition;
    std::optional<partition_start> _held;
    bool _pause_after_row = false;
    bool _paused = false;
};

class mx_full_scan_reader final : public mutation_reader_impl {
public:
    mx_full_scan_reader(schema_ptr s, std::shared_ptr<const serialization_header> header, data_source src,
                        std::string file, uint64_t data_length, dht::partition_range range,
                        mx_fragment_consumer::token_function token, uint64_t start_offset, mx_parser::start_at start,
                        row_skip_function skip_row)
        : mutation_reader_impl(s), _file(std::move(file)), _header(std::move(header)), _src(std::move(src)),
          _consumer(std::move(s), *_header, _file, _max_buffer_fragments, std::move(token), std::move(skip_row),
                    _buffer, std::move(range), start == mx_parser::start_at::inside_partition),
          _parser(*_header, _file, _consumer, start_offset, data_length, start) {}

    future<> fill_buffer() override {
        if (_consumer.holding() && !_consumer.release_held()) {
            _end_of_stream = true;
            co_return;
        }
        // The parser stops only where the consumer says (after a whole fragment): never mid-row, whose first half
        // is in the buffer already.
        bool full = is_buffer_full();
        try {
            while (!full && !_end_of_stream) {
                if (_parser_done) {
                    _end_of_stream = true;
                    break;
                }
                // A read that failed in an earlier fill is tried again before the parser runs on.
                auto step = _owed ? *_owed : _parser.run();
                switch (step.what) {
                case parse_step::kind::need_more_data:
                    _owed = step;
                    _buf = co_await _src.get();
                    _owed.reset();
                    feed();
                    break;
                case parse_step::kind::skip:
                    _owed = step;
                    _buf = co_await _src.skip(step.bytes);
                    _owed.reset();
                    feed();
                    break;
                case parse_step::kind::consumer_full:
                    if (_consumer.holding()) {
                        _end_of_stream = true;  // a partition past the range: until a later range takes it
                        co_return;
                    }
                    if (_consumer.take_pause()) {
                        co_return;  // the caller consumes up to the row it paused at first
                    }
                    full = is_buffer_full();
                    break;
                case parse_step::kind::done: _parser_done = true; break;
                }
            }
        } catch (...) {
            // A read (or the parse) failed in the middle of a row: the buffer keeps whole fragments only, and a
            // caller that tries again after a failed read gets the row whole.
            _consumer.detach_row();
            throw;
        }
    }

    future<> next_partition() override {
        _consumer.drop_partition();
        _end_of_stream = false;
        co_return;
    }

    future<> fast_forward_to(const dht::partition_range& pr) override {
        _consumer.drop_partition();
        _consumer.set_range(pr);
        co_return;
    }

    future<> fast_forward_to(position_range) override {
        throw std::logic_error("fast_forward_to(position_range) on the full-scan reader, which has no forwarding");
    }

    future<> close() noexcept override {
        try {
            co_await _src.close();
        } catch (...) {
        }
    }

private:
    void feed() {
        if (_buf.empty()) {
            _parser.feed_end_of_stream();
        } else {
            _parser.feed(std::as_bytes(std::span<const char>(_buf.get(), _buf.size())));
        }
    }

    std::string _file;  // the name the consumer and the parser give in errors
    std::shared_ptr<const serialization_header> _header;
    data_source _src;
    scan_consumer _consumer;
    mx_parser _parser;
    // The buffer the parser is parsing: it must live until the parser asks for the next.
    temporary_buffer _buf;
    bool _parser_done = false;
    // The read the parser waits for, while it is being made (still set if it failed).
    std::optional<parse_step> _owed;
};

} // namespace

mutation_reader make_mx_full_scan_reader(schema_ptr s, std::shared_ptr<const serialization_header> header,
                                         data_source src, std::string file, uint64_t data_length,
                                         dht::partition_range range, mx_fragment_consumer::token_function token,
                                         uint64_t start_offset, mx_parser::start_at start,
                                         row_skip_function skip_row) {
    return mutation_reader(std::make_unique<mx_full_scan_reader>(std::move(s), std::move(header), std::move(src),
                                                                 std::move(file), data_length, std::move(range),
                                                                 std::move(token), start_offset, start,
                                                                 std::move(skip_row)));
}

} // namespace reef::sstables
