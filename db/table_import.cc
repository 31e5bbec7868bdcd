// table's part of a refresh: foreign sstables rewritten into staged sstables of this table (its shard's partitions
// only, its generations), then added to the set together or deleted.
#include "db/table.hh"

#include "runtime/with_closeable.hh"
#include "sstables/shared_sstable_readers.hh"

namespace reef {

namespace {

// The partitions of `inner` that `owned` accepts, whole; the others dropped. Reads forward only, without
// forwarding (what the sstable writer asks).
class owned_partitions_reader final : public mutation_reader_impl {
public:
    owned_partitions_reader(mutation_reader inner, std::function<bool(const dht::decorated_key&)> owned)
        : mutation_reader_impl(inner.schema()), _inner(std::move(inner)), _owned(std::move(owned)) {}

    future<> fill_buffer() override {
        while (!is_buffer_full() && !_end_of_stream) {
            if (_inner.is_buffer_empty()) {
                if (_inner.is_end_of_stream()) {
                    _end_of_stream = true;
                    break;
                }
                co_await _inner.fill_buffer();
                continue;
            }
            auto f = _inner.pop_mutation_fragment();
            if (auto* ps = std::get_if<partition_start>(&f)) {
                _skipping = !_owned(ps->key);
            }
            if (!_skipping) {
                push(std::move(f));
            }
        }
    }
    future<> next_partition() override {
        _skipping = true;
        co_return;
    }
    future<> fast_forward_to(const dht::partition_range&) override {
        throw std::logic_error("owned_partitions_reader: no fast-forwarding");
    }
    future<> fast_forward_to(position_range) override {
        throw std::logic_error("owned_partitions_reader: no fast-forwarding");
    }
    future<> close() noexcept override { return _inner.close(); }

private:
    mutation_reader _inner;
    std::function<bool(const dht::decorated_key&)> _owned;
    bool _skipping = false;
};

} // namespace

future<> table::stage_import(std::vector<sstables::descriptor> sources,
                             std::function<bool(const dht::decorated_key&)> owned) {
    for (auto& src : sources) {
        auto in = co_await sstables::open_sstable(src);
        auto d = next_descriptor();
        // No commitlog intervals and no originating host: the flushed position is this host's flushes' alone.
        auto opts = sstables::writer_options_for(*_schema);
        std::exception_ptr err;
        sstables::written_sstable written;
        try {
            auto r = mutation_reader(std::make_unique<owned_partitions_reader>(
                sstables::make_sstable_full_scan_reader(in, _schema), owned));
            written = co_await with_closeable(std::move(r), [this, &d, &opts](mutation_reader& r) {
                return _cfg.write_sstable(r, _schema, d, opts);
            });
        } catch (...) {
            err = std::current_exception();
        }
        co_await in->readers().close();
        co_await in->close();
        if (err) {
            try {
                co_await sstables::delete_sstable_files(d);
            } catch (...) {
                // The write's error is the one to report; a leftover partial write is removed at the next start.
            }
            std::rethrow_exception(err);
        }
        if (!written.partitions) {
            co_await sstables::delete_sstable_files(d);  // none of this shard's partitions
            continue;
        }
        _staged.push_back(co_await sstables::open_sstable(d));
    }
}

size_t table::commit_staged() {
    auto n = _staged.size();
    if (n && _cache) {
        _cache->clear();  // what the cache knows to be absent may be there now
    }
    for (auto& sst : _staged) {
        _sstables.push_back(std::move(sst));
    }
    index_sstables();
    _staged.clear();
    return n;
}

future<> table::abort_staged() {
    auto staged = std::exchange(_staged, {});
    for (auto& sst : staged) {
        co_await sst->readers().close();
        co_await sst->close();
        co_await sstables::delete_sstable_files(sst->desc());
    }
}

} // namespace reef
