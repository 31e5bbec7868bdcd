// mx_parser: the Data.db parser of mx sstables (mc, md, me, na, nb, oa), a synchronous generator coroutine. It is fed
// the uncompressed stream in buffers of any size and stops with "need more data", "skip N bytes" or "consumer
// full"; every bit of parsing state lives in the coroutine's frame. Promises: the same calls to the consumer
// whatever the buffer sizes; corrupt or truncated input throws malformed_sstable_exception (file, offset, what
// was expected), never reads out of bounds and never waits for data that cannot come.
#pragma once

#include "sstables/deletion_time.hh"  // invalid_deletion_time
#include "sstables/mx_consumer.hh"
#include "sstables/parser_input.hh"
#include "sstables/serialization_header.hh"
#include "utils/small_vector.hh"
#include "utils/sync_generator.hh"

#include <concepts>
#include <cstdint>
#include <exception>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace reef::sstables {

struct parse_step {
    enum class kind : uint8_t {
        need_more_data,  // feed the next buffer (or feed_end_of_stream)
        skip,            // skip `bytes` in the data source, then feed what follows
        consumer_full,   // the consumer said stop; run() again to continue
        done,            // the stream ended at a partition boundary
    };
    kind what = kind::done;
    uint64_t bytes = 0;
};

class mx_parser {
public:
    // Where the first byte fed is: a partition's start, or an unfiltered (row or marker) inside a partition,
    // as a promoted index block gives (the partition then goes on from there, with no partition start and no
    // static row reported).
    enum class start_at { partition, inside_partition };

    // Parses from start_offset on. stream_end: where the stream ends, if known; lengths reaching past it are
    // refused at once. file names the data in errors: not copied, it must outlive the parser (a temporary cannot).
    mx_parser(const serialization_header& header, std::string_view file, mx_consumer& consumer,
              uint64_t start_offset = 0, std::optional<uint64_t> stream_end = std::nullopt,
              start_at start = start_at::partition);
    template <typename S>
        requires std::same_as<S, std::string>
    mx_parser(const serialization_header&, S&&, mx_consumer&, uint64_t = 0, std::optional<uint64_t> = {},
              start_at = start_at::partition) = delete;
    mx_parser(const mx_parser&) = delete;
    mx_parser& operator=(const mx_parser&) = delete;

    // The next buffer of the stream, after need_more_data or skip. It must stay valid until the parser asks
    // for more data.
    void feed(std::span<const std::byte> buf) noexcept { _in.feed(buf); }
    void feed_end_of_stream() noexcept { _in.feed_end_of_stream(); }

    // Parses until the next stop. Throws malformed_sstable_exception; after a throw, every run() throws it again.
    parse_step run();

    // The offset of the next byte to parse.
    uint64_t offset() const noexcept { return _in.offset(); }

private:
    struct column_info {
        bool complex;
        std::optional<uint32_t> fixed_length;
    };
    utils::sync_generator<parse_step> parse();

    const serialization_header& _header;
    mx_consumer& _consumer;
    parser_input _in;
    // Inline for the common table, so that a parser (one per read) allocates none of them.
    utils::small_vector<std::optional<uint32_t>, 4> _clustering_lengths;
    utils::small_vector<column_info, 8> _static_columns;
    utils::small_vector<column_info, 8> _regular_columns;
    start_at _start;
    std::exception_ptr _error;
    utils::sync_generator<parse_step> _gen;
};

} // namespace reef::sstables
