// The partitioners of the sstable tools. See sstable_partitioner.hh.
#include "tools/sstable_partitioner.hh"

#include <stdexcept>

namespace reef::tools {

sstables::mx_fragment_consumer::token_function token_function_for(const std::string& partitioner) {
    if (partitioner.ends_with("ByteOrderedPartitioner")) {
        return [](bytes_view key) {
            uint64_t v = 0;
            for (size_t i = 0; i < 8; ++i) {
                v = (v << 8) | (i < key.size() ? key[i] : 0);
            }
            return dht::token(int64_t(v ^ (uint64_t(1) << 63)));
        };
    }
    if (!partitioner.ends_with("Murmur3Partitioner")) {
        throw std::invalid_argument("partitioner " + partitioner + " is not supported");
    }
    return {};
}

std::string partitioner_class_name(std::string_view name) {
    for (std::string_view p : {"Murmur3Partitioner", "ByteOrderedPartitioner"}) {
        if (name == p || name == "org.apache.cassandra.dht." + std::string(p)) {
            return "org.apache.cassandra.dht." + std::string(p);
        }
    }
    throw std::invalid_argument("partitioner " + std::string(name) +
                                " is not supported (Murmur3Partitioner or ByteOrderedPartitioner)");
}

} // namespace reef::tools
