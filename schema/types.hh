// CQL types: one immutable abstract_type per type, shared through data_type handles. A type compares, validates
// and prints serialized values exactly as Cassandra's marshal class of the same name (class_name()) does.
#pragma once

#include "schema/bytes.hh"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace reef {

namespace utils {
struct json_value;
}

// A value that does not fit its type (Cassandra's MarshalException).
class marshal_exception : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// A type string (class name or CQL) that cannot be parsed.
class type_parse_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

enum class type_kind : uint8_t {
    ascii, bigint, blob, boolean, counter, date, decimal, double_, duration, float_, inet, int32,
    smallint, text, time, timestamp, timeuuid, tinyint, uuid, varint,
    // Cassandra's EmptyType: the clustering "type" of tables without clustering columns in old formats.
    empty,
    list, set, map, tuple, user,
    // Cassandra 5.0's vector<T, N>: N non-null elements as one value.
    vector,
    // DESC clustering order.
    reversed,
    // A composite partition key as written in the serialization header.
    composite,
};

class abstract_type;
using data_type = std::shared_ptr<const abstract_type>;

class abstract_type : public std::enable_shared_from_this<abstract_type> {
protected:
    type_kind _kind;
    // A non-frozen collection or UDT, whose elements live in cells of their own.
    bool _multi_cell = false;
    // list/set/vector: {element}; map: {key, value}; tuple/user/composite: fields; reversed: {base}.
    std::vector<data_type> _params;
public:
    abstract_type(type_kind kind, bool multi_cell, std::vector<data_type> params)
        : _kind(kind), _multi_cell(multi_cell), _params(std::move(params)) {}
    virtual ~abstract_type() = default;

    type_kind kind() const { return _kind; }
    bool is_multi_cell() const { return _multi_cell; }
    bool is_collection() const;
    bool is_reversed() const { return _kind == type_kind::reversed; }
    // tuple or user type: a fixed list of fields.
    bool is_tuple() const { return _kind == type_kind::tuple || _kind == type_kind::user; }
    bool is_user_type() const { return _kind == type_kind::user; }
    bool is_counter() const { return _kind == type_kind::counter; }
    bool is_composite() const { return _kind == type_kind::composite; }
    bool is_vector() const { return _kind == type_kind::vector; }

    // The element type of a list, set or vector.
    const data_type& element_type() const;
    // A vector's N.
    uint32_t vector_dimension() const;
    const data_type& key_type() const;
    const data_type& value_type() const;
    // The base type of reversed(T).
    const data_type& underlying_type() const;
    // Tuple, user type and composite components.
    const std::vector<data_type>& field_types() const { return _params; }
    // The type of a non-frozen collection's cell paths: timeuuid for lists, the element for sets, the key for maps,
    // smallint (the field position) for UDTs.
    data_type name_comparator() const;

    // The same type, not multi-cell (frozen<...>); non-collections return themselves.
    data_type freeze() const;
    // Strips reversed().
    data_type without_reversal() const;

    // The string the sstable serialization header holds, e.g. "org.apache.cassandra.db.marshal.Int32Type".
    std::string class_name() const;
    // CQL syntax: "int", "frozen<map<text, int>>", a user type's name.
    virtual std::string cql_name() const;

    // Values of fixed-length types are written without a length in sstables.
    std::optional<uint32_t> value_length_if_fixed() const;

    // <0, 0, >0 like Cassandra's AbstractType.compare.
    int compare(bytes_view a, bytes_view b) const;
    bool equal(bytes_view a, bytes_view b) const { return compare(a, b) == 0; }
    // Throws marshal_exception when v is not a valid serialization.
    void validate(bytes_view v) const;

    // What Cassandra's AbstractType.toJSONString prints (sstabledump's "value" fields).
    std::string to_json_string(bytes_view v) const;
    // What AbstractType.getString prints (sstabledump's partition "key" strings and cell paths), as Cassandra 5.0:
    // decimals as BigDecimal.toString, timestamps "2016-02-16T12:58:13.030Z" (always UTC here), frozen
    // collections as hex (CollectionType.getString), tuples and UDTs as fields joined by ':' with ':' and '@'
    // escaped and '@' for a null field (TupleType.getString).
    std::string to_string(bytes_view v) const;
    // A literal that CQL accepts for this value: 'text', 42, 0xcafe, {1, 2}, ...
    std::string to_cql_literal(bytes_view v) const;
    // Parses a CQL literal (quoted strings, numbers, blobs, collections, tuples, UDT literals).
    bytes from_cql_literal(std::string_view literal) const;
    // Parses the unquoted form that to_string prints (Cassandra's AbstractType.fromString).
    bytes from_string(std::string_view s) const;
    // Parses the JSON that to_json_string prints (sstabledump's "value" and "clustering" fields), with Cassandra's
    // fromJSONObject rules: numbers or strings for numeric types, strings in getString form for dates, times,
    // uuids, inets, durations, "0x..." for blobs, arrays for lists, sets and tuples, objects for maps (keys are
    // strings: the key's JSON text, or its string form) and UDTs (field names, quoted when not lower case).
    // Also the forms to_json_string prints that fromJSONObject refuses: "" for an empty value, null for a
    // float or double NaN (JSON has none; ±Infinity print as null too and read back as NaN). Throws
    // marshal_exception naming the value and the type.
    bytes from_json(const utils::json_value& v) const;

    // Native types are singletons: the same object is the same type without building two class names.
    bool operator==(const abstract_type& o) const { return this == &o || class_name() == o.class_name(); }
protected:
    std::string class_name(bool ignore_freezing) const;
};

// A user-defined type: a tuple whose fields have names, in a keyspace.
class user_type_impl final : public abstract_type {
    std::string _keyspace;
    std::string _name;
    std::vector<std::string> _field_names;
    std::vector<data_type> _declared_field_types;
public:
    user_type_impl(std::string keyspace, std::string name, std::vector<std::string> field_names,
                   std::vector<data_type> field_types, bool multi_cell);
    const std::string& keyspace() const { return _keyspace; }
    const std::string& type_name() const { return _name; }
    const std::vector<std::string>& field_names() const { return _field_names; }
    // The field types as CREATE TYPE declared them: a collection written without frozen<> keeps that form here (as
    // Cassandra stores it in system_schema.types), while field_types() are always frozen (a field is one value).
    const std::vector<data_type>& declared_field_types() const { return _declared_field_types; }
    std::string cql_name() const override;
    friend class abstract_type;
    friend data_type user_type(std::string, std::string, std::vector<std::string>, std::vector<data_type>, bool);
};

// vector<T, N>: a frozen T, N > 0 (Cassandra's VectorType).
class vector_type_impl final : public abstract_type {
    uint32_t _dimension;
public:
    vector_type_impl(data_type element, uint32_t dimension);
    uint32_t dimension() const { return _dimension; }
};

// The native types (one shared instance each).
data_type ascii_type();
data_type bigint_type();
data_type blob_type();
data_type boolean_type();
data_type counter_type();
data_type date_type();
data_type decimal_type();
data_type double_type();
data_type duration_type();
data_type float_type();
data_type inet_type();
data_type int32_type();
data_type smallint_type();
data_type text_type();
data_type time_type();
data_type timestamp_type();
data_type timeuuid_type();
data_type tinyint_type();
data_type uuid_type();
data_type varint_type();
data_type empty_type();
data_type native_type(type_kind kind);

data_type list_type(data_type element, bool multi_cell);
data_type set_type(data_type element, bool multi_cell);
data_type map_type(data_type key, data_type value, bool multi_cell);
data_type tuple_type(std::vector<data_type> fields);
data_type user_type(std::string keyspace, std::string name, std::vector<std::string> field_names,
                    std::vector<data_type> field_types, bool multi_cell);
// Throws std::invalid_argument for dimension 0.
data_type vector_type(data_type element, uint32_t dimension);
data_type reversed_type(data_type base);
data_type composite_type(std::vector<data_type> components);

// Parses a class name as written by Cassandra's AbstractType.toString (the sstable serialization header):
// "org.apache.cassandra.db.marshal.ReversedType(org.apache.cassandra.db.marshal.Int32Type)". Short names
// ("Int32Type") are accepted as Cassandra's TypeParser does.
data_type parse_class_name(std::string_view s);

// Looks up a user type by (keyspace, name) for CQL type strings; keyspace may be empty (the current one).
using user_type_resolver = std::function<data_type(std::string_view keyspace, std::string_view name)>;

// Parses CQL type syntax: "int", "frozen<map<text, int>>", "tuple<int, text>", "addr", "ks.addr".
// A user type name needs a resolver; a bare user type is non-frozen, as in CQL. Defined in cql/cql_lexer.cc,
// whose tokenizer it shares.
data_type parse_cql_type(std::string_view s, const user_type_resolver& resolve = {});

// An identifier as CQL needs it written: bare when lowercase alphanumeric, else double-quoted.
std::string maybe_quote_identifier(std::string_view id);

// Builders and splitters of the serialized forms of frozen collections, tuples and composites.
// A collection: int32 count, then each element as int32 length + bytes (map: key then value).
bytes serialize_collection(const std::vector<bytes>& elements);
bytes serialize_map(const std::vector<std::pair<bytes, bytes>>& entries);
// A tuple or UDT: each field as int32 length + bytes, length -1 for null.
bytes serialize_tuple(const std::vector<std::optional<bytes>>& fields);
// A composite: each component as uint16 length + bytes + end-of-component byte 0.
bytes serialize_composite(const std::vector<bytes>& components);
std::vector<bytes_view> split_collection(bytes_view v);
std::vector<std::pair<bytes_view, bytes_view>> split_map(bytes_view v);
std::vector<std::optional<bytes_view>> split_tuple(bytes_view v);
std::vector<bytes_view> split_composite(bytes_view v);
// A vector (VectorType's serializers): the N elements back to back when the element type has a fixed length, else
// each as an unsigned vint length + bytes. split_vector validates each element and the count.
bytes serialize_vector(const abstract_type& vector, const std::vector<bytes>& elements);
std::vector<bytes_view> split_vector(const abstract_type& vector, bytes_view v);

} // namespace reef
