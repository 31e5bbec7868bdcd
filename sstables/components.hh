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

// Whether a Data.db source checks what it reads against the sstable's checksums. The policy is Cassandra's and
// ScyllaDB's: compressed chunks are always checked (their CRC32 sits next to them and decompressing garbage is
// not an option), but CRC.db, which covers uncompressed Data.db in 64 KiB chunks, is checked only by what is
// about integrity: `reef sstable validate` and validate-checksums (and, in Cassandra, the verifier and
// streaming). Ordinary reads (the sstable readers, forward and reversed; the full scans of compaction,
// dump-data, upgrade) read uncompressed Data.db unchecked, only the bytes they ask for; the parser's own checks
// (lengths, vints, kinds, ordering) turn damage it meets into malformed_sstable_exception.
enum class integrity_check : bool { no, yes };

// Bytes [pos, pos + len) of the uncompressed Data.db. Compressed: decompressed chunk by chunk, each chunk's
// CRC32 checked whatever `check` says. Uncompressed with `yes` and CRC.db: read in CRC.db's chunks, each checked.
// Otherwise: a plain read-ahead file source over exactly [pos, pos + len) (aligned O_DIRECT reads that start
// small and grow with a sequential scan: the first one reads first_read bytes from pos, rounded out to the
// alignment: 4 KiB, a row or two, or what the caller knows it will need, such as a promoted index block). data is
// Data.db opened.
data_source make_data_source(file data, const sstable_components& c, uint64_t pos, uint64_t len, integrity_check check,
                             uint64_t first_read = 4096);

} // namespace reef::sstables
