// Keys for tests over a table with int key columns: serialized ints, clustering keys,
// decorated partition keys, and the small table `ks.t (pk int, ck int, v int)`.
#pragma once

#include "mutation/clustering_key.hh"
#include "mutation/token.hh"
#include "schema/schema.hh"

#include <string>

namespace reef::testing {

// An int as CQL serializes it: 4 bytes, big-endian.
inline bytes int_value(int v) {
    return bytes{uint8_t(uint32_t(v) >> 24), uint8_t(uint32_t(v) >> 16), uint8_t(uint32_t(v) >> 8), uint8_t(v)};
}
inline int int_of(bytes_view c) {
    return int(uint32_t(c[0]) << 24 | uint32_t(c[1]) << 16 | uint32_t(c[2]) << 8 | uint32_t(c[3]));
}
// A one-column clustering key.
inline clustering_key_prefix ck(int k) { return clustering_key_prefix({int_value(k)}); }
// The partition of int key k, with its token.
inline dht::decorated_key pkey(int k) {
    auto b = int_value(k);
    return dht::decorated_key(partition_key(std::string(b.begin(), b.end())));
}
// ks.t (pk int, ck int, v int, PRIMARY KEY (pk, ck)).
inline schema_ptr int_table_schema() {
    return schema_builder("ks", "t")
        .with_column("pk", int32_type(), column_kind::partition_key)
        .with_column("ck", int32_type(), column_kind::clustering_key)
        .with_column("v", int32_type(), column_kind::regular_column)
        .build();
}

} // namespace reef::testing
