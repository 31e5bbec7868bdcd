// See api_util.hh.
#include "api/api_util.hh"

#include "api/route_table.hh"
#include "utils/json_writer.hh"

#include <charconv>
#include <cmath>
#include <fmt/format.h>

namespace reef::api {

void ensure_module(route_table& t, const std::string& name, const std::string& description) {
    for (auto& m : t.modules()) {
        if (m.name == name) {
            return;
        }
    }
    t.add_module(name, description);
}

schema_ptr find_table_by_name(database& db, std::string_view name) {
    auto colon = name.find(':');
    if (colon == std::string_view::npos) {
        throw bad_request("Column family name should be in keyspace:column_family format, not '" + std::string(name) +
                          "'");
    }
    auto ks = name.substr(0, colon);
    auto cf = name.substr(colon + 1);
    auto s = db.find_schema(ks, cf);
    if (!s) {
        throw bad_request("Column family '" + std::string(cf) + "' not found in keyspace '" + std::string(ks) + "'");
    }
    return s;
}

void check_keyspace(database& db, std::string_view keyspace) {
    if (!db.find_keyspace(keyspace)) {
        throw bad_request("Can't find a keyspace " + std::string(keyspace));
    }
}

std::vector<schema_ptr> all_tables(database& db) {
    std::vector<schema_ptr> out;
    for (auto& ks : db.keyspace_names()) {
        auto tables = db.tables_of(ks);
        std::sort(tables.begin(), tables.end(), [](const schema_ptr& a, const schema_ptr& b) {
            return a->table() < b->table();
        });
        out.insert(out.end(), tables.begin(), tables.end());
    }
    return out;
}

std::string json_string(std::string_view s) {
    std::string out;
    utils::json_writer::append_quoted(out, s);
    return out;
}

std::string json_number(double v) {
    if (!std::isfinite(v)) {
        return "0";
    }
    return fmt::format("{}", v);
}

std::string json_number(uint64_t v) { return std::to_string(v); }
std::string json_number(int64_t v) { return std::to_string(v); }

std::string json_string_array(const std::vector<std::string>& items) {
    std::string out = "[";
    for (size_t i = 0; i < items.size(); ++i) {
        out += i ? "," : "";
        out += json_string(items[i]);
    }
    return out + "]";
}

std::string json_key_values(const std::vector<std::pair<std::string, std::string>>& entries) {
    std::string out = "[";
    for (size_t i = 0; i < entries.size(); ++i) {
        out += i ? "," : "";
        out += "{\"key\":" + json_string(entries[i].first) + ",\"value\":" + entries[i].second + "}";
    }
    return out + "]";
}

uint64_t parse_unsigned_param(std::string_view name, std::string_view value) {
    uint64_t v = 0;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    if (ec != std::errc() || end != value.data() + value.size() || value.empty()) {
        throw bad_request("Parameter '" + std::string(name) + "' must be a non-negative integer, not '" +
                          std::string(value) + "'");
    }
    return v;
}

future<schema_tables::local_info> read_local_info(sharded<database>& db) {
    auto range = dht::partition_range::full();
    clustering_ranges slice{position_range::full()};
    auto ms = co_await db.local().query(schema_tables::local(), range, slice);
    auto info = schema_tables::read_local_info(ms);
    if (!info) {
        throw http_error(500, "system.local has no row: the database has not started");
    }
    co_return *info;
}

} // namespace reef::api
