// mutation_reader: the one interface every source of fragments implements (memtables,
// sstables, merging). Fills a buffer per call; skips partitions; fast-forwards.
#pragma once

#include "mutation/fragment.hh"
#include "mutation/partition_range.hh"
#include "reader/position_range.hh"
#include "runtime/future.hh"
#include "schema/schema.hh"

#include <deque>
#include <memory>
#include <optional>
#include <vector>

namespace reef {

// Whether a reader splits each partition into clustering windows: with
// forwarding, after partition_start (and the static row) the stream ends
// until fast_forward_to(position_range) opens a window; each window ends
// the stream again, and no partition_end is emitted (the consumer moves on
// with next_partition()).
enum class streamed_forwarding { no, yes };

class mutation_reader_impl {
public:
    explicit mutation_reader_impl(schema_ptr s) : _schema(std::move(s)) {}
    virtual ~mutation_reader_impl() = default;

    // Adds fragments to the buffer until it is full or the stream (or the
    // window) ends, setting end_of_stream then.
    virtual future<> fill_buffer() = 0;
    // Skips the rest of the partition the reader is in; the wrapper already
    // dropped its buffered fragments. Between partitions it does nothing.
    virtual future<> next_partition() = 0;
    // Continues with the partitions of pr, which must come after everything
    // read so far. The buffer was cleared.
    virtual future<> fast_forward_to(const dht::partition_range& pr) = 0;
    // Forwarding mode: opens the clustering window pr of the current
    // partition (after any earlier window). The buffer was cleared. It may
    // also come in the middle of a window, with pr starting at or after
    // everything the reader produced: the rest of that window is dropped,
    // and the tombstone in force at pr.start is emitted there (the combined
    // reader skips deleted rows this way).
    virtual future<> fast_forward_to(position_range pr) = 0;
    // Releases what the reader holds; nothing else is called after it.
    virtual future<> close() noexcept = 0;

    const schema_ptr& schema() const noexcept { return _schema; }

protected:
    void push(mutation_fragment f) { _buffer.push_back(std::move(f)); }
    bool is_buffer_full() const noexcept { return _buffer.size() >= _max_buffer_fragments; }
    void clear_buffer() noexcept { _buffer.clear(); }

    schema_ptr _schema;
    std::deque<mutation_fragment> _buffer;
    size_t _max_buffer_fragments = 128;
    bool _end_of_stream = false;

    friend class mutation_reader;
};

class mutation_reader {
public:
    explicit mutation_reader(std::unique_ptr<mutation_reader_impl> impl) noexcept : _impl(std::move(impl)) {}
    mutation_reader(mutation_reader&&) noexcept = default;
    mutation_reader& operator=(mutation_reader&&) noexcept = default;

    const schema_ptr& schema() const noexcept { return _impl->schema(); }
    bool is_buffer_empty() const noexcept { return _impl->_buffer.empty(); }
    bool is_end_of_stream() const noexcept { return _impl->_end_of_stream; }
    // The buffer is drained and the source has no more.
    bool done() const noexcept { return is_buffer_empty() && is_end_of_stream(); }
    mutation_fragment pop_mutation_fragment();
    future<> fill_buffer() { return _impl->fill_buffer(); }

    // The next fragment, or nothing at the end of the stream (or window).
    future<std::optional<mutation_fragment>> operator()();
    // Drops the rest of the current partition.
    future<> next_partition();
    future<> fast_forward_to(const dht::partition_range& pr);
    future<> fast_forward_to(position_range pr);
    future<> close() noexcept { return _impl->close(); }

private:
    std::unique_ptr<mutation_reader_impl> _impl;
};

// A reader over fragments held in memory (whole partitions, in order), for
// tests and for sources that already hold their data: it honours partition
// ranges, next_partition and, in forwarding mode, clustering windows.
// `reversed`: the fragments are a reversed stream (windows come in its
// order). `slice`: only these clustering ranges (in the stream's order, see
// position_range.hh) are produced, clipped as mutation_fragment_filter does.
// `buffer_fragments`: how many fragments a fill produces at most (small
// buffers make a consumer fill, and skip, as it would over a large source).
mutation_reader make_fragment_vector_reader(schema_ptr s, std::vector<mutation_fragment> fragments,
                                            dht::partition_range range = dht::partition_range::full(),
                                            streamed_forwarding fwd = streamed_forwarding::no, bool reversed = false,
                                            const std::optional<clustering_ranges>& slice = std::nullopt,
                                            size_t buffer_fragments = 128);

// Reads everything the reader produces (until end of stream).
future<std::vector<mutation_fragment>> read_all(mutation_reader& r);

} // namespace reef
