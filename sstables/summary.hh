// Summary.db: a sample of Index.db (every min_index_interval-th entry's key and Index.db position) with the
// sstable's first and last keys; read from the file, or rebuilt from Index.db when the file is missing, as
// Cassandra's IndexSummaryBuilder samples at full sampling level.
#pragma once

#include "runtime/future.hh"
#include "sstables/version.hh"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace reef::sstables {

struct summary_entry {
    std::string key;              // the partition key's bytes
    uint64_t index_position = 0;  // where its entry starts in Index.db
    bool operator==(const summary_entry&) const = default;
};

struct summary {
    // Cassandra's defaults: min_index_interval 128, sampling level 128 (BASE_SAMPLING_LEVEL = full sampling).
    uint32_t min_index_interval = 128;
    uint32_t sampling_level = 128;
    // Entries the summary would have at full sampling: ceil(partitions / min_index_interval).
    uint32_t size_at_full_sampling = 0;
    std::vector<summary_entry> entries;
    std::string first_key;
    std::string last_key;
    bool operator==(const summary&) const = default;
};

inline constexpr uint32_t base_sampling_level = 128;
inline constexpr uint32_t default_min_index_interval = 128;

// Parses Summary.db; file names it in errors.
summary parse_summary(std::string_view bytes, const std::string& file);
// Serializes as Cassandra writes it (offsets and entry positions in little-endian, the rest big-endian).
std::string serialize_summary(const summary& s);

// Builds a full-sampling summary incrementally from Index.db's entries, in file order.
class summary_builder {
public:
    explicit summary_builder(uint32_t min_index_interval = default_min_index_interval)
        : _interval(min_index_interval) {}
    void add(std::string_view key, uint64_t index_position);
    summary build() &&;

private:
    uint32_t _interval;
    uint64_t _count = 0;
    summary _s;
};

// Rebuilds the summary of an sstable from its Index.db (read sequentially; file errors name index_file).
future<summary> rebuild_summary(std::string index_file, sstable_version v,
                                uint32_t min_index_interval = default_min_index_interval);

} // namespace reef::sstables
