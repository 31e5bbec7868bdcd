// mutation_reader: the one interface every source of fragments implements (memtables,
// sstables, merging). Fills a buffer per call; skips partitions; fast-forwards.
#pragma once

#include "mutation/fragment.hh"
#include "mutation/partition_range.hh"
#include "reader/position_range.hh"
#include "runtime/frame_pool.hh"
#include "runtime/future.hh"
#include "schema/schema.hh"

#include <algorithm>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

namespace reef {

// Whether a reader splits each partition into clustering windows: with
// forwarding, after partition_start (and the static row) the stream ends
// until fast_forward_to(position_range) opens a window; each window ends
// the stream again, and no partition_end is emitted (the consumer moves on
// with next_partition()).
enum class streamed_forwarding { no, yes };

// Storage from the shard's frame pool (runtime/frame_pool.hh): blocks up to
// its largest size class are reused by size, without malloc (a reader made
// per query, and its buffer, cost no allocator call once the shard has run
// a few); larger ones and debug builds go to operator new.
template <typename T>
struct shard_pool_allocator {
    using value_type = T;
    shard_pool_allocator() = default;
    template <typename U>
    shard_pool_allocator(const shard_pool_allocator<U>&) noexcept {}
    T* allocate(std::size_t n) { return static_cast<T*>(internal::frame_alloc(n * sizeof(T))); }
    void deallocate(T* p, std::size_t n) noexcept { internal::frame_free(p, n * sizeof(T)); }
    template <typename U>
    bool operator==(const shard_pool_allocator<U>&) const noexcept { return true; }
};

// A reader's buffer: a FIFO of fragments over one vector that is emptied
// (keeping its capacity) whenever it is drained, so a reader that is filled
// and drained again and again allocates nothing after its first fills.
// std::deque allocated a map and a node on construction and a node every
// 2 fragments (its 512-byte nodes hold 2 of today's 200-byte fragments).
class fragment_buffer {
public:
    bool empty() const noexcept { return _head == _v.size(); }
    size_t size() const noexcept { return _v.size() - _head; }
    mutation_fragment& front() noexcept { return _v[_head]; }
    mutation_fragment& back() noexcept { return _v.back(); }
    // By reference: a fragment is ~200 bytes, and every move of it counts
    // on a scan (a by-value parameter is one more).
    void push_back(mutation_fragment&& f) {
        make_room();
        _v.push_back(std::move(f));
    }
    void push_back(const mutation_fragment& f) {
        make_room();
        _v.push_back(f);
    }
    // Builds the fragment in place: a T (clustering_row, ...) from args.
    template <typename T, typename... Args>
    void emplace_back(std::in_place_type_t<T> t, Args&&... args) {
        make_room();
        _v.emplace_back(t, std::forward<Args>(args)...);
    }
    void pop_front() noexcept {
        // Frees what the fragment still holds (if it was not moved from).
        _v[_head] = partition_end{};
        if (++_head == _v.size()) {
            clear();
        }
    }
    // The first fragment, moved out. Its moved-from slot holds nothing to
    // free: it is destroyed with the others when the buffer drains, not
    // reset now (a scan pops millions; the reset was a visit of each).
    mutation_fragment take_front() noexcept {
        static_assert(std::is_nothrow_move_constructible_v<mutation_fragment>);
        mutation_fragment f = std::move(_v[_head]);
        if (++_head == _v.size()) {
            clear();
        }
        return f;
    }
    // Drops the last fragment pushed (a reader that built one in place and
    // then found it unwanted).
    void pop_back() noexcept {
        _v.pop_back();
        if (_head == _v.size()) {
            clear();
        }
    }
    void clear() noexcept {
        _v.clear();
        _head = 0;
    }
    // Whether every fragment buffered is a clustering row (a reader that
    // passes rows on as they are can take such a buffer whole).
    bool only_rows() const noexcept {
        return std::all_of(_v.begin() + ptrdiff_t(_head), _v.end(),
                           [](auto& f) { return std::holds_alternative<clustering_row>(f); });
    }
    // Keeps, in order, the fragments for which keep(fragment) is true
    // (keep may change them); drops the others.
    template <typename Keep>
    void retain(Keep keep) {
        auto out = _v.begin() + ptrdiff_t(_head);
        for (auto it = out; it != _v.end(); ++it) {
            if (keep(*it)) {
                if (out != it) {
                    *out = std::move(*it);
                }
                ++out;
            }
        }
        _v.erase(out, _v.end());
        if (_head == _v.size()) {
            clear();
        }
    }
    // Exchanges the two buffers' fragments and storage: a reader that only
    // forwards what its source buffered hands the whole buffer on at once.
    void swap(fragment_buffer& o) noexcept {
        _v.swap(o._v);
        std::swap(_head, o._head);
    }

private:
    void make_room() {
        if (_v.capacity() == 0) {
            // A short read (a get: partition_start, a row, partition_end)
            // takes one allocation, not three doublings from one.
            _v.reserve(4);
        } else if (_head && _head * 2 >= _v.size()) {
            // Only when pushing to a buffer not drained (rare): drop the
            // popped slots so the vector does not grow without bound.
            _v.erase(_v.begin(), _v.begin() + ptrdiff_t(_head));
            _head = 0;
        }
    }

    std::vector<mutation_fragment, shard_pool_allocator<mutation_fragment>> _v;
    size_t _head = 0;
};

class mutation_reader_impl {
public:
    explicit mutation_reader_impl(schema_ptr s) : _schema(std::move(s)) {}
    virtual ~mutation_reader_impl() = default;

    // Readers are made and dropped per query: they come from the shard's
    // frame pool (the virtual destructor gives operator delete the most
    // derived type's size).
    static void* operator new(std::size_t size) { return internal::frame_alloc(size); }
    static void operator delete(void* p, std::size_t size) noexcept { internal::frame_free(p, size); }

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
    void push(mutation_fragment&& f) { _buffer.push_back(std::move(f)); }
    void push(const mutation_fragment& f) { _buffer.push_back(f); }
    bool is_buffer_full() const noexcept { return _buffer.size() >= _fill_limit; }
    void clear_buffer() noexcept { _buffer.clear(); }
    // Slow start: the first fill stops at slow_start_fragments, each next
    // one at twice the last, up to _max_buffer_fragments. A short read (a
    // get, a scan of 10 rows) builds the few fragments it takes instead of
    // a full buffer; a long one reaches full buffers after a few fills.
    // For readers whose fills cost by the fragment (in memory), not by the
    // call: an sstable reader keeps full fills.
    void enable_slow_start() noexcept { _slow_start = true; }
    static constexpr size_t slow_start_fragments = 16;

    schema_ptr _schema;
    fragment_buffer _buffer;
    size_t _max_buffer_fragments = 128;
    bool _end_of_stream = false;

private:
    // The wrapper sets the fill's limit before each fill.
    void start_fill() noexcept {
        _fill_limit = !_slow_start ? _max_buffer_fragments
                      : _fill_limit == size_t(-1) ? std::min(slow_start_fragments, _max_buffer_fragments)
                                                  : std::min(_fill_limit * 2, _max_buffer_fragments);
    }

    bool _slow_start = false;
    // Until the first fill: no limit taken yet.
    size_t _fill_limit = size_t(-1);

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
    // Inline: a scan pops every fragment through it.
    mutation_fragment pop_mutation_fragment() noexcept { return _impl->_buffer.take_front(); }
    future<> fill_buffer() {
        _impl->start_fill();
        return _impl->fill_buffer();
    }

    // What the reader has buffered (the next fragments it gives).
    const fragment_buffer& buffer() const noexcept { return _impl->_buffer; }
    // Moves every buffered fragment to the end of `to`; into an empty `to`
    // the two buffers' storage is exchanged and no fragment moves.
    void move_buffer_content_to(fragment_buffer& to);
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
