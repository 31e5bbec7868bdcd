#include "cql/term_functions.hh"

#include "cql/cql_error.hh"
#include "schema/value_format.hh"
#include "utils/json_reader.hh"
#include "utils/uuid.hh"

#include <fmt/core.h>

#include <chrono>
#include <map>

namespace reef::cql {

namespace {

constexpr int64_t millis_per_day = 86400000;
constexpr int64_t date_epoch = int64_t(1) << 31;

int64_t now_millis() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

raw_value of(bytes b) { return raw_value::of(std::move(b)); }

raw_value uuid_value(const utils::uuid_bytes& u) { return of(bytes(u.begin(), u.end())); }

int64_t floor_div(int64_t a, int64_t b) {
    int64_t q = a / b;
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

int64_t timeuuid_millis(bytes_view v) {
    utils::uuid_bytes u;
    std::copy(v.begin(), v.end(), u.begin());
    return int64_t(utils::time_uuid_unix_100ns(u) / 10000);
}

int64_t millis_of(const data_type& t, bytes_view v) {
    switch (t->kind()) {
    case type_kind::timeuuid: return timeuuid_millis(v);
    case type_kind::timestamp: return read_be<int64_t>(v.data());
    case type_kind::date: return (int64_t(read_be<uint32_t>(v.data())) - date_epoch) * millis_per_day;
    default: throw std::logic_error("millis_of: not a time type");
    }
}

raw_value timestamp_value(int64_t millis) { return of(serialize_be<int64_t>(millis)); }
raw_value date_value(int64_t millis) { return of(serialize_be<uint32_t>(uint32_t(floor_div(millis, millis_per_day) + date_epoch))); }

// minTimeuuid / maxTimeuuid: the smallest and largest time UUIDs of a millisecond (UUIDGen.minTimeUUID).
raw_value bound_timeuuid(int64_t millis, bool max) {
    uint64_t t = uint64_t(millis) * 10000 + (max ? 9999 : 0);
    auto u = utils::make_time_uuid_at(t, 0, 0);
    for (size_t i = 8; i < 16; ++i) {
        u[i] = max ? 0x7f : 0x80;
    }
    return uuid_value(u);
}

std::vector<native_function> make_functions() {
    std::vector<native_function> fs;
    auto add = [&](std::string name, std::vector<data_type> args, data_type ret, bool pure, auto fn) {
        fs.push_back(native_function{std::move(name), std::move(args), std::move(ret), pure, fn});
    };
    auto nullary = [](auto make) {
        return [make](const std::vector<raw_value>&, const data_type&) { return make(); };
    };
    add("now", {}, timeuuid_type(), false, nullary([] { return uuid_value(utils::make_time_uuid()); }));
    add("currenttimeuuid", {}, timeuuid_type(), false, nullary([] { return uuid_value(utils::make_time_uuid()); }));
    add("uuid", {}, uuid_type(), false, nullary([] { return uuid_value(utils::make_random_uuid()); }));
    add("currenttimestamp", {}, timestamp_type(), false, nullary([] { return timestamp_value(now_millis()); }));
    add("currentdate", {}, date_type(), false, nullary([] { return date_value(now_millis()); }));
    add("currenttime", {}, time_type(), false, nullary([] {
        auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::system_clock::now().time_since_epoch())
                      .count();
        return of(serialize_be<int64_t>(ns % (int64_t(86400) * 1000000000)));
    }));
    // Conversions between time types: a null argument gives null.
    auto unary = [](data_type arg, auto fn) {
        return [arg, fn](const std::vector<raw_value>& a, const data_type&) -> raw_value {
            if (!a[0].is_value() || a[0].data.empty()) {
                return raw_value::null_value();
            }
            return fn(millis_of(arg, a[0].data));
        };
    };
    for (auto& from : {timeuuid_type(), date_type()}) {
        add("totimestamp", {from}, timestamp_type(), true, unary(from, timestamp_value));
    }
    for (auto& from : {timeuuid_type(), timestamp_type(), date_type()}) {
        add("tounixtimestamp", {from}, bigint_type(), true, unary(from, [](int64_t m) { return of(serialize_be<int64_t>(m)); }));
    }
    for (auto& from : {timeuuid_type(), timestamp_type()}) {
        add("todate", {from}, date_type(), true, unary(from, date_value));
    }
    add("dateof", {timeuuid_type()}, timestamp_type(), true, unary(timeuuid_type(), timestamp_value));
    add("unixtimestampof", {timeuuid_type()}, bigint_type(), true,
        unary(timeuuid_type(), [](int64_t m) { return of(serialize_be<int64_t>(m)); }));
    add("mintimeuuid", {timestamp_type()}, timeuuid_type(), true,
        unary(timestamp_type(), [](int64_t m) { return bound_timeuuid(m, false); }));
    add("maxtimeuuid", {timestamp_type()}, timeuuid_type(), true,
        unary(timestamp_type(), [](int64_t m) { return bound_timeuuid(m, true); }));
    // <type>AsBlob and blobAs<type>: the bytes unchanged, checked against the type.
    static const type_kind natives[] = {
        type_kind::ascii, type_kind::bigint, type_kind::boolean, type_kind::date, type_kind::decimal,
        type_kind::double_, type_kind::duration, type_kind::float_, type_kind::inet, type_kind::int32,
        type_kind::smallint, type_kind::text, type_kind::time, type_kind::timestamp, type_kind::timeuuid,
        type_kind::tinyint, type_kind::uuid, type_kind::varint,
    };
    for (auto k : natives) {
        auto t = native_type(k);
        auto name = t->cql_name();
        add(name + "asblob", {t}, blob_type(), true,
            [](const std::vector<raw_value>& a, const data_type&) { return a[0]; });
        add("blobas" + name, {blob_type()}, t, true, [t, name](const std::vector<raw_value>& a, const data_type&) {
            if (a[0].is_value()) {
                try {
                    t->validate(a[0].data);
                } catch (const marshal_exception& e) {
                    throw invalid_request(fmt::format("In call to function system.blobas{}, value 0x{} is not a valid "
                                                      "binary representation for type {}",
                                                      name, hex_encode(a[0].data), name));
                }
            }
            return a[0];
        });
    }
    // fromJson(text): the receiver's type read from JSON (FromJsonFct).
    add("fromjson", {text_type()}, nullptr, true, [](const std::vector<raw_value>& a, const data_type& result) {
        if (!a[0].is_value()) {
            return raw_value::null_value();
        }
        auto text = to_string_view(a[0].data);
        try {
            auto json = utils::parse_json(text);
            if (json.is_null()) {
                return raw_value::null_value();
            }
            return raw_value::of(result->from_json(json));
        } catch (const utils::json_parse_error& e) {
            throw cql_error(error_code::function_failure,
                            fmt::format("Could not decode JSON string '{}': {}", text, e.what()));
        } catch (const marshal_exception& e) {
            throw cql_error(error_code::function_failure,
                            fmt::format("org.apache.cassandra.serializers.MarshalException: {}", e.what()));
        }
    });
    return fs;
}

} // namespace

std::vector<const native_function*> find_native_functions(std::string_view name) {
    static const std::vector<native_function> all = make_functions();
    std::vector<const native_function*> out;
    for (auto& f : all) {
        if (f.name == name) {
            out.push_back(&f);
        }
    }
    return out;
}

} // namespace reef::cql
