#include "mutation/partition_key.hh"

#include "utils/big_endian.hh"

#include <algorithm>
#include <cstring>

namespace reef {

std::string serialize_composite(std::span<const std::string_view> components) {
    size_t total = 0;
    for (size_t i = 0; i < components.size(); ++i) {
        if (components[i].size() > max_composite_component_size) {
            throw key_format_error("composite key component " + std::to_string(i) + " has " +
                                   std::to_string(components[i].size()) + " bytes, more than the 65535 a 2-byte length allows");
        }
        total += 3 + components[i].size();
    }
    std::string out(total, '\0');
    size_t pos = 0;
    for (auto c : components) {
        utils::write_be_unchecked<uint16_t>(out.data() + pos, static_cast<uint16_t>(c.size()));
        pos += 2;
        if (!c.empty()) {
            // An empty component may have a null data(), which memcpy must not get.
            std::memcpy(out.data() + pos, c.data(), c.size());
        }
        pos += c.size();
        out[pos++] = '\0';
    }
    return out;
}

std::vector<std::string_view> split_composite(std::string_view bytes) {
    if (bytes.empty()) {
        throw key_format_error("empty composite key");
    }
    std::vector<std::string_view> out;
    size_t pos = 0;
    while (pos < bytes.size()) {
        if (bytes.size() - pos < 2) {
            throw key_format_error("composite key truncated in the length of component " + std::to_string(out.size()) +
                                   " at offset " + std::to_string(pos));
        }
        size_t len = utils::read_be_unchecked<uint16_t>(bytes.data() + pos);
        pos += 2;
        if (bytes.size() - pos < len + 1) {
            throw key_format_error("composite key component " + std::to_string(out.size()) + " at offset " +
                                   std::to_string(pos - 2) + " declares " + std::to_string(len) +
                                   " bytes but the key ends before it and its end-of-component byte");
        }
        out.push_back(bytes.substr(pos, len));
        pos += len;
        // A partition key is never a slice bound, so its end-of-component is 0.
        if (bytes[pos] != '\0') {
            throw key_format_error("composite key component " + std::to_string(out.size() - 1) +
                                   " has end-of-component byte " + std::to_string(static_cast<unsigned char>(bytes[pos])) +
                                   " at offset " + std::to_string(pos) + ", expected 0");
        }
        ++pos;
    }
    return out;
}

partition_key partition_key::from_components(std::span<const std::string_view> components) {
    if (components.empty()) {
        throw key_format_error("a partition key needs at least one component");
    }
    if (components.size() == 1) {
        return partition_key(std::string(components[0]));
    }
    return partition_key(serialize_composite(components));
}

std::vector<std::string_view> partition_key::components(size_t column_count) const {
    if (column_count == 0) {
        throw key_format_error("a partition key has at least one column");
    }
    if (column_count == 1) {
        return {view()};
    }
    auto parts = split_composite(view());
    if (parts.size() != column_count) {
        throw key_format_error("composite partition key has " + std::to_string(parts.size()) + " components, expected " +
                               std::to_string(column_count));
    }
    return parts;
}

std::strong_ordering partition_key::operator<=>(const partition_key& o) const noexcept {
    size_t n = std::min(_bytes.size(), o._bytes.size());
    // memcmp compares as unsigned char, which is Cassandra's byte order.
    int c = n ? std::memcmp(_bytes.data(), o._bytes.data(), n) : 0;
    if (c != 0) {
        return c < 0 ? std::strong_ordering::less : std::strong_ordering::greater;
    }
    return _bytes.size() <=> o._bytes.size();
}

} // namespace reef
