// paging_state: where a paged SELECT's page ended, as the opaque bytes a client sends back (query_options::paging_state)
// to get the next page, on any connection and any shard. The byte layout is in cql/README.md ("Paging state").
#pragma once

#include "schema/bytes.hh"

#include <cstdint>
#include <optional>
#include <vector>

namespace reef::cql {

struct paging_state {
    // The last row returned: its partition key (serialized) and clustering key (its components; none for a
    // static-only partition's row, which ends the partition).
    bytes partition_key;
    std::optional<std::vector<bytes>> clustering;
    // Rows of that partition returned so far (PER PARTITION LIMIT across pages).
    uint64_t partition_rows = 0;
    // Rows LIMIT still allows (UINT64_MAX: no LIMIT).
    uint64_t remaining = UINT64_MAX;
};

bytes encode_paging_state(const paging_state& ps);
// Throws cql_error(protocol_error) naming the offset of bytes that are not a paging state.
paging_state decode_paging_state(bytes_view b);

} // namespace reef::cql
