// sstable_open: an sstable opened for indexed reads by a tool (its components, Statistics.db's header and
// partitioner, Data.db and Index.db open, the summary with tokens, Index.db's page caches on a tracker).
#pragma once

#include "cache/cached_file.hh"
#include "cache/tracker.hh"
#include "index/index_reader.hh"
#include "runtime/file.hh"
#include "runtime/future.hh"
#include "sstables/components.hh"
#include "sstables/mx_fragments.hh"
#include "sstables/sstable_reader.hh"
#include "sstables/version.hh"

#include <memory>
#include <string>

namespace reef::tools {

// Everything make_sstable_reader needs, kept alive (and open) until close().
struct opened_sstable {
    sstables::descriptor desc;
    sstables::sstable_components components;
    std::shared_ptr<const sstables::serialization_header> header;
    sstables::mx_fragment_consumer::token_function token;
    file data;
    file index;
    index::index_summary summary;
    std::unique_ptr<cache::cached_file> index_file;
    std::unique_ptr<index::index_page_cache> index_cache;

    sstables::sstable_read_handles handles() const;
    // Closes the caches and files (readers must be closed first).
    future<> close();
};

// Loads and opens d; the index caches are charged to tracker (which must outlive the result).
future<std::unique_ptr<opened_sstable>> open_sstable(sstables::descriptor d,
                                                     cache::cache_tracker& tracker = cache::shard_cache_tracker());

} // namespace reef::tools
