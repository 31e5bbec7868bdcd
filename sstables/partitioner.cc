// The supported partitioners. See partitioner.hh.
#include "sstables/partitioner.hh"

#include <stdexcept>

namespace reef::sstables {

namespace {

constexpr std::string_view package = "org.apache.cassandra.dht.";

[[noreturn]] void unsupported(std::string_view name) {
    throw std::invalid_argument("partitioner " + std::string(name) +
                                " is not supported (Murmur3Partitioner or ByteOrderedPartitioner)");
}

} // namespace

std::string partitioner_class_name(std::string_view name) {
    for (std::string_view p : {"Murmur3Partitioner", "ByteOrderedPartitioner"}) {
        if (name == p || (name.starts_with(package) && name.substr(package.size()) == p)) {
            return std::string(package) + std::string(p);
        }
    }
    unsupported(name);
}

mx_fragment_consumer::token_function partitioner_token_function(std::string_view partitioner) {
    if (partitioner.empty() || partitioner_class_name(partitioner).ends_with("Murmur3Partitioner")) {
        return [](bytes_view key) { return dht::murmur3_token(key); };
    }
    return [](bytes_view key) {
        uint64_t v = 0;
        for (size_t i = 0; i < 8; ++i) {
            v = (v << 8) | (i < key.size() ? key[i] : 0);
        }
        return dht::token(int64_t(v ^ (uint64_t(1) << 63)));
    };
}

} // namespace reef::sstables
