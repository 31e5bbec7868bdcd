#include "transport/request_reader.hh"

#include "utils/big_endian.hh"

#include <fmt/format.h>

namespace reef::transport {

void request_reader::fail(std::string_view field, size_t at, std::string_view why) const {
    throw cql::cql_error(cql::error_code::protocol_error,
                         fmt::format("{}: {} at offset {}: {}", _message, field, at, why));
}

const uint8_t* request_reader::need(std::string_view field, size_t n) {
    if (remaining() < n) {
        fail(field, _pos, fmt::format("needs {} bytes, {} left in the {}-byte body", n, remaining(), _in.size()));
    }
    const uint8_t* p = _in.data() + _pos;
    _pos += n;
    return p;
}

void request_reader::check_count(std::string_view field, size_t at, size_t count, size_t min_each) const {
    if (count * min_each > remaining()) {
        fail(field, at, fmt::format("{} elements cannot fit in the {} bytes left", count, remaining()));
    }
}

uint8_t request_reader::read_byte(std::string_view field) { return *need(field, 1); }

uint16_t request_reader::read_short(std::string_view field) {
    return utils::read_be_unchecked<uint16_t>(need(field, 2));
}

int32_t request_reader::read_int(std::string_view field) { return utils::read_be_unchecked<int32_t>(need(field, 4)); }

int64_t request_reader::read_long(std::string_view field) { return utils::read_be_unchecked<int64_t>(need(field, 8)); }

std::string request_reader::read_string(std::string_view field) {
    size_t at = _pos;
    uint16_t n = read_short(field);
    if (n > remaining()) {
        fail(field, at, fmt::format("[string] length {} exceeds the {} bytes left", n, remaining()));
    }
    auto p = need(field, n);
    return std::string(reinterpret_cast<const char*>(p), n);
}

std::string request_reader::read_long_string(std::string_view field) {
    size_t at = _pos;
    int32_t n = read_int(field);
    if (n < 0) {
        fail(field, at, fmt::format("[long string] length {} is negative", n));
    }
    if (size_t(n) > remaining()) {
        fail(field, at, fmt::format("[long string] length {} exceeds the {} bytes left", n, remaining()));
    }
    auto p = need(field, size_t(n));
    return std::string(reinterpret_cast<const char*>(p), size_t(n));
}

std::vector<std::string> request_reader::read_string_list(std::string_view field) {
    size_t at = _pos;
    uint16_t n = read_short(field);
    check_count(field, at, n, 2);
    std::vector<std::string> out;
    out.reserve(n);
    for (uint16_t i = 0; i < n; ++i) {
        out.push_back(read_string(field));
    }
    return out;
}

std::optional<bytes> request_reader::read_bytes(std::string_view field) {
    size_t at = _pos;
    int32_t n = read_int(field);
    if (n < 0) {
        return std::nullopt;
    }
    if (size_t(n) > remaining()) {
        fail(field, at, fmt::format("[bytes] length {} exceeds the {} bytes left", n, remaining()));
    }
    auto p = need(field, size_t(n));
    return bytes(p, p + n);
}

bytes request_reader::read_short_bytes(std::string_view field) {
    size_t at = _pos;
    uint16_t n = read_short(field);
    if (n > remaining()) {
        fail(field, at, fmt::format("[short bytes] length {} exceeds the {} bytes left", n, remaining()));
    }
    auto p = need(field, n);
    return bytes(p, p + n);
}

cql::raw_value request_reader::read_value(std::string_view field) {
    size_t at = _pos;
    int32_t n = read_int(field);
    if (n == -1) {
        return cql::raw_value::null_value();
    }
    if (n == -2) {
        return cql::raw_value::unset_value();
    }
    if (n < 0) {
        fail(field, at, fmt::format("[value] length {} is invalid (-1 is null, -2 unset)", n));
    }
    if (size_t(n) > remaining()) {
        fail(field, at, fmt::format("[value] length {} exceeds the {} bytes left", n, remaining()));
    }
    auto p = need(field, size_t(n));
    return cql::raw_value::of(bytes(p, p + n));
}

cql::consistency_level request_reader::read_consistency(std::string_view field) {
    size_t at = _pos;
    uint16_t v = read_short(field);
    if (v > uint16_t(cql::consistency_level::local_one)) {
        fail(field, at, fmt::format("unknown consistency level {:#06x}", v));
    }
    return cql::consistency_level(v);
}

std::map<std::string, std::string> request_reader::read_string_map(std::string_view field) {
    size_t at = _pos;
    uint16_t n = read_short(field);
    check_count(field, at, n, 4);
    std::map<std::string, std::string> out;
    for (uint16_t i = 0; i < n; ++i) {
        auto k = read_string(field);
        out[std::move(k)] = read_string(field);
    }
    return out;
}

std::map<std::string, std::vector<std::string>> request_reader::read_string_multimap(std::string_view field) {
    size_t at = _pos;
    uint16_t n = read_short(field);
    check_count(field, at, n, 4);
    std::map<std::string, std::vector<std::string>> out;
    for (uint16_t i = 0; i < n; ++i) {
        auto k = read_string(field);
        out[std::move(k)] = read_string_list(field);
    }
    return out;
}

std::map<std::string, std::optional<bytes>> request_reader::read_bytes_map(std::string_view field) {
    size_t at = _pos;
    uint16_t n = read_short(field);
    check_count(field, at, n, 6);
    std::map<std::string, std::optional<bytes>> out;
    for (uint16_t i = 0; i < n; ++i) {
        auto k = read_string(field);
        out[std::move(k)] = read_bytes(field);
    }
    return out;
}

std::map<std::string, std::string> read_startup(request_reader& in) {
    return in.read_string_map("[string map] options");
}

std::vector<std::string> read_register(request_reader& in) { return in.read_string_list("[string list] event types"); }

namespace query_flags {
constexpr uint8_t values = 0x01;
constexpr uint8_t skip_metadata = 0x02;
constexpr uint8_t page_size = 0x04;
constexpr uint8_t paging_state = 0x08;
constexpr uint8_t serial_consistency = 0x10;
constexpr uint8_t timestamp = 0x20;
constexpr uint8_t names = 0x40;
} // namespace query_flags

namespace {

void read_values(request_reader& in, bool with_names, std::vector<cql::raw_value>& values,
                 std::vector<std::string>& names) {
    size_t at = in.offset();
    uint16_t n = in.read_short("[short] value count");
    if (size_t(n) * 4 > in.remaining()) {
        in.fail("[short] value count", at, fmt::format("{} values cannot fit in the {} bytes left", n, in.remaining()));
    }
    values.reserve(n);
    for (uint16_t i = 0; i < n; ++i) {
        if (with_names) {
            names.push_back(in.read_string("[string] value name"));
        }
        values.push_back(in.read_value("[value] bound value"));
    }
}

cql::consistency_level read_serial(request_reader& in) {
    size_t at = in.offset();
    auto cl = in.read_consistency("[consistency] serial consistency");
    if (cl != cql::consistency_level::serial && cl != cql::consistency_level::local_serial) {
        in.fail("[consistency] serial consistency", at, "must be SERIAL or LOCAL_SERIAL");
    }
    return cl;
}

int64_t read_timestamp(request_reader& in) {
    size_t at = in.offset();
    int64_t ts = in.read_long("[long] default timestamp");
    if (ts == INT64_MIN) {
        in.fail("[long] default timestamp", at, "out of bounds timestamp: -9223372036854775808 is reserved");
    }
    return ts;
}

} // namespace

cql::query_options read_query_options(request_reader& in) {
    cql::query_options o;
    o.consistency = in.read_consistency("[consistency] consistency");
    size_t flags_at = in.offset();
    uint8_t flags = in.read_byte("[byte] flags");
    if (flags & 0x80) {
        in.fail("[byte] flags", flags_at, fmt::format("unknown query flag bits {:#04x}", flags & 0x80));
    }
    if (flags & query_flags::values) {
        read_values(in, flags & query_flags::names, o.values, o.names);
    }
    o.skip_metadata = flags & query_flags::skip_metadata;
    if (flags & query_flags::page_size) {
        o.page_size = in.read_int("[int] result page size");
    }
    if (flags & query_flags::paging_state) {
        o.paging_state = in.read_bytes("[bytes] paging state");
    }
    if (flags & query_flags::serial_consistency) {
        o.serial_consistency = read_serial(in);
    }
    if (flags & query_flags::timestamp) {
        o.timestamp = read_timestamp(in);
    }
    return o;
}

query_request read_query(request_reader& in) {
    query_request r;
    r.query = in.read_long_string("[long string] query");
    r.options = read_query_options(in);
    return r;
}

std::string read_prepare(request_reader& in) { return in.read_long_string("[long string] query"); }

execute_request read_execute(request_reader& in) {
    execute_request r;
    r.id = in.read_short_bytes("[short bytes] id");
    r.options = read_query_options(in);
    return r;
}

batch_request read_batch(request_reader& in) {
    batch_request r;
    size_t at = in.offset();
    uint8_t type = in.read_byte("[byte] batch type");
    if (type > uint8_t(cql::batch_type::counter)) {
        in.fail("[byte] batch type", at, fmt::format("unknown batch type {} (0 logged, 1 unlogged, 2 counter)", type));
    }
    r.type = cql::batch_type(type);
    at = in.offset();
    uint16_t n = in.read_short("[short] statement count");
    // Each statement takes at least a kind byte, a 2-byte id or 4-byte query length and a value count.
    if (size_t(n) * 5 > in.remaining()) {
        in.fail("[short] statement count", at, fmt::format("{} statements cannot fit in the {} bytes left", n,
                                                           in.remaining()));
    }
    r.entries.reserve(n);
    for (uint16_t i = 0; i < n; ++i) {
        cql::batch_entry e;
        at = in.offset();
        uint8_t kind = in.read_byte("[byte] statement kind");
        if (kind == 0) {
            e.query_or_id = in.read_long_string("[long string] query");
        } else if (kind == 1) {
            e.query_or_id = in.read_short_bytes("[short bytes] id");
        } else {
            in.fail("[byte] statement kind", at, fmt::format("unknown kind {} (0 query, 1 prepared id)", kind));
        }
        std::vector<std::string> no_names;
        read_values(in, false, e.values, no_names);
        r.entries.push_back(std::move(e));
    }
    r.options.consistency = in.read_consistency("[consistency] consistency");
    size_t flags_at = in.offset();
    uint8_t flags = in.read_byte("[byte] flags");
    if (flags & ~uint8_t(query_flags::serial_consistency | query_flags::timestamp | query_flags::names)) {
        in.fail("[byte] flags", flags_at, fmt::format("flags {:#04x} are not batch flags (0x10, 0x20, 0x40)", flags));
    }
    if (flags & query_flags::names) {
        in.fail("[byte] flags", flags_at, "Named values are not supported in batch statements (flag 0x40)");
    }
    if (flags & query_flags::serial_consistency) {
        r.options.serial_consistency = read_serial(in);
    }
    if (flags & query_flags::timestamp) {
        r.options.timestamp = read_timestamp(in);
    }
    return r;
}

} // namespace reef::transport
