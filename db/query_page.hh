// query_page: one page of a query's live rows: read on each shard through table::make_reader and the compacting
// reader (query mode), stopping after the page's rows, merged across shards in ring order; or of given keys (IN).
#pragma once

#include "db/database.hh"
#include "mutation/mutation.hh"
#include "mutation/partition_range.hh"
#include "reader/read_options.hh"
#include "reader/reader_permit.hh"

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace reef {

inline constexpr uint64_t no_row_limit = std::numeric_limits<uint64_t>::max();

// Where a page ended: the partition, and the last row returned in it (none: the partition was returned whole,
// e.g. a static-only partition counted as one row); resuming reads what follows in the read's order.
struct page_position {
    dht::decorated_key key;
    std::optional<clustering_key_prefix> row;
    // Rows of that partition returned by this page and the ones before it (PER PARTITION LIMIT across pages).
    uint64_t partition_rows = 0;
};

struct page_request {
    dht::partition_range range = dht::partition_range::full();
    // Forward clustering ranges (sorted, non-overlapping); the read reverses them itself when reversed.
    clustering_ranges slice = {position_range::full()};
    read_order order = read_order::forward;
    // Rows in the page; rows per partition (across pages, counting start_after->partition_rows).
    uint64_t row_limit = no_row_limit;
    uint64_t partition_row_limit = no_row_limit;
    // A partition with a live static row and no row in the slice is one row (Cassandra's answer to a query that
    // selects whole partitions: SELECT * with no clustering restriction); otherwise it is left out.
    bool static_only_is_row = false;
    // Resume strictly after this position (the previous page's last).
    std::optional<page_position> start_after;
    // The query's time (seconds): expired cells and markers are dead.
    deletion_time_type now = 0;
    bypass_cache bypass = bypass_cache::no;
    read_clock::time_point timeout = no_timeout;
    // Names the read in a read_timeout_error.
    std::string description = "query";
};

struct page_result {
    // Live data only (no tombstones), ring order; each partition holds only the page's rows of it (and its
    // static row), in the table's clustering order whatever the read's order.
    std::vector<mutation> partitions;
    uint64_t rows = 0;
    // Nothing can follow: every shard's read reached the end of the range. When false, more may follow
    // (a full page may be the last).
    bool exhausted = true;
    // The page's last row (none when the page is empty).
    std::optional<page_position> last;
};

// One page of `s`'s table: from every shard owning part of req.range (one shard for a single partition), read in
// rounds (each shard its share of row_limit first, then the shard whose rows end first on, until the rows every
// shard has read up to fill the page: about row_limit rows read in all), merged by key and cut at row_limit. Throws no_such_table, and
// read_timeout_error once req.timeout passes (checked before each buffer fill and by the sstable readers).
future<page_result> query_page(sharded<database>& db, schema_ptr s, page_request req);

// One page of the partitions of `keys` (distinct, in the order the page gives them: CQL's IN order), read in
// batches by database::multi_get (a batch of as many keys as the page still wants rows, one cross-shard call per
// owner shard) and compacted as query_page's reads are; req.range is not used. When req.start_after names one of
// the keys, the keys before it are skipped, and it too unless the page resumes inside it (start_after->row): that
// partition's rest is read first, by query_page. A batch reads its partitions' whole slices (the page's row limit
// cuts them afterwards), so a page of an IN over large partitions reads more than it returns.
future<page_result> query_keys_page(sharded<database>& db, schema_ptr s, std::vector<dht::decorated_key> keys,
                                    page_request req);

// The rows a page's partition counts for under req's rules (its clustering rows, or 1 for a static-only one when
// static_only_is_row and the partition is not resumed).
uint64_t counted_rows(const mutation& m, bool static_only_is_row, bool resumed_partition);

} // namespace reef
