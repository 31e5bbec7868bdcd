// The partitioners `reef sstable` tools write and rewrite with: the class name Statistics.db records, and the
// order it puts partitions in (the token the writer's ring-order check compares).
#pragma once

#include "sstables/mx_fragments.hh"

#include <string>
#include <string_view>

namespace reef::tools {

// Murmur3's tokens (an empty function: the consumer's default), or for ByteOrderedPartitioner (Cassandra's
// legacy test sets) an order-preserving stand-in (the key's first 8 bytes as a number; ties go to the key
// bytes). Throws std::invalid_argument for any other partitioner.
sstables::mx_fragment_consumer::token_function token_function_for(const std::string& partitioner);

// A partitioner's full class name from a full or short one ("Murmur3Partitioner", "ByteOrderedPartitioner");
// throws std::invalid_argument naming the ones supported.
std::string partitioner_class_name(std::string_view name);

} // namespace reef::tools
