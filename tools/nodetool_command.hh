// nodetool_command: what `reef nodetool`'s commands are made of: the node's REST API as they call it, their parsed
// command line and their table entry. Promises: a command only calls rest_api and appends its text to `out`.
#pragma once

#include "api/http_message.hh"
#include "runtime/future.hh"
#include "utils/json_reader.hh"

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace reef::tools::nodetool {

using query_params = std::vector<std::pair<std::string, std::string>>;

// The node answered with a status other than 200: what() is the message of its JSON error body (the whole body
// when it has none).
class api_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// A wrong command line: what() says what is wrong; nodetool prints it with a hint at `help`.
class usage_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// The node as the commands see it. call() returns the JSON of a 200 answer (null for an empty body, as `void`
// operations answer) and throws api_error for any other status.
class rest_api {
public:
    virtual ~rest_api() = default;
    virtual future<utils::json_value> call(api::http_method method, std::string path, query_params query) = 0;

    future<utils::json_value> get(std::string path, query_params query = {});
    future<utils::json_value> post(std::string path, query_params query = {});
    future<utils::json_value> del(std::string path, query_params query = {});
};

// One option a command takes: its names ("-t", "--tag") and whether a value follows.
struct option_spec {
    std::vector<std::string> names;
    bool takes_value;
    const char* help;
};

// A command's words after its name: options by their first long name ("--tag"), positional arguments in order.
struct command_line {
    std::vector<std::pair<std::string, std::string>> options;
    std::vector<std::string> args;

    bool has(std::string_view name) const noexcept;
    // The option's value, or null.
    const std::string* value(std::string_view name) const noexcept;
};

struct command {
    const char* name;
    const char* alias;  // another name ("cfstats"), or null
    const char* summary;
    const char* arguments;  // usage of the positional arguments ("[<keyspace> <tables>...]")
    std::vector<option_spec> options;
    size_t min_args;
    size_t max_args;  // SIZE_MAX: any number
    future<> (*run)(rest_api& api, const command_line& cl, std::string& out);
};

// Each file's commands: nodetool_node.cc, nodetool_storage.cc, nodetool_tablestats.cc.
std::span<const command> node_commands();
std::span<const command> storage_commands();
std::span<const command> table_commands();

// Every command, by name or alias; null when there is none.
const command* find_command(std::string_view name);
std::vector<const command*> all_commands();

// Parses words (the command's name first; the global options already taken out) and runs the command; throws
// usage_error, api_error, api::http_client_error.
future<> run_command(rest_api& api, const std::vector<std::string>& words, std::string& out);

// Reading answers: each throws api_error naming `what` when the value has another type (as_double reads null as NaN).
int64_t as_int(const utils::json_value& v, std::string_view what);
double as_double(const utils::json_value& v, std::string_view what);
bool as_bool(const utils::json_value& v, std::string_view what);
const std::string& as_string(const utils::json_value& v, std::string_view what);
const std::vector<utils::json_value>& as_array(const utils::json_value& v, std::string_view what);
// Member `name` of an object; throws api_error when v is no object or lacks it.
const utils::json_value& member(const utils::json_value& v, std::string_view name, std::string_view what);

// The keyspaces the node has (GET /storage_service/keyspaces); throws usage_error when ks is not among them.
future<> check_keyspace(rest_api& api, const std::string& ks);
// "t1,t2" from the arguments after the keyspace.
std::string join(const std::vector<std::string>& items, size_t from, std::string_view sep);

} // namespace reef::tools::nodetool
