// api_util: what the REST API's table, cache and node handlers share: "ks:cf" table names, JSON values written as
// ScyllaDB writes them, and system.local's row. Promises: a malformed or unknown name is a 400 naming it.
#pragma once

#include "api/http_message.hh"
#include "db/database.hh"
#include "db/schema_tables.hh"
#include "runtime/sharded.hh"

#include <string>
#include <string_view>
#include <vector>

namespace reef::api {

class route_table;

// Adds module `name` unless another file's registration already did (system and storage_service are shared with
// api/system.cc and api/storage_service.cc, whichever registers first).
void ensure_module(route_table& t, const std::string& name, const std::string& description);

// The table a column_family path names: "ks:cf". Throws bad_request naming `name` when it has no ':' or no
// such table exists.
schema_ptr find_table_by_name(database& db, std::string_view name);
// A keyspace that must exist: throws bad_request "Can't find a keyspace <ks>" otherwise.
void check_keyspace(database& db, std::string_view keyspace);
// Every table of every keyspace (system ones included), by keyspace then name.
std::vector<schema_ptr> all_tables(database& db);

// JSON values: a quoted string; a number (shortest round-trip form; a non-finite one as 0); arrays of strings.
std::string json_string(std::string_view s);
std::string json_number(double v);
std::string json_number(uint64_t v);
std::string json_number(int64_t v);
std::string json_string_array(const std::vector<std::string>& items);
// [{"key": k, "value": v}, ...] with v already JSON (ScyllaDB's map entries).
std::string json_key_values(const std::vector<std::pair<std::string, std::string>>& entries);

// Parses a query parameter as a non-negative integer; throws bad_request naming it otherwise.
uint64_t parse_unsigned_param(std::string_view name, std::string_view value);

// system.local's row (db/schema_tables.hh's local_info) as the database holds it now.
future<schema_tables::local_info> read_local_info(sharded<database>& db);

} // namespace reef::api
