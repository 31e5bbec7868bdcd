// Opening an sstable, closing it, and what readers need from it. See sstable.hh.
#include "sstables/sstable.hh"

#include "runtime/with_closeable.hh"
#include "sstables/exceptions.hh"
#include "sstables/index_pages.hh"
#include "sstables/partitioner.hh"

#include <limits>
#include <span>
#include <stdexcept>

namespace reef::sstables {

future<statistics> load_statistics(const descriptor& d) {
    auto path = d.filename(component_type::statistics);
    auto bytes = co_await read_entire_file(path);
    co_return parse_statistics(std::as_bytes(std::span<const char>(bytes)), d.version, path);
}

bool sstable::may_contain(const dht::decorated_key& k) const {
    return _components.filter.is_present(k.key().view());
}

sstable_read_handles sstable::read_handles() const {
    return sstable_read_handles{&_components,        _header,           _data,       _data_path, _index_path,
                                &_summary,           _cached_index.get(), _index_cache.get(), _parse_page, _token};
}

future<> sstable::open(cache::cache_tracker& tracker) {
    return close_on_error(*this, [&tracker](sstable& s) { return s.load(tracker); });
}

future<> sstable::load(cache::cache_tracker& tracker) {
    _components = co_await load_components(_desc);
    // parse_statistics makes sure of the header and the validation metadata (the partitioner).
    _stats = co_await load_statistics(_desc);
    _header = std::make_shared<const serialization_header>(*_stats.header);
    try {
        _token = partitioner_token_function(_stats.validation->partitioner);
    } catch (const std::invalid_argument& e) {
        throw malformed_sstable_exception(_desc.filename(component_type::statistics), e.what());
    }
    if (_stats.stats) {
        _min_timestamp = _stats.stats->min_timestamp;
        _max_timestamp = _stats.stats->max_timestamp;
    } else {
        // No bounds known: nothing may be purged because of it, and no read may skip it.
        _min_timestamp = std::numeric_limits<write_time::timestamp_type>::min();
        _max_timestamp = std::numeric_limits<write_time::timestamp_type>::max();
    }
    _data = co_await open_file_dma(_desc.filename(component_type::data), open_flags::ro);
    _index = co_await open_file_dma(_desc.filename(component_type::index), open_flags::ro);
    auto index_size = co_await _index.size();
    _summary = make_index_summary(_components.summary, index_size, _components.data_length(), _token);
    // Index pages are read from these positions to the next one (or the end): one outside Index.db is corrupt.
    uint64_t previous = 0;
    for (auto& p : _summary.points) {
        if (p.index_position < previous || p.index_position >= index_size) {
            throw malformed_sstable_exception(_desc.filename(component_type::summary),
                                              "an entry points at Index.db offset " + std::to_string(p.index_position) +
                                                  ", outside [" + std::to_string(previous) + ", " +
                                                  std::to_string(index_size) + ")");
        }
        previous = p.index_position;
    }
    auto& sum = _components.summary;
    if (!sum.first_key.empty() && !sum.last_key.empty()) {
        _bounds.emplace(decorate_key(sum.first_key, _token), decorate_key(sum.last_key, _token));
    }
    _data_path = _desc.filename(component_type::data);
    _index_path = _desc.filename(component_type::index);
    _parse_page = make_index_page_parser(_desc.version, _index_path, _token);
    _cached_index = std::make_unique<cache::cached_file>(_index, index_size, tracker);
    _index_cache = std::make_unique<index::index_page_cache>(tracker);
}

future<> sstable::close() {
    if (_index_cache) {
        _index_cache->invalidate();
    }
    if (_cached_index) {
        co_await _cached_index->close();
    }
    if (_index) {
        co_await _index.close();
    }
    if (_data) {
        co_await _data.close();
    }
}

future<shared_sstable> open_sstable(descriptor d, cache::cache_tracker& tracker) {
    auto sst = std::make_shared<sstable>(sstable::private_tag{});
    sst->_desc = std::move(d);
    co_await sst->open(tracker);
    co_return sst;
}

future<> delete_sstable_files(const sstables::descriptor& d) {
    auto toc = d.filename(component_type::toc);
    auto tmp = toc + ".tmp";
    if (co_await file_exists(toc)) {
        co_await rename_file(toc, tmp);
        co_await sync_directory(d.directory);
    }
    // Only this generation's files: remove_partial_sstables would also take a flush's write in progress.
    for (auto c : {component_type::data, component_type::index, component_type::summary, component_type::filter,
                   component_type::statistics, component_type::compression_info, component_type::crc,
                   component_type::digest, component_type::scylla}) {
        auto path = d.filename(c);
        if (co_await file_exists(path)) {
            co_await remove_file(path);
        }
    }
    if (co_await file_exists(tmp)) {
        co_await remove_file(tmp);
    }
    co_await sync_directory(d.directory);
}

} // namespace reef::sstables
