// clustering_bound: a clustering prefix with its kind (a row's key, a range bound or a boundary), as the
// promoted index stores a block's first and last position (Cassandra's ClusteringPrefix.serializer), and the
// reader of that form: kind byte, for bounds a 2-byte size, then the values in clustering-block form.
#pragma once

#include "mutation/clustering_key.hh"
#include "mutation/position_in_partition.hh"
#include "schema/types.hh"
#include "sstables/byte_reader.hh"

#include <cstdint>
#include <string_view>
#include <vector>

namespace reef::sstables {

// Cassandra's ClusteringPrefix.Kind, by its ordinal (the stored byte).
enum class clustering_kind : uint8_t {
    excl_end_bound = 0,
    incl_start_bound = 1,
    excl_end_incl_start_boundary = 2,
    static_clustering = 3,
    clustering = 4,
    incl_end_excl_start_boundary = 5,
    incl_end_bound = 6,
    excl_start_bound = 7,
};

std::string_view to_string(clustering_kind k) noexcept;

struct clustering_bound {
    clustering_kind kind = clustering_kind::clustering;
    // Null values (only in very old compact tables) read as empty ones.
    clustering_key_prefix prefix;

    // Where this bound sits among a partition's positions (a boundary sits where the range it ends ends).
    position_in_partition position() const;
    bool operator==(const clustering_bound&) const = default;
};

// Reads `count` clustering values in Cassandra's clustering-block form (per 32 values an unsigned vint header
// of two bits per value, null and empty; then each present value, fixed-length types without a length, others
// with an unsigned vint length). types[i] is value i's type; count <= types.size().
clustering_key_prefix read_clustering_values(byte_reader& in, const std::vector<data_type>& types, size_t count);

// Reads a kind-prefixed clustering prefix (the promoted index's form).
clustering_bound read_clustering_bound(byte_reader& in, const std::vector<data_type>& types);

// The writers of those two forms (values must have their type's fixed length where it has one; null values are
// not written: readers see them as empty).
void write_clustering_values(std::string& out, const std::vector<data_type>& types, const clustering_key_prefix& p);
void write_clustering_bound(std::string& out, const std::vector<data_type>& types, const clustering_bound& b);

} // namespace reef::sstables
