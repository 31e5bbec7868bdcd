// `reef sstable rewrite`. See sstable_rewrite.hh.
#include "tools/sstable_rewrite.hh"

#include "runtime/file.hh"
#include "sstables/components.hh"
#include "sstables/mx_fragments.hh"
#include "sstables/mx_reader.hh"
#include "sstables/statistics.hh"
#include "sstables/writer.hh"

#include <stdexcept>

namespace reef::tools {

using namespace sstables;

namespace {

// The order of the partitioner: Murmur3's tokens, or for ByteOrderedPartitioner (Cassandra's legacy test sets) an
// order-preserving stand-in (the key's first 8 bytes as a number; ties go to the key bytes), so the writer's
// ring-order check sees the file's own order.
mx_fragment_consumer::token_function token_function_for(const std::string& partitioner) {
    if (partitioner.ends_with("ByteOrderedPartitioner")) {
        return [](bytes_view key) {
            uint64_t v = 0;
            for (size_t i = 0; i < 8; ++i) {
                v = (v << 8) | (i < key.size() ? key[i] : 0);
            }
            return dht::token(int64_t(v ^ (uint64_t(1) << 63)));
        };
    }
    if (!partitioner.ends_with("Murmur3Partitioner")) {
        throw std::invalid_argument("partitioner " + partitioner + " is not supported");
    }
    return {};
}

future<std::string> rewrite_one(descriptor d, const rewrite_options& opts) {
    auto stats_name = d.filename(component_type::statistics);
    auto stats_bytes = co_await read_entire_file(stats_name);
    auto st = parse_statistics(std::as_bytes(std::span<const char>(stats_bytes)), d.version, stats_name);
    auto components = co_await load_components(d);
    auto schema = schema_from_header(*st.header);
    auto data_name = d.filename(component_type::data);
    auto f = co_await open_file_dma(data_name, open_flags::ro);
    auto src = make_data_source(f, components, 0, components.data_length());
    auto header = std::make_shared<const serialization_header>(*st.header);
    auto reader = make_mx_full_scan_reader(schema, header, std::move(src), data_name, components.data_length(),
                                           dht::partition_range::full(), token_function_for(st.validation->partitioner));
    writer_options wo;
    if (opts.uncompressed) {
        wo.compression.reset();
    }
    // The source's encoding stats and partitioner: the rewrite changes nothing but the writer.
    wo.stats = st.header->stats;
    wo.partitioner = st.validation->partitioner;
    wo.bloom_filter_fp_chance = st.validation->bloom_filter_fp_chance > 0 && st.validation->bloom_filter_fp_chance < 1
                                    ? st.validation->bloom_filter_fp_chance
                                    : 0.01;
    descriptor out{opts.out_dir, sstable_version::me, d.generation, "big"};
    std::exception_ptr err;
    try {
        co_await write_sstable(reader, schema, out, wo);
    } catch (...) {
        err = std::current_exception();
    }
    co_await reader.close();
    co_await f.close();
    if (err) {
        std::rethrow_exception(err);
    }
    co_return out.filename(component_type::data) + "\n";
}

} // namespace

future<std::string> rewrite_sstables(std::vector<descriptor> sstables, rewrite_options opts) {
    if (opts.out_dir.empty()) {
        throw std::invalid_argument("--out DIR is required");
    }
    co_await remove_partial_sstables(opts.out_dir);
    std::string out;
    for (auto& d : sstables) {
        out += co_await rewrite_one(d, opts);
    }
    co_return out;
}

} // namespace reef::tools
