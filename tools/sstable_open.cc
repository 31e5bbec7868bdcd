// Opening an sstable for indexed reads. See sstable_open.hh.
#include "tools/sstable_open.hh"

#include "sstables/index_pages.hh"
#include "sstables/statistics.hh"

#include <stdexcept>

namespace reef::tools {

using namespace sstables;

mx_fragment_consumer::token_function partitioner_token_function(const std::string& partitioner,
                                                                const std::string& file) {
    if (partitioner.empty() || partitioner.ends_with("Murmur3Partitioner")) {
        return [](bytes_view key) { return dht::murmur3_token(key); };
    }
    if (partitioner.ends_with("ByteOrderedPartitioner")) {
        return [](bytes_view key) {
            uint64_t v = 0;
            for (size_t i = 0; i < 8; ++i) {
                v = (v << 8) | (i < key.size() ? key[i] : 0);
            }
            return dht::token(int64_t(v ^ (uint64_t(1) << 63)));
        };
    }
    throw std::invalid_argument(file + ": partitioner " + partitioner + " is not supported");
}

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
    o->token = partitioner_token_function(st.validation ? st.validation->partitioner : "", stats_path);
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
