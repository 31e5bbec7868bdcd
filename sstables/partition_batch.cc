// Locating a batch of partitions in one sstable. See partition_batch.hh.
#include "sstables/partition_batch.hh"

#include "runtime/when_all.hh"
#include "sstables/components.hh"

#include <algorithm>

namespace reef::sstables {

namespace {

// [start, end) of Data.db read by one read, and the located partitions (indexes) it carries.
struct data_span {
    uint64_t start = 0;
    uint64_t end = 0;
    std::vector<size_t> partitions;
};

// The bytes [start, end) of a compressed Data.db, decompressed through its data source (asked to read them all at
// once); fewer where the file ends early.
future<temporary_buffer> read_decompressed(const sstable& sst, uint64_t start, uint64_t end) {
    auto src = make_data_source(sst.data_file(), sst.components(), start, end - start, integrity_check::no, end - start);
    std::vector<temporary_buffer> parts;
    size_t total = 0;
    std::exception_ptr ex;
    try {
        while (total < end - start) {
            auto b = co_await src.get();
            if (b.empty()) {
                break;
            }
            total += b.size();
            parts.push_back(std::move(b));
        }
    } catch (...) {
        ex = std::current_exception();
    }
    co_await src.close();
    if (ex) {
        std::rethrow_exception(ex);
    }
    if (parts.size() == 1) {
        co_return std::move(parts.front());
    }
    temporary_buffer out(total);
    size_t at = 0;
    for (auto& p : parts) {
        std::copy_n(p.get(), p.size(), out.get_write() + at);
        at += p.size();
    }
    co_return out;
}

// The bytes [start, end) of Data.db, in one buffer: an uncompressed file's in one read (a batch checks no CRC).
future<temporary_buffer> read_span(const sstable& sst, uint64_t start, uint64_t end) {
    temporary_buffer buf;
    if (sst.components().compression) {
        buf = co_await read_decompressed(sst, start, end);
    } else {
        auto data = sst.data_file();
        buf = co_await data.dma_read(start, end - start);
    }
    if (buf.size() != end - start) {
        throw std::runtime_error(sst.components().desc.filename(component_type::data) + ": Data.db ends at " +
                                 std::to_string(start + buf.size()) + ", before the index's partition end " +
                                 std::to_string(end));
    }
    co_return buf;
}

} // namespace

std::vector<size_t> probe_filter(const sstable& sst, std::span<const bloom_filter::hash_type> hashes,
                                 partition_batch_stats* stats) {
    std::vector<size_t> out;
    auto& filter = sst.components().filter;
    // A few keys ahead: each probe's bits are then mostly in the CPU's cache, fetched while earlier keys were probed.
    constexpr size_t ahead = 2;
    for (size_t i = 0; i < std::min(ahead, hashes.size()); ++i) {
        filter.prefetch(hashes[i]);
    }
    for (size_t i = 0; i < hashes.size(); ++i) {
        if (i + ahead < hashes.size()) {
            filter.prefetch(hashes[i + ahead]);
        }
        if (filter.is_present(hashes[i])) {
            out.push_back(i);
        }
    }
    if (stats) {
        stats->probes += hashes.size();
        stats->admitted += out.size();
    }
    return out;
}

future<located_batch> locate_partitions(const sstable& sst, std::span<const dht::decorated_key> keys,
                                        std::span<const bloom_filter::hash_type> hashes, const reader_permit& permit, partition_batch_options opts,
                                        partition_batch_stats* stats) {
    std::vector<bloom_filter::hash_type> own;
    if (hashes.empty()) {
        own.reserve(keys.size());
        for (auto& k : keys) {
            own.push_back(bloom_filter::hash_of(k.key().bytes()));
        }
        hashes = own;
    }
    // Every probe first: the index is looked at only for the keys the filter admits.
    auto admitted = probe_filter(sst, hashes, stats);
    auto out = co_await locate_admitted(sst, keys, std::move(admitted), permit, opts, stats);
    co_return out;
}

future<located_batch> locate_admitted(const sstable& sst, std::span<const dht::decorated_key> keys,
                                      std::vector<size_t> admitted, const reader_permit& permit,
                                      partition_batch_options opts, partition_batch_stats* stats) {
    located_batch out;
    out.keys = std::move(admitted);
    if (out.keys.empty()) {
        co_return out;
    }
    // The admitted keys as one span: a run of the batch when they follow one another, as they do when the
    // sstable's key bounds chose them (no copies).
    std::vector<dht::decorated_key> subset;
    std::span<const dht::decorated_key> lookup = keys.subspan(out.keys.front(), out.keys.size());
    if (out.keys.back() - out.keys.front() + 1 != out.keys.size()) {
        subset.reserve(out.keys.size());
        for (size_t i : out.keys) {
            subset.push_back(keys[i]);
        }
        lookup = subset;
    }
    if (permit.timed_out()) {
        permit.check_timeout(sst.components().desc.filename(component_type::index));
    }
    auto handles = sst.read_handles();
    cache::read_caches<index::partition_index_page> caches(*handles.index_file, *handles.index_cache, bypass_cache::no);
    index::index_reader idx(*handles.summary, caches, handles.parse_page);
    uint64_t misses_before = handles.index_cache->stats().misses + handles.index_cache->stats().hits +
                             handles.index_cache->stats().blocks;
    auto found = co_await idx.find_all(lookup);
    if (stats) {
        auto& st = handles.index_cache->stats();
        stats->page_lookups += st.misses + st.hits + st.blocks - misses_before;
    }
    // The keys the index lists (a filter's false positives are dropped).
    size_t kept = 0;
    for (size_t i = 0; i < found.size(); ++i) {
        if (found[i]) {
            out.keys[kept++] = out.keys[i];
            out.partitions.push_back(located_partition{lookup[i], std::move(found[i]->ref), found[i]->range, {}});
        }
    }
    out.keys.resize(kept);
    // Spans of the small partitions, in file order (ring order is file order), nearby ones merged.
    std::vector<data_span> spans;
    for (size_t p = 0; p < out.partitions.size(); ++p) {
        auto r = out.partitions[p].range;
        if (r.end - r.start > opts.max_prefetched_partition || r.end <= r.start) {
            continue;
        }
        if (!spans.empty() && r.start >= spans.back().end && r.start - spans.back().end <= opts.merge_gap &&
            r.end - spans.back().start <= opts.max_read) {
            spans.back().end = r.end;
        } else {
            spans.push_back({r.start, r.end, {}});
        }
        spans.back().partitions.push_back(p);
    }
    if (spans.empty()) {
        co_return out;
    }
    permit.check_timeout(handles.data_file);
    std::vector<future<temporary_buffer>> reads;
    reads.reserve(spans.size());
    for (auto& s : spans) {
        reads.push_back(read_span(sst, s.start, s.end));
    }
    auto bufs = co_await when_all(std::move(reads));
    for (size_t i = 0; i < spans.size(); ++i) {
        for (size_t p : spans[i].partitions) {
            auto& lp = out.partitions[p];
            lp.bytes = bufs[i].share(lp.range.start - spans[i].start, lp.range.end - lp.range.start);
        }
    }
    if (stats) {
        stats->data_reads += spans.size();
        for (auto& s : spans) {
            stats->prefetched += s.partitions.size();
        }
    }
    co_return out;
}

} // namespace reef::sstables
