// The full-scan reader. See mx_reader.hh.
#include "sstables/mx_reader.hh"

#include "sstables/mx_parser.hh"

#include <stdexcept>
#include <utility>

namespace reef::sstables {

namespace {

// The fragment consumer, passing over the rows the reader's caller does not want.
class skipping_consumer final : public mx_fragment_consumer {
public:
    skipping_consumer(schema_ptr s, const serialization_header& h, std::string file, size_t max_buffered,
                      token_function token, row_skip_function skip)
        : mx_fragment_consumer(std::move(s), h, std::move(file), max_buffered, std::move(token)), _skip(std::move(skip)) {}

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
    // Whether the parser stopped after a row the caller paused at (once).
    bool take_pause() noexcept { return std::exchange(_paused, false); }

private:
    row_skip_function _skip;
    bool _pause_after_row = false;
    bool _paused = false;
};

class mx_full_scan_reader final : public mutation_reader_impl {
public:
    mx_full_scan_reader(schema_ptr s, std::shared_ptr<const serialization_header> header, data_source src,
                        std::string file, uint64_t data_length, dht::partition_range range,
                        mx_fragment_consumer::token_function token, uint64_t start_offset, mx_parser::start_at start,
                        row_skip_function skip_row)
        : mutation_reader_impl(s), _header(std::move(header)), _src(std::move(src)),
          _consumer(std::move(s), *_header, file, _max_buffer_fragments, std::move(token), std::move(skip_row)),
          _parser(*_header, file, _consumer, start_offset, data_length, start), _range(std::move(range)),
          _in_partition(start == mx_parser::start_at::inside_partition) {}

    future<> fill_buffer() override {
        while (!is_buffer_full() && !_end_of_stream) {
            // Fragments parsed earlier first (some may wait for a later partition range).
            if (take_fragments()) {
                break;
            }
            if (_parser_done) {
                _end_of_stream = true;
                break;
            }
            auto step = _parser.run();
            switch (step.what) {
            case parse_step::kind::need_more_data:
                _buf = co_await _src.get();
                feed();
                break;
            case parse_step::kind::skip:
                _buf = co_await _src.skip(step.bytes);
                feed();
                break;
            case parse_step::kind::consumer_full:
                if (_consumer.take_pause()) {
                    take_fragments();
                    co_return;  // the caller consumes up to the row it paused at first
                }
                break;
            case parse_step::kind::done: _parser_done = true; break;
            }
        }
    }

    future<> next_partition() override {
        if (_in_partition) {
            _dropping = true;
            _in_partition = false;
        }
        _end_of_stream = false;
        co_return;
    }

    future<> fast_forward_to(const dht::partition_range& pr) override {
        if (_in_partition) {
            _dropping = true;
            _in_partition = false;
        }
        _range = pr;
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

    // Moves the parsed fragments the range wants into the buffer; returns true when a partition past the
    // range's end stops the stream (it stays in the consumer for a later fast_forward_to).
    bool take_fragments() {
        auto& parsed = _consumer.buffer();
        while (!parsed.empty()) {
            auto& f = parsed.front();
            if (auto* ps = std::get_if<partition_start>(&f)) {
                if (_range.after(ps->key)) {
                    _end_of_stream = true;
                    return true;
                }
                _dropping = _range.before(ps->key);
                _in_partition = !_dropping;
            }
            bool end = std::holds_alternative<partition_end>(f);
            if (!_dropping) {
                push(std::move(f));
            }
            if (end) {
                _dropping = false;
                _in_partition = false;
            }
            parsed.pop_front();
        }
        return false;
    }

    std::shared_ptr<const serialization_header> _header;
    data_source _src;
    skipping_consumer _consumer;
    mx_parser _parser;
    // The buffer the parser is parsing: it must live until the parser asks for the next.
    temporary_buffer _buf;
    dht::partition_range _range;
    bool _parser_done = false;
    // Inside a partition the consumer gets fragments of (pushed its start, not yet its end).
    bool _in_partition = false;
    // The rest of the current partition is not wanted.
    bool _dropping = false;
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
