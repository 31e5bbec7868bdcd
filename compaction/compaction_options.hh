// compaction_options: a table's `compaction = {...}` option map read as Cassandra reads it (class names, options,
// defaults); bad options refused with Cassandra's message naming the option.
#pragma once

#include "schema/schema.hh"

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>

namespace reef::compaction {

// A compaction option map refused (CREATE/ALTER TABLE answer it as a ConfigurationException).
class invalid_compaction_options : public std::invalid_argument {
public:
    using std::invalid_argument::invalid_argument;
};

enum class strategy_type {
    size_tiered,  // SizeTieredCompactionStrategy (the default)
    time_window,  // TimeWindowCompactionStrategy
    // LeveledCompactionStrategy, UnifiedCompactionStrategy, IncrementalCompactionStrategy: accepted (schemas from
    // Cassandra and ScyllaDB carry them) and compacted size-tiered with the default options; a major compaction
    // of an LCS or ICS table splits its output at sstable_size_in_mb.
    other,
};

enum class window_unit { minutes, hours, days };

// Cassandra's AbstractCompactionStrategy, SizeTieredCompactionStrategyOptions and
// TimeWindowCompactionStrategyOptions, with their defaults.
struct compaction_options {
    strategy_type type = strategy_type::size_tiered;
    // The class as given ("SizeTieredCompactionStrategy", or the full org.apache.cassandra.db.compaction. name).
    std::string class_name = "SizeTieredCompactionStrategy";
    bool enabled = true;
    int min_threshold = 4;
    int max_threshold = 32;
    double bucket_low = 0.5;
    double bucket_high = 1.5;
    uint64_t min_sstable_size = 50ull << 20;
    // Single-sstable tombstone compaction.
    double tombstone_threshold = 0.2;
    int64_t tombstone_compaction_interval = 86400;  // seconds
    bool unchecked_tombstone_compaction = false;
    // TWCS.
    window_unit compaction_window_unit = window_unit::days;
    int compaction_window_size = 1;
    // LCS and ICS: a major compaction writes a run of sstables of about this size (sstable_size_in_mb); 0 (the
    // others): one sstable.
    uint64_t max_sstable_size = 0;
    // The unit of the write timestamps (MICROSECONDS, Cassandra's; or MILLISECONDS ...), in microseconds per unit.
    int64_t timestamp_resolution_micros = 1;

    // TWCS: the window length in seconds.
    int64_t window_seconds() const noexcept;
};

// The map as given (keys and values unquoted). Throws invalid_compaction_options naming the bad option.
compaction_options parse_compaction_options(const std::map<std::string, std::string>& m);

// A CQL map literal as table_options::other stores it ("{'class': 'X', 'min_threshold': '4'}"), parsed; the
// schema tables and CREATE TABLE read the other option maps with it too. Throws invalid_compaction_options on
// malformed text.
std::map<std::string, std::string> parse_map_literal(std::string_view literal);

// The table's options (schema::options().other["compaction"]; none: the defaults). An option map that no longer
// parses (a schema from disk) gives the defaults with `enabled` kept as written when readable.
compaction_options compaction_options_of(const schema& s);

} // namespace reef::compaction
