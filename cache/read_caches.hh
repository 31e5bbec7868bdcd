// read_caches: the index caches one read of one sstable goes through: the shared ones, or, for a
// "bypass cache" read, private ones that live as long as the read and leave the shared ones untouched.
#pragma once

#include "cache/cached_file.hh"
#include "cache/partition_index_cache.hh"
#include "cache/tracker.hh"
#include "reader/read_options.hh"

#include <cstddef>
#include <memory>

namespace reef::cache {

// What a bypass read's private caches may hold at once (beyond what it pins).
inline constexpr size_t default_private_cache_budget = size_t(256) << 10;

// The index reader of a read holds one of these per sstable. Without
// bypass it hands out the sstable's shared cached_file (Index.db) and
// partition_index_cache, so the read counts in the shard's statistics and
// leaves pages behind for the next read. With bypass it makes a private
// tracker, a private cached_file over the same file and a private index
// cache: the read still pages through Index.db (with read-ahead, and
// pages shared by the buffers it parses), but no shared statistic, entry or
// LRU position changes, and its memory is gone when it ends.
template <typename Page, typename Sizer = page_memory_usage>
class read_caches {
public:
    using index_cache = partition_index_cache<Page, Sizer>;

    read_caches(cached_file& shared_file, index_cache& shared_index, bypass_cache bypass,
                size_t private_budget = default_private_cache_budget)
        : _file(&shared_file), _index(&shared_index) {
        if (bypass == bypass_cache::yes) {
            _private = std::make_unique<private_caches>(shared_file, private_budget);
            _file = &_private->file;
            _index = &_private->index;
        }
    }
    read_caches(read_caches&&) noexcept = default;

    bool bypassing() const noexcept { return bool(_private); }
    cached_file& file() noexcept { return *_file; }
    index_cache& index() noexcept { return *_index; }

    // Waits for the private cached_file's reads in flight (read-ahead);
    // the shared caches are the sstable's to close.
    future<> close() {
        if (_private) {
            co_await _private->file.close();
        }
    }

private:
    struct private_caches {
        private_caches(cached_file& shared, size_t budget)
            : tracker(budget), file(shared.underlying_file(), shared.size(), tracker), index(tracker) {}
        // Destroyed last: the caches on it go first.
        cache_tracker tracker;
        cached_file file;
        index_cache index;
    };
    std::unique_ptr<private_caches> _private;
    cached_file* _file;
    index_cache* _index;
};

} // namespace reef::cache
