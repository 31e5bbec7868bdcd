// table_sstable: opening an sstable of a table, its readers (indexed for reads, forward and reversed; full-scan for
// compaction) and the removal of its files.
#include "db/table_sstable.hh"

#include "mutation/mutation.hh"
#include "runtime/file.hh"
#include "sstables/index_pages.hh"
#include "sstables/mx_reader.hh"
#include "sstables/writer.hh"

#include <filesystem>
#include <stdexcept>

namespace reef {

bool table_sstable::may_contain(const dht::decorated_key& k) const {
    return components.filter.is_present(k.key().view());
}

future<std::shared_ptr<table_sstable>> open_table_sstable(sstables::descriptor d) {
    auto sst = std::make_shared<table_sstable>();
    sst->desc = d;
    sst->components = co_await sstables::load_components(d);
    auto stats_path = d.filename(sstables::component_type::statistics);
    auto stats_bytes = co_await read_entire_file(stats_path);
    sst->stats = sstables::parse_statistics(std::as_bytes(std::span<const char>(stats_bytes)), d.version, stats_path);
    if (!sst->stats.header || !sst->stats.stats) {
        throw std::runtime_error(stats_path + ": no serialization header or stats metadata");
    }
    sst->header = std::make_shared<const sstables::serialization_header>(*sst->stats.header);
    sst->min_timestamp = sst->stats.stats->min_timestamp;
    sst->max_timestamp = sst->stats.stats->max_timestamp;
    sst->data = co_await open_file_dma(d.filename(sstables::component_type::data), open_flags::ro);
    sst->index = co_await open_file_dma(d.filename(sstables::component_type::index), open_flags::ro);
    auto index_size = co_await sst->index.size();
    sst->summary = sstables::make_index_summary(sst->components.summary, index_size, sst->components.data_length());
    sst->index_file = std::make_unique<cache::cached_file>(sst->index, index_size, cache::shard_cache_tracker());
    sst->index_cache = std::make_unique<index::index_page_cache>(cache::shard_cache_tracker());
    co_return sst;
}

sstables::sstable_read_handles table_sstable::read_handles() const {
    using sstables::component_type;
    return sstables::sstable_read_handles{&components, header, data, desc.filename(component_type::data), &summary,
                                          index_file.get(), index_cache.get(),
                                          sstables::make_index_page_parser(desc.version, desc.filename(component_type::index)),
                                          {}};
}

future<> table_sstable::close() {
    if (index_cache) {
        index_cache->invalidate();
    }
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

namespace {

// Moves the inner reader's fragments into this one's buffer. A fill that ends empty means the end of the stream
// (or window) to mutation_reader::operator(), so the inner reader is filled until it gives something or ends.
class wrapping_reader : public mutation_reader_impl {
protected:
    using mutation_reader_impl::mutation_reader_impl;
    future<> fill_from(mutation_reader& inner) {
        while (_buffer.empty() && !_end_of_stream) {
            co_await inner.fill_buffer();
            while (!inner.is_buffer_empty()) {
                push(inner.pop_mutation_fragment());
            }
            _end_of_stream = inner.is_end_of_stream();
        }
    }
};

// The full-scan reader over an opened Data.db; owns the file (closed with the reader) and a reader gate holder.
class full_scan_reader : public wrapping_reader {
public:
    full_scan_reader(std::shared_ptr<table_sstable> sst, schema_ptr s, dht::partition_range range)
        : wrapping_reader(s), _sst(std::move(sst)), _hold(_sst->readers), _range(std::move(range)) {}

    future<> fill_buffer() override {
        if (!_inner) {
            co_await open();
        }
        co_await fill_from(*_inner);
    }
    future<> next_partition() override {
        if (_inner) {
            co_await _inner->next_partition();
            // The end of a window is not the end of the stream: the next partition may follow.
            _end_of_stream = _inner->done();
        }
    }
    future<> fast_forward_to(const dht::partition_range& pr) override {
        _range = pr;
        if (_inner) {
            co_await _inner->fast_forward_to(pr);
        }
    }
    future<> fast_forward_to(position_range) override {
        throw std::logic_error("sstable full-scan reader: no clustering-window forwarding");
    }
    future<> close() noexcept override {
        if (_inner) {
            co_await _inner->close();
        }
        if (_file) {
            co_await _file->close();
        }
        _hold = {};
    }

private:
    future<> open() {
        auto path = _sst->desc.filename(sstables::component_type::data);
        _file = co_await open_file_dma(path, open_flags::ro);
        auto len = _sst->components.data_length();
        auto src = sstables::make_data_source(*_file, _sst->components, 0, len, sstables::integrity_check::no);
        _inner.emplace(sstables::make_mx_full_scan_reader(_schema, _sst->header, std::move(src), path, len, _range));
    }

    std::shared_ptr<table_sstable> _sst;
    gate::holder _hold;
    dht::partition_range _range;
    std::optional<file> _file;
    std::optional<mutation_reader> _inner;
};

// The indexed reader over sst's open files, holding sst (and its reader gate) while it lives.
class indexed_reader : public wrapping_reader {
public:
    indexed_reader(std::shared_ptr<table_sstable> sst, schema_ptr s, reader_permit permit, read_options opts)
        : wrapping_reader(s), _sst(std::move(sst)), _hold(_sst->readers),
          _inner(sstables::make_sstable_reader(s, _sst->read_handles(), std::move(permit), std::move(opts))) {}

    future<> fill_buffer() override { return fill_from(_inner); }
    future<> next_partition() override {
        co_await _inner.next_partition();
        // The end of a window is not the end of the stream: the next partition may follow.
        _end_of_stream = _inner.done();
    }
    future<> fast_forward_to(const dht::partition_range& pr) override { return _inner.fast_forward_to(pr); }
    future<> fast_forward_to(position_range pr) override { return _inner.fast_forward_to(std::move(pr)); }
    future<> close() noexcept override {
        co_await _inner.close();
        _hold = {};
    }

private:
    std::shared_ptr<table_sstable> _sst;
    gate::holder _hold;
    mutation_reader _inner;
};

} // namespace

mutation_reader make_sstable_reader(std::shared_ptr<table_sstable> sst, schema_ptr s, reader_permit permit,
                                    read_options opts) {
    return mutation_reader(
        std::make_unique<indexed_reader>(std::move(sst), std::move(s), std::move(permit), std::move(opts)));
}

mutation_reader make_sstable_full_scan_reader(std::shared_ptr<table_sstable> sst, schema_ptr s) {
    return mutation_reader(std::make_unique<full_scan_reader>(std::move(sst), std::move(s), dht::partition_range::full()));
}

future<> delete_table_sstable(const sstables::descriptor& d) {
    using sstables::component_type;
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

} // namespace reef
