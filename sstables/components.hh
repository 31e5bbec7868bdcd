// sstable_components: an sstable's small components loaded from disk (TOC or the discovered list, Summary.db or
// the summary rebuilt from Index.db, the bloom filter, CompressionInfo.db or CRC.db, Digest.crc32), and the
// checked Data.db source they make possible. Statistics.db is read elsewhere (statistics.hh).
#pragma once

#include "runtime/file.hh"
#include "runtime/future.hh"
#include "runtime/input_stream.hh"
#include "sstables/bloom_filter.hh"
#include "sstables/checksum.hh"
#include "sstables/compression_info.hh"
#include "sstables/summary.hh"
#include "sstables/toc.hh"
#include "sstables/version.hh"

#include <memory>
#include <optional>

namespace reef::sstables {

struct sstable_components {
    descriptor desc;
    toc listed;
    sstables::summary summary;
    bool summary_rebuilt = false;  // Summary.db was missing
    bloom_filter filter;           // always present without Filter.db
    std::shared_ptr<const compression_info> compression;  // compressed sstables
    std::shared_ptr<const crc_component> crc;             // uncompressed ones with CRC.db
    std::optional<uint32_t> digest;                       // Digest.crc32, when present
    uint64_t data_file_size = 0;                          // Data.db as stored

    // The uncompressed Data.db length: positions in Index.db are below it.
    uint64_t data_length() const noexcept { return compression ? compression->data_length : data_file_size; }
};

// Loads d's components. Every malformed component throws malformed_sstable_exception naming it; a component the
// TOC lists but the disk lacks throws std::system_error naming the file.
future<sstable_components> load_components(descriptor d);

// Bytes [pos, pos + len) of the uncompressed Data.db, through the checked source the components call for
// (decompressing, or CRC.db-checked, or plain when the sstable has neither). data is Data.db opened.
data_source make_data_source(file data, const sstable_components& c, uint64_t pos, uint64_t len);

} // namespace reef::sstables
