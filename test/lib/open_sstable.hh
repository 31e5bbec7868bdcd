// An sstable opened for the sstable reader as its owner would keep it (components, header, Data.db and Index.db open,
// the summary, Index.db's cached_file and index page cache on a given tracker), and reading a reader to its end.
#pragma once

#include "cache/cached_file.hh"
#include "index/index_reader.hh"
#include "runtime/file.hh"
#include "sstables/components.hh"
#include "sstables/index_pages.hh"
#include "sstables/sstable_reader.hh"
#include "sstables/statistics.hh"
#include "test/lib/mutation_model.hh"

#include <memory>
#include <span>
#include <vector>

namespace reef::testing {

struct open_sstable {
    sstables::sstable_components components;
    std::shared_ptr<const sstables::serialization_header> header;
    file data;
    file index;
    index::index_summary summary;
    std::unique_ptr<cache::cached_file> index_file;
    std::unique_ptr<index::index_page_cache> index_cache;
    sstables::descriptor d;
    sstables::mx_fragment_consumer::token_function token;

    sstables::sstable_read_handles handles() {
        using sstables::component_type;
        return sstables::sstable_read_handles{
            &components, header, data, d.filename(component_type::data), &summary, index_file.get(), index_cache.get(),
            sstables::make_index_page_parser(d.version, d.filename(component_type::index), token), token};
    }
    future<> close() {
        co_await index_file->close();
        co_await index.close();
        co_await data.close();
    }
};

// Opens d with its Index.db caches on tracker (token: the partitioner; Murmur3 when empty).
inline future<std::unique_ptr<open_sstable>> open_sstable_for_read(sstables::descriptor d, cache::cache_tracker& tracker,
                                                                   sstables::mx_fragment_consumer::token_function token = {}) {
    using sstables::component_type;
    auto o = std::make_unique<open_sstable>();
    o->d = d;
    o->token = std::move(token);
    o->components = co_await sstables::load_components(d);
    auto stats_path = d.filename(component_type::statistics);
    auto stats_bytes = co_await read_entire_file(stats_path);
    auto stats = sstables::parse_statistics(std::as_bytes(std::span<const char>(stats_bytes)), d.version, stats_path);
    o->header = std::make_shared<const sstables::serialization_header>(*stats.header);
    o->data = co_await open_file_dma(d.filename(component_type::data), open_flags::ro);
    o->index = co_await open_file_dma(d.filename(component_type::index), open_flags::ro);
    auto index_size = co_await o->index.size();
    o->summary = sstables::make_index_summary(o->components.summary, index_size, o->components.data_length(), o->token);
    o->index_file = std::make_unique<cache::cached_file>(o->index, index_size, tracker);
    o->index_cache = std::make_unique<index::index_page_cache>(tracker);
    co_return o;
}

// Everything r gives (validated), then r closed, whatever happened.
inline future<std::vector<mutation_fragment>> read_and_close(mutation_reader r, bool reversed = false) {
    std::exception_ptr err;
    std::vector<mutation_fragment> out;
    try {
        out = co_await read_validated(r, reversed);
    } catch (...) {
        err = std::current_exception();
    }
    co_await r.close();
    if (err) {
        std::rethrow_exception(err);
    }
    co_return out;
}

} // namespace reef::testing
