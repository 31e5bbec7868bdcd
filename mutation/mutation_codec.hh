// mutation_codec: a mutation as versioned bytes (the commitlog's entries), its columns named by name.
// Promises: decode(s, encode(m)) == m; bytes of a later or earlier schema of the same table decode with added
// columns absent and dropped ones skipped; bad bytes throw mutation_codec_error naming the offset, never crash.
#pragma once

#include "mutation/mutation.hh"
#include "schema/bytes.hh"
#include "schema/schema.hh"

#include <cstdint>
#include <stdexcept>
#include <string>

namespace reef {

// What decode throws: the offset in the bytes and what was being read.
class mutation_codec_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// The encoding's version (commitlog/FORMAT.md, "The mutation encoding").
inline constexpr uint8_t mutation_codec_version = 1;

// The mutation's bytes: its table id, key, tombstones, rows and cells, with a table of the columns it holds.
bytes encode_mutation(const mutation& m);

// The mutation those bytes hold, read against s (the table's current schema). Cells of columns s does not
// have, or has with another shape (simple where they were complex, counter where they were not), are
// skipped. Throws mutation_codec_error on malformed bytes or a table id other than s's.
mutation decode_mutation(schema_ptr s, bytes_view data);

// The table id at the head of encoded bytes (without decoding the rest).
table_id encoded_mutation_table_id(bytes_view data);

} // namespace reef
