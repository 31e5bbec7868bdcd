// Readers that own a shared_sstable (indexed for reads, forward and reversed; full-scan for compaction). See
// shared_sstable_readers.hh.
#include "sstables/shared_sstable_readers.hh"

#include "runtime/file.hh"
#include "sstables/mx_fragments.hh"
#include "sstables/mx_reader.hh"
#include "sstables/schema_upgrade.hh"

#include <optional>
#include <stdexcept>

namespace reef::sstables {

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
    full_scan_reader(shared_sstable sst, schema_ptr s, dht::partition_range range,
                     std::shared_ptr<scan_progress> progress)
        : wrapping_reader(s), _sst(std::move(sst)), _hold(_sst->readers()), _range(std::move(range)),
          _progress(std::move(progress)) {}

    future<> fill_buffer() override {
        if (!_inner) {
            co_await open();
        }
        co_await fill_from(*_inner);
        if (_progress) {
            _progress->bytes = _file->io_counters().bytes;
        }
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
        auto path = _sst->desc().filename(component_type::data);
        _file = co_await open_file_dma(path, open_flags::ro);
        auto len = _sst->components().data_length();
        auto src = make_data_source(*_file, _sst->components(), 0, len, integrity_check::no);
        _inner.emplace(
            make_mx_full_scan_reader(_schema, _sst->header(), std::move(src), path, len, _range, _sst->token()));
    }

    shared_sstable _sst;
    gate::holder _hold;
    dht::partition_range _range;
    std::optional<file> _file;
    std::optional<mutation_reader> _inner;
    std::shared_ptr<scan_progress> _progress;
};

// sst's read handles, with sst and its reader gate for the reader to hold.
sstable_read_handles owned_handles(shared_sstable sst) {
    auto h = sst->read_handles();
    h.readers = &sst->readers();
    h.owner = std::move(sst);
    return h;
}

} // namespace

mutation_reader make_sstable_reader(shared_sstable sst, schema_ptr s, reader_permit permit, read_options opts) {
    if (!header_matches(*s, *sst->header())) {
        // Written before an ALTER TABLE: read with the sstable's own columns, cells moved to the current ones.
        auto written = schema_from_header(*sst->header(), s->keyspace(), s->table());
        return make_upgrading_reader(
            make_sstable_reader(std::move(written), owned_handles(std::move(sst)), std::move(permit), std::move(opts)),
            std::move(s));
    }
    return make_sstable_reader(std::move(s), owned_handles(std::move(sst)), std::move(permit), std::move(opts));
}

mutation_reader make_located_sstable_reader(shared_sstable sst, schema_ptr s, reader_permit permit, read_options opts,
                                            std::vector<located_partition> located) {
    if (!header_matches(*s, *sst->header())) {
        auto written = schema_from_header(*sst->header(), s->keyspace(), s->table());
        return make_upgrading_reader(make_located_sstable_reader(std::move(written), owned_handles(std::move(sst)),
                                                                 std::move(permit), std::move(opts),
                                                                 std::move(located)),
                                     std::move(s));
    }
    return make_located_sstable_reader(std::move(s), owned_handles(std::move(sst)), std::move(permit), std::move(opts),
                                       std::move(located));
}

mutation_reader make_sstable_full_scan_reader(shared_sstable sst, schema_ptr s, std::shared_ptr<scan_progress> progress) {
    if (!header_matches(*s, *sst->header())) {
        auto written = schema_from_header(*sst->header(), s->keyspace(), s->table());
        return make_upgrading_reader(mutation_reader(std::make_unique<full_scan_reader>(
                                         std::move(sst), std::move(written), dht::partition_range::full(),
                                         std::move(progress))),
                                     std::move(s));
    }
    return mutation_reader(std::make_unique<full_scan_reader>(std::move(sst), std::move(s),
                                                              dht::partition_range::full(), std::move(progress)));
}

} // namespace reef::sstables
