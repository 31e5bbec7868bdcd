// Opening an sstable for indexed reads. See sstable_open.hh.
#include "tools/sstable_open.hh"

#include "sstables/index_pages.hh"
#include "sstables/partitioner.hh"
#include "sstables/statistics.hh"

#include <stdexcept>

namespace reef::tools {

using namespace sstables;

sstable_read_handles opened_sstable::handles() const {
    return sstable_read_handles{&components, header, data, desc.filename(component_type::data), &summary,
                                index_file.get(), index_cache.get(),
                                make_index_page_parser(desc.version, desc.filename(component_type::index), token),
                                token};
}

future<> opened_sstable::close() {
    if (index_file) {
        co_await index_file->close();
    }
    if (index) {
        co_await index.close();
    }
    if (data) {
        co_await data.close();
    }
}

future<std::unique_ptr<opened_sstable>> open_sstable(descriptor d, cache::cache_tracker& tracker) {
    auto o = std::make_unique<opened_sstable>();
    o->desc = d;
    o->components = co_await load_components(d);
    auto stats_path = d.filename(component_type::statistics);
    auto stats_bytes = co_await read_entire_file(stats_path);
    auto st = parse_statistics(std::as_bytes(std::span<const char>(stats_bytes)), d.version, stats_path);
    if (!st.header) {
        throw std::invalid_argument(stats_path + ": no serialization header");
    }
    o->header = std::make_shared<const serialization_header>(*st.header);
    try {
        o->token = partitioner_token_function(st.validation ? st.validation->partitioner : "");
    } catch (const std::invalid_argument& e) {
        throw std::invalid_argument(stats_path + ": " + e.what());
    }
    std::exception_ptr err;
    try {
        o->data = co_await open_file_dma(d.filename(component_type::data), open_flags::ro);
        o->index = co_await open_file_dma(d.filename(component_type::index), open_flags::ro);
        auto index_size = co_await o->index.size();
        o->summary = make_index_summary(o->components.summary, index_size, o->components.data_length(), o->token);
        o->index_file = std::make_unique<cache::cached_file>(o->index, index_size, tracker);
        o->index_cache = std::make_unique<index::index_page_cache>(tracker);
    } catch (...) {
        err = std::current_exception();
    }
    if (err) {
        co_await o->close();
        std::rethrow_exception(err);
    }
    co_return o;
}

} // namespace reef::tools
