// `reef nodetool`: the global options, the command table and its parser, the REST API over http_client, help.
#include "tools/nodetool.hh"

#include "api/http_client.hh"
#include "runtime/app.hh"
#include "tools/nodetool_command.hh"

#include <algorithm>
#include <charconv>
#include <limits>
#include <optional>
#include <cstdio>
#include <fmt/format.h>

namespace reef::tools {

namespace nodetool {

future<utils::json_value> rest_api::get(std::string path, query_params query) {
    return call(api::http_method::get, std::move(path), std::move(query));
}

future<utils::json_value> rest_api::post(std::string path, query_params query) {
    return call(api::http_method::post, std::move(path), std::move(query));
}

future<utils::json_value> rest_api::del(std::string path, query_params query) {
    return call(api::http_method::del, std::move(path), std::move(query));
}

bool command_line::has(std::string_view name) const noexcept { return value(name) != nullptr; }

const std::string* command_line::value(std::string_view name) const noexcept {
    for (auto& [k, v] : options) {
        if (k == name) {
            return &v;
        }
    }
    return nullptr;
}

namespace {

[[noreturn]] void wrong_type(const utils::json_value& v, std::string_view what, const char* expected) {
    throw api_error(fmt::format("{}: expected {} in the answer, got {}", what, expected, utils::kind_name(v.type)));
}

} // namespace

int64_t as_int(const utils::json_value& v, std::string_view what) {
    if (!v.is_number()) {
        wrong_type(v, what, "a number");
    }
    int64_t n = 0;
    auto [p, ec] = std::from_chars(v.text.data(), v.text.data() + v.text.size(), n);
    if (ec == std::errc() && p == v.text.data() + v.text.size()) {
        return n;
    }
    return int64_t(as_double(v, what));  // 1.5E6 where a count was expected
}

double as_double(const utils::json_value& v, std::string_view what) {
    if (v.is_null()) {
        return std::numeric_limits<double>::quiet_NaN();  // a rate of nothing yet
    }
    if (!v.is_number()) {
        wrong_type(v, what, "a number");
    }
    return std::strtod(v.text.c_str(), nullptr);
}

bool as_bool(const utils::json_value& v, std::string_view what) {
    if (v.type != utils::json_value::kind::boolean) {
        wrong_type(v, what, "true or false");
    }
    return v.text == "true";
}

const std::string& as_string(const utils::json_value& v, std::string_view what) {
    if (!v.is_string()) {
        wrong_type(v, what, "a string");
    }
    return v.text;
}

const std::vector<utils::json_value>& as_array(const utils::json_value& v, std::string_view what) {
    if (!v.is_array()) {
        wrong_type(v, what, "an array");
    }
    return v.items;
}

const utils::json_value& member(const utils::json_value& v, std::string_view name, std::string_view what) {
    if (!v.is_object()) {
        wrong_type(v, what, "an object");
    }
    auto* m = v.get(name);
    if (!m) {
        throw api_error(fmt::format("{}: the answer has no \"{}\"", what, name));
    }
    return *m;
}

future<> check_keyspace(rest_api& api, const std::string& ks) {
    auto all = co_await api.get("/storage_service/keyspaces");
    for (auto& k : as_array(all, "/storage_service/keyspaces")) {
        if (as_string(k, "/storage_service/keyspaces") == ks) {
            co_return;
        }
    }
    throw usage_error(fmt::format("Keyspace [{}] does not exist.", ks));
}

std::string join(const std::vector<std::string>& items, size_t from, std::string_view sep) {
    std::string out;
    for (size_t i = from; i < items.size(); ++i) {
        if (i > from) {
            out += sep;
        }
        out += items[i];
    }
    return out;
}

std::vector<const command*> all_commands() {
    std::vector<const command*> out;
    for (auto list : {node_commands(), storage_commands(), table_commands()}) {
        for (auto& c : list) {
            out.push_back(&c);
        }
    }
    std::sort(out.begin(), out.end(), [](auto* a, auto* b) { return std::string_view(a->name) < b->name; });
    return out;
}

const command* find_command(std::string_view name) {
    for (auto* c : all_commands()) {
        if (name == c->name || (c->alias && name == c->alias)) {
            return c;
        }
    }
    return nullptr;
}

namespace {

const option_spec* find_option(const command& c, std::string_view word) {
    for (auto& o : c.options) {
        for (auto& n : o.names) {
            if (n == word) {
                return &o;
            }
        }
    }
    return nullptr;
}

std::string long_name(const option_spec& o) { return o.names.back(); }

// The words after the command's name as options and positional arguments; Cassandra's messages for extra words.
command_line parse_command_line(const command& c, const std::vector<std::string>& words) {
    command_line cl;
    std::vector<std::string> unexpected;
    for (size_t i = 1; i < words.size(); ++i) {
        const std::string& w = words[i];
        if (w.size() < 2 || w[0] != '-') {
            cl.args.push_back(w);
            continue;
        }
        auto eq = w.find('=');
        std::string key = w.substr(0, eq);
        auto* o = find_option(c, key);
        if (!o) {
            unexpected.push_back(w);
            continue;
        }
        std::string v;
        if (o->takes_value) {
            if (eq != std::string::npos) {
                v = w.substr(eq + 1);
            } else if (i + 1 < words.size()) {
                v = words[++i];
            } else {
                throw usage_error(fmt::format("Required values for option '{}' not provided", long_name(*o)));
            }
        }
        cl.options.emplace_back(long_name(*o), v);
    }
    if (cl.args.size() > c.max_args) {
        unexpected.insert(unexpected.end(), cl.args.begin() + ptrdiff_t(c.max_args), cl.args.end());
    }
    if (!unexpected.empty()) {
        throw usage_error(fmt::format("Found unexpected parameters: [{}]", join(unexpected, 0, ", ")));
    }
    if (cl.args.size() < c.min_args) {
        throw usage_error(fmt::format("{} requires {}", c.name, c.arguments));
    }
    return cl;
}

} // namespace

future<> run_command(rest_api& api, const std::vector<std::string>& words, std::string& out) {
    const command* c = words.empty() ? nullptr : find_command(words[0]);
    if (!c) {
        throw usage_error(fmt::format("Found unexpected parameters: [{}]", join(words, 0, ", ")));
    }
    const command_line cl = parse_command_line(*c, words);
    co_await c->run(api, cl, out);
}

} // namespace nodetool

namespace {

using namespace nodetool;

// The REST API of one node over HTTP.
class http_rest_api final : public rest_api {
    api::http_client& _client;

public:
    explicit http_rest_api(api::http_client& client) : _client(client) {}

    future<utils::json_value> call(api::http_method method, std::string path, query_params query) override {
        auto target = api::make_target(path, query);
        auto r = co_await _client.request(method, target);
        if (r.status != 200) {
            std::string message = r.body.empty() ? fmt::format("HTTP status {}", r.status) : r.body;
            try {
                auto j = utils::parse_json(r.body);
                if (auto* m = j.get("message"); m && m->is_string()) {
                    message = m->text;
                }
            } catch (const utils::json_parse_error&) {
                // not JSON: the body as it is
            }
            // A path the node does not serve says which one; other errors are the node's message alone.
            if (r.status == 404) {
                message = fmt::format("{} {}: {}", api::to_string(method), path, message);
            }
            throw api_error(message);
        }
        if (r.body.find_first_not_of(" \t\r\n") == std::string::npos) {
            co_return utils::json_value();
        }
        try {
            co_return utils::parse_json(r.body);
        } catch (const utils::json_parse_error& e) {
            throw api_error(fmt::format("{}: the answer is not JSON: {}", path, e.what()));
        }
    }
};

void print_help(FILE* out) {
    std::fprintf(out, "usage: nodetool [(-h <host> | --host <host>)] [(-p <port> | --port <port>)] <command> [<args>]\n\n"
                      "The most commonly used nodetool commands are:\n");
    for (auto* c : all_commands()) {
        std::fprintf(out, "    %-26s %s\n", c->name, c->summary);
        if (c->alias) {
            std::fprintf(out, "    %-26s %s\n", c->alias, c->summary);
        }
    }
    std::fprintf(out, "\nSee 'nodetool help <command>' for more information on a specific command.\n\n");
}

void print_command_help(const command& c) {
    std::string opts;
    for (auto& o : c.options) {
        opts += fmt::format(" [{}{}]", join(o.names, 0, " | "), o.takes_value ? " <value>" : "");
    }
    fmt::print("NAME\n        nodetool {} - {}\n\nSYNOPSIS\n        nodetool [(-h <host> | --host <host>)] "
               "[(-p <port> | --port <port>)] {}{} {}\n",
               c.name, c.summary, c.name, opts, c.arguments);
    if (!c.options.empty()) {
        fmt::print("\nOPTIONS\n");
        for (auto& o : c.options) {
            fmt::print("        {}\n            {}\n\n", join(o.names, 0, ", "), o.help);
        }
    }
}

struct global_options {
    std::string host = "localhost";
    uint16_t port = 10000;
    std::vector<std::string> words;
};

// Takes -h/--host and -p/--port (and the JMX options Cassandra's nodetool has, which mean nothing here) from
// anywhere in argv, as nodetool does; the rest are the command's words.
global_options parse_global_options(int argc, char** argv) {
    global_options g;
    for (int i = 1; i < argc; ++i) {
        std::string w = argv[i];
        auto eq = w.find('=');
        std::string key = w.substr(0, eq);
        auto take = [&]() -> std::string {
            if (eq != std::string::npos) {
                return w.substr(eq + 1);
            }
            if (i + 1 >= argc) {
                throw usage_error(fmt::format("Required values for option '{}' not provided", key));
            }
            return argv[++i];
        };
        if (key == "-h" || key == "--host") {
            g.host = take();
        } else if (key == "-p" || key == "--port") {
            auto v = take();
            unsigned port = 0;
            auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), port);
            if (ec != std::errc() || p != v.data() + v.size() || port == 0 || port > 65535) {
                throw usage_error(fmt::format("port: can not convert \"{}\" to a int", v));
            }
            g.port = uint16_t(port);
        } else if (key == "-u" || key == "--username" || key == "-pw" || key == "--password" || key == "-pwf" ||
                   key == "--password-file") {
            take();
        } else if (key == "-pp" || key == "--print-port") {
            // host:port is how addresses print already
        } else {
            g.words.push_back(w);
        }
    }
    return g;
}

int usage_failure(const std::string& message) {
    std::fprintf(stderr, "nodetool: %s\nSee 'nodetool help' or 'nodetool help <command>'.\n", message.c_str());
    return 1;
}

// help, and a command line that names no known command: handled before any connection.
std::optional<int> help_or_bad_command(const std::vector<std::string>& words) {
    if (words.empty() || words[0] == "help" || words[0] == "--help") {
        if (words.size() > 1) {
            const command* c = find_command(words[1]);
            if (!c) {
                return usage_failure(fmt::format("Unknown command {}", words[1]));
            }
            print_command_help(*c);
        } else {
            print_help(stdout);
        }
        return 0;
    }
    if (!find_command(words[0])) {
        return usage_failure(fmt::format("Found unexpected parameters: [{}]", join(words, 0, ", ")));
    }
    return std::nullopt;
}

// What running a command left: its text, and its error, if any.
struct outcome {
    std::string out;
    std::string error;
    bool usage = false;
};

future<> run_remote(const global_options& g, const std::vector<socket_address>& servers, outcome& o) {
    api::http_client client(servers, fmt::format("{}:{}", g.host, g.port));
    http_rest_api rest(client);
    try {
        co_await run_command(rest, g.words, o.out);
    } catch (const usage_error& e) {
        o.usage = true;
        o.error = e.what();
    } catch (const std::exception& e) {
        o.error = e.what();
    }
    co_await client.close();
}

} // namespace

int nodetool_main(int argc, char** argv) {
    global_options g;
    try {
        g = parse_global_options(argc, argv);
    } catch (const usage_error& e) {
        return usage_failure(e.what());
    }
    if (auto rc = help_or_bad_command(g.words)) {
        return *rc;
    }
    std::vector<socket_address> servers;
    try {
        servers = api::resolve_host(g.host, g.port);
    } catch (const api::http_client_error& e) {
        std::fprintf(stderr, "nodetool: %s\n", e.what());
        return 1;
    }
    runtime_config cfg;
    cfg.smp = 1;
    cfg.pin_threads = false;
    outcome o;
    try {
        run(cfg, [&]() -> future<int> {
            co_await run_remote(g, servers, o);
            co_return 0;
        });
    } catch (const std::exception& e) {
        o.error = e.what();
    }
    std::fwrite(o.out.data(), 1, o.out.size(), stdout);
    std::fflush(stdout);
    if (o.usage) {
        return usage_failure(o.error);
    }
    if (!o.error.empty()) {
        std::fprintf(stderr, "nodetool: %s\n", o.error.c_str());
        return 1;
    }
    return 0;
}

} // namespace reef::tools
