// `reef sstable query`: reads sstables through the index as a query does (make_sstable_reader with a partition
// range and a clustering slice) and prints the fragments in dump-data's JSON structure, so the two can be compared.
#pragma once

#include "runtime/future.hh"
#include "schema/schema.hh"
#include "sstables/version.hh"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace reef::tools {

struct query_options {
    // --partition: the partition key as sstabledump -k takes it (dump-data's "key" components joined by ':',
    // a ':' inside a component escaped as "\:"); unset reads every partition.
    std::optional<std::string> partition;
    // --where: clustering restrictions in CQL (clustering_restrictions.hh); empty reads whole partitions.
    std::string where;
    bool reversed = false;
    bool bypass_cache = false;
    // --now: the clock (seconds) of the "expired" flags.
    int64_t now = 0;
    // --schema: column names for --where and the key's types, checked against each serialization header; without
    // it the header's types are used and clustering columns are named clustering_0, clustering_1, ...
    schema_ptr schema;
};

// Figures of one sstable's query (--stats): reads and bytes issued per component file, and the shard cache
// tracker's statistics that changed during the query.
struct query_stats {
    std::string sstable;
    uint64_t data_reads = 0, data_bytes = 0;
    uint64_t index_reads = 0, index_bytes = 0;
    uint64_t page_hits = 0, page_misses = 0, page_blocks = 0;
    uint64_t index_hits = 0, index_misses = 0, index_blocks = 0;
    uint64_t partitions = 0, rows = 0, range_tombstone_changes = 0;
};
std::string format_query_stats(const query_stats& s);

// Each sstable's JSON array (and a newline): the partitions and fragments the read gives, printed by
// print_fragments_json (no positions). A bad key or relation throws std::invalid_argument naming it; a
// mismatching schema throws as dump-data --schema does. With stats, one entry per sstable is appended.
future<std::string> query_sstables(std::vector<sstables::descriptor> sstables, query_options opts,
                                   std::vector<query_stats>* stats = nullptr);

} // namespace reef::tools
