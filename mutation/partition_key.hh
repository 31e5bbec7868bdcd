// partition_key: the serialized bytes of a partition key, as Cassandra stores and hashes them, and the CompositeType codec for multi-column keys.
// Promises: single-column keys are the value's bytes; composite keys are (2-byte BE length, bytes, 0x00) per column; splitting rejects malformed bytes with key_format_error and never reads out of bounds.
#pragma once

#include "utils/small_vector.hh"

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
// Keys of up to inline_bytes are kept inline: a read copies its key several
// times (range, reader, fragments, result), and these copies allocate
// nothing. They are compared as unsigned bytes.
class partition_key {
public:
    // Room for a 16-byte key (a uuid or blob) or a composite of two small columns.
    static constexpr size_t inline_bytes = 24;

    partition_key() = default;
    explicit partition_key(std::string_view serialized) : _bytes(serialized.begin(), serialized.end()) {}
    explicit partition_key(const std::string& serialized) : partition_key(std::string_view(serialized)) {}
    explicit partition_key(const char* serialized) : partition_key(std::string_view(serialized)) {}

    // One component: its bytes as they are; more: CompositeType.
    static partition_key from_components(std::span<const std::string_view> components);
    static partition_key from_single_value(std::string_view value) { return partition_key(value); }

    // The column values, for a table whose partition key has column_count
    // columns; throws key_format_error if the bytes do not hold that many.
    std::vector<std::string_view> components(size_t column_count) const;

    std::string_view view() const noexcept { return {_bytes.data(), _bytes.size()}; }
    std::span<const std::byte> bytes() const noexcept {
        return std::as_bytes(std::span<const char>(_bytes.data(), _bytes.size()));
    }
    size_t size() const noexcept { return _bytes.size(); }

    // Unsigned lexicographic, then shorter first: ByteBufferUtil.compareUnsigned.
    std::strong_ordering operator<=>(const partition_key& o) const noexcept;
    bool operator==(const partition_key& o) const noexcept { return view() == o.view(); }

private:
    utils::small_vector<char, inline_bytes> _bytes;
};

} // namespace reef
