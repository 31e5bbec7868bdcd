// The type objects, their names, and how they compare and validate serialized values. Each comparison follows
// the compareCustom of the Cassandra marshal class named in the comment next to it.

#include "schema/types.hh"
#include "schema/value_format.hh"

#include <fmt/format.h>

#include <array>
#include <bit>
#include <cmath>

namespace reef {

namespace {

constexpr std::string_view marshal_prefix = "org.apache.cassandra.db.marshal.";

struct native_info {
    type_kind kind;
    std::string_view class_short_name;
    std::string_view cql_name;
    // 0: variable length (Cassandra's valueLengthIfFixed() == -1).
    uint32_t fixed_length;
};

// tinyint, smallint, date and time are variable-length in the sstable format: ByteType, ShortType,
// SimpleDateType and TimeType never overrode valueLengthIfFixed (Cassandra 3.11 writes a date cell as the vint
// length 4 then 4 bytes: gen_me_all_types_uncompressed). Counters hold a variable-size context.
constexpr std::array<native_info, 21> natives = {{
    {type_kind::ascii, "AsciiType", "ascii", 0},
    {type_kind::bigint, "LongType", "bigint", 8},
    {type_kind::blob, "BytesType", "blob", 0},
    {type_kind::boolean, "BooleanType", "boolean", 1},
    {type_kind::counter, "CounterColumnType", "counter", 0},
    {type_kind::date, "SimpleDateType", "date", 0},
    {type_kind::decimal, "DecimalType", "decimal", 0},
    {type_kind::double_, "DoubleType", "double", 8},
    {type_kind::duration, "DurationType", "duration", 0},
    {type_kind::float_, "FloatType", "float", 4},
    {type_kind::inet, "InetAddressType", "inet", 0},
    {type_kind::int32, "Int32Type", "int", 4},
    {type_kind::smallint, "ShortType", "smallint", 0},
    {type_kind::text, "UTF8Type", "text", 0},
    {type_kind::time, "TimeType", "time", 0},
    {type_kind::timestamp, "TimestampType", "timestamp", 8},
    {type_kind::timeuuid, "TimeUUIDType", "timeuuid", 16},
    {type_kind::tinyint, "ByteType", "tinyint", 0},
    {type_kind::uuid, "UUIDType", "uuid", 16},
    {type_kind::varint, "IntegerType", "varint", 0},
    {type_kind::empty, "EmptyType", "empty", 0},
}};

const native_info& info_of(type_kind k) {
    for (auto& n : natives) {
        if (n.kind == k) {
            return n;
        }
    }
    throw std::logic_error("not a native type");
}

bool is_native(type_kind k) {
    return k <= type_kind::empty;
}

data_type make_native(type_kind k) {
    return std::make_shared<const abstract_type>(k, false, std::vector<data_type>{});
}

// Signed big-endian integers: the first byte signed, the rest unsigned (Int32Type, LongType, ShortType...).
int compare_signed(bytes_view a, bytes_view b) {
    int d = int(int8_t(a[0])) - int(int8_t(b[0]));
    if (d != 0) {
        return d < 0 ? -1 : 1;
    }
    return compare_unsigned(a.subspan(1), b.subspan(1));
}

// Java's Double.compare: -0.0 < 0.0 and NaN above +Infinity, equal to itself.
template <typename F, typename I>
int java_float_compare(F a, F b) {
    if (a < b) {
        return -1;
    }
    if (a > b) {
        return 1;
    }
    auto bits = [](F f) -> I {
        if (std::isnan(f)) {
            f = std::numeric_limits<F>::quiet_NaN();
        }
        return std::bit_cast<I>(f);
    };
    I x = bits(a), y = bits(b);
    return x < y ? -1 : x > y ? 1 : 0;
}

// TimeUUIDType.reorderTimestampBytes: time_hi (with the version) first, then time_mid, then time_low.
int64_t reorder_timestamp(uint64_t msb) {
    return int64_t((msb << 48) | ((msb << 16) & 0xFFFF00000000ULL) | (msb >> 32));
}

int cmp3(int64_t a, int64_t b) {
    return a < b ? -1 : a > b ? 1 : 0;
}

int cmp3u(uint64_t a, uint64_t b) {
    return a < b ? -1 : a > b ? 1 : 0;
}

// UUIDType: version first, time order for version 1, else unsigned msb; then unsigned lsb.
int compare_uuid(bytes_view a, bytes_view b) {
    uint64_t msb1 = read_be<uint64_t>(a.data()), msb2 = read_be<uint64_t>(b.data());
    int v1 = int((msb1 >> 12) & 0xf), v2 = int((msb2 >> 12) & 0xf);
    if (v1 != v2) {
        return v1 < v2 ? -1 : 1;
    }
    int c = v1 == 1 ? cmp3(reorder_timestamp(msb1), reorder_timestamp(msb2)) : cmp3u(msb1, msb2);
    if (c != 0) {
        return c;
    }
    return cmp3u(read_be<uint64_t>(a.data() + 8), read_be<uint64_t>(b.data() + 8));
}

// TimeUUIDType: time first; the low half compares as signed bytes, kept for compatibility with old versions.
int compare_timeuuid(bytes_view a, bytes_view b) {
    uint64_t msb1 = read_be<uint64_t>(a.data()), msb2 = read_be<uint64_t>(b.data());
    int c = cmp3(reorder_timestamp(msb1), reorder_timestamp(msb2));
    if (c != 0) {
        return c;
    }
    auto signed_bytes = [](const uint8_t* p) { return int64_t(read_be<uint64_t>(p) ^ 0x0080808080808080ULL); };
    return cmp3(signed_bytes(a.data() + 8), signed_bytes(b.data() + 8));
}

int compare_decimal(bytes_view a, bytes_view b) {
    return big_decimal::from_bytes(a).compare(big_decimal::from_bytes(b));
}

// ListType.compareListOrSet and MapType.compareMaps: element by element, then the shorter first.
int compare_collections(const abstract_type& t, bytes_view a, bytes_view b) {
    if (t.kind() == type_kind::map) {
        auto x = split_map(a), y = split_map(b);
        for (size_t i = 0; i < std::min(x.size(), y.size()); ++i) {
            int c = t.key_type()->compare(x[i].first, y[i].first);
            if (c == 0) {
                c = t.value_type()->compare(x[i].second, y[i].second);
            }
            if (c != 0) {
                return c;
            }
        }
        return cmp3(int64_t(x.size()), int64_t(y.size()));
    }
    auto x = split_collection(a), y = split_collection(b);
    for (size_t i = 0; i < std::min(x.size(), y.size()); ++i) {
        int c = t.element_type()->compare(x[i], y[i]);
        if (c != 0) {
            return c;
        }
    }
    return cmp3(int64_t(x.size()), int64_t(y.size()));
}

// TupleType.compareCustom: field by field, null before any value; missing trailing fields equal nulls.
int compare_tuples(const abstract_type& t, bytes_view a, bytes_view b) {
    auto x = split_tuple(a), y = split_tuple(b);
    auto& types = t.field_types();
    size_t n = std::min({x.size(), y.size(), types.size()});
    for (size_t i = 0; i < n; ++i) {
        if (!x[i] || !y[i]) {
            if (!x[i] && !y[i]) {
                continue;
            }
            return x[i] ? 1 : -1;
        }
        int c = types[i]->compare(*x[i], *y[i]);
        if (c != 0) {
            return c;
        }
    }
    auto rest_null = [n](const std::vector<std::optional<bytes_view>>& v) {
        for (size_t i = n; i < v.size(); ++i) {
            if (v[i]) {
                return false;
            }
        }
        return true;
    };
    bool xr = rest_null(x), yr = rest_null(y);
    if (xr && yr) {
        return 0;
    }
    return xr ? -1 : 1;
}

// VectorType's serializers' compareCustom: element by element (a vector's count is its type's).
int compare_vectors(const abstract_type& t, bytes_view a, bytes_view b) {
    auto x = split_vector(t, a), y = split_vector(t, b);
    for (size_t i = 0; i < x.size(); ++i) {
        int c = t.element_type()->compare(x[i], y[i]);
        if (c != 0) {
            return c;
        }
    }
    return 0;
}

// AbstractCompositeType.compareCustom: components in turn, then their end-of-component bytes.
int compare_composites(const abstract_type& t, bytes_view a, bytes_view b) {
    size_t i = 0, pa = 0, pb = 0;
    auto& types = t.field_types();
    while (pa < a.size() && pb < b.size()) {
        if (pa + 2 > a.size() || pb + 2 > b.size()) {
            throw marshal_exception("truncated composite component");
        }
        size_t la = read_be<uint16_t>(a.data() + pa), lb = read_be<uint16_t>(b.data() + pb);
        if (pa + 3 + la > a.size() || pb + 3 + lb > b.size()) {
            throw marshal_exception("truncated composite component");
        }
        auto& type = i < types.size() ? types[i] : types.back();
        int c = type->compare(a.subspan(pa + 2, la), b.subspan(pb + 2, lb));
        if (c != 0) {
            return c;
        }
        int8_t ea = int8_t(a[pa + 2 + la]), eb = int8_t(b[pb + 2 + lb]);
        if (ea != eb) {
            return ea < eb ? -1 : 1;
        }
        pa += 3 + la;
        pb += 3 + lb;
        ++i;
    }
    if (pa >= a.size()) {
        return pb >= b.size() ? 0 : -1;
    }
    return 1;
}

bool valid_utf8(bytes_view v) {
    size_t i = 0;
    while (i < v.size()) {
        uint8_t c = v[i];
        size_t n;
        uint32_t cp;
        if (c < 0x80) {
            ++i;
            continue;
        } else if ((c & 0xE0) == 0xC0) {
            n = 1;
            cp = c & 0x1F;
        } else if ((c & 0xF0) == 0xE0) {
            n = 2;
            cp = c & 0x0F;
        } else if ((c & 0xF8) == 0xF0) {
            n = 3;
            cp = c & 0x07;
        } else {
            return false;
        }
        if (i + n >= v.size()) {
            return false;
        }
        for (size_t k = 1; k <= n; ++k) {
            if ((v[i + k] & 0xC0) != 0x80) {
                return false;
            }
            cp = (cp << 6) | (v[i + k] & 0x3F);
        }
        static constexpr uint32_t min_cp[] = {0, 0x80, 0x800, 0x10000};
        if (cp < min_cp[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
            return false;
        }
        i += n + 1;
    }
    return true;
}

void expect_length(bytes_view v, size_t n, std::string_view what) {
    if (!v.empty() && v.size() != n) {
        throw marshal_exception(fmt::format("Expected {} or 0 byte {} ({})", n, what, v.size()));
    }
}

} // namespace

bool abstract_type::is_collection() const {
    return _kind == type_kind::list || _kind == type_kind::set || _kind == type_kind::map;
}

const data_type& abstract_type::element_type() const {
    if (_kind != type_kind::list && _kind != type_kind::set && _kind != type_kind::vector) {
        throw std::logic_error("element_type() of a type that is not a list, set or vector");
    }
    return _params[0];
}

uint32_t abstract_type::vector_dimension() const {
    if (_kind != type_kind::vector) {
        throw std::logic_error("vector_dimension() of a type that is not a vector");
    }
    return static_cast<const vector_type_impl&>(*this).dimension();
}

const data_type& abstract_type::key_type() const {
    if (_kind != type_kind::map) {
        throw std::logic_error("key_type() of a type that is not a map");
    }
    return _params[0];
}

const data_type& abstract_type::value_type() const {
    if (_kind != type_kind::map) {
        throw std::logic_error("value_type() of a type that is not a map");
    }
    return _params[1];
}

const data_type& abstract_type::underlying_type() const {
    if (_kind != type_kind::reversed) {
        throw std::logic_error("underlying_type() of a type that is not reversed");
    }
    return _params[0];
}

data_type abstract_type::name_comparator() const {
    switch (_kind) {
    case type_kind::list: return timeuuid_type();
    case type_kind::set:
    case type_kind::map: return _params[0];
    // A non-frozen UDT's cell path is the field's position as a 2-byte short (UserType.cellPathForField).
    case type_kind::user: return smallint_type();
    default: throw std::logic_error("name_comparator() of a type that is not a collection or UDT");
    }
}

data_type abstract_type::freeze() const {
    if (!_multi_cell) {
        return shared_from_this();
    }
    switch (_kind) {
    case type_kind::list: return list_type(_params[0], false);
    case type_kind::set: return set_type(_params[0], false);
    case type_kind::map: return map_type(_params[0], _params[1], false);
    case type_kind::user: {
        auto& u = static_cast<const user_type_impl&>(*this);
        return user_type(u._keyspace, u._name, u._field_names, u._declared_field_types, false);
    }
    default: return shared_from_this();
    }
}

data_type abstract_type::without_reversal() const {
    return _kind == type_kind::reversed ? _params[0] : shared_from_this();
}

std::string abstract_type::class_name() const {
    return class_name(false);
}

// Mirrors AbstractType.toString(ignoreFreezing): the parameters of a frozen type are written without FrozenType,
// since everything inside a frozen value is frozen.
std::string abstract_type::class_name(bool ignore_freezing) const {
    auto params = [&](bool ignore) {
        std::string s = "(";
        for (size_t i = 0; i < _params.size(); ++i) {
            if (i) {
                s += ',';
            }
            s += _params[i]->class_name(ignore);
        }
        return s + ")";
    };
    std::string prefix(marshal_prefix);
    if (is_native(_kind)) {
        return prefix + std::string(info_of(_kind).class_short_name);
    }
    bool frozen_wrapper = !ignore_freezing && !_multi_cell;
    std::string s;
    switch (_kind) {
    case type_kind::list:
    case type_kind::set:
    case type_kind::map: {
        std::string_view n = _kind == type_kind::list ? "ListType" : _kind == type_kind::set ? "SetType" : "MapType";
        s = prefix + std::string(n) + params(ignore_freezing || !_multi_cell);
        break;
    }
    case type_kind::tuple:
        return prefix + "TupleType" + params(true);
    case type_kind::user: {
        // As for collections: inside a frozen UDT nothing more is wrapped; a non-frozen UDT wraps its (always
        // frozen) collection and UDT fields in FrozenType, as the corpus' headers show (gen_*_collections).
        auto& u = static_cast<const user_type_impl&>(*this);
        s = prefix + "UserType(" + u._keyspace + "," + hex_encode(to_bytes_view(u._name));
        for (size_t i = 0; i < _params.size(); ++i) {
            s += "," + hex_encode(to_bytes_view(u._field_names[i])) + ":" +
                 _params[i]->class_name(ignore_freezing || !_multi_cell);
        }
        s += ")";
        break;
    }
    case type_kind::reversed:
        return prefix + "ReversedType(" + _params[0]->class_name(ignore_freezing) + ")";
    case type_kind::vector:
        // VectorType.toString: never FrozenType-wrapped, and " , " before the dimension (TypeParser's spelling).
        return prefix + "VectorType(" + _params[0]->class_name(ignore_freezing) + " , " +
               std::to_string(vector_dimension()) + ")";
    case type_kind::composite:
        return prefix + "CompositeType" + params(false);
    default:
        throw std::logic_error("unknown type kind");
    }
    return frozen_wrapper ? prefix + "FrozenType(" + s + ")" : s;
}

std::string abstract_type::cql_name() const {
    if (is_native(_kind)) {
        if (_kind == type_kind::empty) {
            return "'" + class_name() + "'";
        }
        return std::string(info_of(_kind).cql_name);
    }
    auto frozen = [&](std::string s) { return _multi_cell ? s : "frozen<" + s + ">"; };
    switch (_kind) {
    case type_kind::list: return frozen("list<" + _params[0]->cql_name() + ">");
    case type_kind::set: return frozen("set<" + _params[0]->cql_name() + ">");
    case type_kind::map: return frozen("map<" + _params[0]->cql_name() + ", " + _params[1]->cql_name() + ">");
    case type_kind::tuple: {
        std::string s = "tuple<";
        for (size_t i = 0; i < _params.size(); ++i) {
            s += (i ? ", " : "") + _params[i]->cql_name();
        }
        return frozen(s + ">");
    }
    case type_kind::reversed: return _params[0]->cql_name();
    // CQL3Type.Vector: never frozen<>, though a vector is one value.
    case type_kind::vector: return "vector<" + _params[0]->cql_name() + ", " + std::to_string(vector_dimension()) + ">";
    default: return "'" + class_name() + "'";
    }
}

std::optional<uint32_t> abstract_type::value_length_if_fixed() const {
    if (is_native(_kind)) {
        uint32_t n = info_of(_kind).fixed_length;
        if (n) {
            return n;
        }
        if (_kind == type_kind::empty) {
            return 0;
        }
        return std::nullopt;
    }
    if (_kind == type_kind::reversed) {
        return _params[0]->value_length_if_fixed();
    }
    if (_kind == type_kind::vector) {
        // VectorType: N times a fixed element length (so sstables write it without a length), else variable.
        auto n = _params[0]->value_length_if_fixed();
        if (n && uint64_t(*n) * vector_dimension() <= UINT32_MAX) {
            return uint32_t(*n * vector_dimension());
        }
    }
    return std::nullopt;
}

int abstract_type::compare(bytes_view a, bytes_view b) const {
    if (_kind == type_kind::reversed) {
        return _params[0]->compare(b, a);
    }
    // Every Cassandra comparator puts the empty value first.
    if (a.empty() || b.empty()) {
        return a.empty() && b.empty() ? 0 : a.empty() ? -1 : 1;
    }
    switch (_kind) {
    case type_kind::int32:
    case type_kind::bigint:
    case type_kind::smallint:
    case type_kind::tinyint:
    case type_kind::counter:
    case type_kind::timestamp:
        return compare_signed(a, b);
    case type_kind::boolean: {
        int x = a[0] != 0, y = b[0] != 0;
        return x - y;
    }
    case type_kind::double_:
        validate(a), validate(b);
        return java_float_compare<double, int64_t>(std::bit_cast<double>(read_be<uint64_t>(a.data())),
                                                   std::bit_cast<double>(read_be<uint64_t>(b.data())));
    case type_kind::float_:
        validate(a), validate(b);
        return java_float_compare<float, int32_t>(std::bit_cast<float>(read_be<uint32_t>(a.data())),
                                                  std::bit_cast<float>(read_be<uint32_t>(b.data())));
    case type_kind::varint:
        return compare_varint(a, b);
    case type_kind::decimal:
        validate(a), validate(b);
        return compare_decimal(a, b);
    case type_kind::uuid:
        validate(a), validate(b);
        return compare_uuid(a, b);
    case type_kind::timeuuid:
        validate(a), validate(b);
        return compare_timeuuid(a, b);
    case type_kind::list:
    case type_kind::set:
    case type_kind::map:
        return compare_collections(*this, a, b);
    case type_kind::tuple:
    case type_kind::user:
        return compare_tuples(*this, a, b);
    case type_kind::composite:
        return compare_composites(*this, a, b);
    case type_kind::vector:
        return compare_vectors(*this, a, b);
    default:
        // ascii, text, blob, inet, date (stored with a 2^31 offset so that unsigned order is date order),
        // time, duration, empty: Cassandra's BYTE_ORDER comparison.
        return compare_unsigned(a, b);
    }
}

void abstract_type::validate(bytes_view v) const {
    switch (_kind) {
    case type_kind::int32: return expect_length(v, 4, "int");
    case type_kind::bigint: return expect_length(v, 8, "bigint");
    case type_kind::counter: return expect_length(v, 8, "counter");
    case type_kind::timestamp: return expect_length(v, 8, "timestamp");
    case type_kind::smallint: return expect_length(v, 2, "smallint");
    case type_kind::tinyint: return expect_length(v, 1, "tinyint");
    case type_kind::boolean: return expect_length(v, 1, "boolean");
    case type_kind::float_: return expect_length(v, 4, "float");
    case type_kind::double_: return expect_length(v, 8, "double");
    case type_kind::date: return expect_length(v, 4, "date");
    case type_kind::uuid: return expect_length(v, 16, "uuid");
    case type_kind::timeuuid:
        expect_length(v, 16, "timeuuid");
        if (!v.empty() && (v[6] >> 4) != 1) {
            throw marshal_exception("Invalid version for TimeUUID type.");
        }
        return;
    case type_kind::time: {
        expect_length(v, 8, "time");
        if (!v.empty()) {
            int64_t t = read_be<int64_t>(v.data());
            if (t < 0 || t >= 86400LL * 1000000000LL) {
                throw marshal_exception(fmt::format("Time value ({}) out of range", t));
            }
        }
        return;
    }
    case type_kind::inet:
        if (!v.empty() && v.size() != 4 && v.size() != 16) {
            throw marshal_exception(fmt::format("Invalid length {} for an inet address", v.size()));
        }
        return;
    case type_kind::ascii:
        for (auto c : v) {
            if (c > 127) {
                throw marshal_exception("Invalid byte for ascii: " + std::to_string(c));
            }
        }
        return;
    case type_kind::text:
        if (!valid_utf8(v)) {
            throw marshal_exception("String didn't validate.");
        }
        return;
    case type_kind::decimal:
        if (!v.empty() && v.size() < 4) {
            throw marshal_exception("A decimal needs at least 4 bytes of scale");
        }
        return;
    case type_kind::duration:
        if (!v.empty()) {
            try {
                decode_duration(v);
            } catch (const std::invalid_argument& e) {
                throw marshal_exception(e.what());
            }
        }
        return;
    case type_kind::empty:
        if (!v.empty()) {
            throw marshal_exception("EmptyType only accepts empty values");
        }
        return;
    case type_kind::list:
    case type_kind::set:
        if (!v.empty()) {
            for (auto e : split_collection(v)) {
                element_type()->validate(e);
            }
        }
        return;
    case type_kind::map:
        if (!v.empty()) {
            for (auto& [k, x] : split_map(v)) {
                key_type()->validate(k);
                value_type()->validate(x);
            }
        }
        return;
    case type_kind::tuple:
    case type_kind::user: {
        auto fields = split_tuple(v);
        if (fields.size() > _params.size()) {
            throw marshal_exception("Tuple value has more fields than its type");
        }
        for (size_t i = 0; i < fields.size(); ++i) {
            if (fields[i]) {
                _params[i]->validate(*fields[i]);
            }
        }
        return;
    }
    case type_kind::composite: {
        auto parts = split_composite(v);
        for (size_t i = 0; i < parts.size() && i < _params.size(); ++i) {
            _params[i]->validate(parts[i]);
        }
        return;
    }
    case type_kind::vector:
        if (!v.empty()) {
            split_vector(*this, v);
        }
        return;
    case type_kind::reversed:
        return _params[0]->validate(v);
    default:
        // varint and blob: every byte string is valid.
        return;
    }
}

user_type_impl::user_type_impl(std::string keyspace, std::string name, std::vector<std::string> field_names,
                               std::vector<data_type> field_types, bool multi_cell)
    : abstract_type(type_kind::user, multi_cell, std::move(field_types))
    , _keyspace(std::move(keyspace))
    , _name(std::move(name))
    , _field_names(std::move(field_names)) {
    if (_field_names.size() != _params.size()) {
        throw std::invalid_argument("user type: as many field names as field types are needed");
    }
}

std::string user_type_impl::cql_name() const {
    auto name = maybe_quote_identifier(_name);
    return _multi_cell ? name : "frozen<" + name + ">";
}

data_type native_type(type_kind kind) {
    static const auto all = [] {
        std::vector<data_type> v;
        for (auto& n : natives) {
            if (v.size() <= size_t(n.kind)) {
                v.resize(size_t(n.kind) + 1);
            }
            v[size_t(n.kind)] = make_native(n.kind);
        }
        return v;
    }();
    if (!is_native(kind)) {
        throw std::invalid_argument("native_type() of a type with parameters");
    }
    return all[size_t(kind)];
}

data_type ascii_type() { return native_type(type_kind::ascii); }
data_type bigint_type() { return native_type(type_kind::bigint); }
data_type blob_type() { return native_type(type_kind::blob); }
data_type boolean_type() { return native_type(type_kind::boolean); }
data_type counter_type() { return native_type(type_kind::counter); }
data_type date_type() { return native_type(type_kind::date); }
data_type decimal_type() { return native_type(type_kind::decimal); }
data_type double_type() { return native_type(type_kind::double_); }
data_type duration_type() { return native_type(type_kind::duration); }
data_type float_type() { return native_type(type_kind::float_); }
data_type inet_type() { return native_type(type_kind::inet); }
data_type int32_type() { return native_type(type_kind::int32); }
data_type smallint_type() { return native_type(type_kind::smallint); }
data_type text_type() { return native_type(type_kind::text); }
data_type time_type() { return native_type(type_kind::time); }
data_type timestamp_type() { return native_type(type_kind::timestamp); }
data_type timeuuid_type() { return native_type(type_kind::timeuuid); }
data_type tinyint_type() { return native_type(type_kind::tinyint); }
data_type uuid_type() { return native_type(type_kind::uuid); }
data_type varint_type() { return native_type(type_kind::varint); }
data_type empty_type() { return native_type(type_kind::empty); }

data_type list_type(data_type element, bool multi_cell) {
    return std::make_shared<const abstract_type>(type_kind::list, multi_cell, std::vector<data_type>{element->freeze()});
}

data_type set_type(data_type element, bool multi_cell) {
    return std::make_shared<const abstract_type>(type_kind::set, multi_cell, std::vector<data_type>{element->freeze()});
}

data_type map_type(data_type key, data_type value, bool multi_cell) {
    return std::make_shared<const abstract_type>(type_kind::map, multi_cell,
                                                 std::vector<data_type>{key->freeze(), value->freeze()});
}

data_type tuple_type(std::vector<data_type> fields) {
    for (auto& f : fields) {
        f = f->freeze();
    }
    return std::make_shared<const abstract_type>(type_kind::tuple, false, std::move(fields));
}

data_type user_type(std::string keyspace, std::string name, std::vector<std::string> field_names,
                    std::vector<data_type> field_types, bool multi_cell) {
    auto declared = field_types;
    for (auto& f : field_types) {
        f = f->freeze();
    }
    auto t = std::make_shared<user_type_impl>(std::move(keyspace), std::move(name), std::move(field_names),
                                              std::move(field_types), multi_cell);
    t->_declared_field_types = std::move(declared);
    return t;
}

data_type reversed_type(data_type base) {
    if (base->is_reversed()) {
        return base;
    }
    return std::make_shared<const abstract_type>(type_kind::reversed, false, std::vector<data_type>{std::move(base)});
}

data_type composite_type(std::vector<data_type> components) {
    return std::make_shared<const abstract_type>(type_kind::composite, false, std::move(components));
}

bytes serialize_collection(const std::vector<bytes>& elements) {
    bytes out;
    write_be<int32_t>(out, int32_t(elements.size()));
    for (auto& e : elements) {
        write_be<int32_t>(out, int32_t(e.size()));
        out.insert(out.end(), e.begin(), e.end());
    }
    return out;
}

bytes serialize_map(const std::vector<std::pair<bytes, bytes>>& entries) {
    bytes out;
    write_be<int32_t>(out, int32_t(entries.size()));
    for (auto& [k, v] : entries) {
        write_be<int32_t>(out, int32_t(k.size()));
        out.insert(out.end(), k.begin(), k.end());
        write_be<int32_t>(out, int32_t(v.size()));
        out.insert(out.end(), v.begin(), v.end());
    }
    return out;
}

bytes serialize_tuple(const std::vector<std::optional<bytes>>& fields) {
    bytes out;
    for (auto& f : fields) {
        if (!f) {
            write_be<int32_t>(out, -1);
            continue;
        }
        write_be<int32_t>(out, int32_t(f->size()));
        out.insert(out.end(), f->begin(), f->end());
    }
    return out;
}

bytes serialize_composite(const std::vector<bytes>& components) {
    bytes out;
    for (auto& c : components) {
        if (c.size() > 0xFFFF) {
            throw marshal_exception("composite component longer than 65535 bytes");
        }
        write_be<uint16_t>(out, uint16_t(c.size()));
        out.insert(out.end(), c.begin(), c.end());
        out.push_back(0);
    }
    return out;
}

namespace {

struct cursor {
    bytes_view v;
    size_t pos = 0;

    int32_t read_int() {
        if (pos + 4 > v.size()) {
            throw marshal_exception("Not enough bytes to read a length");
        }
        int32_t n = read_be<int32_t>(v.data() + pos);
        pos += 4;
        return n;
    }
    bytes_view read_value(int32_t n) {
        if (n < 0 || pos + size_t(n) > v.size()) {
            throw marshal_exception("Not enough bytes to read a value");
        }
        auto r = v.subspan(pos, size_t(n));
        pos += size_t(n);
        return r;
    }
};

} // namespace

std::vector<bytes_view> split_collection(bytes_view v) {
    std::vector<bytes_view> out;
    if (v.empty()) {
        return out;
    }
    cursor c{v};
    int32_t n = c.read_int();
    if (n < 0) {
        throw marshal_exception("negative collection size");
    }
    for (int32_t i = 0; i < n; ++i) {
        out.push_back(c.read_value(c.read_int()));
    }
    if (c.pos != v.size()) {
        throw marshal_exception("Unexpected extraneous bytes after collection value");
    }
    return out;
}

std::vector<std::pair<bytes_view, bytes_view>> split_map(bytes_view v) {
    std::vector<std::pair<bytes_view, bytes_view>> out;
    if (v.empty()) {
        return out;
    }
    cursor c{v};
    int32_t n = c.read_int();
    if (n < 0) {
        throw marshal_exception("negative map size");
    }
    for (int32_t i = 0; i < n; ++i) {
        auto k = c.read_value(c.read_int());
        auto x = c.read_value(c.read_int());
        out.emplace_back(k, x);
    }
    if (c.pos != v.size()) {
        throw marshal_exception("Unexpected extraneous bytes after map value");
    }
    return out;
}

std::vector<std::optional<bytes_view>> split_tuple(bytes_view v) {
    std::vector<std::optional<bytes_view>> out;
    cursor c{v};
    while (c.pos < v.size()) {
        int32_t n = c.read_int();
        if (n < 0) {
            out.emplace_back(std::nullopt);
        } else {
            out.emplace_back(c.read_value(n));
        }
    }
    return out;
}

std::vector<bytes_view> split_composite(bytes_view v) {
    std::vector<bytes_view> out;
    size_t pos = 0;
    while (pos < v.size()) {
        if (pos + 2 > v.size()) {
            throw marshal_exception("truncated composite component");
        }
        size_t n = read_be<uint16_t>(v.data() + pos);
        if (pos + 3 + n > v.size()) {
            throw marshal_exception("truncated composite component");
        }
        out.push_back(v.subspan(pos + 2, n));
        pos += 3 + n;
    }
    return out;
}

} // namespace reef
