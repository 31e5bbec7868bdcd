// partition_key: the serialized bytes of a partition key, as Cassandra stores and hashes them, and the CompositeType codec for multi-column keys.
// Promises: single-column keys are the value's bytes; composite keys are (2-byte BE length, bytes, 0x00) per column; splitting rejects malformed bytes with key_format_error and never reads out of bounds.
#pragma once

#include <compare>
#include <cstddef>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace reef {

class key_format_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// The largest component CompositeType's 2-byte length can describe.
inline constexpr size_t max_composite_component_size = 0xffff;

// Encodes components as Cassandra's CompositeType (each: 16-bit big-endian
// length, the bytes, end-of-component byte 0); throws key_format_error when a
// component is longer than max_composite_component_size.
std::string serialize_composite(std::span<const std::string_view> components);

// Splits CompositeType bytes into views of its components (into the caller's
// bytes). Throws key_format_error on a truncated component, a non-zero
// end-of-component byte, or an empty input.
std::vector<std::string_view> split_composite(std::string_view bytes);

// Opaque, byte-level: the typed view of the columns comes from the schema.
// Bytes are kept in a std::string for cheap small-key storage; they are
// compared as unsigned bytes.
class partition_key {
public:
    partition_key() = default;
    explicit partition_key(std::string serialized) noexcept : _bytes(std::move(serialized)) {}

    // One component: its bytes as they are; more: CompositeType.
    static partition_key from_components(std::span<const std::string_view> components);
    static partition_key from_single_value(std::string_view value) { return partition_key(std::string(value)); }

    // The column values, for a table whose partition key has column_count
    // columns; throws key_format_error if the bytes do not hold that many.
    std::vector<std::string_view> components(size_t column_count) const;

    std::string_view view() const noexcept { return _bytes; }
    std::span<const std::byte> bytes() const noexcept { return std::as_bytes(std::span<const char>(_bytes)); }
    size_t size() const noexcept { return _bytes.size(); }

    // Unsigned lexicographic, then shorter first: ByteBufferUtil.compareUnsigned.
    std::strong_ordering operator<=>(const partition_key& o) const noexcept;
    bool operator==(const partition_key& o) const noexcept { return _bytes == o._bytes; }

private:
    std::string _bytes;
};

} // namespace reef
