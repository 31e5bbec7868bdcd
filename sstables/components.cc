// Loading an sstable's components. See components.hh.
#include "sstables/components.hh"

#include "runtime/with_closeable.hh"
#include "sstables/checked_data_source.hh"
#include "sstables/exceptions.hh"

namespace reef::sstables {

namespace {

future<uint64_t> file_size(std::string path) {
    auto f = co_await open_file_dma(std::move(path), open_flags::ro);
    co_return co_await with_closeable(std::move(f), [](file& f) { return f.size(); });
}

} // namespace

future<sstable_components> load_components(descriptor d) {
    sstable_components c;
    c.desc = d;
    c.listed = co_await read_or_discover_toc(d);
    auto data_name = d.filename(component_type::data);
    c.data_file_size = co_await file_size(data_name);
    if (c.listed.has(component_type::compression_info)) {
        auto name = d.filename(component_type::compression_info);
        auto bytes = co_await read_entire_file(name);
        c.compression = std::make_shared<compression_info>(parse_compression_info(bytes, d.version, name, c.data_file_size));
    } else if (c.listed.has(component_type::crc)) {
        auto name = d.filename(component_type::crc);
        auto bytes = co_await read_entire_file(name);
        c.crc = std::make_shared<crc_component>(parse_crc_component(bytes, name, c.data_file_size));
    }
    if (c.listed.has(component_type::filter)) {
        auto name = d.filename(component_type::filter);
        auto bytes = co_await read_entire_file(name);
        c.filter = parse_bloom_filter(bytes, d.version, name);
    }
    if (c.listed.has(component_type::digest)) {
        auto name = d.filename(component_type::digest);
        auto text = co_await read_entire_file(name);
        c.digest = parse_digest(text, name);
    }
    if (c.listed.has(component_type::summary)) {
        auto name = d.filename(component_type::summary);
        auto bytes = co_await read_entire_file(name);
        c.summary = parse_summary(bytes, name);
    } else {
        c.summary = co_await rebuild_summary(d.filename(component_type::index), d.version);
        c.summary_rebuilt = true;
    }
    co_return c;
}

data_source make_data_source(file data, const sstable_components& c, uint64_t pos, uint64_t len, integrity_check check,
                             uint64_t first_read) {
    // Only these two report errors by the file's name: it is formatted for them, not for every small read.
    if (c.compression) {
        return make_compressed_data_source(std::move(data), c.desc.filename(component_type::data), c.compression,
                                           c.data_file_size, pos, len);
    }
    if (c.crc && check == integrity_check::yes) {
        return make_crc_checked_data_source(std::move(data), c.desc.filename(component_type::data), c.crc,
                                            c.data_file_size, pos, len);
    }
    uint64_t end = len > c.data_file_size - std::min(pos, c.data_file_size) ? c.data_file_size : pos + len;
    file_input_stream_options opts;
    // 4 KiB first (a row or two of a singular read) unless the caller knows better, doubling to 128 KiB reads for
    // scans, one in flight ahead. The first read starts at pos rounded down to the alignment.
    opts.initial_buffer_size = std::max<uint64_t>(1, first_read + pos % 4096);
    opts.buffer_size = 128 * 1024;
    opts.read_ahead = 1;
    return make_file_data_source(std::move(data), std::min(pos, end), end - std::min(pos, end), opts);
}

} // namespace reef::sstables
