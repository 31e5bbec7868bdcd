// The partitioners Reef reads and writes sstables with, by the class name Statistics.db records: the token order
// each puts partitions in. One definition for the readers, the writer's order check and the tools.
#pragma once

#include "sstables/mx_fragments.hh"

#include <string>
#include <string_view>

namespace reef::sstables {

// The token of a partition key: Murmur3 for "Murmur3Partitioner" (short or full class name) or an empty name
// (Cassandra's default), and for "ByteOrderedPartitioner" (Cassandra's legacy test sets) an order-preserving
// stand-in: the key's first 8 bytes, zero-padded, as a signed number in unsigned order (ties go to the key
// bytes). Any other partitioner throws std::invalid_argument naming it and the ones supported.
mx_fragment_consumer::token_function partitioner_token_function(std::string_view partitioner);

// A supported partitioner's full class name from a full or short one; throws as above.
std::string partitioner_class_name(std::string_view name);

} // namespace reef::sstables
