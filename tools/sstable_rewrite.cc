// `reef sstable upgrade` and `rewrite`. See sstable_rewrite.hh.
#include "tools/sstable_rewrite.hh"

#include "runtime/file.hh"
#include "runtime/with_closeable.hh"
#include "sstables/components.hh"
#include "sstables/mx_fragments.hh"
#include "sstables/mx_reader.hh"
#include "sstables/sstable.hh"
#include "sstables/statistics.hh"
#include "sstables/writer.hh"
#include "sstables/partitioner.hh"
#include "tools/sstable_write.hh"

#include <filesystem>
#include <stdexcept>

namespace reef::tools {

using namespace sstables;

namespace {

enum class compression_choice { lz4, uncompressed, as_source };

future<> write_as_me(descriptor d, descriptor out, compression_choice compression) {
    if (d.version == sstable_version::oa) {
        throw std::invalid_argument(d.filename(component_type::data) +
                                    ": version oa (Cassandra 5.0) is not upgraded: its deletion times past 2038 do not "
                                    "fit me's signed 32-bit fields (test/resource/sstables/oa_far_future)");
    }
    auto st = co_await load_statistics(d);
    auto components = co_await load_components(d);
    auto schema = schema_from_header(*st.header);
    auto data_name = d.filename(component_type::data);
    auto header = std::make_shared<const serialization_header>(*st.header);
    writer_options wo;
    if (compression == compression_choice::uncompressed ||
        (compression == compression_choice::as_source && !components.compression)) {
        wo.compression.reset();
    } else if (compression == compression_choice::as_source) {
        wo.compression = components.compression->algorithm;
        wo.chunk_length = components.compression->chunk_length;
    }
    // The source's encoding stats and partitioner: the rewrite changes nothing but the writer.
    wo.stats = st.header->stats;
    wo.partitioner = st.validation->partitioner;
    wo.bloom_filter_fp_chance = st.validation->bloom_filter_fp_chance > 0 && st.validation->bloom_filter_fp_chance <= 1
                                    ? st.validation->bloom_filter_fp_chance
                                    : 0.01;
    // The source's summary sampling (its table's min_index_interval), unless the summary was rebuilt.
    if (!components.summary_rebuilt && components.summary.min_index_interval >= 1) {
        wo.min_index_interval = components.summary.min_index_interval;
    }
    auto f = co_await open_file_dma(data_name, open_flags::ro);
    // The reader owns the data source over f: it is closed first, then f.
    co_await with_closeable(std::move(f), [&](file& f) {
        auto src = make_data_source(f, components, 0, components.data_length(), integrity_check::no);
        auto reader = make_mx_full_scan_reader(schema, header, std::move(src), data_name, components.data_length(),
                                               dht::partition_range::full(),
                                               sstables::partitioner_token_function(st.validation->partitioner));
        return with_closeable(std::move(reader),
                              [&](mutation_reader& reader) { return write_sstable(reader, schema, out, wo); });
    });
}

// Whether any sstable file of dir has this generation (whatever its version).
bool generation_taken(const std::string& dir, const std::string& generation) {
    std::error_code ec;
    for (auto& e : std::filesystem::directory_iterator(dir, ec)) {
        try {
            if (descriptor::from_path(e.path().string()).generation == generation) {
                return true;
            }
        } catch (const std::invalid_argument&) {
        }
    }
    return false;
}

} // namespace

future<std::string> rewrite_sstables(std::vector<descriptor> sstables, rewrite_options opts) {
    if (opts.out_dir.empty()) {
        throw std::invalid_argument("--out DIR is required");
    }
    co_await remove_partial_sstables(opts.out_dir);
    std::string out;
    for (auto& d : sstables) {
        descriptor o{opts.out_dir, sstable_version::me, d.generation, "big"};
        co_await write_as_me(d, o, opts.uncompressed ? compression_choice::uncompressed : compression_choice::lz4);
        out += o.filename(component_type::data) + "\n";
    }
    co_return out;
}

future<std::string> upgrade_sstables(std::vector<descriptor> sstables, upgrade_options opts) {
    if (!opts.output_dir.empty()) {
        std::filesystem::create_directories(opts.output_dir);
    }
    std::string out;
    for (auto& d : sstables) {
        auto source = d.filename(component_type::data);
        if (d.version == sstable_version::me && !opts.all) {
            out += source + ": already me (--all rewrites it)\n";
            continue;
        }
        auto dir = opts.output_dir.empty() ? d.directory : opts.output_dir;
        co_await remove_partial_sstables(dir);
        auto generation = generation_taken(dir, d.generation) ? std::to_string(next_generation(dir)) : d.generation;
        descriptor o{dir, sstable_version::me, generation, "big"};
        co_await write_as_me(d, o, opts.uncompressed ? compression_choice::uncompressed : compression_choice::as_source);
        out += source + " -> " + o.filename(component_type::data) + "\n";
    }
    co_return out;
}

} // namespace reef::tools
