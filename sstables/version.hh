// sstable format versions and component file names: `me-1-big-Data.db` is version me, generation 1,
// format big, component Data.db. Parses and prints the names Cassandra and ScyllaDB write.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace reef::sstables {

// The mx ("3.x") family and its successors. Data.db layouts are the same;
// Statistics and Index differ (FORMAT.md says where).
enum class sstable_version : uint8_t { mc, md, me, na, nb, oa };

// "mc", "md", ...; nothing for a version we cannot read.
std::optional<sstable_version> parse_version(std::string_view s) noexcept;
std::string_view to_string(sstable_version v) noexcept;

enum class component_type : uint8_t {
    data, index, summary, filter, statistics, compression_info, crc, digest, toc, scylla, unknown
};

// "Data.db", "Index.db", ..., "Digest.crc32", "TOC.txt", "Scylla.db".
std::string_view component_name(component_type c) noexcept;
component_type parse_component(std::string_view name) noexcept;

// What a component file name says: `<version>-<generation>-<format>-<component>`, optionally preceded by
// `<keyspace>-<table>-` as very old layouts wrote. Generations are decimal numbers or (nb, oa) the
// time-based base-36 form `3g7a_0pyd_2pqox2ro6eu9vkdz5k`; both are kept as text.
struct descriptor {
    std::string directory;
    sstable_version version;
    std::string generation;
    std::string format;  // "big"

    // The path of one component.
    std::string filename(component_type c) const;
    // Parses the path of any component of an sstable; throws std::invalid_argument naming the path.
    static descriptor from_path(std::string_view path, component_type* component = nullptr);
};

} // namespace reef::sstables
