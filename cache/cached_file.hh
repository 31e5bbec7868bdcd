// cached_file: a read-through cache of one file in 4 KiB pages, charged to a cache_tracker's LRU and budget.
// Bytes always equal the file's; a page is read once however many wait for it, and stays while a buffer uses it.
#pragma once

#include "cache/tracker.hh"
#include "runtime/file.hh"
#include "runtime/future.hh"
#include "runtime/input_stream.hh"
#include "runtime/temporary_buffer.hh"

#include <cstddef>
#include <cstdint>
#include <unordered_map>

namespace reef::cache {

namespace detail {
class cached_page;
class page_ptr;
}

struct cached_file_source_options {
    // Pages a data source asks for beyond the one it hands out next.
    unsigned read_ahead = 4;
};

// Pages are keyed by index (offset / page_size). A page absent from memory
// is read with one aligned dma_read; lookups that come while it loads wait
// for that read (a "block"), and if it fails every one of them gets the
// error and the page is not cached. A page is pinned (off the LRU, never
// evicted) while a buffer shares it or a read waits for it; it goes back
// on the LRU when the last such buffer dies, so buffers may outlive the
// cache and even the cached_file. Pages past the budget are evicted
// coldest first, together with whatever else the tracker holds.
//
// The size is fixed at construction (the owner knows it: an sstable's
// components do not change); reads are clipped to it, and a file found
// shorter than it is an error naming the file.
class cached_file {
public:
    static constexpr size_t page_size = 4096;

    // The file's read alignment must divide page_size (it does for 512 and
    // 4096; buffered files have 1). The tracker must outlive this object.
    cached_file(file f, uint64_t size, cache_tracker& tracker = shard_cache_tracker());
    cached_file(const cached_file&) = delete;
    cached_file& operator=(const cached_file&) = delete;
    // Forgets every page (buffers still sharing one keep it alive). Reads
    // in flight finish on their own; close() waits for them.
    ~cached_file();

    const file& underlying_file() const noexcept { return _file; }
    uint64_t size() const noexcept { return _size; }
    cache_tracker& tracker() noexcept { return _tracker; }

    // The bytes [pos, pos + len) clipped to size() (empty past the end).
    // Within one page the buffer shares (and pins) the page; across pages
    // it is a copy, read with every missing page requested at once.
    future<temporary_buffer> read(uint64_t pos, size_t len);

    // A source over [offset, offset + len) (clipped to size()) handing out
    // page-sized buffers that share the pages, keeping the next
    // opts.read_ahead pages requested (and pinned). skip() moves without
    // reading what it passes over. It must not outlive this object.
    data_source make_data_source(uint64_t offset, uint64_t len, cached_file_source_options opts = {});
    input_stream make_input_stream(uint64_t offset, uint64_t len, cached_file_source_options opts = {});

    // Forgets every page now: unpinned ones are freed, pinned ones when
    // their last user lets go. The next read reads the file again.
    void invalidate() noexcept;
    // Invalidates and waits for the reads in flight; later reads throw.
    // The file itself is the owner's to close (after this).
    future<> close();

    // This file's counters (the tracker sums every file's).
    const cached_file_stats& stats() const noexcept { return _stats; }
    // Pages in memory or being read.
    size_t cached_pages() const noexcept { return _pages.size(); }
    bool contains(uint64_t page_index) const noexcept { return _pages.count(page_index); }
    // Page reads started and not finished (read-ahead a closed source left
    // behind included); each pins its page until it ends.
    size_t reads_in_flight() const noexcept { return _reads_in_flight; }
    // What one page is charged to the tracker's budget.
    static size_t page_charge() noexcept;

private:
    friend class detail::cached_page;
    friend class cached_file_source;  // the data source (cached_file.cc)
    enum class lookup { hit, miss, block };
    // The page's entry, pinned, its read started if it was absent.
    detail::page_ptr get_or_start(uint64_t idx, lookup* how = nullptr);
    // Removes p from the map and the budget; it lives on while pinned.
    void detach(detail::cached_page* p) noexcept;
    void count(lookup how) noexcept;
    future<temporary_buffer> read_in_page(detail::page_ptr p, size_t off, size_t len);
    future<temporary_buffer> read_pages(uint64_t pos, size_t len);

    file _file;
    uint64_t _size;
    cache_tracker& _tracker;
    std::unordered_map<uint64_t, detail::cached_page*> _pages;
    cached_file_stats _stats;
    size_t _reads_in_flight = 0;
    bool _closed = false;
};

} // namespace reef::cache
