// The configuration keys, their parsing and checking. See config.hh for the contract.
#include "node/config.hh"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <arpa/inet.h>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

namespace reef::node {

namespace {

enum class kind { text, address, optional_address, directory, integer, port, boolean, list, sync_mode };

// One key: how its text becomes a value. set() throws std::invalid_argument with what was expected.
struct key_spec {
    const char* name;
    kind k;
    const char* help;
    std::function<void(config&, std::string_view)> set;
    std::function<void(config&, std::vector<std::string>)> set_list;  // kind::list only
    std::function<std::string(const config&)> get;                    // the value as text (for --help)
};

[[noreturn]] void bad(std::string_view expected, std::string_view got) {
    throw std::invalid_argument(fmt::format("expected {}, got '{}'", expected, got));
}

int64_t parse_integer(std::string_view text, int64_t min, int64_t max) {
    int64_t v = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    std::string expected = fmt::format("an integer in [{}, {}]", min, max);
    if (ec != std::errc() || end != text.data() + text.size() || v < min || v > max) {
        bad(expected, text);
    }
    return v;
}

bool parse_boolean(std::string_view text) {
    // YAML 1.1's spellings, as yaml-cpp (and so ScyllaDB) reads them.
    std::string t;
    for (char c : text) {
        t += char(std::tolower(static_cast<unsigned char>(c)));
    }
    if (t == "true" || t == "yes" || t == "on" || t == "y") {
        return true;
    }
    if (t == "false" || t == "no" || t == "off" || t == "n") {
        return false;
    }
    bad("true or false", text);
}

bool valid_address(std::string_view text) {
    std::string s(text);
    in6_addr buf;
    if (inet_pton(AF_INET, s.c_str(), &buf) == 1 || inet_pton(AF_INET6, s.c_str(), &buf) == 1) {
        return true;
    }
    // A host name (RFC 1123 letters, digits, '-', '.'), resolved when the servers bind.
    if (s.empty() || s.size() > 253 || s.front() == '-' || s.front() == '.') {
        return false;
    }
    for (char c : s) {
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '.') {
            return false;
        }
    }
    return true;
}

key_spec text_key(const char* name, std::string config::*m, const char* help) {
    return {name, kind::text, help, [m](config& c, std::string_view v) { c.*m = std::string(v); }, {},
            [m](const config& c) { return c.*m; }};
}

key_spec directory_key(const char* name, std::string config::*m, const char* help) {
    return {name, kind::directory, help, [m](config& c, std::string_view v) {
                if (v.empty()) {
                    bad("a directory", v);
                }
                c.*m = std::string(v);
            }, {}, [m](const config& c) { return c.*m; }};
}

key_spec address_key(const char* name, std::string config::*m, bool may_be_empty, const char* help) {
    return {name, may_be_empty ? kind::optional_address : kind::address, help,
            [m, may_be_empty](config& c, std::string_view v) {
                if (!(may_be_empty && v.empty()) && !valid_address(v)) {
                    bad("an IP address or host name", v);
                }
                c.*m = std::string(v);
            }, {}, [m](const config& c) { return c.*m; }};
}

key_spec integer_key(const char* name, int64_t config::*m, int64_t min, int64_t max, const char* help) {
    return {name, kind::integer, help,
            [m, min, max](config& c, std::string_view v) { c.*m = parse_integer(v, min, max); }, {},
            [m](const config& c) { return std::to_string(c.*m); }};
}

key_spec port_key(const char* name, uint16_t config::*m, const char* help) {
    return {name, kind::port, help, [m](config& c, std::string_view v) { c.*m = uint16_t(parse_integer(v, 1, 65535)); },
            {}, [m](const config& c) { return std::to_string(c.*m); }};
}

key_spec boolean_key(const char* name, bool config::*m, const char* help) {
    return {name, kind::boolean, help, [m](config& c, std::string_view v) { c.*m = parse_boolean(v); }, {},
            [m](const config& c) { return std::string(c.*m ? "true" : "false"); }};
}

const std::vector<key_spec>& keys() {
    constexpr int64_t max_ms = int64_t(24) * 3600 * 1000;
    static const std::vector<key_spec> table = {
        text_key("cluster_name", &config::cluster_name, "the cluster's name"),
        directory_key("workdir", &config::workdir, "the directory the node's files go under"),
        {"data_file_directories", kind::list, "data directories, comma-separated (default <workdir>/data)", {},
         [](config& c, std::vector<std::string> v) {
             for (auto& d : v) {
                 if (d.empty()) {
                     bad("a list of directories", "");
                 }
             }
             c.data_file_directories = std::move(v);
         },
         [](const config& c) { return fmt::format("{}", fmt::join(c.data_file_directories, ",")); }},
        directory_key("commitlog_directory", &config::commitlog_directory,
                      "the commitlog's directory (default <workdir>/commitlog)"),
        {"commitlog_sync", kind::sync_mode, "when the commitlog syncs: periodic or batch",
         [](config& c, std::string_view v) {
             if (v == "periodic") {
                 c.commitlog_sync = commitlog_sync_mode::periodic;
             } else if (v == "batch") {
                 c.commitlog_sync = commitlog_sync_mode::batch;
             } else {
                 bad("periodic or batch", v);
             }
         }, {},
         [](const config& c) {
             return std::string(c.commitlog_sync == commitlog_sync_mode::batch ? "batch" : "periodic");
         }},
        integer_key("commitlog_sync_period_in_ms", &config::commitlog_sync_period_in_ms, 1, max_ms,
                    "periodic sync: the time between syncs"),
        integer_key("commitlog_sync_batch_window_in_ms", &config::commitlog_sync_batch_window_in_ms, 1, max_ms,
                    "batch sync: the longest a write waits for its sync"),
        // Positions inside a segment are 32-bit.
        integer_key("commitlog_segment_size_in_mb", &config::commitlog_segment_size_in_mb, 1, 2047,
                    "the size of a commitlog segment"),
        integer_key("commitlog_total_space_in_mb", &config::commitlog_total_space_in_mb, -1,
                    int64_t(1) << 40, "the commitlog's disk space (-1: from the node's memory)"),
        address_key("listen_address", &config::listen_address, false, "the address other nodes reach"),
        address_key("rpc_address", &config::rpc_address, false, "the address CQL clients reach"),
        port_key("native_transport_port", &config::native_transport_port, "the CQL port"),
        port_key("native_shard_aware_transport_port", &config::native_shard_aware_transport_port,
                 "the shard-aware CQL port"),
        integer_key("native_transport_max_frame_size_in_mb", &config::native_transport_max_frame_size_in_mb, 1,
                    2047, "the largest CQL frame taken"),
        integer_key("max_concurrent_requests_per_shard", &config::max_concurrent_requests_per_shard, 1,
                    int64_t(1) << 32, "CQL requests a shard runs at once before it sheds more"),
        address_key("api_address", &config::api_address, true, "the REST API's address (default rpc_address)"),
        port_key("api_port", &config::api_port, "the REST API's port"),
        address_key("prometheus_address", &config::prometheus_address, true,
                    "the metrics endpoint's address (default listen_address)"),
        port_key("prometheus_port", &config::prometheus_port, "the metrics endpoint's port"),
        integer_key("num_tokens", &config::num_tokens, 1, 1536, "tokens (vnodes) this node owns"),
        boolean_key("auto_snapshot", &config::auto_snapshot, "snapshot a table before it is truncated or dropped"),
        boolean_key("developer_mode", &config::developer_mode, "relax the production checks"),
        integer_key("read_request_timeout_in_ms", &config::read_request_timeout_in_ms, 1, max_ms,
                    "a read's timeout"),
        integer_key("write_request_timeout_in_ms", &config::write_request_timeout_in_ms, 1, max_ms,
                    "a write's timeout"),
        integer_key("range_request_timeout_in_ms", &config::range_request_timeout_in_ms, 1, max_ms,
                    "a range scan's timeout"),
        integer_key("counter_write_request_timeout_in_ms", &config::counter_write_request_timeout_in_ms, 1, max_ms,
                    "a counter write's timeout"),
        integer_key("cas_contention_timeout_in_ms", &config::cas_contention_timeout_in_ms, 1, max_ms,
                    "a lightweight transaction's contention timeout"),
        integer_key("truncate_request_timeout_in_ms", &config::truncate_request_timeout_in_ms, 1, max_ms,
                    "a truncate's timeout"),
        integer_key("request_timeout_in_ms", &config::request_timeout_in_ms, 1, max_ms,
                    "the timeout of other requests"),
        integer_key("compaction_throughput_mb_per_sec", &config::compaction_throughput_mb_per_sec, 0, 1 << 20,
                    "compaction's throughput limit (0: none)"),
    };
    return table;
}

std::string dashed(std::string_view key) {
    std::string s(key);
    for (char& c : s) {
        if (c == '_') {
            c = '-';
        }
    }
    return s;
}

std::vector<std::string> split_commas(std::string_view text) {
    std::vector<std::string> out;
    size_t start = 0;
    while (true) {
        size_t comma = text.find(',', start);
        out.emplace_back(text.substr(start, comma == std::string_view::npos ? comma : comma - start));
        if (comma == std::string_view::npos) {
            return out;
        }
        start = comma + 1;
    }
}

std::string where(const std::string& source, const YAML::Node& n) {
    auto mark = n.Mark();
    if (mark.is_null()) {
        return source;
    }
    return fmt::format("{}:{}", source, mark.line + 1);
}

void apply_yaml_value(config& cfg, const key_spec& spec, const YAML::Node& value, const std::string& at) {
    try {
        if (spec.k == kind::list) {
            if (!value.IsSequence()) {
                bad("a list of directories", value.IsScalar() ? value.Scalar() : "a map");
            }
            std::vector<std::string> items;
            for (const auto& item : value) {
                if (!item.IsScalar()) {
                    bad("a directory", "a nested value");
                }
                items.push_back(item.Scalar());
            }
            spec.set_list(cfg, std::move(items));
            return;
        }
        if (!value.IsScalar()) {
            bad("a single value", value.IsSequence() ? "a list" : "a map");
        }
        spec.set(cfg, value.Scalar());
    } catch (const std::invalid_argument& e) {
        throw config_error(fmt::format("{}: {}: {}", at, spec.name, e.what()));
    }
}

} // namespace

std::vector<std::string> config::data_directories() const {
    if (!data_file_directories.empty()) {
        return data_file_directories;
    }
    return {workdir + "/data"};
}

std::string config::commitlog_dir() const {
    return commitlog_directory.empty() ? workdir + "/commitlog" : commitlog_directory;
}

std::vector<std::string> known_keys() {
    std::vector<std::string> out;
    for (auto& k : keys()) {
        out.push_back(k.name);
    }
    return out;
}

void apply_yaml(config& cfg, const std::string& text, const std::string& source, std::vector<std::string>& warnings) {
    YAML::Node root;
    try {
        root = YAML::Load(text);
    } catch (const YAML::Exception& e) {
        // e.what() carries yaml-cpp's "yaml-cpp: error at line L, column C: ..." text; msg and mark give it
        // in our form.
        if (e.mark.is_null()) {
            throw config_error(fmt::format("{}: bad YAML: {}", source, e.msg));
        }
        throw config_error(fmt::format("{}:{}:{}: bad YAML: {}", source, e.mark.line + 1, e.mark.column + 1, e.msg));
    }
    if (root.IsNull()) {
        return;  // an empty file, or only comments
    }
    if (!root.IsMap()) {
        throw config_error(fmt::format("{}: expected a map of configuration keys", where(source, root)));
    }
    for (const auto& entry : root) {
        const YAML::Node& key = entry.first;
        const YAML::Node& value = entry.second;
        std::string name = key.IsScalar() ? key.Scalar() : "?";
        const key_spec* spec = nullptr;
        for (auto& k : keys()) {
            if (name == k.name) {
                spec = &k;
            }
        }
        if (!spec) {
            warnings.push_back(fmt::format("{}: unknown key '{}' ignored", where(source, key), name));
            continue;
        }
        if (value.IsNull()) {
            continue;  // "key:" with nothing after it keeps the default, as in ScyllaDB
        }
        apply_yaml_value(cfg, *spec, value, where(source, value));
    }
}

void apply_yaml_file(config& cfg, const std::string& path, std::vector<std::string>& warnings) {
    std::ifstream in(path);
    if (!in) {
        throw config_error(fmt::format("{}: cannot read the configuration file: {}", path, std::strerror(errno)));
    }
    std::stringstream text;
    text << in.rdbuf();
    if (in.bad()) {
        throw config_error(fmt::format("{}: cannot read the configuration file", path));
    }
    apply_yaml(cfg, text.str(), path, warnings);
}

config_options::config_options()
    : _values(std::make_unique<std::string[]>(keys().size())), _flags(std::make_unique<bool[]>(keys().size())) {}

config_options::~config_options() = default;

void config_options::declare(program_options::options& opts) {
    opts.add("options-file", "the YAML configuration file (default: ./reef.yaml if it exists)", &_options_file);
    auto& table = keys();
    const config defaults;
    for (size_t i = 0; i < table.size(); ++i) {
        auto& k = table[i];
        if (k.k == kind::boolean) {
            opts.add(dashed(k.name), fmt::format("{} (YAML key {}; default: {})", k.help, k.name, k.get(defaults)),
                     &_flags[i]);
        } else {
            opts.add(dashed(k.name), fmt::format("{} (YAML key {})", k.help, k.name), &_values[i], k.get(defaults));
        }
    }
}

config config_options::load(const program_options::options& opts, std::vector<std::string>& warnings) const {
    config cfg;
    _source.clear();
    if (opts.was_set("options-file")) {
        _source = _options_file;
    } else if (std::filesystem::exists("reef.yaml")) {
        _source = "reef.yaml";
    }
    if (!_source.empty()) {
        apply_yaml_file(cfg, _source, warnings);
    }
    auto& table = keys();
    for (size_t i = 0; i < table.size(); ++i) {
        auto& k = table[i];
        std::string option = dashed(k.name);
        if (!opts.was_set(option)) {
            continue;
        }
        try {
            if (k.k == kind::boolean) {
                k.set(cfg, _flags[i] ? "true" : "false");
            } else if (k.k == kind::list) {
                k.set_list(cfg, split_commas(_values[i]));
            } else {
                k.set(cfg, _values[i]);
            }
        } catch (const std::invalid_argument& e) {
            throw config_error(fmt::format("--{}: {}", option, e.what()));
        }
    }
    check_addresses(cfg, warnings);
    return cfg;
}

uint64_t parse_memory_size(std::string_view text, std::string_view option) {
    std::string_view digits = text;
    unsigned shift = 0;
    if (!digits.empty()) {
        switch (std::toupper(static_cast<unsigned char>(digits.back()))) {
        case 'K': shift = 10; break;
        case 'M': shift = 20; break;
        case 'G': shift = 30; break;
        case 'T': shift = 40; break;
        }
        if (shift) {
            digits.remove_suffix(1);
        }
    }
    uint64_t v = 0;
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
    if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size() || v == 0 ||
        v > (~uint64_t(0) >> shift)) {
        throw config_error(fmt::format("--{}: expected a size in bytes, or with a K, M, G or T suffix, got '{}'",
                                       option, text));
    }
    return v << shift;
}

bool is_loopback_address(const std::string& address) {
    if (address == "localhost" || address == "::1") {
        return true;
    }
    in_addr v4;
    if (inet_pton(AF_INET, address.c_str(), &v4) == 1) {
        return (ntohl(v4.s_addr) >> 24) == 127;
    }
    return false;
}

void check_addresses(const config& cfg, std::vector<std::string>& warnings) {
    auto check = [&](const char* key, const std::string& address) {
        if (!is_loopback_address(address)) {
            warnings.push_back(fmt::format("{} is {}, not a loopback address: the node will be reachable from the "
                                           "network", key, address));
        }
    };
    check("listen_address", cfg.listen_address);
    check("rpc_address", cfg.rpc_address);
    check("api_address", cfg.effective_api_address());
    check("prometheus_address", cfg.effective_prometheus_address());
}

} // namespace reef::node
