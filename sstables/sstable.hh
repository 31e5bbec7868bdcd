// sstable: one opened sstable (components, Statistics.db, its partitioner, the summary, Data.db and Index.db open,
// Index.db's page caches on a tracker), shared by whoever reads it; the one way the table, tools and tests open one.
#pragma once

#include "cache/cached_file.hh"
#include "cache/tracker.hh"
#include "index/index_reader.hh"
#include "mutation/tombstone.hh"
#include "runtime/file.hh"
#include "runtime/future.hh"
#include "runtime/gate.hh"
#include "sstables/components.hh"
#include "sstables/mx_fragments.hh"
#include "sstables/serialization_header.hh"
#include "sstables/sstable_reader.hh"
#include "sstables/statistics.hh"
#include "sstables/version.hh"

#include <memory>
#include <optional>
#include <string>
#include <utility>

namespace reef::sstables {

// Reads and parses d's Statistics.db (errors as parse_statistics's, or std::system_error naming a file not read).
future<statistics> load_statistics(const descriptor& d);

// An opened sstable. Everything it holds stays valid (and its files open) until close(); readers use it through
// read_handles() and keep it alive through a shared_sstable. Made only by open_sstable.
class sstable {
public:
    struct private_tag {};
    explicit sstable(private_tag) {}
    sstable(const sstable&) = delete;
    sstable& operator=(const sstable&) = delete;

    const descriptor& desc() const noexcept { return _desc; }
    const sstable_components& components() const noexcept { return _components; }
    const sstables::statistics& statistics() const noexcept { return _stats; }
    const std::shared_ptr<const serialization_header>& header() const noexcept { return _header; }
    // The partitioner's token of a key (Statistics.db's partitioner; empty function: Murmur3).
    const mx_fragment_consumer::token_function& token() const noexcept { return _token; }
    const index::index_summary& summary() const noexcept { return _summary; }
    // Timestamp bounds of its data (Statistics.db's stats; without them, bounds that rule nothing out).
    write_time::timestamp_type min_timestamp() const noexcept { return _min_timestamp; }
    write_time::timestamp_type max_timestamp() const noexcept { return _max_timestamp; }

    // Data.db and Index.db, open (their I/O counters: the tools' --stats, tests).
    const file& data_file() const noexcept { return _data; }
    const file& index_file() const noexcept { return _index; }
    // Index.db's page cache and the cache of its parsed pages (their statistics: tests).
    cache::cached_file& cached_index() const noexcept { return *_cached_index; }
    index::index_page_cache& index_cache() const noexcept { return *_index_cache; }

    // Whether the partition may be in it (the bloom filter; false positives possible).
    bool may_contain(const dht::decorated_key& k) const;
    // Its first and last partition (none when the summary names none).
    const std::optional<std::pair<dht::decorated_key, dht::decorated_key>>& key_bounds() const noexcept {
        return _bounds;
    }
    // Whether k lies between its first and last partition (the summary's keys; true when it names none): a read of
    // k skips an sstable that fails this before probing its filter, as Cassandra's selection by key bounds does.
    bool spans(const dht::decorated_key& k) const noexcept {
        return !_bounds || (!(k < _bounds->first) && !(_bounds->second < k));
    }
    // What sstables::make_sstable_reader needs; valid until close().
    sstable_read_handles read_handles() const;
    // Held by each reader open on it: the owner closes it (readers().close()) before close() and before removing
    // the files, so that no reader uses them afterwards.
    gate& readers() noexcept { return _readers; }
    // Drops its cached Index.db pages and closes its caches and files; readers must be closed first.
    future<> close();

private:
    friend future<std::shared_ptr<sstable>> open_sstable(descriptor d, cache::cache_tracker& tracker);
    // Opens everything, closing what it opened if that fails.
    future<> open(cache::cache_tracker& tracker);
    future<> load(cache::cache_tracker& tracker);

    descriptor _desc;
    sstable_components _components;
    sstables::statistics _stats;
    std::shared_ptr<const serialization_header> _header;
    mx_fragment_consumer::token_function _token;
    write_time::timestamp_type _min_timestamp = 0;
    write_time::timestamp_type _max_timestamp = 0;
    file _data;
    file _index;
    index::index_summary _summary;
    std::optional<std::pair<dht::decorated_key, dht::decorated_key>> _bounds;  // first and last partition
    std::string _data_path;
    std::string _index_path;
    index::page_parser _parse_page;
    std::unique_ptr<cache::cached_file> _cached_index;
    std::unique_ptr<index::index_page_cache> _index_cache;
    gate _readers;
};

// ScyllaDB's name: an opened sstable shared by the sstable set and its readers.
using shared_sstable = std::shared_ptr<sstable>;

// Loads and opens d: its components (checked as load_components checks them), Statistics.db (which must hold a
// serialization header and a supported partitioner; malformed_sstable_exception naming the file otherwise),
// Data.db and Index.db, with Index.db's cached_file and partition index cache charged to tracker (which must outlive
// the sstable). If opening fails, what was opened is closed before the error is rethrown.
future<shared_sstable> open_sstable(descriptor d, cache::cache_tracker& tracker = cache::shard_cache_tracker());

// Removes d's files (close the sstable first): TOC.txt is first renamed to TOC.txt.tmp, which makes the sstable a
// partial write that remove_partial_sstables (at the next start) finishes removing should this stop half-way.
future<> delete_sstable_files(const descriptor& d);

} // namespace reef::sstables
