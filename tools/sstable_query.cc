// `reef sstable query`. See sstable_query.hh.
#include "tools/sstable_query.hh"

#include "cache/tracker.hh"
#include "reader/position_range.hh"
#include "schema/types.hh"
#include "runtime/with_closeable.hh"
#include "sstables/mx_fragments.hh"
#include "sstables/sstable.hh"
#include "sstables/sstable_reader.hh"
#include "cql/clustering_restrictions.hh"
#include "tools/dump_data_printer.hh"
#include "tools/sstable_schema_check.hh"

#include <fmt/format.h>

#include <stdexcept>

namespace reef::tools {

using namespace sstables;

namespace {

// The partition key's bytes from its text form, with the key type of `s`.
partition_key parse_partition_key(const schema& s, const std::string& text) {
    auto type = s.partition_key_type();
    bytes b;
    try {
        b = type->from_string(text);
    } catch (const std::exception& e) {
        throw std::invalid_argument(fmt::format("--partition '{}': not a valid key of type {}: {}", text,
                                                type->cql_name(), e.what()));
    }
    if (type->is_composite()) {
        auto parts = split_composite(b);
        if (parts.size() != s.partition_key().size()) {
            throw std::invalid_argument(fmt::format("--partition '{}': the partition key has {} columns, the text "
                                                    "gives {} (join them with ':', escape a ':' as \\:)",
                                                    text, s.partition_key().size(), parts.size()));
        }
    }
    return partition_key(std::string(reinterpret_cast<const char*>(b.data()), b.size()));
}

future<std::vector<mutation_fragment>> read_all_and_close(mutation_reader r) {
    return with_closeable(std::move(r), [](mutation_reader& r) { return read_all(r); });
}

future<std::string> query_one(descriptor d, const query_options& opts, std::vector<query_stats>* stats) {
    auto& tracker = cache::shard_cache_tracker();
    auto o = co_await open_sstable(d, tracker);
    co_return co_await with_closeable(std::move(o), [&](shared_sstable& sst) -> future<std::string> {
        auto read_schema = schema_from_header(*sst->header());
        const schema* names = read_schema.get();
        if (opts.schema) {
            check_schema_against_header(*opts.schema, *sst->header(), d.filename(component_type::statistics));
            names = opts.schema.get();
        }
        auto range = dht::partition_range::full();
        if (opts.partition) {
            auto key = parse_partition_key(*names, *opts.partition);
            auto kv = key.view();
            auto token = sst->token()(bytes_view(reinterpret_cast<const uint8_t*>(kv.data()), kv.size()));
            range = dht::partition_range::singular(dht::decorated_key(token, std::move(key)));
        }
        auto slice = opts.where.empty() ? clustering_ranges{position_range::full()}
                                        : cql::clustering_ranges_from_cql(*names, opts.where);
        if (opts.reversed) {
            slice = reverse_ranges(slice);
        }
        auto before_data = sst->data_file().io_counters();
        auto before_index = sst->index_file().io_counters();
        auto before_files = tracker.file_stats();
        auto before_pages = tracker.index_stats();
        // A tool's read: no admission, no deadline.
        auto r = make_sstable_reader(read_schema, sst->read_handles(), reader_permit(),
                                     {.range = std::move(range),
                                      .slice = std::move(slice),
                                      .order = read_order_for(opts.reversed),
                                      .bypass = opts.bypass_cache ? bypass_cache::yes : bypass_cache::no});
        auto fragments = co_await read_all_and_close(std::move(r));
        auto out = print_fragments_json(*sst->header(), fragments, opts.now, opts.reversed);
        if (stats) {
            query_stats s;
            s.sstable = d.filename(component_type::data);
            s.data_reads = sst->data_file().io_counters().reads - before_data.reads;
            s.data_bytes = sst->data_file().io_counters().bytes - before_data.bytes;
            s.index_reads = sst->index_file().io_counters().reads - before_index.reads;
            s.index_bytes = sst->index_file().io_counters().bytes - before_index.bytes;
            s.page_hits = tracker.file_stats().page_hits - before_files.page_hits;
            s.page_misses = tracker.file_stats().page_misses - before_files.page_misses;
            s.page_blocks = tracker.file_stats().page_blocks - before_files.page_blocks;
            s.index_hits = tracker.index_stats().hits - before_pages.hits;
            s.index_misses = tracker.index_stats().misses - before_pages.misses;
            s.index_blocks = tracker.index_stats().blocks - before_pages.blocks;
            for (auto& f : fragments) {
                s.partitions += std::holds_alternative<partition_start>(f);
                s.rows += std::holds_alternative<clustering_row>(f);
                s.range_tombstone_changes += std::holds_alternative<range_tombstone_change>(f);
            }
            stats->push_back(std::move(s));
        }
        co_return out;
    });
}

} // namespace

std::string format_query_stats(const query_stats& s) {
    return fmt::format("{}: {} partitions, {} rows, {} range tombstone changes\n"
                       "  Data.db: {} reads, {} bytes\n"
                       "  Index.db: {} reads, {} bytes\n"
                       "  cache: Index.db pages {} hits, {} misses, {} blocked; index pages {} hits, {} misses, "
                       "{} blocked\n",
                       s.sstable, s.partitions, s.rows, s.range_tombstone_changes, s.data_reads, s.data_bytes,
                       s.index_reads, s.index_bytes, s.page_hits, s.page_misses, s.page_blocks, s.index_hits,
                       s.index_misses, s.index_blocks);
}

future<std::string> query_sstables(std::vector<descriptor> sstables, query_options opts,
                                   std::vector<query_stats>* stats) {
    std::string out;
    for (auto& d : sstables) {
        out += co_await query_one(d, opts, stats);
    }
    co_return out;
}

} // namespace reef::tools
