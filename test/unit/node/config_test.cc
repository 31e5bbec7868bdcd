// Tests of node::config: ScyllaDB's defaults, every key read from YAML, unknown keys as warnings, bad values
// stopping with the key and the file's line, command-line overrides and the options-file choice.
#include "node/config.hh"
#include "test/lib/tmpdir.hh"

#include <boost/test/unit_test.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

using namespace reef;
using namespace reef::node;

namespace {

config from_yaml(const std::string& text, std::vector<std::string>& warnings) {
    config c;
    apply_yaml(c, text, "test.yaml", warnings);
    return c;
}

config from_yaml(const std::string& text) {
    std::vector<std::string> warnings;
    auto c = from_yaml(text, warnings);
    BOOST_TEST(warnings.empty());
    return c;
}

// The error apply_yaml throws for text, or "" if it accepts it.
std::string yaml_error(const std::string& text) {
    try {
        from_yaml(text);
    } catch (const config_error& e) {
        return e.what();
    }
    return "";
}

// Parses a command line (the program name first) into a configuration, in directory `cwd`.
struct command_line {
    program_options::options opts{"reef server", "test"};
    config_options cfg_opts;
    std::vector<std::string> warnings;

    command_line() { cfg_opts.declare(opts); }
    config load(std::vector<const char*> args) {
        args.insert(args.begin(), "reef");
        opts.parse(int(args.size()), args.data());
        return cfg_opts.load(opts, warnings);
    }
};

struct in_directory {
    std::filesystem::path old = std::filesystem::current_path();
    explicit in_directory(const std::string& dir) { std::filesystem::current_path(dir); }
    ~in_directory() { std::filesystem::current_path(old); }
};

void write_file(const std::string& path, const std::string& text) {
    std::ofstream(path) << text;
}

} // namespace

BOOST_AUTO_TEST_CASE(test_defaults_are_scylla_defaults_on_loopback) {
    config c;
    BOOST_TEST(c.cluster_name == "Test Cluster");
    BOOST_TEST(c.workdir == "./reef-data");
    BOOST_TEST(c.data_directories() == std::vector<std::string>{"./reef-data/data"});
    BOOST_TEST(c.commitlog_dir() == "./reef-data/commitlog");
    BOOST_TEST((c.commitlog_sync == commitlog_sync_mode::periodic));
    BOOST_TEST(c.commitlog_sync_period_in_ms == 10000);
    BOOST_TEST(c.commitlog_segment_size_in_mb == 64);
    BOOST_TEST(c.commitlog_total_space_in_mb == -1);
    BOOST_TEST(c.native_transport_port == 9042);
    BOOST_TEST(c.native_shard_aware_transport_port == 19042);
    BOOST_TEST(c.api_port == 10000);
    BOOST_TEST(c.prometheus_port == 9180);
    BOOST_TEST(c.auto_snapshot);
    BOOST_TEST(!c.developer_mode);
    BOOST_TEST(c.read_request_timeout_in_ms == 5000);
    BOOST_TEST(c.write_request_timeout_in_ms == 2000);
    BOOST_TEST(c.range_request_timeout_in_ms == 10000);
    BOOST_TEST(c.compaction_throughput_mb_per_sec == 0);
    BOOST_TEST(c.num_tokens == 256);
    BOOST_TEST(c.effective_api_address() == "127.0.0.1");
    BOOST_TEST(c.effective_prometheus_address() == "127.0.0.1");
    std::vector<std::string> warnings;
    check_addresses(c, warnings);
    BOOST_TEST(warnings.empty());
    // An empty file, or one of comments only, changes nothing.
    BOOST_TEST(from_yaml("").native_transport_port == 9042);
    BOOST_TEST(from_yaml("").native_transport_max_frame_size_in_mb == 256);
    BOOST_TEST(from_yaml("").max_concurrent_requests_per_shard == 10000);
    BOOST_TEST(from_yaml("max_concurrent_requests_per_shard: 7\n").max_concurrent_requests_per_shard == 7);
    BOOST_TEST(from_yaml("# nothing\n").api_port == 10000);
}

BOOST_AUTO_TEST_CASE(test_every_key_is_read) {
    auto c = from_yaml(R"(
cluster_name: 'Reef Test'
workdir: /w
data_file_directories:
    - /d1
    - /d2
commitlog_directory: /cl
commitlog_sync: batch
commitlog_sync_period_in_ms: 123
commitlog_sync_batch_window_in_ms: 7
commitlog_segment_size_in_mb: 32
commitlog_total_space_in_mb: 8192
listen_address: 127.0.0.2
rpc_address: ::1
native_transport_port: 9043
native_shard_aware_transport_port: 19043
native_transport_max_frame_size_in_mb: 16
max_concurrent_requests_per_shard: 500
api_address: localhost
api_port: 10001
prometheus_address: 127.0.0.3
prometheus_port: 9181
num_tokens: 16
auto_snapshot: false
developer_mode: yes
read_request_timeout_in_ms: 5001
write_request_timeout_in_ms: 2001
range_request_timeout_in_ms: 10001
counter_write_request_timeout_in_ms: 5002
cas_contention_timeout_in_ms: 1001
truncate_request_timeout_in_ms: 60001
request_timeout_in_ms: 10002
compaction_throughput_mb_per_sec: 16
)");
    BOOST_TEST(c.cluster_name == "Reef Test");
    BOOST_TEST(c.workdir == "/w");
    BOOST_TEST(c.data_directories() == (std::vector<std::string>{"/d1", "/d2"}));
    BOOST_TEST(c.commitlog_dir() == "/cl");
    BOOST_TEST((c.commitlog_sync == commitlog_sync_mode::batch));
    BOOST_TEST(c.commitlog_sync_period_in_ms == 123);
    BOOST_TEST(c.commitlog_sync_batch_window_in_ms == 7);
    BOOST_TEST(c.commitlog_segment_size_in_mb == 32);
    BOOST_TEST(c.commitlog_total_space_in_mb == 8192);
    BOOST_TEST(c.listen_address == "127.0.0.2");
    BOOST_TEST(c.rpc_address == "::1");
    BOOST_TEST(c.native_transport_port == 9043);
    BOOST_TEST(c.native_shard_aware_transport_port == 19043);
    BOOST_TEST(c.native_transport_max_frame_size_in_mb == 16);
    BOOST_TEST(c.max_concurrent_requests_per_shard == 500);
    BOOST_TEST(c.effective_api_address() == "localhost");
    BOOST_TEST(c.api_port == 10001);
    BOOST_TEST(c.effective_prometheus_address() == "127.0.0.3");
    BOOST_TEST(c.prometheus_port == 9181);
    BOOST_TEST(c.num_tokens == 16);
    BOOST_TEST(!c.auto_snapshot);
    BOOST_TEST(c.developer_mode);
    BOOST_TEST(c.read_request_timeout_in_ms == 5001);
    BOOST_TEST(c.write_request_timeout_in_ms == 2001);
    BOOST_TEST(c.range_request_timeout_in_ms == 10001);
    BOOST_TEST(c.counter_write_request_timeout_in_ms == 5002);
    BOOST_TEST(c.cas_contention_timeout_in_ms == 1001);
    BOOST_TEST(c.truncate_request_timeout_in_ms == 60001);
    BOOST_TEST(c.request_timeout_in_ms == 10002);
    BOOST_TEST(c.compaction_throughput_mb_per_sec == 16);
    // The list above names every key the table knows: a key added without a test fails here.
    BOOST_TEST(known_keys().size() == 30u);
}

BOOST_AUTO_TEST_CASE(test_unknown_key_and_null_value) {
    std::vector<std::string> warnings;
    auto c = from_yaml("api_port: 10005\nseed_provider:\n  - class_name: x\nrpc_port:\n", warnings);
    BOOST_TEST(c.api_port == 10005);
    BOOST_REQUIRE_EQUAL(warnings.size(), 2u);
    BOOST_TEST(warnings[0] == "test.yaml:2: unknown key 'seed_provider' ignored");
    BOOST_TEST(warnings[1] == "test.yaml:4: unknown key 'rpc_port' ignored");
    // "key:" with no value keeps the default.
    BOOST_TEST(from_yaml("native_transport_port:\n").native_transport_port == 9042);
}

BOOST_AUTO_TEST_CASE(test_bad_values_name_key_file_and_line) {
    BOOST_TEST(yaml_error("api_port: 10000\nnative_transport_port: 70000\n") ==
               "test.yaml:2: native_transport_port: expected an integer in [1, 65535], got '70000'");
    BOOST_TEST(yaml_error("api_port: 0\n") == "test.yaml:1: api_port: expected an integer in [1, 65535], got '0'");
    BOOST_TEST(yaml_error("\n\ncommitlog_sync: sometimes\n") ==
               "test.yaml:3: commitlog_sync: expected periodic or batch, got 'sometimes'");
    BOOST_TEST(yaml_error("read_request_timeout_in_ms: 5s\n") ==
               "test.yaml:1: read_request_timeout_in_ms: expected an integer in [1, 86400000], got '5s'");
    BOOST_TEST(yaml_error("write_request_timeout_in_ms: 0\n").find("write_request_timeout_in_ms") != std::string::npos);
    BOOST_TEST(yaml_error("commitlog_segment_size_in_mb: 4096\n").find("[1, 2047]") != std::string::npos);
    BOOST_TEST(yaml_error("commitlog_total_space_in_mb: -2\n").find("commitlog_total_space_in_mb") !=
               std::string::npos);
    BOOST_TEST(yaml_error("compaction_throughput_mb_per_sec: -1\n").find("compaction_throughput") != std::string::npos);
    BOOST_TEST(yaml_error("auto_snapshot: maybe\n") ==
               "test.yaml:1: auto_snapshot: expected true or false, got 'maybe'");
    BOOST_TEST(yaml_error("data_file_directories: /one\n") ==
               "test.yaml:1: data_file_directories: expected a list of directories, got '/one'");
    BOOST_TEST(yaml_error("cluster_name:\n  - a\n") ==
               "test.yaml:2: cluster_name: expected a single value, got 'a list'");
    BOOST_TEST(yaml_error("listen_address: 'not an address'\n") ==
               "test.yaml:1: listen_address: expected an IP address or host name, got 'not an address'");
    BOOST_TEST(yaml_error("listen_address: ''\n").find("listen_address") != std::string::npos);
    BOOST_TEST(yaml_error("- a\n- b\n") == "test.yaml:1: expected a map of configuration keys");
    // yaml-cpp's own errors keep its line and column.
    BOOST_TEST(yaml_error("api_port: [1\n").starts_with("test.yaml:2:"));
    BOOST_TEST(yaml_error("api_port: [1\n").find("bad YAML") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(test_non_loopback_addresses_warn) {
    BOOST_TEST(is_loopback_address("127.0.0.1"));
    BOOST_TEST(is_loopback_address("127.1.2.3"));
    BOOST_TEST(is_loopback_address("::1"));
    BOOST_TEST(is_loopback_address("localhost"));
    BOOST_TEST(!is_loopback_address("10.0.0.1"));
    BOOST_TEST(!is_loopback_address("0.0.0.0"));
    BOOST_TEST(!is_loopback_address("db.example.com"));
    auto c = from_yaml("rpc_address: 0.0.0.0\nprometheus_address: 10.1.1.1\n");
    std::vector<std::string> warnings;
    check_addresses(c, warnings);
    // rpc_address, and api_address, which follows it.
    BOOST_REQUIRE_EQUAL(warnings.size(), 3u);
    BOOST_TEST(warnings[0].starts_with("rpc_address is 0.0.0.0, not a loopback address"));
    BOOST_TEST(warnings[1].starts_with("api_address is 0.0.0.0"));
    BOOST_TEST(warnings[2].starts_with("prometheus_address is 10.1.1.1"));
}

BOOST_AUTO_TEST_CASE(test_command_line_overrides_file) {
    testing::tmpdir dir;
    std::string file = dir.path() + "/node.yaml";
    write_file(file, "api_port: 10001\nnative_transport_port: 9100\ndeveloper_mode: false\nunknown_thing: 1\n");
    command_line cl;
    auto c = cl.load({"--options-file", file.c_str(), "--native-transport-port", "9200", "--developer-mode",
                      "--workdir", "/tmp/w", "--data-file-directories", "/a,/b", "--commitlog-sync=batch"});
    BOOST_TEST(cl.cfg_opts.source() == file);
    BOOST_TEST(c.api_port == 10001);                // from the file
    BOOST_TEST(c.native_transport_port == 9200);    // the command line wins
    BOOST_TEST(c.developer_mode);
    BOOST_TEST(c.workdir == "/tmp/w");
    BOOST_TEST(c.commitlog_dir() == "/tmp/w/commitlog");
    BOOST_TEST(c.data_directories() == (std::vector<std::string>{"/a", "/b"}));
    BOOST_TEST((c.commitlog_sync == commitlog_sync_mode::batch));
    BOOST_REQUIRE_EQUAL(cl.warnings.size(), 1u);
    BOOST_TEST(cl.warnings[0] == file + ":4: unknown key 'unknown_thing' ignored");

    command_line bad;
    try {
        bad.load({"--api-port", "99999"});
        BOOST_FAIL("a bad port was accepted");
    } catch (const config_error& e) {
        BOOST_TEST(std::string(e.what()) == "--api-port: expected an integer in [1, 65535], got '99999'");
    }
    command_line bad_file;
    write_file(file, "commitlog_sync: never\n");
    try {
        bad_file.load({"--options-file", file.c_str()});
        BOOST_FAIL("a bad file was accepted");
    } catch (const config_error& e) {
        BOOST_TEST(std::string(e.what()) == file + ":1: commitlog_sync: expected periodic or batch, got 'never'");
    }
    command_line missing;
    std::string absent = dir.path() + "/absent.yaml";
    try {
        missing.load({"--options-file", absent.c_str()});
        BOOST_FAIL("a missing file was accepted");
    } catch (const config_error& e) {
        BOOST_TEST(std::string(e.what()).starts_with(absent + ": cannot read the configuration file"));
    }
}

BOOST_AUTO_TEST_CASE(test_help_lists_every_key_with_its_default) {
    command_line cl;
    auto help = cl.opts.help();
    for (auto& key : known_keys()) {
        std::string option = "--" + key;
        std::replace(option.begin(), option.end(), '_', '-');
        BOOST_TEST_CONTEXT(option) {
            BOOST_TEST(help.find(option + " ") != std::string::npos);
        }
    }
    BOOST_TEST(help.find("(YAML key native_transport_port) (default: 9042)") != std::string::npos);
    BOOST_TEST(help.find("(YAML key commitlog_sync) (default: periodic)") != std::string::npos);
    BOOST_TEST(help.find("(YAML key auto_snapshot; default: true)") != std::string::npos);
    // A default shown in the help is not a value given: the file's value stays.
    testing::tmpdir dir;
    std::string file = dir.path() + "/node.yaml";
    write_file(file, "native_transport_port: 9100\n");
    BOOST_TEST(cl.load({"--options-file", file.c_str()}).native_transport_port == 9100);
}

BOOST_AUTO_TEST_CASE(test_memory_sizes) {
    BOOST_TEST(parse_memory_size("4096", "memory") == 4096u);
    BOOST_TEST(parse_memory_size("512K", "memory") == 512u << 10);
    BOOST_TEST(parse_memory_size("2g", "memory") == uint64_t(2) << 30);
    BOOST_TEST(parse_memory_size("1T", "memory") == uint64_t(1) << 40);
    for (const char* bad : {"", "G", "0", "-1G", "1.5G", "12Q", "99999999999T"}) {
        BOOST_TEST_CONTEXT(bad) {
            try {
                parse_memory_size(bad, "memory");
                BOOST_FAIL("accepted");
            } catch (const config_error& e) {
                BOOST_TEST(std::string(e.what()) ==
                           fmt::format("--memory: expected a size in bytes, or with a K, M, G or T suffix, got '{}'",
                                       bad));
            }
        }
    }
}

BOOST_AUTO_TEST_CASE(test_reef_yaml_in_working_directory) {
    testing::tmpdir dir;
    in_directory cd(dir.path());
    {
        command_line cl;
        auto c = cl.load({});
        BOOST_TEST(cl.cfg_opts.source() == "");  // built-in defaults
        BOOST_TEST(c.api_port == 10000);
    }
    write_file("reef.yaml", "api_port: 10002\n");
    command_line cl;
    auto c = cl.load({});
    BOOST_TEST(cl.cfg_opts.source() == "reef.yaml");
    BOOST_TEST(c.api_port == 10002);
}
